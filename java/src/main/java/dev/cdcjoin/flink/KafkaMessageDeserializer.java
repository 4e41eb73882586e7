package dev.cdcjoin.flink;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Reads each Kafka record as a {@link KafkaMessage}: its topic, partition, offset, key and value,
 * the bytes as the consumer fetched them (no copy, no {@code String}). Tombstones are kept (the
 * decoder counts and drops them).
 *
 * <pre>{@code
 * KafkaSource<KafkaMessage> users = KafkaSource.<KafkaMessage>builder()
 *     .setBootstrapServers(brokers).setTopics("shop.public.users")
 *     .setDeserializer(new KafkaMessageDeserializer())
 *     .build();
 * }</pre>
 *
 * <p>Needs {@code flink-connector-kafka} on the job's class path, as any {@code KafkaSource} does,
 * and loaded by the same class loader: with this library in Flink's {@code lib/} and the connector
 * in the job's JAR, this class cannot load (write the same class in the job). The rest of this
 * library does not need the connector.
 */
public final class KafkaMessageDeserializer
        implements KafkaRecordDeserializationSchema<KafkaMessage> {

    private static final long serialVersionUID = 1L;

    @Override
    public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<KafkaMessage> out) {
        out.collect(
                new KafkaMessage(
                        record.topic(),
                        record.partition(),
                        record.offset(),
                        record.key(),
                        record.value()));
    }

    @Override
    public TypeInformation<KafkaMessage> getProducedType() {
        return TypeInformation.of(KafkaMessage.class);
    }
}
