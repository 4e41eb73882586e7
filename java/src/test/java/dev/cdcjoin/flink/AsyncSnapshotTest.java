package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.nativelib.NativeCounters;
import dev.cdcjoin.flink.nativelib.NativeDecoder;
import dev.cdcjoin.flink.runtime.ChangeBatch;
import dev.cdcjoin.flink.runtime.JoinOutput;
import dev.cdcjoin.flink.runtime.NativeJoinOperator;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.memory.MemCheckpointStreamFactory;
import org.apache.flink.streaming.api.operators.OperatorSnapshotFutures;
import org.apache.flink.streaming.api.operators.StreamOperator;
import org.apache.flink.streaming.runtime.tasks.mailbox.Mail;
import org.apache.flink.streaming.runtime.tasks.mailbox.TaskMailbox;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The native join's state is frozen in a checkpoint's synchronous phase and written in its
 * asynchronous phase: the synchronous call opens no stream, the state written later is the state of
 * the freeze whatever the join did meanwhile, and the frozen copies are released whether the write
 * succeeds, fails or is cancelled, the join going on.
 */
class AsyncSnapshotTest {

    private static final int USERS = 2_000;

    private final JoinSpec def = RawOutputTest.usersDomains(JoinType.INNER).build().spec();
    private NativeDecoder users;
    private NativeDecoder domains;
    private KeyedTwoInputStreamOperatorTestHarness<Integer, ChangeBatch, ChangeBatch, Row> h;
    private NativeJoinOperator<Row> op;

    @BeforeEach
    void open() throws Exception {
        users = new NativeDecoder(def.left().decoderConfigJson(false));
        domains = new NativeDecoder(def.right().decoderConfigJson(false));
        op = NativeJoinOperator.of(def, JoinOutput.ROWS, 1024, 1000, BadRecordPolicy.FAIL);
        h = CheckpointChunksTest.harness(op, null);
        addUsers(0, USERS);
    }

    @AfterEach
    void close() throws Exception {
        h.close();
        users.close();
        domains.close();
    }

    @Test
    void theSynchronousPhaseWritesNothingAndTheStateOfTheFreezeIsWritten() throws Exception {
        TestStreams streams = new TestStreams(false);
        OperatorSnapshotFutures futures = checkpoint(1, streams);
        assertEquals(0, streams.opened, "a stream was opened in the synchronous phase");
        assertFalse(futures.getKeyedStateRawFuture().isDone());

        addUsers(USERS, 2 * USERS); // the join goes on: these are not in checkpoint 1
        assertEquals(0, frozenBytes(), "keys new since the freeze cost the snapshot nothing");
        addUsers(0, 1); // user 0 again: an upsert of a key checkpoint 1 holds
        assertTrue(frozenBytes() > 0, "a key written after the freeze is copied");

        runAsyncPhase(futures);
        assertEquals(1, streams.opened);
        OperatorSubtaskState state = TestLine.jobManagerOwnedState(futures);
        addUsers(2 * USERS, 2 * USERS + 1);
        assertEquals(0, frozenBytes(), "the frozen state is released after its write");

        assertRestoresUsers(state, USERS, 2 * USERS);
    }

    /**
     * With no batch after the write (an idle input, or one that ended), the writer asks the task
     * thread to merge the copies back: the task's mailbox settles the join and frees them, so the
     * next checkpoint's synchronous phase has nothing to merge.
     */
    @Test
    void aWrittenSnapshotIsSettledOnTheTaskThreadWithoutABatch() throws Exception {
        OperatorSnapshotFutures futures = checkpoint(1, new TestStreams(false));
        addUsers(0, USERS); // upserts of every key the checkpoint holds: each one copied
        long copied = frozenBytes();
        assertTrue(copied > 0);
        runAsyncPhase(futures);
        assertEquals(copied, frozenBytes(), "no batch came: the counters are those of the last");

        int mails = 0;
        for (Optional<Mail> mail = h.getTaskMailbox().tryTake(TaskMailbox.MIN_PRIORITY);
                mail.isPresent();
                mail = h.getTaskMailbox().tryTake(TaskMailbox.MIN_PRIORITY)) {
            mail.get().run();
            mails++;
        }
        assertEquals(1, mails, "the writer asked the task thread once");
        assertEquals(0, frozenBytes(), "the task thread merged the copies back and freed them");
        assertRestoresUsers(TestLine.jobManagerOwnedState(futures), USERS, USERS);
    }

    /**
     * A second checkpoint (or a savepoint) taken while the first is still to be written freezes
     * without writing anything on the task thread: the keys changed since the first stay copies,
     * shared by both; each checkpoint then restores the state of its own instant.
     */
    @Test
    void aCheckpointDuringAnotherWriteFreezesWithoutWritingAndEachIsItsInstant() throws Exception {
        TestStreams streams = new TestStreams(false);
        OperatorSnapshotFutures first = checkpoint(1, streams);
        addUsers(USERS, 2 * USERS);
        addUsers(0, USERS / 2); // upserts of keys the first holds, in most key groups: copied
        long copied = frozenBytes();
        assertTrue(copied > 0);

        OperatorSnapshotFutures second = checkpoint(2, streams);
        addUsers(2 * USERS, 2 * USERS + 1); // a new key (copies nothing); refreshes the counters
        assertEquals(copied, frozenBytes(), "the second freeze wrote or merged on the task thread");
        assertEquals(0, streams.opened, "a stream was opened in a synchronous phase");
        addUsers(2 * USERS + 1, 3 * USERS);
        addUsers(0, USERS / 2);

        runAsyncPhase(second);
        OperatorSubtaskState atSecond = TestLine.jobManagerOwnedState(second);
        runAsyncPhase(first);
        OperatorSubtaskState atFirst = TestLine.jobManagerOwnedState(first);
        addUsers(3 * USERS, 3 * USERS + 1); // the next batch merges the copies back
        assertEquals(0, frozenBytes(), "the frozen states are released after their writes");

        assertRestoresUsers(atFirst, USERS, 3 * USERS);
        assertRestoresUsers(atSecond, 2 * USERS, 3 * USERS);
    }

    @Test
    void aFailedAsynchronousWriteReleasesTheFrozenStateAndTheJoinGoesOn() throws Exception {
        TestStreams failing = new TestStreams(true);
        OperatorSnapshotFutures futures = checkpoint(1, failing);
        addUsers(USERS, 2 * USERS);
        addUsers(0, 1);
        assertTrue(frozenBytes() > 0);

        futures.getKeyedStateRawFuture().run();
        ExecutionException e =
                assertThrows(ExecutionException.class, futures.getKeyedStateRawFuture()::get);
        assertInstanceOf(IOException.class, e.getCause());
        assertTrue(failing.last.closed, "the failed stream is closed");
        futures.cancel(); // as Flink's AsyncCheckpointRunnable does when it declines
        addUsers(2 * USERS, 2 * USERS + 1);
        assertEquals(0, frozenBytes());

        OperatorSubtaskState next = h.snapshot(2, 2);
        try (var restored = CheckpointChunksTest.harness(rowsOperator(), next)) {
            NativeJoinOperator<?> r = (NativeJoinOperator<?>) restored.getOperator();
            assertEquals(2 * USERS + 1, r.nativeStats().get(NativeCounters.STATE_ROWS));
        }
    }

    @Test
    void aCheckpointCancelledBeforeItsWriteReleasesTheFrozenState() throws Exception {
        TestStreams streams = new TestStreams(false);
        OperatorSnapshotFutures futures = checkpoint(1, streams);
        addUsers(USERS, 2 * USERS);
        addUsers(0, 1);
        assertTrue(frozenBytes() > 0);

        futures.cancel();
        addUsers(2 * USERS, 2 * USERS + 1);
        assertEquals(0, frozenBytes());
        assertEquals(0, streams.opened);
    }

    /** The operator's part of checkpoint {@code id}, as the task thread takes it. */
    private OperatorSnapshotFutures checkpoint(long id, CheckpointStreamFactory streams)
            throws Exception {
        return checkpoint(op, id, streams);
    }

    /** {@code op}'s part of checkpoint {@code id}, as the task thread takes it. */
    static OperatorSnapshotFutures checkpoint(
            StreamOperator<?> op, long id, CheckpointStreamFactory streams) throws Exception {
        op.prepareSnapshotPreBarrier(id);
        return op.snapshotState(
                id, id, CheckpointOptions.forCheckpointWithDefaultLocation(), streams);
    }

    /** Writes the raw keyed state of {@code futures} on another thread, as Flink's async phase. */
    static void runAsyncPhase(OperatorSnapshotFutures futures) throws Exception {
        ExecutorService asyncPhase = Executors.newSingleThreadExecutor();
        try {
            asyncPhase.submit(futures.getKeyedStateRawFuture()).get();
        } finally {
            asyncPhase.shutdown();
        }
    }

    /**
     * With Flink's {@code execution.checkpointing.snapshot-compression} on, the join's sections are
     * LZ4-compressed (fewer checkpoint bytes), and they restore into a job without the setting.
     */
    @Test
    void flinksSnapshotCompressionCompressesTheSections() throws Exception {
        long[] sizes = new long[2];
        OperatorSubtaskState compressed = null;
        for (boolean compress : new boolean[] {false, true}) {
            NativeJoinOperator<Row> join = rowsOperator();
            try (var in = CheckpointChunksTest.harness(join, null, compress)) {
                for (int i = 0; i < USERS; i++) {
                    in.processElement1(
                            JoinHarnesses.batch(
                                    CheckpointChunksTest.change(
                                            users, CheckpointChunksTest.user(i))));
                }
                join.flush();
                OperatorSubtaskState state = in.snapshot(1, 1);
                sizes[compress ? 1 : 0] =
                        state.getRawKeyedState().stream()
                                .mapToLong(handle -> handle.getStateSize())
                                .sum();
                compressed = state;
            }
        }
        assertCompressed(sizes[1], sizes[0]);
        try (var restored = CheckpointChunksTest.harness(rowsOperator(), compressed)) {
            assertEquals(joinedOf(0, USERS), joinDomains(restored, 0, USERS));
        }
    }

    /**
     * Asserts that the same state took at most two thirds of the bytes with snapshot compression as
     * without: every section compressed, not some (the tests' generated names compress to about
     * half or less).
     */
    static void assertCompressed(long compressedBytes, long plainBytes) {
        assertTrue(
                3 * compressedBytes < 2 * plainBytes,
                "the same state: "
                        + compressedBytes
                        + " bytes compressed, "
                        + plainBytes
                        + " without");
    }

    /**
     * Asserts that {@code state} restores users {@code [0, users)}, the first {@code users} of
     * those a domain for each of {@code [0, probed)} joins.
     */
    private void assertRestoresUsers(OperatorSubtaskState state, int users, int probed)
            throws Exception {
        try (var restored = CheckpointChunksTest.harness(rowsOperator(), state)) {
            NativeJoinOperator<?> r = (NativeJoinOperator<?>) restored.getOperator();
            assertEquals(users, r.nativeStats().get(NativeCounters.STATE_ROWS));
            assertEquals(joinedOf(0, users), joinDomains(restored, 0, probed));
        }
    }

    private NativeJoinOperator<Row> rowsOperator() {
        return NativeJoinOperator.of(def, JoinOutput.ROWS, 1024, 1000, BadRecordPolicy.FAIL);
    }

    /** Inserts users {@code [from, to)} and joins them. */
    private void addUsers(int from, int to) throws Exception {
        for (int i = from; i < to; i++) {
            h.processElement1(
                    JoinHarnesses.batch(
                            CheckpointChunksTest.change(users, CheckpointChunksTest.user(i))));
        }
        op.flush();
    }

    private long frozenBytes() {
        return op.nativeStats().get(NativeCounters.STATE_FROZEN_BYTES);
    }

    /** Sends a domain for every user id in {@code [from, to)}; the joined rows, as strings. */
    private List<String> joinDomains(
            KeyedTwoInputStreamOperatorTestHarness<Integer, ChangeBatch, ChangeBatch, Row> in,
            int from,
            int to)
            throws Exception {
        for (int i = from; i < to; i++) {
            in.processElement2(
                    JoinHarnesses.batch(CheckpointChunksTest.change(domains, domain(i))));
        }
        ((NativeJoinOperator<?>) in.getOperator()).flush();
        List<String> joined = new ArrayList<>();
        for (Object r : in.extractOutputValues()) {
            joined.add(r.toString());
        }
        return joined;
    }

    /** The rows {@link #joinDomains} gives for users {@code [from, to)}. */
    private static List<String> joinedOf(int from, int to) {
        List<String> rows = new ArrayList<>();
        for (int i = from; i < to; i++) {
            rows.add(
                    Row.ofKind(RowKind.INSERT, (long) i, "user " + i, (long) i, (long) i, "d" + i)
                            .toString());
        }
        return rows;
    }

    private static String domain(int id) {
        return "{\"id\":" + id + ",\"user_id\":" + id + ",\"domain\":\"d" + id + "\"}";
    }

    /** Checkpoint streams in memory, counting those opened, or streams whose writes fail. */
    static final class TestStreams implements CheckpointStreamFactory {
        private final MemCheckpointStreamFactory memory = new MemCheckpointStreamFactory(64 << 20);
        private final boolean failing;
        int opened;
        FailingStream last;

        TestStreams(boolean failing) {
            this.failing = failing;
        }

        @Override
        public CheckpointStateOutputStream createCheckpointStateOutputStream(
                CheckpointedStateScope scope) throws IOException {
            opened++;
            if (failing) {
                last = new FailingStream();
                return last;
            }
            return memory.createCheckpointStateOutputStream(scope);
        }

        @Override
        public boolean canFastDuplicate(StreamStateHandle handle, CheckpointedStateScope scope) {
            return false;
        }

        @Override
        public List<StreamStateHandle> duplicate(
                List<StreamStateHandle> handles, CheckpointedStateScope scope) {
            throw new UnsupportedOperationException("no fast duplication");
        }
    }

    /** A checkpoint stream whose storage fails at the first write. */
    private static final class FailingStream extends CheckpointStateOutputStream {
        volatile boolean closed;

        @Override
        public void write(int b) throws IOException {
            throw new IOException("checkpoint storage failure (test)");
        }

        @Override
        public long getPos() {
            return 0;
        }

        @Override
        public void flush() {}

        @Override
        public void sync() {}

        @Override
        public StreamStateHandle closeAndGetHandle() throws IOException {
            throw new IOException("checkpoint storage failure (test)");
        }

        @Override
        public void close() {
            closed = true;
        }
    }
}
