package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.BadRecord;
import dev.cdcjoin.flink.BadRecordPolicy;
import dev.cdcjoin.flink.CdcJoinMetrics;
import dev.cdcjoin.flink.UpsertRecord;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.types.Row;
import org.apache.flink.util.Collector;

/**
 * The Java engine's decode step in the job graph, the counterpart of the native {@code
 * NativeDecodeOperator}: decodes one table's records into changelog rows. Run it at the source's
 * parallelism (chained), so a row's changes keep their order; {@link JavaJoin} does.
 *
 * <p>Records: Debezium JSON messages ({@code byte[]}, {@code String} or a {@link
 * dev.cdcjoin.flink.KafkaMessage}'s value) and upsert-kafka records ({@link UpsertRecord}, or a
 * {@code KafkaMessage}'s key and value), read by {@link DebeziumJsonReader}; or {@code Row(before,
 * op, after)} envelopes, read by {@link RowEnvelopeReader} (see {@link TableInput}). Records that
 * cannot be decoded fail the job ({@link BadRecordPolicy#FAIL}, with a {@link
 * DebeziumDecodeException} naming the record) or go to the side output {@link BadRecord#OUTPUT}
 * ({@link BadRecordPolicy#SIDE_OUTPUT}). Metrics: {@link CdcJoinMetrics#TOMBSTONES}, {@link
 * CdcJoinMetrics#BAD_RECORDS}.
 *
 * @param <T> {@code byte[]}, {@code String}, {@code KafkaMessage}, {@link UpsertRecord} or {@link
 *     Row}
 */
final class JavaDecodeFunction<T> extends ProcessFunction<T, Row> {

    private static final long serialVersionUID = 1L;

    private final TableInput table;
    private final BadRecords badRecords;

    private transient Counter tombstones;

    /**
     * A decode step.
     *
     * @param table the table and what its records are
     * @param policy what to do with records that cannot be decoded
     */
    JavaDecodeFunction(TableInput table, BadRecordPolicy policy) {
        this.table = table;
        this.badRecords = new BadRecords(policy, CdcJoinMetrics.BAD_RECORDS);
    }

    @Override
    public void open(OpenContext openContext) {
        table.open();
        tombstones = getRuntimeContext().getMetricGroup().counter(CdcJoinMetrics.TOMBSTONES);
        badRecords.open(getRuntimeContext());
    }

    @Override
    public void processElement(T record, Context ctx, Collector<Row> out) {
        if (table.decode(record, out, badRecords, r -> ctx.output(BadRecord.OUTPUT, r))) {
            tombstones.inc();
        }
    }
}
