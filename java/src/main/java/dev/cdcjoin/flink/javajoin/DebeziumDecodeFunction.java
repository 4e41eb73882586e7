package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.BadRecord;
import dev.cdcjoin.flink.BadRecordPolicy;
import dev.cdcjoin.flink.SideSpec;
import dev.cdcjoin.flink.UpsertRecord;
import java.nio.charset.StandardCharsets;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.types.Row;
import org.apache.flink.util.Collector;

/**
 * Decodes one table's Debezium JSON messages ({@code byte[]} or {@code String}), or its
 * upsert-kafka records ({@link UpsertRecord}), into changelog rows with a {@link
 * DebeziumJsonDecoder}; run it at the source's parallelism (chained), so a row's changes keep their
 * order.
 *
 * <p>Records that cannot be decoded fail the job ({@link BadRecordPolicy#FAIL}, with a {@link
 * DebeziumDecodeException} naming the record) or go to the side output {@link BadRecord#OUTPUT}
 * ({@link BadRecordPolicy#SIDE_OUTPUT}). Metrics: {@code tombstones}, {@code badRecords}.
 *
 * @param <T> {@code byte[]}, {@code String} or {@link UpsertRecord}
 */
public class DebeziumDecodeFunction<T> extends ProcessFunction<T, Row> {

    private static final long serialVersionUID = 1L;

    /** The table and how its updates are emitted. */
    private final TableInput table;

    /** What to do with bad records. */
    private final BadRecords badRecords;

    private transient DebeziumJsonDecoder decoder;
    private transient Counter tombstones;
    private transient long index;

    /**
     * A decode function.
     *
     * @param side the table: name (in error messages and bad records), columns, primary key and
     *     Debezium format
     * @param deleteInsertUpdates emit updates as {@code -D}/{@code +I} instead of {@code -U}/{@code
     *     +U}
     * @param policy what to do with records that cannot be decoded
     */
    public DebeziumDecodeFunction(
            SideSpec side, boolean deleteInsertUpdates, BadRecordPolicy policy) {
        this.table = new TableInput(side, deleteInsertUpdates);
        this.badRecords = new BadRecords(policy);
    }

    @Override
    public void open(OpenContext openContext) {
        decoder = table.jsonDecoder();
        tombstones = getRuntimeContext().getMetricGroup().counter("tombstones");
        badRecords.open(getRuntimeContext());
        index = 0;
    }

    @Override
    public void processElement(T message, Context ctx, Collector<Row> out) {
        long i = index++;
        try {
            if (decodeOne(decoder, message, i, out) == 0) {
                tombstones.inc();
            }
        } catch (DebeziumDecodeException e) {
            badRecords.reject(
                    e,
                    r -> ctx.output(BadRecord.OUTPUT, r),
                    () -> new BadRecord(table.source, i, raw(message), e.getMessage()));
        }
    }

    /** Decodes a {@code byte[]} or {@code String} message, or an {@link UpsertRecord}. */
    static int decodeOne(
            DebeziumJsonDecoder decoder, Object message, long index, Collector<Row> out) {
        if (message == null || message instanceof byte[]) {
            return decoder.decode((byte[]) message, index, out);
        }
        if (message instanceof String) {
            return decoder.decode((String) message, index, out);
        }
        if (message instanceof UpsertRecord) {
            UpsertRecord r = (UpsertRecord) message;
            return decoder.decodeUpsert(r.key, r.value, index, out);
        }
        throw new IllegalArgumentException(
                "Debezium messages must be byte[] or String, got " + message.getClass().getName());
    }

    /** The raw record for a {@link BadRecord}. */
    static byte[] raw(Object message) {
        if (message instanceof byte[]) {
            return (byte[]) message;
        }
        if (message instanceof UpsertRecord) {
            UpsertRecord r = (UpsertRecord) message;
            return r.value != null ? r.value : r.key;
        }
        return message == null ? null : message.toString().getBytes(StandardCharsets.UTF_8);
    }
}
