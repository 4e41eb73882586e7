package dev.cdcjoin.flink.javajoin;

/**
 * What one Debezium envelope object says at its own level, as {@link DebeziumJsonReader} parsed it:
 * the op, both {@link RowImage}s, and for a {@code {"schema", "payload"}} wrapper whether it had a
 * schema and what its payload was. It is the hand-over from parsing to the op rules ({@link
 * ChangeRules}), which decide what it means; reused from message to message.
 */
final class Envelope {
    final RowImage before = new RowImage();
    final RowImage after = new RowImage();

    /** The op's text when it was a one-character string, else 0. */
    char op;

    /** Whether an {@code op} key with a non-null value was seen. */
    boolean hasOp;

    /** The op's JSON when it is not a one-character string. */
    String badOp;

    /** A structural error (an image that is neither an object nor null). */
    String structural;

    /** Whether a wrapper's {@code schema} key was seen (top level only). */
    boolean hasSchema;

    /**
     * What a wrapper's {@code payload} held: {@link RowImage#MISSING}, {@code NULL} or {@code
     * OBJECT}.
     */
    int payload;

    /** Forgets the previous message. */
    void reset() {
        before.reset();
        after.reset();
        op = 0;
        hasOp = false;
        badOp = null;
        structural = null;
        hasSchema = false;
        payload = RowImage.MISSING;
    }
}
