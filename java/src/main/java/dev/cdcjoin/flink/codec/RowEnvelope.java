package dev.cdcjoin.flink.codec;

import java.util.Set;
import org.apache.flink.types.Row;

/**
 * One {@code Row(before, op, after)} envelope taken apart: its op and its two images in the compact
 * row encoding. Both engines take envelopes apart here (the native one to frame them for the
 * decoder, the Java one to read them), so they accept the same envelopes and reject the others with
 * the same reasons.
 *
 * <p>The fields are read by the names {@code before}, {@code op}, {@code after} when the envelope
 * has names, else by position 0, 1, 2. {@code op} is a {@code Character} or a one-character {@code
 * String}; whether it is {@code c}, {@code r}, {@code u} or {@code d} is the decoder's rule. Each
 * image is a {@link Row} of the table's schema or {@code null}; encoding it checks it against the
 * schema (NOT NULL columns, value classes, DECIMAL range).
 */
public final class RowEnvelope {

    /** The op's character (ASCII). */
    public final char op;

    /** The {@code before} image's encoding, or {@code null} when the envelope has none. */
    public final byte[] before;

    /** The {@code after} image's encoding, or {@code null} when the envelope has none. */
    public final byte[] after;

    private RowEnvelope(char op, byte[] before, byte[] after) {
        this.op = op;
        this.before = before;
        this.after = after;
    }

    /**
     * Takes an envelope apart.
     *
     * @param envelope the envelope
     * @param codec the table's row encoding
     * @return its op and encoded images
     * @throws IllegalArgumentException naming what is wrong: a null envelope, a wrong arity, an op
     *     that is not one ASCII character, an image that is not a row of the schema
     */
    public static RowEnvelope of(Row envelope, RowCodec codec) {
        if (envelope == null) {
            throw new IllegalArgumentException("null envelope");
        }
        Set<String> names = envelope.getFieldNames(false);
        if (names == null && envelope.getArity() != 3) {
            throw new IllegalArgumentException(
                    "expected Row(before, op, after), got " + envelope.getArity() + " fields");
        }
        char op = op(names != null ? envelope.getField("op") : envelope.getField(1));
        byte[] before =
                image(names != null ? envelope.getField("before") : envelope.getField(0), codec);
        byte[] after =
                image(names != null ? envelope.getField("after") : envelope.getField(2), codec);
        return new RowEnvelope(op, before, after);
    }

    private static char op(Object op) {
        String s = op == null ? "" : op.toString();
        if (s.length() != 1 || s.charAt(0) > 0x7f) {
            throw new IllegalArgumentException(
                    "unknown \"op\" value "
                            + (op == null ? "null" : "\"" + s + "\"")
                            + " (expected \"c\", \"r\", \"u\" or \"d\")");
        }
        return s.charAt(0);
    }

    private static byte[] image(Object image, RowCodec codec) {
        if (image == null) {
            return null;
        }
        if (!(image instanceof Row)) {
            throw new IllegalArgumentException(
                    "before/after must be a Row, found " + image.getClass().getSimpleName());
        }
        return codec.encode((Row) image);
    }
}
