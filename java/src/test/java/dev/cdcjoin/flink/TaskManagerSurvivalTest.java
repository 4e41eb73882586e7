package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.Test;

/**
 * How a MiniCluster loses its task manager while the JVM lives on (the failure seen once in a full
 * {@code mvn verify}, after {@code CdcJoinJobTest.badRecordFailsTheJobNamingTheRecord}), and that a
 * job failing in a native operator does not do it.
 *
 * <p>A task that reports a fatal error to its TaskExecutor makes a MiniCluster close that task
 * manager for good ({@code MiniCluster.TerminatingFatalErrorHandler}); later jobs then wait for
 * slots that never come. Two ways for a failing job to do that: a task thread still alive {@code
 * task.cancellation.timeout} (180 s by default) after the job's failure cancelled it ({@code
 * Task.TaskCancelerWatchDog}), and an exception while a failed or cancelled task cleans up, such as
 * an operator's {@code close()} throwing ({@code Task.doRun}'s "FATAL - exception in exception
 * handler"; on Flink 2.x only: 1.20 adds that exception to the task's failure, {@link
 * TestLine#closeFailureOfAFailedTaskIsFatal}). Each test runs its own cluster with a {@value
 * #CANCELLATION_TIMEOUT_S} s watchdog, so that what takes three minutes by default shows in
 * seconds. The engineering notes in {@code bench/README.md} give the Flink source lines.
 */
class TaskManagerSurvivalTest {

    private static final int CANCELLATION_TIMEOUT_S = 10;
    private static final Duration CANCELLATION_TIMEOUT = Duration.ofSeconds(CANCELLATION_TIMEOUT_S);
    private static final int SLOTS = 4;

    /** Set once {@link StuckOnCancel} has started ignoring interrupts. */
    private static final AtomicBoolean STUCK = new AtomicBoolean();

    @Test
    void aJobFailingInTheNativeDecoderHasItsOtherNativeTasksExitBeforeTheWatchdog()
            throws Exception {
        try (MiniCluster cluster = start()) {
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
            env.setParallelism(2);
            // Endless inputs, so the decoders and joins are busy in native calls when one decoder
            // meets the bad record and the job cancels all the others.
            DataStream<String> users =
                    env.fromSequence(0, Long.MAX_VALUE)
                            .map(i -> i == 20_000 ? "{\"op\":\"x\"}" : user(i))
                            .returns(String.class);
            DataStream<String> domains =
                    env.fromSequence(0, Long.MAX_VALUE)
                            .map(i -> CdcJoinJobTest.domain(i, i % 1000, "d" + i))
                            .returns(String.class);
            CdcJoinJobTest.usersDomains()
                    .badRecordPolicy(BadRecordPolicy.FAIL)
                    .build()
                    .joinStrings(users, domains)
                    .rows()
                    .sinkTo(new DiscardingSink<>());
            JobResult result = run(cluster, env.getStreamGraph().getJobGraph());

            String chain = failure(result);
            assertTrue(chain.contains("unknown \"op\" value \"x\""), chain);
            long cancelled =
                    cluster
                            .getArchivedExecutionGraph(result.getJobId())
                            .get()
                            .getAllVertices()
                            .values()
                            .stream()
                            .flatMap(v -> Arrays.stream(v.getTaskVertices()))
                            .map(AccessExecutionVertex::getExecutionState)
                            .filter(s -> s == ExecutionState.CANCELED)
                            .count();
            assertTrue(cancelled >= 2, "the job's other tasks were cancelled: " + cancelled);
            // Past the watchdog's timeout, the task manager is still there with every slot free.
            Thread.sleep(CANCELLATION_TIMEOUT.plusSeconds(2).toMillis());
            MiniClusters.awaitTaskManagers(
                    rest(cluster),
                    tms -> tms.size() == 1 && tms.get(0).path("freeSlots").asInt(-1) == SLOTS,
                    "one task manager with all " + SLOTS + " slots free",
                    Duration.ofSeconds(30));
        }
    }

    @Test
    void aTaskStuckInItsCancellationTakesTheTaskManagerDownForGood() throws Exception {
        STUCK.set(false);
        try (MiniCluster cluster = start()) {
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
            env.setParallelism(1);
            // Users turn bad once the domains' chain is stuck: the native decoder fails the job
            // and Flink cancels that chain, which does not exit.
            DataStream<String> users =
                    env.fromSequence(0, Long.MAX_VALUE)
                            .map(i -> STUCK.get() ? "{\"op\":\"x\"}" : user(i))
                            .returns(String.class);
            DataStream<String> domains =
                    env.fromSequence(0, Long.MAX_VALUE)
                            .map(new StuckOnCancel())
                            .map(i -> CdcJoinJobTest.domain(i, i % 1000, "d" + i))
                            .returns(String.class);
            CdcJoinJobTest.usersDomains()
                    .badRecordPolicy(BadRecordPolicy.FAIL)
                    .build()
                    .joinStrings(users, domains)
                    .rows()
                    .sinkTo(new DiscardingSink<>());
            JobGraph job = env.getStreamGraph().getJobGraph();
            cluster.submitJob(job).get();

            MiniClusters.awaitTaskManagers(
                    rest(cluster),
                    tms -> tms.size() == 0,
                    "no task manager: closed by the MiniCluster's fatal error handler",
                    CANCELLATION_TIMEOUT.plusSeconds(30));
            // The job, stuck in FAILING until then, ends with the decoder's failure.
            String chain =
                    failure(cluster.requestJobResult(job.getJobID()).get(1, TimeUnit.MINUTES));
            assertTrue(chain.contains("unknown \"op\" value \"x\""), chain);
        }
    }

    @Test
    void anExceptionFromCloseInAFailedTaskTakesTheTaskManagerDownOnFlink2Only() throws Exception {
        try (MiniCluster cluster = start()) {
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
            env.setParallelism(1);
            // The users' chain fails in the native decoder; closing it, a function throws.
            DataStream<String> users =
                    env.fromSequence(0, Long.MAX_VALUE)
                            .map(new ThrowsOnClose())
                            .map(i -> i == 1000 ? "{\"op\":\"x\"}" : user(i))
                            .returns(String.class);
            DataStream<String> domains =
                    env.fromSequence(0, Long.MAX_VALUE)
                            .map(i -> CdcJoinJobTest.domain(i, i % 1000, "d" + i))
                            .returns(String.class);
            CdcJoinJobTest.usersDomains()
                    .badRecordPolicy(BadRecordPolicy.FAIL)
                    .build()
                    .joinStrings(users, domains)
                    .rows()
                    .sinkTo(new DiscardingSink<>());
            JobGraph job = env.getStreamGraph().getJobGraph();
            cluster.submitJob(job).get();

            if (TestLine.closeFailureOfAFailedTaskIsFatal()) {
                MiniClusters.awaitTaskManagers(
                        rest(cluster),
                        tms -> tms.size() == 0,
                        "no task manager: closed by the MiniCluster's fatal error handler",
                        Duration.ofSeconds(30));
            } else {
                String chain =
                        failure(cluster.requestJobResult(job.getJobID()).get(1, TimeUnit.MINUTES));
                assertTrue(chain.contains("unknown \"op\" value \"x\""), chain);
                MiniClusters.awaitTaskManagers(
                        rest(cluster),
                        tms -> tms.size() == 1,
                        "the task manager still there after the job failed",
                        Duration.ofSeconds(30));
            }
        }
    }

    /** A function whose {@code close()} throws. */
    static final class ThrowsOnClose extends RichMapFunction<Long, Long> {
        private static final long serialVersionUID = 1L;

        @Override
        public Long map(Long i) {
            return i;
        }

        @Override
        public void close() {
            throw new IllegalStateException("close failed");
        }
    }

    /**
     * Stands for a blocking call that does not react to interrupts (a socket read, a lock, a long
     * native call): from record 100 on it waits, ignoring interrupts, for longer than the
     * watchdog's timeout, then lets the record through.
     */
    static final class StuckOnCancel implements MapFunction<Long, Long> {
        private static final long serialVersionUID = 1L;

        @Override
        public Long map(Long i) {
            if (i == 100) {
                STUCK.set(true);
                long until = System.nanoTime() + CANCELLATION_TIMEOUT.plusSeconds(15).toNanos();
                while (System.nanoTime() < until) {
                    try {
                        Thread.sleep(50);
                    } catch (InterruptedException ignored) {
                        // what an uninterruptible blocking call amounts to
                    }
                }
            }
            return i;
        }
    }

    private static String user(long i) {
        return CdcJoinJobTest.user("c", i % 1000, "u" + i);
    }

    /** A started cluster of one task manager whose cancellation watchdog fires after 10 s. */
    private static MiniCluster start() throws Exception {
        Configuration conf = MiniClusters.configuration();
        conf.set(TaskManagerOptions.TASK_CANCELLATION_TIMEOUT, CANCELLATION_TIMEOUT);
        MiniCluster cluster =
                new MiniCluster(
                        new MiniClusterConfiguration.Builder()
                                .setConfiguration(conf)
                                .setNumTaskManagers(1)
                                .setNumSlotsPerTaskManager(SLOTS)
                                .build());
        cluster.start();
        return cluster;
    }

    private static JobResult run(MiniCluster cluster, JobGraph job) throws Exception {
        cluster.submitJob(job).get();
        return cluster.requestJobResult(job.getJobID()).get(2, TimeUnit.MINUTES);
    }

    private static String failure(JobResult result) {
        assertTrue(result.getSerializedThrowable().isPresent(), "the job failed");
        return ExceptionUtils.stringifyException(
                result.getSerializedThrowable()
                        .get()
                        .deserializeError(TaskManagerSurvivalTest.class.getClassLoader()));
    }

    private static URI rest(MiniCluster cluster) throws Exception {
        return cluster.getRestAddress().get();
    }
}
