package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.BadRecord;
import dev.cdcjoin.flink.BadRecordPolicy;
import dev.cdcjoin.flink.SideSpec;
import dev.cdcjoin.flink.codec.RowCodec;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;

/**
 * Splits one table's {@code Row(before, op, after)} envelopes into changelog rows, in Java: the
 * pure-Java counterpart of the native decoder's row-envelope input ({@code
 * DebeziumDecoder.decodeRows}), with the same op rules and the same reasons for rejecting a record.
 *
 * <p>The envelope's fields are read by the names {@code before}, {@code op}, {@code after} when it
 * has names, else by position 0, 1, 2; {@code op} is a {@code Character} or {@code String} {@code
 * c}, {@code r}, {@code u} or {@code d}; each image is a {@link Row} of the table's schema (by name
 * or by position), or {@code null}. Both images are checked against the schema (NOT NULL columns,
 * value classes, DECIMAL range) and normalised through the compact row encoding, so the emitted
 * values are exactly those the native decoder would give (DECIMALs at the column's scale,
 * timestamps at its precision). Run it at the source's parallelism (chained), so a row's changes
 * keep their order.
 *
 * <p>Bad records fail the job ({@link BadRecordPolicy#FAIL}, with a {@link DebeziumDecodeException}
 * naming the record) or go to the side output {@link BadRecord#OUTPUT} with the envelope's {@code
 * toString} as the raw record. Metric: {@code badRecords}.
 */
public class RowEnvelopeDecodeFunction extends ProcessFunction<Row, Row> {

    private static final long serialVersionUID = 1L;

    /** The table and how its updates are emitted. */
    private final TableInput table;

    /** What to do with bad records. */
    private final BadRecords badRecords;

    private transient RowCodec codec;
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
    public RowEnvelopeDecodeFunction(
            SideSpec side, boolean deleteInsertUpdates, BadRecordPolicy policy) {
        this.table = new TableInput(side, deleteInsertUpdates);
        this.badRecords = new BadRecords(policy);
    }

    @Override
    public void open(OpenContext openContext) {
        codec = new RowCodec(table.side.schema());
        badRecords.open(getRuntimeContext());
        index = 0;
    }

    @Override
    public void processElement(Row envelope, Context ctx, Collector<Row> out) {
        long i = index++;
        Row[] changes;
        try {
            changes = split(envelope, i);
        } catch (DebeziumDecodeException e) {
            byte[] raw = String.valueOf(envelope).getBytes(StandardCharsets.UTF_8);
            badRecords.reject(
                    e,
                    r -> ctx.output(BadRecord.OUTPUT, r),
                    () -> new BadRecord(table.source, i, raw, e.getMessage()));
            return;
        }
        for (Row change : changes) {
            out.collect(change);
        }
    }

    /** The changes of one envelope, or an exception naming the record. */
    private Row[] split(Row envelope, long i) {
        if (envelope == null) {
            throw new DebeziumDecodeException(table.source, i, "null envelope");
        }
        Set<String> names = envelope.getFieldNames(false);
        if (names == null && envelope.getArity() != 3) {
            throw new DebeziumDecodeException(
                    table.source,
                    i,
                    "expected Row(before, op, after), got " + envelope.getArity() + " fields");
        }
        Object op = names != null ? envelope.getField("op") : envelope.getField(1);
        Object[] before;
        Object[] after;
        try {
            String opText = op == null ? "" : op.toString();
            if (opText.length() != 1 || opText.charAt(0) > 0x7f) {
                throw new IllegalArgumentException(
                        "unknown \"op\" value "
                                + (op == null ? "null" : "\"" + opText + "\"")
                                + " (expected \"c\", \"r\", \"u\" or \"d\")");
            }
            before = image(names != null ? envelope.getField("before") : envelope.getField(0));
            after = image(names != null ? envelope.getField("after") : envelope.getField(2));
            return changes(opText.charAt(0), before, after);
        } catch (IllegalArgumentException e) {
            throw new DebeziumDecodeException(table.source, i, e.getMessage());
        }
    }

    private Row[] changes(char op, Object[] before, Object[] after) {
        switch (op) {
            case 'c':
                return new Row[] {Row.ofKind(RowKind.INSERT, need(after, "after", "INSERT"))};
            case 'r':
                return new Row[] {Row.ofKind(RowKind.INSERT, need(after, "after", "READ"))};
            case 'u':
                need(before, "before", "UPDATE");
                need(after, "after", "UPDATE");
                boolean deleteInsert = table.deleteInsertUpdates;
                return new Row[] {
                    Row.ofKind(deleteInsert ? RowKind.DELETE : RowKind.UPDATE_BEFORE, before),
                    Row.ofKind(deleteInsert ? RowKind.INSERT : RowKind.UPDATE_AFTER, after)
                };
            case 'd':
                return new Row[] {Row.ofKind(RowKind.DELETE, need(before, "before", "DELETE"))};
            default:
                throw new IllegalArgumentException(
                        "unknown \"op\" value \""
                                + op
                                + "\" (expected \"c\", \"r\", \"u\" or \"d\")");
        }
    }

    /** The image, or the native decoder's reason for a missing one. */
    private static Object[] need(Object[] image, String side, String opName) {
        if (image != null) {
            return image;
        }
        if (side.equals("before")) {
            throw new IllegalArgumentException(
                    "The \"before\" field of "
                            + opName
                            + " message is null, if you are using Debezium Postgres Connector,"
                            + " please check the Postgres table has been set REPLICA IDENTITY to"
                            + " FULL level.");
        }
        throw new IllegalArgumentException(
                "The \"after\" field of " + opName + " message is null.");
    }

    /** An image checked and normalised through the compact encoding, or null. */
    private Object[] image(Object image) {
        if (image == null) {
            return null;
        }
        if (!(image instanceof Row)) {
            throw new IllegalArgumentException(
                    "before/after must be a Row, found " + image.getClass().getSimpleName());
        }
        byte[] encoded = codec.encode((Row) image);
        return codec.decode(ByteBuffer.wrap(encoded).order(ByteOrder.LITTLE_ENDIAN), 0);
    }
}
