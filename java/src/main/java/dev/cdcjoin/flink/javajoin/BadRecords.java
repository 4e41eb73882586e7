package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.BadRecord;
import dev.cdcjoin.flink.BadRecordPolicy;
import dev.cdcjoin.flink.CdcJoinMetrics;
import java.io.Serializable;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.metrics.Counter;

/**
 * What a function does with a record it cannot use (a message the decoder cannot decode, a change
 * the join cannot apply), under its {@link BadRecordPolicy}: count it in a metric ({@link
 * CdcJoinMetrics#BAD_RECORDS} for a decode step, {@link CdcJoinMetrics#REJECTED} for the join),
 * then fail the job or send it to {@link BadRecord#OUTPUT}.
 */
final class BadRecords implements Serializable {

    private static final long serialVersionUID = 1L;

    private final BadRecordPolicy policy;

    /** The name of the metric that counts them. */
    private final String metric;

    private transient Counter counter;

    BadRecords(BadRecordPolicy policy, String metric) {
        this.policy = Objects.requireNonNull(policy, "policy");
        this.metric = Objects.requireNonNull(metric, "metric");
    }

    /** Registers the metric; call from the function's {@code open}. */
    void open(RuntimeContext ctx) {
        counter = ctx.getMetricGroup().counter(metric);
    }

    /**
     * Counts a bad record, then rethrows {@code e} ({@link BadRecordPolicy#FAIL}) or emits the
     * record to the side output.
     *
     * @param e why the record was rejected
     * @param sideOutput the function's {@link BadRecord#OUTPUT} output
     * @param record the record as reported (asked for only when it goes to the side output)
     */
    void reject(RuntimeException e, Consumer<BadRecord> sideOutput, Supplier<BadRecord> record) {
        counter.inc();
        if (policy == BadRecordPolicy.FAIL) {
            throw e;
        }
        sideOutput.accept(record.get());
    }
}
