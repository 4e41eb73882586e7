package dev.cdcjoin.flink;

import java.nio.charset.StandardCharsets;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.util.OutputTag;

/**
 * An input record that could not be decoded, as sent to the bad-record side output: where it came
 * from, the record itself and why it was rejected. A Flink POJO.
 */
public final class BadRecord {

    /**
     * The side output every operator of this library sends bad records to, under {@link
     * BadRecordPolicy#SIDE_OUTPUT}: records that could not be decoded, and changes a join rejected.
     */
    public static final OutputTag<BadRecord> OUTPUT =
            new OutputTag<>("cdcjoin-bad-records", TypeInformation.of(BadRecord.class));

    /** The input's name (the table name given to the decoder). */
    public String source;

    /** The record's number among this decoder instance's input records, from 0. */
    public long index;

    /** The raw record: the message bytes, or the {@code toString} of a {@code Row} envelope. */
    public byte[] raw;

    /**
     * The reason, naming the record ({@code users record #42: unknown "op" value "t"...}; for a
     * {@link KafkaMessage}, followed by {@code (Kafka topic T, partition P, offset O)}).
     */
    public String reason;

    /** The Kafka topic of a {@link KafkaMessage} input's record, else {@code null}. */
    public String topic;

    /** The Kafka partition of a {@link KafkaMessage} input's record, else -1. */
    public int partition = -1;

    /** The Kafka offset of a {@link KafkaMessage} input's record, else -1. */
    public long offset = -1;

    /** An empty record, for Flink's POJO serializer. */
    public BadRecord() {}

    /**
     * A bad record.
     *
     * @param source the input's name
     * @param index the record's number
     * @param raw the raw record ({@code null} for a null message)
     * @param reason why it was rejected
     */
    public BadRecord(String source, long index, byte[] raw, String reason) {
        this.source = source;
        this.index = index;
        this.raw = raw;
        this.reason = reason;
    }

    /**
     * A bad record read from Kafka: its value (its key where the value is null, an upsert-kafka
     * delete) as the raw record, its topic, partition and offset set and named at the end of the
     * reason.
     *
     * @param source the input's name
     * @param index the record's number
     * @param message the Kafka record
     * @param reason why it was rejected
     * @return the bad record
     */
    public static BadRecord of(String source, long index, KafkaMessage message, String reason) {
        BadRecord b = new BadRecord(source, index, message.bytes(), message.locate(reason));
        b.topic = message.topic;
        b.partition = message.partition;
        b.offset = message.offset;
        return b;
    }

    /**
     * The raw record as UTF-8 text.
     *
     * @return the text, or {@code "null"}
     */
    public String rawAsString() {
        return raw == null ? "null" : new String(raw, StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "BadRecord{" + reason + "; record: " + rawAsString() + "}";
    }
}
