package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.cdcjoin.flink.nativelib.NativeCounters;
import dev.cdcjoin.flink.nativelib.NativeDecoder;
import dev.cdcjoin.flink.runtime.BatchingOperator;
import dev.cdcjoin.flink.runtime.InputEncoder;
import dev.cdcjoin.flink.runtime.JoinOutput;
import dev.cdcjoin.flink.runtime.NativeDecodeOperator;
import dev.cdcjoin.flink.runtime.NativeJoinOperator;
import java.nio.charset.StandardCharsets;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

/**
 * A batch is flushed when it holds {@link BatchingOperator#MAX_BATCH_BYTES}, whatever its records:
 * messages of many MB (a TOASTed document) would otherwise fill a batch's buffer, capped below 2
 * GiB, long before {@code batchSize} records, and a valid record would find no room (the decode
 * step reported it as a bad record; the join failed the job). Records of 12 MiB here, {@code
 * batchSize} 1024 and a flush delay of an hour: only the byte bound can flush.
 */
class BatchBytesTest {

    /** Characters of a large name: 12 MiB. */
    private static final int LARGE = 12 << 20;

    /** Records of {@link #LARGE} bytes that reach the bound: the third. */
    private static final int TO_THE_BOUND = BatchingOperator.MAX_BATCH_BYTES / LARGE + 1;

    private static String user(int id) {
        return "{\"id\":" + id + ",\"name\":\"" + "x".repeat(LARGE) + "\"}";
    }

    @Test
    void aDecodeStepFlushesAtTheByteBound() throws Exception {
        JoinSpec def = RawOutputTest.usersDomains(JoinType.INNER).build().spec();
        NativeDecodeOperator<byte[], ChangeRecord> op =
                NativeDecodeOperator.changes(
                        new NativeDecodeOperator.Settings<>(
                                def.left().decoderConfigJson(false),
                                "users",
                                InputEncoder.jsonBytes(),
                                BadRecordPolicy.FAIL,
                                BadRecord.OUTPUT,
                                1024,
                                3_600_000));
        try (var h = new OneInputStreamOperatorTestHarness<byte[], ChangeRecord>(op)) {
            h.open();
            for (int i = 1; i <= TO_THE_BOUND; i++) {
                assertEquals(0, h.extractOutputValues().size(), "decoded before " + i);
                String json = "{\"op\":\"c\",\"after\":" + user(i) + "}";
                h.processElement(new StreamRecord<>(json.getBytes(StandardCharsets.UTF_8)));
            }
            assertEquals(TO_THE_BOUND, h.extractOutputValues().size());
        }
    }

    @Test
    void aJoinFlushesAtTheByteBound() throws Exception {
        JoinSpec def = RawOutputTest.usersDomains(JoinType.INNER).build().spec();
        NativeJoinOperator<org.apache.flink.types.Row> op =
                NativeJoinOperator.of(def, JoinOutput.ROWS, 1024, 3_600_000, BadRecordPolicy.FAIL);
        try (NativeDecoder users = new NativeDecoder(def.left().decoderConfigJson(false));
                var h = CheckpointChunksTest.harness(op, null)) {
            for (int i = 1; i <= TO_THE_BOUND; i++) {
                assertEquals(
                        0, op.nativeStats().get(NativeCounters.STATE_ROWS), "joined before " + i);
                ChangeRecord change = CheckpointChunksTest.change(users, user(i));
                h.processElement1(JoinHarnesses.batch(change));
            }
            assertEquals(TO_THE_BOUND, op.nativeStats().get(NativeCounters.STATE_ROWS));
        }
    }
}
