package dev.cdcjoin.bench;

import dev.cdcjoin.flink.KafkaMessage;
import dev.cdcjoin.flink.KafkaMessageDeserializer;
import java.nio.file.Path;
import java.util.Map;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * The jobs' input under {@code --source kafka}: the trace's topics ({@link KafkaTrace}) read by
 * Flink's {@link KafkaSource} (value bytes, for the native and pure-Java joins) or by Flink SQL's
 * Kafka table connector ({@code 'format' = 'debezium-json'}), both from the earliest offsets and
 * bounded at the end offsets found when the job starts, so a job reads exactly the trace and ends.
 *
 * <p>The Kafka source cannot pause at the end of its input as {@link TraceSource} does, so the
 * harness learns where the input starts and ends from {@link Progress}, a consumer interceptor that
 * both sources' consumers run: the first fetched records mark the first message read, and the count
 * of fetched records reaching the trace's message count marks the end of the input.
 */
final class KafkaInput {

    private KafkaInput() {}

    /** The consumer group of every bench job (offsets are never committed). */
    static final String GROUP = "cdcjoin-bench";

    /**
     * A stream of the value bytes of topic {@code t} of {@code trace}; a tombstone becomes an empty
     * array, as {@link Emitters.Bytes} gives the trace's tombstones.
     */
    static DataStream<byte[]> source(
            StreamExecutionEnvironment env, String bootstrap, Path trace, int t, String name) {
        return env.fromSource(
                kafkaSource(bootstrap, trace, t, name, new ValueBytes()),
                WatermarkStrategy.noWatermarks(),
                name);
    }

    /**
     * A stream of the records of topic {@code t} of {@code trace} as the product's {@link
     * KafkaMessage}s (coordinates and bytes; tombstones with a null value).
     */
    static DataStream<KafkaMessage> messages(
            StreamExecutionEnvironment env, String bootstrap, Path trace, int t, String name) {
        return env.fromSource(
                kafkaSource(bootstrap, trace, t, name, new KafkaMessageDeserializer()),
                WatermarkStrategy.noWatermarks(),
                name);
    }

    /** A bounded source of topic {@code t} of {@code trace}, its records read by {@code reader}. */
    private static <T> KafkaSource<T> kafkaSource(
            String bootstrap,
            Path trace,
            int t,
            String name,
            KafkaRecordDeserializationSchema<T> reader) {
        return KafkaSource.<T>builder()
                .setBootstrapServers(bootstrap)
                .setTopics(KafkaTrace.topic(trace, t))
                .setGroupId(GROUP)
                .setClientIdPrefix(GROUP + "-" + name)
                .setStartingOffsets(OffsetsInitializer.earliest())
                .setBounded(OffsetsInitializer.latest())
                .setProperty("commit.offsets.on.checkpoint", "false")
                .setProperty(ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG, Progress.class.getName())
                .setDeserializer(reader)
                .build();
    }

    /**
     * The {@code WITH} options of a Flink SQL table over topic {@code t} of {@code trace}, through
     * the Kafka table connector.
     */
    static String sqlOptions(String bootstrap, Path trace, int t) {
        return String.join(
                ", ",
                "'connector' = 'kafka'",
                "'topic' = '" + KafkaTrace.topic(trace, t) + "'",
                "'properties.bootstrap.servers' = '" + bootstrap + "'",
                "'properties.group.id' = '" + GROUP + "'",
                "'properties."
                        + ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG
                        + "' = '"
                        + Progress.class.getName()
                        + "'",
                "'scan.startup.mode' = 'earliest-offset'",
                "'scan.bounded.mode' = 'latest-offset'",
                "'format' = 'debezium-json'");
    }

    /** A record's value bytes, an empty array for a tombstone. */
    static final class ValueBytes implements KafkaRecordDeserializationSchema<byte[]> {
        private static final long serialVersionUID = 1L;
        private static final byte[] EMPTY = new byte[0];

        @Override
        public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<byte[]> out) {
            out.collect(record.value() == null ? EMPTY : record.value());
        }

        @Override
        public TypeInformation<byte[]> getProducedType() {
            return PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO;
        }
    }

    /**
     * Counts the records the job's consumers fetch into {@link RunControl}: the first fetch marks
     * the first message read, and once {@link RunControl#expectedMessages} have been fetched the
     * input is exhausted. Kafka instantiates it in the task's consumer; the job runs in the
     * harness's JVM, so it shares the harness's {@link RunControl}.
     */
    public static final class Progress implements ConsumerInterceptor<byte[], byte[]> {

        @Override
        public ConsumerRecords<byte[], byte[]> onConsume(ConsumerRecords<byte[], byte[]> records) {
            int n = records.count();
            if (n > 0) {
                RunControl.markFirstEmit();
                if (RunControl.messagesEmitted.addAndGet(n) >= RunControl.expectedMessages
                        && RunControl.exhausted.compareAndSet(0, 1)) {
                    RunControl.exhaustedAt = System.nanoTime();
                }
            }
            return records;
        }

        @Override
        public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {}

        @Override
        public void close() {}

        @Override
        public void configure(Map<String, ?> configs) {}
    }
}
