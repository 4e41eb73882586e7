package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.demo.UsersDomainsTrace;
import java.io.DataInputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.state.StateObject;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Checkpoints with failures, rescaling through savepoints, and savepoints across Flink's snapshot
 * compression switch: the native state survives.
 */
@SuppressWarnings("try") // CloseableIterator#close may throw InterruptedException
class RecoveryTest {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withSlots(4);

    static final AtomicLong ROWS_SEEN = new AtomicLong();
    static final AtomicInteger FAILURES = new AtomicInteger();

    /** Emits event {@code i} of a trace, pausing now and then to spread it over checkpoints. */
    static final class Emit implements MapFunction<Long, String> {
        private static final long serialVersionUID = 1L;
        private final String[] events;

        Emit(List<String> events) {
            this.events = events.toArray(new String[0]);
        }

        @Override
        public String map(Long i) throws Exception {
            if (i % 2 == 0) {
                Thread.sleep(1);
            }
            return events[i.intValue()];
        }
    }

    /** Throws when the job-wide output count reaches 700 and 1800 (once each, across restarts). */
    static final class FailTwice implements MapFunction<Row, String> {
        private static final long serialVersionUID = 1L;

        @Override
        public String map(Row row) {
            long n = ROWS_SEEN.incrementAndGet();
            if (n == 700 || n == 1800) {
                FAILURES.incrementAndGet();
                throw new RuntimeException("deliberate failure at output row " + n);
            }
            return row.toString();
        }
    }

    static List<String> encoded(UsersDomainsTrace trace) {
        List<String> out = new ArrayList<>();
        trace.events().forEach(e -> out.add((e.users ? "L|" : "R|") + e.json));
        return out;
    }

    static CdcJoin join(JoinType type) {
        return builder(type).build();
    }

    /** The users/domains join of {@code type} the recovery tests use, in small batches. */
    static CdcJoin.Builder builder(JoinType type) {
        return CdcJoin.builder()
                .left("users", UsersDomainsTrace.USERS, List.of("id"), List.of("id"))
                .right("domains", UsersDomainsTrace.DOMAINS, List.of("user_id"), List.of("id"))
                .joinType(type)
                .batchSize(64)
                .maxFlushDelay(Duration.ofMillis(20));
    }

    static SingleOutputStreamOperator<Row> pipeline(CdcJoin join, DataStream<String> events) {
        CdcJoin.Result r =
                join.joinStrings(VectorsTest.pick(events, "L|"), VectorsTest.pick(events, "R|"));
        return r.rows();
    }

    @Test
    void failuresMidStreamLoseAndDuplicateNothing() throws Exception {
        UsersDomainsTrace trace = UsersDomainsTrace.generate(42, 4000, 300);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        Configuration conf = new Configuration();
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 5);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));
        env.configure(conf);
        env.enableCheckpointing(100);
        env.setParallelism(2);
        List<String> events = encoded(trace);
        DataStream<String> source =
                env.fromSequence(0, events.size() - 1)
                        .setParallelism(1)
                        .map(new Emit(events))
                        .setParallelism(1);
        DataStream<String> out = pipeline(join(JoinType.FULL), source).map(new FailTwice());
        List<String> changelog = new ArrayList<>();
        try (CloseableIterator<String> it = out.executeAndCollect("exactly-once")) {
            it.forEachRemaining(changelog::add);
        }
        assertEquals(2, FAILURES.get(), "the job should have failed twice");
        assertEquals(
                ReferenceJoin.usersDomains(trace, JoinType.FULL),
                Changelogs.materialize(changelog));
    }

    static final Queue<String> RESCALED = new ConcurrentLinkedQueue<>();
    static final AtomicLong[] EMITTED = {new AtomicLong(), new AtomicLong(), new AtomicLong()};

    /** Emits a slice of the trace, then (when unbounded) idles until the job is stopped. */
    static final class Slice implements FlatMapFunction<Long, String> {
        private static final long serialVersionUID = 1L;
        private final String[] events;
        private final int counter;

        Slice(List<String> events, int counter) {
            this.events = events.toArray(new String[0]);
            this.counter = counter;
        }

        @Override
        public void flatMap(Long i, Collector<String> out) throws Exception {
            if (i < events.length) {
                out.collect(events[i.intValue()]);
                EMITTED[counter].incrementAndGet();
            } else {
                Thread.sleep(1);
            }
        }
    }

    /**
     * Runs one slice at {@code parallelism}, from {@code savepoint} if given, with Flink's {@code
     * execution.checkpointing.snapshot-compression} set to {@code compress}, on {@code backend}.
     */
    static JobClient runSlice(
            List<String> slice,
            int k,
            int parallelism,
            String savepoint,
            boolean bounded,
            boolean compress,
            StateBackend backend)
            throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        Configuration conf = new Configuration();
        conf.set(ExecutionOptions.SNAPSHOT_COMPRESSION, compress);
        backend.configure(conf);
        if (savepoint != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
            conf.set(StateRecoveryOptions.SAVEPOINT_IGNORE_UNCLAIMED_STATE, true);
        }
        env.configure(conf);
        env.setParallelism(parallelism);
        env.setMaxParallelism(128);
        DataStream<String> source =
                env.fromSequence(0, bounded ? slice.size() - 1 : Long.MAX_VALUE)
                        .uid("source-" + k)
                        .setParallelism(1)
                        .flatMap(new Slice(slice, k))
                        .uid("slice-" + k)
                        .setParallelism(1);
        decodeAndJoin(
                join(JoinType.FULL),
                source,
                row -> {
                    RESCALED.add(row.toString());
                    return row.toString();
                });
        return env.executeAsync("rescale-" + k);
    }

    /**
     * Decodes the {@code L|}/{@code R|} lines of {@code source} and joins them, with the operator
     * uids a savepoint of this job keeps ({@code decode-users}, {@code decode-domains}, {@code
     * join}), each output row through {@code sink}.
     */
    static void decodeAndJoin(
            CdcJoin join, DataStream<String> source, MapFunction<Row, String> sink) {
        decodeAndJoin(join, VectorsTest.pick(source, "L|"), VectorsTest.pick(source, "R|"), sink);
    }

    /**
     * Decodes the users and domains change records and joins them, with the operator uids of {@link
     * #decodeAndJoin(CdcJoin, DataStream, MapFunction)}, each output row through {@code sink}.
     */
    static void decodeAndJoin(
            CdcJoin join,
            DataStream<String> users,
            DataStream<String> domains,
            MapFunction<Row, String> sink) {
        SingleOutputStreamOperator<ChangeRecord> l = join.leftDecoder().decodeStrings(users);
        SingleOutputStreamOperator<ChangeRecord> r = join.rightDecoder().decodeStrings(domains);
        l.uid("decode-users");
        r.uid("decode-domains");
        join.joinChanges(l, r).uid("join").map(sink).sinkTo(new DiscardingSink<>());
    }

    static void awaitEmitted(int k, int count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (EMITTED[k].get() < count) {
            assertTrue(System.nanoTime() < deadline, "slice " + k + " not emitted in time");
            Thread.sleep(20);
        }
    }

    /**
     * Stops with a savepoint, retrying while the job is still initializing or some task is still
     * being deployed or restored (a job stopped as soon as it was submitted).
     */
    static String stopWithSavepoint(JobClient job, Path dir) throws Exception {
        for (int attempt = 0; ; attempt++) {
            try {
                return job.stopWithSavepoint(
                                false, dir.toUri().toString(), SavepointFormatType.CANONICAL)
                        .get(60, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                String message = String.valueOf(e.getMessage());
                if (attempt >= 50
                        || !(message.contains("not being executed")
                                || message.contains("JobManager is initializing"))) {
                    throw e;
                }
                Thread.sleep(200);
            }
        }
    }

    @Test
    void rescalesFromTwoToThreeToOne(@TempDir Path savepoints) throws Exception {
        rescales(UsersDomainsTrace.generate(7, 3000, 200), new int[] {2, 3, 1}, HEAP, savepoints);
    }

    /** A state of about 19,000 joined rows, split by key group and merged again: 1 -> 2 -> 1. */
    @Test
    void rescalesALargeStateFromOneToTwoToOne(@TempDir Path savepoints) throws Exception {
        UsersDomainsTrace trace = UsersDomainsTrace.generate(8, 120_000, 10_000);
        int rows = ReferenceJoin.usersDomains(trace, JoinType.FULL).size();
        assertTrue(rows > 15_000, "a large state: " + rows + " joined rows");
        rescales(trace, new int[] {1, 2, 1}, HEAP, savepoints);
    }

    private static final StateBackend[] HEAP = {
        StateBackend.HEAP, StateBackend.HEAP, StateBackend.HEAP
    };

    /**
     * Canonical savepoints move the state between state backends, as when a job's state outgrows
     * the heap: the first third of the trace runs on the heap and is saved, the second restores it
     * on RocksDB at parallelism 3 and is saved, the last restores that on the heap at 1.
     */
    @Test
    void savepointsMoveTheStateBetweenHeapAndRocksDb(@TempDir Path savepoints) throws Exception {
        rescales(
                UsersDomainsTrace.generate(10, 3000, 200),
                new int[] {2, 3, 1},
                new StateBackend[] {
                    StateBackend.HEAP, StateBackend.ROCKSDB_INCREMENTAL, StateBackend.HEAP
                },
                savepoints);
    }

    /**
     * Runs the trace in three slices, the first two stopped with a savepoint and the next started
     * from it at the next parallelism and on the next state backend; the changelog of all three
     * materializes to the oracle's.
     */
    private static void rescales(
            UsersDomainsTrace trace, int[] parallelism, StateBackend[] backends, Path savepoints)
            throws Exception {
        clearSlices();
        List<String> events = encoded(trace);
        int third = events.size() / 3;
        List<List<String>> slices =
                List.of(
                        events.subList(0, third),
                        events.subList(third, 2 * third),
                        events.subList(2 * third, events.size()));
        String savepoint = null;
        for (int k = 0; k < 2; k++) {
            savepoint =
                    runToSavepoint(
                            slices.get(k),
                            k,
                            parallelism[k],
                            savepoint,
                            false,
                            backends[k],
                            savepoints);
        }
        runSlice(slices.get(2), 2, parallelism[2], savepoint, true, false, backends[2])
                .getJobExecutionResult()
                .get(120, TimeUnit.SECONDS);
        assertEquals(
                ReferenceJoin.usersDomains(trace, JoinType.FULL),
                Changelogs.materialize(new ArrayList<>(RESCALED)));
    }

    /** Clears the rows and the emitted counts of earlier slices. */
    private static void clearSlices() {
        RESCALED.clear();
        for (AtomicLong emitted : EMITTED) {
            emitted.set(0);
        }
    }

    /**
     * Runs slice {@code k} unbounded ({@link #runSlice}) until it has emitted the slice, then stops
     * it with a savepoint in {@code dir}.
     *
     * @return the savepoint's path
     */
    private static String runToSavepoint(
            List<String> slice,
            int k,
            int parallelism,
            String savepoint,
            boolean compress,
            StateBackend backend,
            Path dir)
            throws Exception {
        JobClient job = runSlice(slice, k, parallelism, savepoint, false, compress, backend);
        try {
            awaitEmitted(k, slice.size());
            String taken = stopWithSavepoint(job, dir);
            job.getJobExecutionResult().get(60, TimeUnit.SECONDS);
            return taken;
        } catch (Exception | AssertionError e) {
            job.cancel();
            throw e;
        }
    }

    /**
     * Flink's {@code execution.checkpointing.snapshot-compression} reaches the join, and savepoints
     * cross it both ways: the first half of the trace runs with it on and is saved; a job with it
     * off restores that savepoint and saves the same state again, uncompressed and larger (the
     * generated names compress to less than two thirds, about half measured); a job with it on
     * restores that one and runs the second half, at another parallelism. The changelog of all
     * materializes to the oracle's.
     */
    @Test
    void savepointsCrossTheSnapshotCompressionSwitch(@TempDir Path savepoints) throws Exception {
        clearSlices();
        UsersDomainsTrace trace = UsersDomainsTrace.generate(9, 20_000, 2_000);
        List<String> events = encoded(trace);
        int half = events.size() / 2;
        String compressed =
                runToSavepoint(
                        events.subList(0, half), 0, 2, null, true, StateBackend.HEAP, savepoints);
        String plain =
                runToSavepoint(List.of(), 1, 2, compressed, false, StateBackend.HEAP, savepoints);
        long compressedBytes = rawKeyedStateBytes(compressed);
        long plainBytes = rawKeyedStateBytes(plain);
        AsyncSnapshotTest.assertCompressed(compressedBytes, plainBytes);
        runSlice(events.subList(half, events.size()), 2, 3, plain, true, true, StateBackend.HEAP)
                .getJobExecutionResult()
                .get(120, TimeUnit.SECONDS);
        assertEquals(
                ReferenceJoin.usersDomains(trace, JoinType.FULL),
                Changelogs.materialize(new ArrayList<>(RESCALED)));
    }

    /** The bytes of a savepoint's raw keyed state: the join's sections (no other operator's). */
    private static long rawKeyedStateBytes(String savepoint) throws Exception {
        Path metadata = Paths.get(URI.create(savepoint)).resolve("_metadata");
        try (DataInputStream in = new DataInputStream(Files.newInputStream(metadata))) {
            return Checkpoints.loadCheckpointMetadata(
                            in, RecoveryTest.class.getClassLoader(), savepoint)
                    .getOperatorStates()
                    .stream()
                    .flatMap(operator -> operator.getStates().stream())
                    .flatMap(subtask -> subtask.getRawKeyedState().stream())
                    .mapToLong(StateObject::getStateSize)
                    .sum();
        }
    }
}
