package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.nativelib.NativeCounters;
import dev.cdcjoin.flink.nativelib.NativeDecoder;
import dev.cdcjoin.flink.runtime.ChangeBatch;
import dev.cdcjoin.flink.runtime.JoinOutput;
import dev.cdcjoin.flink.runtime.NativeJoinOperator;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;

/**
 * A native state several times {@link NativeJoinOperator#SNAPSHOT_CHUNK_BYTES} is checkpointed in
 * chunks and restored whole: the restored operator holds every row and joins with it.
 */
class CheckpointChunksTest {

    private static final int USERS = 300_000;

    @Test
    void aStateOfManyChunksRestoresWhole() throws Exception {
        JoinSpec def = RawOutputTest.usersDomains(JoinType.INNER).build().spec();
        OperatorSubtaskState snapshot;
        NativeCounters before;
        try (NativeDecoder users = new NativeDecoder(def.left().decoderConfigJson(false));
                var h =
                        harness(
                                NativeJoinOperator.of(
                                        def, JoinOutput.ROWS, 1024, 1000, BadRecordPolicy.FAIL),
                                null)) {
            for (int i = 0; i < USERS; i++) {
                h.processElement1(JoinHarnesses.batch(change(users, user(i))));
            }
            NativeJoinOperator<?> op = (NativeJoinOperator<?>) h.getOperator();
            op.flush();
            before = op.nativeStats();
            assertTrue(
                    before.get(NativeCounters.STATE_ROW_BYTES)
                            > 2L * NativeJoinOperator.SNAPSHOT_CHUNK_BYTES,
                    "state of "
                            + before.get(NativeCounters.STATE_ROW_BYTES)
                            + " bytes: fewer than 3 chunks");
            snapshot = h.snapshot(1, 1);
        }
        try (NativeDecoder domains = new NativeDecoder(def.right().decoderConfigJson(false));
                var h =
                        harness(
                                NativeJoinOperator.of(
                                        def, JoinOutput.ROWS, 1024, 1000, BadRecordPolicy.FAIL),
                                snapshot)) {
            NativeJoinOperator<?> op = (NativeJoinOperator<?>) h.getOperator();
            NativeCounters after = op.nativeStats();
            assertEquals(USERS, after.get(NativeCounters.STATE_ROWS));
            assertEquals(
                    before.get(NativeCounters.STATE_ROW_BYTES),
                    after.get(NativeCounters.STATE_ROW_BYTES));
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < USERS; i += 997) {
                String domain =
                        "{\"id\":" + i + ",\"user_id\":" + i + ",\"domain\":\"d" + i + "\"}";
                h.processElement2(JoinHarnesses.batch(change(domains, domain)));
                expected.add(
                        Row.ofKind(
                                        RowKind.INSERT,
                                        (long) i,
                                        "user " + i,
                                        (long) i,
                                        (long) i,
                                        "d" + i)
                                .toString());
            }
            op.flush();
            List<String> joined = new ArrayList<>();
            for (Object r : h.extractOutputValues()) {
                joined.add(r.toString());
            }
            assertEquals(expected, joined);
        }
    }

    /**
     * A row three times a chunk is checkpointed (in a chunk of its own, larger than the others) and
     * restored whole, beside small rows of the same key group's neighbours.
     */
    @Test
    void aRowLargerThanAChunkRestoresWhole() throws Exception {
        JoinSpec def = RawOutputTest.usersDomains(JoinType.INNER).build().spec();
        String large = "x".repeat(3 * NativeJoinOperator.SNAPSHOT_CHUNK_BYTES);
        OperatorSubtaskState snapshot;
        try (NativeDecoder users = new NativeDecoder(def.left().decoderConfigJson(false));
                var h =
                        harness(
                                NativeJoinOperator.of(
                                        def, JoinOutput.ROWS, 1024, 1000, BadRecordPolicy.FAIL),
                                null)) {
            for (int i = 0; i < 100; i++) {
                String user = i == 7 ? "{\"id\":7,\"name\":\"" + large + "\"}" : user(i);
                h.processElement1(JoinHarnesses.batch(change(users, user)));
            }
            ((NativeJoinOperator<?>) h.getOperator()).flush();
            snapshot = h.snapshot(1, 1);
        }
        try (NativeDecoder domains = new NativeDecoder(def.right().decoderConfigJson(false));
                var h =
                        harness(
                                NativeJoinOperator.of(
                                        def, JoinOutput.ROWS, 1024, 1000, BadRecordPolicy.FAIL),
                                snapshot)) {
            NativeJoinOperator<?> op = (NativeJoinOperator<?>) h.getOperator();
            assertEquals(100, op.nativeStats().get(NativeCounters.STATE_ROWS));
            for (int i : new int[] {6, 7, 8}) {
                String domain = "{\"id\":" + i + ",\"user_id\":" + i + ",\"domain\":\"d\"}";
                h.processElement2(JoinHarnesses.batch(change(domains, domain)));
            }
            op.flush();
            List<String> names = new ArrayList<>();
            for (Row r : h.extractOutputValues()) {
                names.add((String) r.getField(1));
            }
            assertEquals(List.of("user 6", large, "user 8"), names);
        }
    }

    static String user(int id) {
        return "{\"id\":" + id + ",\"name\":\"user " + id + "\"}";
    }

    /**
     * A harness, restored from {@code state} if not null, with managed memory accounting off (the
     * mock environment has too little managed memory for this state) and in-memory checkpoints of
     * up to 64 MiB (the default is 5 MiB).
     */
    static KeyedTwoInputStreamOperatorTestHarness<Integer, ChangeBatch, ChangeBatch, Row> harness(
            NativeJoinOperator<Row> op, OperatorSubtaskState state) throws Exception {
        return harness(op, state, false);
    }

    /** A harness whose job has Flink's {@code snapshot-compression} set to {@code compress}. */
    static KeyedTwoInputStreamOperatorTestHarness<Integer, ChangeBatch, ChangeBatch, Row> harness(
            NativeJoinOperator<Row> op, OperatorSubtaskState state, boolean compress)
            throws Exception {
        return JoinHarnesses.open(JoinHarnesses.of(op), state, compress);
    }

    static ChangeRecord change(NativeDecoder decoder, String after) {
        return NativeChanges.decode(
                        decoder, "{\"before\":null,\"after\":" + after + ",\"op\":\"c\"}")
                .get(0);
    }
}
