package dev.cdcjoin.flink;

import dev.cdcjoin.flink.runtime.ChangeBatch;
import dev.cdcjoin.flink.runtime.NativeDecodeOperator;
import dev.cdcjoin.flink.serialization.ChangeBatchSerializer;
import dev.cdcjoin.flink.serialization.ChangeRecordSerializer;
import java.time.Duration;
import java.util.Objects;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.types.Row;

/**
 * Decodes a stream of Debezium change records of one table into {@link ChangeRecord}s, in native
 * code, a batch per call.
 *
 * <pre>{@code
 * SingleOutputStreamOperator<ChangeRecord> users =
 *     DebeziumDecoder.of(usersSide).badRecordPolicy(BadRecordPolicy.SIDE_OUTPUT).decodeJson(kafkaBytes);
 * DataStream<BadRecord> bad = users.getSideOutput(BadRecord.OUTPUT);
 * }</pre>
 *
 * <p>The decoder runs at the input's parallelism (normally chained to the source), so the order of
 * each source partition is kept. Inputs: JSON messages as {@code byte[]} or {@code String} (bare
 * envelopes or Kafka Connect's {@code {"schema", "payload"}}), Kafka records ({@link KafkaMessage},
 * whose bad records name their Kafka coordinates), or {@code Row(before, op, after)} envelopes
 * whose images are rows of the table's schema.
 */
public final class DebeziumDecoder {

    private static final TypeInformation<ChangeRecord> CHANGE_TYPE =
            ChangeRecordSerializer.TYPE_INFO;

    private final SideSpec table;
    private BadRecordPolicy policy = BadRecordPolicy.FAIL;
    private int batchSize = 1024;
    private Duration maxFlushDelay = Duration.ofMillis(100);
    private boolean deleteInsertUpdates;

    private DebeziumDecoder(SideSpec table) {
        this.table = Objects.requireNonNull(table, "table");
    }

    /**
     * A decoder for the table of a join side (its schema, join key and name).
     *
     * @param table the table
     * @return the decoder, with policy FAIL, batches of 1024 and a 100 ms max flush delay
     */
    public static DebeziumDecoder of(SideSpec table) {
        return new DebeziumDecoder(table);
    }

    /**
     * Sets what happens to undecodable records.
     *
     * @param policy fail the job, or send them to {@link BadRecord#OUTPUT}
     * @return this
     */
    public DebeziumDecoder badRecordPolicy(BadRecordPolicy policy) {
        this.policy = Objects.requireNonNull(policy);
        return this;
    }

    /**
     * Sets the records per native call.
     *
     * @param batchSize at least 1
     * @return this
     */
    public DebeziumDecoder batchSize(int batchSize) {
        this.batchSize = batchSize;
        return this;
    }

    /**
     * Sets the longest time a record waits in an unfilled batch.
     *
     * @param delay the delay
     * @return this
     */
    public DebeziumDecoder maxFlushDelay(Duration delay) {
        this.maxFlushDelay = Objects.requireNonNull(delay);
        return this;
    }

    /**
     * Emits updates as {@code -D}/{@code +I} pairs instead of {@code -U}/{@code +U}.
     *
     * @param on whether to
     * @return this
     */
    public DebeziumDecoder deleteInsertUpdates(boolean on) {
        this.deleteInsertUpdates = on;
        return this;
    }

    /**
     * Decodes JSON messages given as bytes.
     *
     * @param input the messages ({@code null} or empty ones are tombstones)
     * @return the changes; bad records are in its side output {@link BadRecord#OUTPUT}
     */
    public SingleOutputStreamOperator<ChangeRecord> decodeJson(DataStream<byte[]> input) {
        return decode(input, InputKind.JSON_BYTES);
    }

    /**
     * Decodes JSON messages given as strings.
     *
     * @param input the messages
     * @return the changes; bad records are in its side output {@link BadRecord#OUTPUT}
     */
    public SingleOutputStreamOperator<ChangeRecord> decodeStrings(DataStream<String> input) {
        return decode(input, InputKind.JSON_STRINGS);
    }

    /**
     * Decodes the values of Kafka records (from a {@code KafkaSource} with a {@link
     * KafkaMessageDeserializer}) as JSON messages; bad records name their topic, partition and
     * offset.
     *
     * @param input the records ({@code null} values are tombstones)
     * @return the changes; bad records are in its side output {@link BadRecord#OUTPUT}
     */
    public SingleOutputStreamOperator<ChangeRecord> decodeKafka(DataStream<KafkaMessage> input) {
        return decode(input, InputKind.KAFKA_MESSAGES);
    }

    /**
     * Decodes upsert-kafka records (record key = primary key, value = row, null value = delete);
     * the table must be in upsert mode ({@link DebeziumFormat#withUpsert(boolean)}).
     *
     * @param input the records
     * @return the changes; bad records are in its side output {@link BadRecord#OUTPUT}
     */
    public SingleOutputStreamOperator<ChangeRecord> decodeUpsert(DataStream<UpsertRecord> input) {
        return decode(input, InputKind.UPSERT_RECORDS);
    }

    /**
     * Decodes Kafka records of an upsert-kafka shaped topic (key = primary key, value = row, null
     * value = delete), as {@link #decodeUpsert} decodes {@link UpsertRecord}s; bad records name
     * their topic, partition and offset. The table must be in upsert mode.
     *
     * @param input the records
     * @return the changes; bad records are in its side output {@link BadRecord#OUTPUT}
     */
    public SingleOutputStreamOperator<ChangeRecord> decodeKafkaUpsert(
            DataStream<KafkaMessage> input) {
        return decode(input, InputKind.KAFKA_UPSERT_MESSAGES);
    }

    /**
     * Splits {@code Row(before, op, after)} envelopes (op a {@code Character} or {@code String}
     * {@code c}, {@code r}, {@code u} or {@code d}) into changes.
     *
     * @param input the envelopes
     * @return the changes; bad records are in its side output {@link BadRecord#OUTPUT}
     */
    public SingleOutputStreamOperator<ChangeRecord> decodeRows(DataStream<Row> input) {
        return decode(input, InputKind.ROW_ENVELOPES);
    }

    /**
     * Decodes records of {@code kind} into changes with a {@link NativeDecodeOperator}, at their
     * parallelism.
     */
    <IN> SingleOutputStreamOperator<ChangeRecord> decode(DataStream<IN> input, InputKind<IN> kind) {
        kind.checkReadableBy(table);
        return place(
                input,
                CHANGE_TYPE,
                NativeDecodeOperator.changes(settings(kind)),
                "Debezium decode: ");
    }

    /**
     * Decodes records of {@code kind} into the native join's key group batches, at their
     * parallelism.
     */
    <IN> SingleOutputStreamOperator<ChangeBatch> decodeBatches(
            DataStream<IN> input, InputKind<IN> kind) {
        kind.checkReadableBy(table);
        return place(
                input,
                ChangeBatchSerializer.TYPE_INFO,
                NativeDecodeOperator.batches(settings(kind)),
                "Debezium decode to key group batches: ");
    }

    private <IN> NativeDecodeOperator.Settings<IN> settings(InputKind<IN> kind) {
        return new NativeDecodeOperator.Settings<>(
                table.decoderConfigJson(deleteInsertUpdates),
                table.name(),
                kind.encoder(table.schema()),
                policy,
                BadRecord.OUTPUT,
                batchSize,
                maxFlushDelay.toMillis());
    }

    /** Adds the decode operator after {@code input}, at its parallelism. */
    private <IN, OUT> SingleOutputStreamOperator<OUT> place(
            DataStream<IN> input,
            TypeInformation<OUT> type,
            NativeDecodeOperator<IN, OUT> op,
            String name) {
        SingleOutputStreamOperator<OUT> out =
                Chaining.toInput(input.transform(name + table.name(), type, op));
        int parallelism = input.getParallelism();
        return parallelism > 0 ? out.setParallelism(parallelism) : out;
    }
}
