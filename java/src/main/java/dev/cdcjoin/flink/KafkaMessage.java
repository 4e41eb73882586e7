package dev.cdcjoin.flink;

/**
 * One Kafka record of a Debezium topic, with where it lies in Kafka: what {@link
 * KafkaMessageDeserializer} makes of each record a {@code KafkaSource} reads, and what {@link
 * CdcJoin#joinKafka}, {@link CdcStar#joinKafka}, {@link CdcMultiJoin#joinKafka} and {@link
 * DebeziumDecoder#decodeKafka} take: the value is decoded as a Debezium message (the key is not
 * read; a null value is a tombstone). {@link CdcJoin#joinKafkaUpsert} and {@link
 * DebeziumDecoder#decodeKafkaUpsert} read records of upsert-kafka shaped topics instead (the key,
 * and the value, a null value deleting). A record that cannot be decoded is reported with its
 * topic, partition and offset ({@link BadRecord#topic}), so it can be found in Kafka. A Flink POJO.
 */
public final class KafkaMessage {

    /** The topic. */
    public String topic;

    /** The partition. */
    public int partition;

    /** The record's offset in its partition. */
    public long offset;

    /** The record key, or {@code null}. */
    public byte[] key;

    /** The record value (a Debezium message), or {@code null} for a tombstone. */
    public byte[] value;

    /** An empty record, for Flink's POJO serializer. */
    public KafkaMessage() {}

    /**
     * A record.
     *
     * @param topic the topic
     * @param partition the partition
     * @param offset the offset in the partition
     * @param key the key, or {@code null}
     * @param value the value, or {@code null} for a tombstone
     */
    public KafkaMessage(String topic, int partition, long offset, byte[] key, byte[] value) {
        this.topic = topic;
        this.partition = partition;
        this.offset = offset;
        this.key = key;
        this.value = value;
    }

    /**
     * The record as a bad-record report holds it.
     *
     * @return the value, or the key where the value is null (an upsert-kafka delete)
     */
    public byte[] bytes() {
        return value != null ? value : key;
    }

    /**
     * Where the record lies in Kafka.
     *
     * @return {@code Kafka topic T, partition P, offset O}
     */
    public String coordinates() {
        return "Kafka topic " + topic + ", partition " + partition + ", offset " + offset;
    }

    /**
     * A reason for rejecting this record, naming where it lies: how both engines word it.
     *
     * @param reason the decoder's reason ({@code users record #42: ...})
     * @return {@code <reason> (Kafka topic T, partition P, offset O)}
     */
    public String locate(String reason) {
        return reason + " (" + coordinates() + ")";
    }

    @Override
    public String toString() {
        return "KafkaMessage{" + coordinates() + "}";
    }
}
