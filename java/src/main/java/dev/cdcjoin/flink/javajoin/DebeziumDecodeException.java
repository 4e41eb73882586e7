package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.KafkaMessage;

/**
 * A Debezium message that could not be decoded: which record of which input, and why.
 *
 * <p>The message reads {@code <source> record #<index>: <reason>}, e.g. {@code users record #42:
 * unknown "op" value "t" (expected "c", "r", "u" or "d")}, with the reasons worded as the native
 * decoder (and, where it has one, Flink's {@code debezium-json} format) words them.
 */
public final class DebeziumDecodeException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The input's name. */
    private final String source;

    /** The record's number. */
    private final long index;

    /** The reason, without the position. */
    private final String reason;

    /**
     * An error about one record.
     *
     * @param source the input's name (the table)
     * @param index the record's number among the decoder's input records, from 0
     * @param reason why it was rejected
     */
    public DebeziumDecodeException(String source, long index, String reason) {
        this(source + " record #" + index + ": " + reason, source, index, reason, null);
    }

    private DebeziumDecodeException(
            String message, String source, long index, String reason, Throwable cause) {
        super(message, cause);
        this.source = source;
        this.index = index;
        this.reason = reason;
    }

    /**
     * This error about a record read from Kafka, its message naming where the record lies ({@link
     * KafkaMessage#locate}).
     *
     * @param message the record
     * @return the error, with this one as its cause
     */
    public DebeziumDecodeException locatedAt(KafkaMessage message) {
        return new DebeziumDecodeException(
                message.locate(getMessage()), source, index, reason, this);
    }

    /**
     * The input's name.
     *
     * @return the table name given to the decoder
     */
    public String source() {
        return source;
    }

    /**
     * The record's number among the decoder's input records, from 0.
     *
     * @return the index
     */
    public long index() {
        return index;
    }

    /**
     * Why the record was rejected, without its position.
     *
     * @return the reason
     */
    public String reason() {
        return reason;
    }
}
