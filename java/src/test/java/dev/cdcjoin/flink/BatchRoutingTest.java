package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.runtime.ChangeBatch;
import dev.cdcjoin.flink.runtime.JoinOutput;
import dev.cdcjoin.flink.runtime.KeyGroupRoutes;
import dev.cdcjoin.flink.runtime.NativeJoinOperator;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;

/**
 * The join never joins a batch against the wrong state: one partitioned for another max
 * parallelism, or of a key group its subtask does not own, fails the job naming both.
 */
class BatchRoutingTest {

    /** Subtask {@code index} of a join keyed by {@code routes} (Flink's key context checked). */
    private static KeyedTwoInputStreamOperatorTestHarness<Integer, ChangeBatch, ChangeBatch, Row>
            subtask(
                    KeySelector<ChangeBatch, Integer> routes,
                    int maxParallelism,
                    int parallelism,
                    int index)
                    throws Exception {
        var h =
                new KeyedTwoInputStreamOperatorTestHarness<>(
                        NativeJoinOperator.of(
                                NativeBridgeTest.usersDomains(JoinType.INNER),
                                JoinOutput.ROWS,
                                16,
                                1000,
                                BadRecordPolicy.FAIL),
                        routes,
                        routes,
                        Types.INT,
                        maxParallelism,
                        parallelism,
                        index);
        h.open();
        return h;
    }

    @Test
    void aBatchOfAnotherMaxParallelismFailsTheJoin() throws Exception {
        try (var h = subtask(new KeyGroupRoutes(), 128, 1, 0)) {
            IllegalStateException e =
                    assertThrows(
                            IllegalStateException.class,
                            () ->
                                    h.processElement1(
                                            new StreamRecord<>(
                                                    new ChangeBatch(5, 256, 1, new byte[0]))));
            assertTrue(
                    e.getMessage()
                            .startsWith(
                                    "users: a batch of key group 5 was partitioned for max"
                                            + " parallelism 256, this join's is 128"),
                    e.getMessage());
        }
    }

    /** A batch misrouted to subtask 0 (a key selector that sends everything to key group 0). */
    @Test
    void aBatchOfAForeignKeyGroupFailsTheJoin() throws Exception {
        int keyGroupZero = KeyGroupRoutes.routes(4)[0];
        try (var h = subtask(batch -> keyGroupZero, 4, 2, 0)) {
            IllegalStateException e =
                    assertThrows(
                            IllegalStateException.class,
                            () ->
                                    h.processElement2(
                                            new StreamRecord<>(
                                                    new ChangeBatch(3, 4, 1, new byte[0]))));
            assertEquals(
                    "domains: a batch of key group 3 reached subtask 0, which owns key groups"
                            + " KeyGroupRange{startKeyGroup=0, endKeyGroup=1}",
                    e.getMessage());
        }
    }
}
