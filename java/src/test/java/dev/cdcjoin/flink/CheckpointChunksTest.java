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
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
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
        Map.Entry<OperatorSubtaskState, NativeCounters> state =
                snapshotOfUsers(def, USERS, CheckpointChunksTest::user);
        NativeCounters before = state.getValue();
        assertTrue(
                before.get(NativeCounters.STATE_ROW_BYTES)
                        > 2L * NativeJoinOperator.SNAPSHOT_CHUNK_BYTES,
                "state of "
                        + before.get(NativeCounters.STATE_ROW_BYTES)
                        + " bytes: fewer than 3 chunks");
        int[] ids = IntStream.iterate(0, i -> i < USERS, i -> i + 997).toArray();
        List<Row> rows =
                joinDomains(
                        def,
                        state.getKey(),
                        after -> {
                            assertEquals(USERS, after.get(NativeCounters.STATE_ROWS));
                            assertEquals(
                                    before.get(NativeCounters.STATE_ROW_BYTES),
                                    after.get(NativeCounters.STATE_ROW_BYTES));
                        },
                        ids);
        List<String> expected = new ArrayList<>();
        for (int i : ids) {
            Row row =
                    Row.ofKind(RowKind.INSERT, (long) i, "user " + i, (long) i, (long) i, "d" + i);
            expected.add(row.toString());
        }
        assertEquals(expected, rows.stream().map(Row::toString).collect(Collectors.toList()));
    }

    /**
     * A row three times a chunk is checkpointed (in a chunk of its own, larger than the others) and
     * restored whole, beside small rows of the same key group's neighbours.
     */
    @Test
    void aRowLargerThanAChunkRestoresWhole() throws Exception {
        JoinSpec def = RawOutputTest.usersDomains(JoinType.INNER).build().spec();
        String large = "x".repeat(3 * NativeJoinOperator.SNAPSHOT_CHUNK_BYTES);
        Map.Entry<OperatorSubtaskState, NativeCounters> state =
                snapshotOfUsers(
                        def, 100, i -> i == 7 ? "{\"id\":7,\"name\":\"" + large + "\"}" : user(i));
        List<Row> rows =
                joinDomains(
                        def,
                        state.getKey(),
                        after -> assertEquals(100, after.get(NativeCounters.STATE_ROWS)),
                        6,
                        7,
                        8);
        List<Object> names = rows.stream().map(r -> r.getField(1)).collect(Collectors.toList());
        assertEquals(List.of("user 6", large, "user 8"), names);
    }

    /**
     * A snapshot of the join once it holds the users {@code user.apply(0)} to {@code user.apply(n -
     * 1)}, and its counters then.
     */
    private static Map.Entry<OperatorSubtaskState, NativeCounters> snapshotOfUsers(
            JoinSpec def, int n, IntFunction<String> user) throws Exception {
        try (NativeDecoder users = new NativeDecoder(def.left().decoderConfigJson(false));
                var h = join(def, null)) {
            for (int i = 0; i < n; i++) {
                h.processElement1(JoinHarnesses.batch(change(users, user.apply(i))));
            }
            NativeJoinOperator<?> op = (NativeJoinOperator<?>) h.getOperator();
            op.flush();
            NativeCounters stats = op.nativeStats();
            return Map.entry(h.snapshot(1, 1), stats);
        }
    }

    /**
     * The join restored from {@code snapshot}, its counters handed to {@code restored}, then domain
     * {@code i} of user {@code i} for each of {@code ids}: the rows it joins.
     */
    private static List<Row> joinDomains(
            JoinSpec def,
            OperatorSubtaskState snapshot,
            Consumer<NativeCounters> restored,
            int... ids)
            throws Exception {
        try (NativeDecoder domains = new NativeDecoder(def.right().decoderConfigJson(false));
                var h = join(def, snapshot)) {
            NativeJoinOperator<?> op = (NativeJoinOperator<?>) h.getOperator();
            restored.accept(op.nativeStats());
            for (int i : ids) {
                String domain =
                        "{\"id\":" + i + ",\"user_id\":" + i + ",\"domain\":\"d" + i + "\"}";
                h.processElement2(JoinHarnesses.batch(change(domains, domain)));
            }
            op.flush();
            return h.extractOutputValues();
        }
    }

    /** The join operator of these tests, restored from {@code state} if not null. */
    private static KeyedTwoInputStreamOperatorTestHarness<Integer, ChangeBatch, ChangeBatch, Row>
            join(JoinSpec def, OperatorSubtaskState state) throws Exception {
        return harness(
                NativeJoinOperator.of(def, JoinOutput.ROWS, 1024, 1000, BadRecordPolicy.FAIL),
                state);
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
