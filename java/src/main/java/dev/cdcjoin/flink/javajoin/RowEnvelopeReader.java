package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.SideSpec;
import dev.cdcjoin.flink.codec.RowCodec;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Set;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;

/**
 * Reads one table's {@code Row(before, op, after)} envelopes into changelog rows: the Java engine's
 * counterpart of the native decoder's row-envelope input ({@code DebeziumDecoder.decodeRows}), with
 * the same op rules and the same reasons for rejecting a record. It exists beside {@link
 * DebeziumJsonReader} because these envelopes carry rows, not JSON: nothing is parsed, only
 * checked.
 *
 * <p>The envelope's fields are read by the names {@code before}, {@code op}, {@code after} when it
 * has names, else by position 0, 1, 2; {@code op} is a {@code Character} or {@code String} {@code
 * c}, {@code r}, {@code u} or {@code d}; each image is a {@link Row} of the table's schema (by name
 * or by position), or {@code null}. Both images are checked against the schema (NOT NULL columns,
 * value classes, DECIMAL range) and normalised through the compact row encoding, so the emitted
 * values are exactly those the native decoder would give (DECIMALs at the column's scale,
 * timestamps at its precision).
 *
 * <p>One instance per thread; not serializable: build it in {@code open()}.
 */
final class RowEnvelopeReader {

    private final String source;
    private final boolean deleteInsertUpdates;
    private final RowCodec codec;

    /**
     * A reader of one join input's envelopes.
     *
     * @param side the input: its name (in error messages) and schema
     * @param deleteInsertUpdates emit updates as {@code -D}/{@code +I} instead of {@code -U}/{@code
     *     +U}
     */
    RowEnvelopeReader(SideSpec side, boolean deleteInsertUpdates) {
        this.source = side.name();
        this.deleteInsertUpdates = deleteInsertUpdates;
        this.codec = new RowCodec(side.schema());
    }

    /**
     * Reads one envelope.
     *
     * @param envelope the envelope
     * @param index the record's number, for error messages
     * @param out receives the one or two changes, in order
     * @return the number of rows emitted
     * @throws DebeziumDecodeException if the envelope cannot be read (nothing was emitted)
     */
    int read(Row envelope, long index, Collector<Row> out) {
        Row[] changes = changes(envelope, index);
        for (Row change : changes) {
            out.collect(change);
        }
        return changes.length;
    }

    /** The changes of one envelope, or an exception naming the record. */
    private Row[] changes(Row envelope, long index) {
        if (envelope == null) {
            throw new DebeziumDecodeException(source, index, "null envelope");
        }
        Set<String> names = envelope.getFieldNames(false);
        if (names == null && envelope.getArity() != 3) {
            throw new DebeziumDecodeException(
                    source,
                    index,
                    "expected Row(before, op, after), got " + envelope.getArity() + " fields");
        }
        Object op = names != null ? envelope.getField("op") : envelope.getField(1);
        try {
            String opText = op == null ? "" : op.toString();
            if (opText.length() != 1 || opText.charAt(0) > 0x7f) {
                throw new IllegalArgumentException(
                        "unknown \"op\" value "
                                + (op == null ? "null" : "\"" + opText + "\"")
                                + " (expected \"c\", \"r\", \"u\" or \"d\")");
            }
            Object[] before =
                    image(names != null ? envelope.getField("before") : envelope.getField(0));
            Object[] after =
                    image(names != null ? envelope.getField("after") : envelope.getField(2));
            return changes(opText.charAt(0), before, after);
        } catch (IllegalArgumentException e) {
            throw new DebeziumDecodeException(source, index, e.getMessage());
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
                return new Row[] {
                    Row.ofKind(
                            deleteInsertUpdates ? RowKind.DELETE : RowKind.UPDATE_BEFORE, before),
                    Row.ofKind(deleteInsertUpdates ? RowKind.INSERT : RowKind.UPDATE_AFTER, after)
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

    /** The image, or the reason the op cannot do without it. */
    private static Object[] need(Object[] image, String side, String opName) {
        if (image == null) {
            throw new IllegalArgumentException(ChangeRules.missingImage(side, opName));
        }
        return image;
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
