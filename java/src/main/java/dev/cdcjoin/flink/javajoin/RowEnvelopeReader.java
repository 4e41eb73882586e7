package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.SideSpec;
import dev.cdcjoin.flink.codec.RowCodec;
import dev.cdcjoin.flink.codec.RowEnvelope;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
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
 * <p>The envelope is taken apart by {@link RowEnvelope}, as the native engine takes it apart: its
 * images checked against the schema and normalised through the compact row encoding, so the emitted
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
        try {
            RowEnvelope e = RowEnvelope.of(envelope, codec);
            return changes(e.op, image(e.before), image(e.after));
        } catch (IllegalArgumentException bad) {
            throw new DebeziumDecodeException(source, index, bad.getMessage());
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

    /** An encoded image read back (normalised as the native decoder emits it), or null. */
    private Object[] image(byte[] encoded) {
        return encoded == null
                ? null
                : codec.decode(ByteBuffer.wrap(encoded).order(ByteOrder.LITTLE_ENDIAN), 0);
    }
}
