package dev.cdcjoin.flink;

import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.runtime.InputEncoder;
import java.util.function.Function;
import org.apache.flink.types.Row;

/**
 * What a join input's records are, named once for both engines: how the native decoder frames them
 * ({@link InputEncoder}) and how the Java engine reads them ({@link JavaReading}). Each of {@link
 * CdcJoin}'s entry points names its kind and the chosen {@link Backend} decodes it.
 *
 * @param <I> the record type
 */
final class InputKind<I> {

    /** Debezium JSON messages as bytes. */
    static final InputKind<byte[]> JSON_BYTES =
            new InputKind<>(s -> InputEncoder.jsonBytes(), JavaReading.BY_CLASS);

    /** Debezium JSON messages as strings. */
    static final InputKind<String> JSON_STRINGS =
            new InputKind<>(s -> InputEncoder.jsonStrings(), JavaReading.BY_CLASS);

    /** Kafka records of Debezium topics, with their coordinates. */
    static final InputKind<KafkaMessage> KAFKA_MESSAGES =
            new InputKind<>(s -> InputEncoder.kafkaMessages(), JavaReading.BY_CLASS);

    /** Kafka records of upsert-kafka shaped topics, with their coordinates. */
    static final InputKind<KafkaMessage> KAFKA_UPSERT_MESSAGES =
            new InputKind<>(
                    s -> InputEncoder.kafkaUpsertMessages(), JavaReading.KAFKA_UPSERT, true);

    /** Upsert-kafka records. */
    static final InputKind<UpsertRecord> UPSERT_RECORDS =
            new InputKind<>(s -> InputEncoder.upsertRecords(), JavaReading.BY_CLASS, true);

    /** {@code Row(before, op, after)} envelopes of rows of the table's schema. */
    static final InputKind<Row> ROW_ENVELOPES =
            new InputKind<>(InputEncoder::rowEnvelopes, JavaReading.ROW_ENVELOPES);

    /** How the Java engine reads an input's records. */
    enum JavaReading {
        /**
         * As Debezium messages by their class: {@code byte[]}, {@code String} and a {@link
         * KafkaMessage}'s value as Debezium JSON, {@link UpsertRecord}s as upsert-kafka records.
         */
        BY_CLASS,
        /** {@link KafkaMessage}s as upsert-kafka records: the key, and the value (null deletes). */
        KAFKA_UPSERT,
        /** {@code Row(before, op, after)} envelopes. */
        ROW_ENVELOPES
    }

    private final Function<CdcSchema, InputEncoder<I>> encoder;

    /** How the Java engine reads these records. */
    final JavaReading javaReading;

    /** Whether these are upsert-kafka records, which only a table in upsert mode reads. */
    private final boolean upsertRecords;

    private InputKind(Function<CdcSchema, InputEncoder<I>> encoder, JavaReading javaReading) {
        this(encoder, javaReading, false);
    }

    private InputKind(
            Function<CdcSchema, InputEncoder<I>> encoder,
            JavaReading javaReading,
            boolean upsertRecords) {
        this.encoder = encoder;
        this.javaReading = javaReading;
        this.upsertRecords = upsertRecords;
    }

    /**
     * Checks, when the job is built, that table {@code side} can read these records: upsert-kafka
     * records need the table in upsert mode, else every record would be a bad record.
     *
     * @throws IllegalArgumentException if it cannot
     */
    void checkReadableBy(SideSpec side) {
        if (upsertRecords && !side.format().upsert()) {
            throw new IllegalArgumentException(
                    "table '"
                            + side.name()
                            + "' reads upsert-kafka records, which needs upsert mode:"
                            + " DebeziumFormat.withUpsert(true) and a primary key");
        }
    }

    /** How the native decoder frames these records of a table with {@code schema}. */
    InputEncoder<I> encoder(CdcSchema schema) {
        return encoder.apply(schema);
    }
}
