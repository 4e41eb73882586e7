package dev.cdcjoin.flink;

import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.runtime.InputEncoder;
import java.util.function.Function;
import org.apache.flink.types.Row;

/**
 * What a join input's records are, named once for both engines: how the native decoder frames them
 * ({@link InputEncoder}) and whether the Java engine reads them as {@code Row(before, op, after)}
 * envelopes rather than as Debezium JSON. Each of {@link CdcJoin}'s entry points names its kind and
 * the chosen {@link Backend} decodes it.
 *
 * @param <I> the record type
 */
final class InputKind<I> {

    /** Debezium JSON messages as bytes. */
    static final InputKind<byte[]> JSON_BYTES =
            new InputKind<>(s -> InputEncoder.jsonBytes(), false);

    /** Debezium JSON messages as strings. */
    static final InputKind<String> JSON_STRINGS =
            new InputKind<>(s -> InputEncoder.jsonStrings(), false);

    /** Kafka records of Debezium topics, with their coordinates. */
    static final InputKind<KafkaMessage> KAFKA_MESSAGES =
            new InputKind<>(s -> InputEncoder.kafkaMessages(), false);

    /** Upsert-kafka records. */
    static final InputKind<UpsertRecord> UPSERT_RECORDS =
            new InputKind<>(s -> InputEncoder.upsertRecords(), false);

    /** {@code Row(before, op, after)} envelopes of rows of the table's schema. */
    static final InputKind<Row> ROW_ENVELOPES = new InputKind<>(InputEncoder::rowEnvelopes, true);

    private final Function<CdcSchema, InputEncoder<I>> encoder;

    /** Whether the Java engine reads these records as Row envelopes (else as Debezium JSON). */
    final boolean rowEnvelopes;

    private InputKind(Function<CdcSchema, InputEncoder<I>> encoder, boolean rowEnvelopes) {
        this.encoder = encoder;
        this.rowEnvelopes = rowEnvelopes;
    }

    /** How the native decoder frames these records of a table with {@code schema}. */
    InputEncoder<I> encoder(CdcSchema schema) {
        return encoder.apply(schema);
    }
}
