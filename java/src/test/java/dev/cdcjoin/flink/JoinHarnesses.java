package dev.cdcjoin.flink;

import dev.cdcjoin.flink.runtime.ChangeBatch;
import dev.cdcjoin.flink.runtime.KeyGroupRoutes;
import dev.cdcjoin.flink.runtime.NativeJoinOperator;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;

/**
 * The native join operator in Flink's keyed test harness (one subtask, max parallelism {@value
 * #MAX_PARALLELISM}), keyed as the job keys it, fed changes one by one as batches of one.
 */
final class JoinHarnesses {

    /** The harness's max parallelism (Flink's default for its test harness). */
    static final int MAX_PARALLELISM = 1;

    private JoinHarnesses() {}

    /** A harness around {@code op}, keyed by key group as in a job; not set up. */
    static <OUT> KeyedTwoInputStreamOperatorTestHarness<Integer, ChangeBatch, ChangeBatch, OUT> of(
            NativeJoinOperator<OUT> op) throws Exception {
        KeyGroupRoutes routes = new KeyGroupRoutes();
        return new KeyedTwoInputStreamOperatorTestHarness<>(op, routes, routes, Types.INT);
    }

    /** A change as a batch of one, with no timestamp. */
    static StreamRecord<ChangeBatch> batch(ChangeRecord change) {
        return batch(new StreamRecord<>(change));
    }

    /** A change as a batch of one, keeping the record's timestamp (or its absence). */
    static StreamRecord<ChangeBatch> batch(StreamRecord<ChangeRecord> change) {
        return new StreamRecord<>(ChangeBatch.of(MAX_PARALLELISM, change));
    }
}
