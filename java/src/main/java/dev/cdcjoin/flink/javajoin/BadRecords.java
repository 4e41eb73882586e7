package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.BadRecord;
import dev.cdcjoin.flink.BadRecordPolicy;
import java.io.Serializable;
import java.util.Objects;
import java.util.function.Supplier;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;

/**
 * What a decode function does with a record it cannot decode, under its {@link BadRecordPolicy}:
 * count it in the {@code badRecords} metric, then fail the job or send it to {@link
 * JavaJoin#BAD_RECORDS}.
 */
final class BadRecords implements Serializable {

    private static final long serialVersionUID = 1L;

    private final BadRecordPolicy policy;

    private transient Counter counter;

    BadRecords(BadRecordPolicy policy) {
        this.policy = Objects.requireNonNull(policy, "policy");
    }

    /** Registers the {@code badRecords} metric; call from the function's {@code open}. */
    void open(RuntimeContext ctx) {
        counter = ctx.getMetricGroup().counter("badRecords");
    }

    /**
     * Counts a record that could not be decoded, then rethrows {@code e} ({@link
     * BadRecordPolicy#FAIL}) or emits it to {@link JavaJoin#BAD_RECORDS}.
     *
     * @param e why the record was rejected
     * @param ctx the function's context, for the side output
     * @param source the table's name
     * @param index the record's number in its input
     * @param raw the record's bytes (asked for only when it goes to the side output)
     */
    void reject(
            DebeziumDecodeException e,
            ProcessFunction<?, ?>.Context ctx,
            String source,
            long index,
            Supplier<byte[]> raw) {
        counter.inc();
        if (policy == BadRecordPolicy.FAIL) {
            throw e;
        }
        ctx.output(JavaJoin.BAD_RECORDS, new BadRecord(source, index, raw.get(), e.getMessage()));
    }
}
