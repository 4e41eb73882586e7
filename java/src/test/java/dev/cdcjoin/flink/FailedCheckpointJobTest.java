package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.demo.UsersDomainsTrace;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStateToolset;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.CheckpointStorageFactory;
import org.apache.flink.runtime.state.CheckpointStorageLocation;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.CompletedCheckpointStorageLocation;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.storage.JobManagerCheckpointStorage;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A checkpoint whose native join state fails to be written, in the asynchronous phase and midway,
 * is declined: the job goes on without a restart, later checkpoints write the state, and the result
 * is exact.
 */
class FailedCheckpointJobTest {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withSlots(2);

    /**
     * Checkpoint streams fail once one of them passes this size: in this job, only the join's raw
     * keyed state grows past it (the source's split state and the other operators' are tiny).
     */
    static final long FAIL_PAST_BYTES = 16 * 1024;

    static final AtomicBoolean FAILED = new AtomicBoolean();

    /** The thread of the failed write. */
    static volatile String failedIn;

    static final AtomicInteger LARGE_WRITTEN_AFTER_FAILURE = new AtomicInteger();
    static final Queue<String> OUTPUT = new ConcurrentLinkedQueue<>();

    @Test
    void aCheckpointWhoseStateWriteFailsIsDeclinedAndTheJobGoesOn() throws Exception {
        UsersDomainsTrace trace = UsersDomainsTrace.generate(42, 4000, 300);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        Configuration conf = new Configuration();
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, FailOnce.class.getName());
        conf.set(CheckpointingOptions.TOLERABLE_FAILURE_NUMBER, 100);
        env.configure(conf);
        env.enableCheckpointing(100);
        env.setParallelism(1);
        List<String> events = RecoveryTest.encoded(trace);
        DataStream<String> source =
                env.fromSequence(0, events.size() - 1).map(new RecoveryTest.Emit(events));
        RecoveryTest.decodeAndJoin(
                RecoveryTest.join(JoinType.FULL),
                source,
                row -> {
                    OUTPUT.add(row.toString());
                    return row.toString();
                });
        env.execute("failed-checkpoint");

        assertTrue(FAILED.get(), "no checkpoint stream grew past " + FAIL_PAST_BYTES + " bytes");
        // Flink's thread pool of asynchronous checkpoint parts (StreamTask), not the task thread.
        assertTrue(
                failedIn.startsWith("AsyncOperations"),
                "the join state was written in " + failedIn);
        assertTrue(
                LARGE_WRITTEN_AFTER_FAILURE.get() > 0, "no later checkpoint wrote the join state");
        assertEquals(
                ReferenceJoin.usersDomains(trace, JoinType.FULL),
                Changelogs.materialize(new ArrayList<>(OUTPUT)));
    }

    /**
     * Checkpoint storage in the JobManager's memory whose first stream to pass {@link
     * #FAIL_PAST_BYTES} fails there; named by class in {@code execution.checkpointing.storage}.
     */
    public static final class FailOnce
            implements CheckpointStorage, CheckpointStorageFactory<FailOnce> {
        private static final long serialVersionUID = 1L;
        private final JobManagerCheckpointStorage memory =
                new JobManagerCheckpointStorage(64 << 20);

        @Override
        public FailOnce createFromConfig(ReadableConfig config, ClassLoader classLoader) {
            return new FailOnce();
        }

        @Override
        public CompletedCheckpointStorageLocation resolveCheckpoint(String pointer)
                throws IOException {
            return memory.resolveCheckpoint(pointer);
        }

        @Override
        public CheckpointStorageAccess createCheckpointStorage(JobID job) throws IOException {
            return new Access(memory.createCheckpointStorage(job));
        }
    }

    /** The JobManager storage's access, with its task-side streams failing once. */
    private static final class Access implements CheckpointStorageAccess {
        private final CheckpointStorageAccess inner;

        Access(CheckpointStorageAccess inner) {
            this.inner = inner;
        }

        @Override
        public CheckpointStreamFactory resolveCheckpointStorageLocation(
                long checkpointId, CheckpointStorageLocationReference reference)
                throws IOException {
            return new Streams(inner.resolveCheckpointStorageLocation(checkpointId, reference));
        }

        @Override
        public boolean supportsHighlyAvailableStorage() {
            return inner.supportsHighlyAvailableStorage();
        }

        @Override
        public boolean hasDefaultSavepointLocation() {
            return inner.hasDefaultSavepointLocation();
        }

        @Override
        public CompletedCheckpointStorageLocation resolveCheckpoint(String pointer)
                throws IOException {
            return inner.resolveCheckpoint(pointer);
        }

        @Override
        public void initializeBaseLocationsForCheckpoint() throws IOException {
            inner.initializeBaseLocationsForCheckpoint();
        }

        @Override
        public CheckpointStorageLocation initializeLocationForCheckpoint(long checkpointId)
                throws IOException {
            return inner.initializeLocationForCheckpoint(checkpointId);
        }

        @Override
        public CheckpointStorageLocation initializeLocationForSavepoint(
                long checkpointId, String pointer) throws IOException {
            return inner.initializeLocationForSavepoint(checkpointId, pointer);
        }

        @Override
        public CheckpointStateOutputStream createTaskOwnedStateStream() throws IOException {
            return inner.createTaskOwnedStateStream();
        }

        @Override
        public CheckpointStateToolset createTaskOwnedCheckpointStateToolset() {
            return inner.createTaskOwnedCheckpointStateToolset();
        }
    }

    /** A checkpoint's stream factory whose streams fail once. */
    private static final class Streams implements CheckpointStreamFactory {
        private final CheckpointStreamFactory inner;

        Streams(CheckpointStreamFactory inner) {
            this.inner = inner;
        }

        @Override
        public CheckpointStateOutputStream createCheckpointStateOutputStream(
                CheckpointedStateScope scope) throws IOException {
            return new FailOnceStream(inner.createCheckpointStateOutputStream(scope));
        }

        @Override
        public boolean canFastDuplicate(StreamStateHandle handle, CheckpointedStateScope scope)
                throws IOException {
            return inner.canFastDuplicate(handle, scope);
        }

        @Override
        public List<StreamStateHandle> duplicate(
                List<StreamStateHandle> handles, CheckpointedStateScope scope) throws IOException {
            return inner.duplicate(handles, scope);
        }
    }

    /**
     * A stream that fails the first write to take any stream past {@link #FAIL_PAST_BYTES}, and
     * counts the streams past it written after that.
     */
    private static final class FailOnceStream extends CheckpointStateOutputStream {
        private final CheckpointStateOutputStream inner;

        FailOnceStream(CheckpointStateOutputStream inner) {
            this.inner = inner;
        }

        @Override
        public void write(int b) throws IOException {
            failIfPast(1);
            inner.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            failIfPast(len);
            inner.write(b, off, len);
        }

        private void failIfPast(int more) throws IOException {
            if (inner.getPos() + more > FAIL_PAST_BYTES && FAILED.compareAndSet(false, true)) {
                failedIn = Thread.currentThread().getName();
                throw new IOException("checkpoint storage failure (test) at " + inner.getPos());
            }
        }

        @Override
        public long getPos() throws IOException {
            return inner.getPos();
        }

        @Override
        public void flush() throws IOException {
            inner.flush();
        }

        @Override
        public void sync() throws IOException {
            inner.sync();
        }

        @Override
        public StreamStateHandle closeAndGetHandle() throws IOException {
            if (FAILED.get() && inner.getPos() > FAIL_PAST_BYTES) {
                LARGE_WRITTEN_AFTER_FAILURE.incrementAndGet();
            }
            return inner.closeAndGetHandle();
        }

        @Override
        public void close() throws IOException {
            inner.close();
        }
    }
}
