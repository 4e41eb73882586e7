package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.cdcjoin.flink.nativelib.NativeDecoder;
import dev.cdcjoin.flink.runtime.JoinOutput;
import dev.cdcjoin.flink.runtime.NativeJoinOperator;
import java.util.List;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;

/**
 * A batch whose joined rows are more than a native call's output bound (32 MiB, {@link
 * dev.cdcjoin.flink.nativelib.KeyGroupJoin#hasPending}) goes through the join operator whole: the
 * operator asks for every piece within the same flush (shown to fail, 400,000 rows of 700,000, with
 * the operator taking only the first piece).
 */
class HotKeyOutputTest {

    @Test
    void aBatchOfAHotKeysChangesIsEmittedWhole() throws Exception {
        JoinSpec def = RawOutputTest.usersDomains(JoinType.INNER).build().spec();
        int domains = 100_000;
        int updates = 3;
        try (NativeDecoder users = new NativeDecoder(def.left().decoderConfigJson(false));
                NativeDecoder hosts = new NativeDecoder(def.right().decoderConfigJson(false));
                var h =
                        CheckpointChunksTest.harness(
                                NativeJoinOperator.of(
                                        def, JoinOutput.ROWS, 4096, 1000, BadRecordPolicy.FAIL),
                                null)) {
            NativeJoinOperator<?> op = (NativeJoinOperator<?>) h.getOperator();
            for (int d = 0; d < domains; d++) {
                String domain = "{\"id\":" + d + ",\"user_id\":1,\"domain\":\"d" + d + ".com\"}";
                h.processElement2(JoinHarnesses.batch(CheckpointChunksTest.change(hosts, domain)));
            }
            op.flush();
            h.processElement1(JoinHarnesses.batch(CheckpointChunksTest.change(users, user(0))));
            for (int v = 1; v <= updates; v++) {
                String update =
                        "{\"op\":\"u\",\"before\":" + user(v - 1) + ",\"after\":" + user(v) + "}";
                for (ChangeRecord c : NativeChanges.decode(users, update)) {
                    h.processElement1(JoinHarnesses.batch(c));
                }
            }
            op.flush();
            List<Row> rows = h.extractOutputValues();
            // The insert joins every domain; each update retracts and inserts every joined row.
            assertEquals((long) domains * (1 + 2 * updates), rows.size());
            assertEquals(name(updates), rows.get(rows.size() - 1).getField(1), "the last row");
        }
    }

    private static String name(int version) {
        return "user one, version " + version;
    }

    private static String user(int version) {
        return "{\"id\":1,\"name\":\"" + name(version) + "\"}";
    }
}
