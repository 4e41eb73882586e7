package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.nativelib.NativeDecoder;
import dev.cdcjoin.flink.runtime.ChangeBatch;
import dev.cdcjoin.flink.runtime.JoinOutput;
import dev.cdcjoin.flink.runtime.KeyGroupRoutes;
import dev.cdcjoin.flink.runtime.NativeMultiJoinOperator;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.StateObject;
import org.apache.flink.streaming.api.operators.OperatorSnapshotFutures;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The multi-way join's checkpoint is the two-table join's ({@link AsyncSnapshotTest}): its state is
 * frozen in the synchronous phase, which opens no stream, and written in the asynchronous phase as
 * it was at the freeze whatever the join did meanwhile; the keys copied meanwhile are released
 * after the write. Over the three-input mart of {@link MultiJoinTest} (users LEFT profiles FULL
 * settings). With Flink's snapshot compression on, its sections are compressed, as the two-table
 * join's.
 */
class MultiJoinAsyncSnapshotTest {

    private static final int USERS = 1_000;

    private final MultiJoinSpec def = MultiJoinTest.mart(Engine.NATIVE).build().spec();
    private final List<NativeDecoder> decoders = new ArrayList<>();
    private KeyedOneInputStreamOperatorTestHarness<Integer, Tuple2<Integer, ChangeBatch>, Row> h;
    private NativeMultiJoinOperator<Row> op;

    @BeforeEach
    void open() throws Exception {
        for (SideSpec input : def.inputs()) {
            decoders.add(new NativeDecoder(input.decoderConfigJson(false)));
        }
        op = operator();
        h = harness(op, null, false);
        addUsers(0, USERS, "user ");
    }

    @AfterEach
    void close() throws Exception {
        h.close();
        for (NativeDecoder d : decoders) {
            d.close();
        }
    }

    @Test
    void theSynchronousPhaseWritesNothingAndTheStateOfTheFreezeIsWritten() throws Exception {
        AsyncSnapshotTest.TestStreams streams = new AsyncSnapshotTest.TestStreams(false);
        OperatorSnapshotFutures futures = AsyncSnapshotTest.checkpoint(op, 1, streams);
        assertEquals(0, streams.opened, "a stream was opened in the synchronous phase");
        assertFalse(futures.getKeyedStateRawFuture().isDone());

        addUsers(USERS, 2 * USERS, "user "); // the join goes on: these are not in checkpoint 1
        assertEquals(0, frozenBytes(), "keys new since the freeze cost the snapshot nothing");
        addUsers(0, USERS / 2, "renamed "); // upserts of keys checkpoint 1 holds
        assertTrue(frozenBytes() > 0, "a key written after the freeze is copied");

        AsyncSnapshotTest.runAsyncPhase(futures);
        assertEquals(1, streams.opened);
        OperatorSubtaskState state = TestLine.jobManagerOwnedState(futures);
        addUsers(2 * USERS, 2 * USERS + 1, "user ");
        assertEquals(0, frozenBytes(), "the frozen state is released after its write");
        assertEquals(2 * USERS + 1, op.nativeStat("state_rows"));

        assertJoinsTheUsersOf(state);
    }

    /**
     * With Flink's {@code execution.checkpointing.snapshot-compression} on, the join's sections are
     * LZ4-compressed (the same state in fewer checkpoint bytes), and a state restores whatever the
     * switch says: uncompressed into a job with it, compressed into a job without it. The generated
     * names compress to less than two thirds (a third of the bytes, measured).
     */
    @Test
    void flinksSnapshotCompressionCompressesTheSectionsAndRestoresAcrossIt() throws Exception {
        OperatorSubtaskState plain = h.snapshot(1, 1);
        NativeMultiJoinOperator<Row> compressing = operator();
        OperatorSubtaskState compressed;
        try (var c = harness(compressing, plain, true)) {
            assertEquals(USERS, compressing.nativeStat("state_rows"));
            compressed = c.snapshot(2, 2);
        }
        long plainBytes = rawKeyedStateBytes(plain);
        long compressedBytes = rawKeyedStateBytes(compressed);
        AsyncSnapshotTest.assertCompressed(compressedBytes, plainBytes);
        assertJoinsTheUsersOf(compressed);
    }

    /**
     * Restores {@code state} into a join without snapshot compression and joins a profile to every
     * user id up to {@code 2 * USERS}: each of the {@link #USERS} users the state holds joins,
     * named "user " and its id.
     */
    private void assertJoinsTheUsersOf(OperatorSubtaskState state) throws Exception {
        NativeMultiJoinOperator<Row> restored = operator();
        try (var r = harness(restored, state, false)) {
            assertEquals(USERS, restored.nativeStat("state_rows"), "the rows of the freeze");
            for (int i = 0; i < 2 * USERS; i++) {
                r.processElement(
                        change(1, "{\"id\":" + i + ",\"user_id\":" + i + ",\"bio\":\"b\"}"));
            }
            restored.flush();
            List<String> joined = new ArrayList<>();
            for (Row row : r.extractOutputValues()) {
                if (row.getKind() == RowKind.INSERT) {
                    joined.add(row.toString());
                }
            }
            List<String> want = new ArrayList<>();
            for (int i = 0; i < USERS; i++) {
                want.add(
                        Row.ofKind(RowKind.INSERT, (long) i, "user " + i, (long) i, "b", null, null)
                                .toString());
            }
            assertEquals(want, joined, "each user of the freeze, named as then, with its profile");
        }
    }

    /** The bytes of the join's sections in {@code state}. */
    private static long rawKeyedStateBytes(OperatorSubtaskState state) {
        return state.getRawKeyedState().stream().mapToLong(StateObject::getStateSize).sum();
    }

    private NativeMultiJoinOperator<Row> operator() {
        return NativeMultiJoinOperator.of(def, JoinOutput.ROWS, 1024, 1000, BadRecordPolicy.FAIL);
    }

    /**
     * A harness around {@code op}, keyed by key group as in a job, restored from {@code state}, its
     * job's {@code snapshot-compression} set to {@code compress}.
     */
    private static KeyedOneInputStreamOperatorTestHarness<
                    Integer, Tuple2<Integer, ChangeBatch>, Row>
            harness(NativeMultiJoinOperator<Row> op, OperatorSubtaskState state, boolean compress)
                    throws Exception {
        KeyGroupRoutes routes = new KeyGroupRoutes();
        KeySelector<Tuple2<Integer, ChangeBatch>, Integer> key = t -> routes.getKey(t.f1);
        return JoinHarnesses.open(
                new KeyedOneInputStreamOperatorTestHarness<>(op, key, Types.INT), state, compress);
    }

    /** Inserts (or replaces) users {@code [from, to)}, named {@code name} and their id. */
    private void addUsers(int from, int to, String name) throws Exception {
        for (int i = from; i < to; i++) {
            h.processElement(change(0, "{\"id\":" + i + ",\"name\":\"" + name + i + "\"}"));
        }
        op.flush();
    }

    /** An insert of {@code after} on input {@code input}, as the job tags it. */
    private StreamRecord<Tuple2<Integer, ChangeBatch>> change(int input, String after) {
        ChangeBatch batch =
                JoinHarnesses.batch(CheckpointChunksTest.change(decoders.get(input), after))
                        .getValue();
        return new StreamRecord<>(Tuple2.of(input, batch));
    }

    private long frozenBytes() {
        return op.nativeStat("state_frozen_bytes");
    }
}
