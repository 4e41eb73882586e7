package dev.cdcjoin.flink;

import static dev.cdcjoin.flink.CdcJoinJobTest.domain;
import static dev.cdcjoin.flink.CdcJoinJobTest.user;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;
import org.apache.flink.util.ExceptionUtils;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Kafka records in ({@link KafkaMessage}, {@link KafkaMessageDeserializer}): their values are
 * joined as messages are, and a record that cannot be decoded is reported with its topic, partition
 * and offset, worded alike by both engines, under either policy.
 */
@SuppressWarnings("try") // CloseableIterator#close may throw InterruptedException
class KafkaMessagesTest {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withSlots(2);

    private static final String USERS_TOPIC = "shop.public.users";
    private static final String DOMAINS_TOPIC = "shop.public.domains";

    /** The bad user record: partition 2, offset 101 (the second of the users topic). */
    private static final String BAD = "{\"op\":\"t\",\"after\":{\"id\":2}}";

    private static final String RENAME =
            "{\"op\":\"u\",\"before\":{\"id\":3,\"name\":\"cy\"},"
                    + "\"after\":{\"id\":3,\"name\":\"cyd\"}}";

    /** The users ⋈ domains rows of {@link #users()} and {@link #domains()}. */
    private static final Map<String, Integer> JOINED =
            Map.of("[1, ana, 10, 1, a.com]", 1, "[3, cyd, 12, 3, c.com]", 1);

    private static final String WHERE = "(Kafka topic shop.public.users, partition 2, offset 101)";

    private static KafkaMessage message(String topic, int partition, long offset, String value) {
        byte[] bytes = value == null ? null : value.getBytes(StandardCharsets.UTF_8);
        return new KafkaMessage(topic, partition, offset, null, bytes);
    }

    /** Users 1 and 3 (renamed), the bad record at offset 101 and a tombstone at 103. */
    private static List<KafkaMessage> users() {
        return List.of(
                message(USERS_TOPIC, 2, 100, user("c", 1, "ana")),
                message(USERS_TOPIC, 2, 101, BAD),
                message(USERS_TOPIC, 2, 102, user("c", 3, "cy")),
                message(USERS_TOPIC, 2, 103, null),
                message(USERS_TOPIC, 2, 104, RENAME));
    }

    private static List<KafkaMessage> domains() {
        return List.of(
                message(DOMAINS_TOPIC, 0, 7, domain(10, 1, "a.com")),
                message(DOMAINS_TOPIC, 0, 8, domain(11, 2, "b.com")),
                message(DOMAINS_TOPIC, 0, 9, domain(12, 3, "c.com")));
    }

    private static CdcJoin join(Engine engine, BadRecordPolicy policy) {
        return CdcJoinJobTest.usersDomains()
                .badRecordPolicy(policy)
                .engine(engine)
                .batchSize(2)
                .maxFlushDelay(Duration.ofMillis(20))
                .build();
    }

    /** {@link #users()} joined with {@link #domains()} in {@code env}, at parallelism 1. */
    private static CdcJoin.Result usersDomains(
            StreamExecutionEnvironment env, Engine engine, BadRecordPolicy policy) {
        env.setParallelism(1);
        return join(engine, policy).joinKafka(env.fromData(users()), env.fromData(domains()));
    }

    @Test
    void theDeserializerKeepsTheCoordinatesAndTheBytes() throws Exception {
        byte[] key = "{\"id\":1}".getBytes(StandardCharsets.UTF_8);
        byte[] value = user("c", 1, "ana").getBytes(StandardCharsets.UTF_8);
        List<KafkaMessage> out = new ArrayList<>();
        Collector<KafkaMessage> collector =
                new Collector<>() {
                    @Override
                    public void collect(KafkaMessage record) {
                        out.add(record);
                    }

                    @Override
                    public void close() {}
                };
        KafkaMessageDeserializer deserializer = new KafkaMessageDeserializer();
        deserializer.deserialize(new ConsumerRecord<>(USERS_TOPIC, 2, 100, key, value), collector);
        deserializer.deserialize(new ConsumerRecord<>(USERS_TOPIC, 2, 101, key, null), collector);
        KafkaMessage m = out.get(0);
        assertEquals(USERS_TOPIC, m.topic);
        assertEquals(2, m.partition);
        assertEquals(100, m.offset);
        assertSame(key, m.key, "the key as fetched, not a copy");
        assertSame(value, m.value, "the value as fetched, not a copy");
        assertNull(out.get(1).value, "a tombstone is kept, for the decoder to count");
        assertEquals(101, out.get(1).offset);
        assertEquals(KafkaMessage.class, deserializer.getProducedType().getTypeClass());
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void badRecordsNameTheirTopicPartitionAndOffset(Engine engine) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        CdcJoin.Result result = usersDomains(env, engine, BadRecordPolicy.SIDE_OUTPUT);
        BadRecord b = theOneBadRecord(result, JOINED, engine);
        assertEquals("users", b.source);
        assertEquals(USERS_TOPIC, b.topic);
        assertEquals(2, b.partition);
        assertEquals(101, b.offset);
        assertEquals(1, b.index);
        assertArrayEquals(BAD.getBytes(StandardCharsets.UTF_8), b.raw);
        assertEquals(
                "users record #1: unknown \"op\" value \"t\" (expected \"c\", \"r\", \"u\" or"
                        + " \"d\") "
                        + WHERE,
                b.reason,
                engine + ": the same words from both engines");
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void aMultiWayJoinNamesTheCoordinatesToo(Engine engine) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        CdcMultiJoin join =
                CdcMultiJoin.builder()
                        .input("users", CdcJoinJobTest.USERS, List.of("id"), List.of("id"))
                        .input(
                                "domains",
                                CdcJoinJobTest.DOMAINS,
                                List.of("user_id"),
                                List.of("id"),
                                JoinType.INNER)
                        .badRecordPolicy(BadRecordPolicy.SIDE_OUTPUT)
                        .engine(engine)
                        .batchSize(2)
                        .maxFlushDelay(Duration.ofMillis(20))
                        .build();
        CdcJoin.Result result =
                join.joinKafka(List.of(env.fromData(users()), env.fromData(domains())));
        BadRecord b = theOneBadRecord(result, JOINED, engine);
        assertEquals(101, b.offset);
        assertTrue(b.reason.endsWith(WHERE), b.reason);
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void upsertTopicsAreReadFromKeyAndValue(Engine engine) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        String t = "accounts";
        DataStream<KafkaMessage> accounts =
                env.fromData(
                        upsert(t, 0, "{\"id\":1}", "{\"id\":1,\"name\":\"ana\"}"),
                        upsert(t, 1, "{\"id\":2}", "{\"id\":2,\"name\":\"bo\"}"),
                        upsert(t, 2, "{\"id\":1}", "{\"id\":1,\"name\":\"anna\"}"),
                        upsert(t, 3, "{\"id\":2}", null),
                        upsert(t, 4, "{\"id\":\"three\"}", null));
        DataStream<KafkaMessage> balances =
                env.fromData(
                        upsert(
                                "balances",
                                0,
                                "{\"account_id\":1}",
                                "{\"account_id\":1,\"amount\":10}"),
                        upsert(
                                "balances",
                                1,
                                "{\"account_id\":2}",
                                "{\"account_id\":2,\"amount\":20}"));
        CdcJoin.Result result =
                UpsertRecordsTest.accountsBalances(engine).joinKafkaUpsert(accounts, balances);
        BadRecord b = theOneBadRecord(result, Map.of("[1, anna, 1, 10]", 1), engine);
        assertEquals(4, b.offset);
        assertArrayEquals(
                "{\"id\":\"three\"}".getBytes(StandardCharsets.UTF_8),
                b.raw,
                "a delete's key is the raw record");
        assertTrue(b.reason.startsWith("accounts record #4: "), b.reason);
        assertTrue(b.reason.endsWith("(Kafka topic accounts, partition 0, offset 4)"), b.reason);
    }

    private static KafkaMessage upsert(String topic, long offset, String key, String value) {
        return new KafkaMessage(
                topic,
                0,
                offset,
                key.getBytes(StandardCharsets.UTF_8),
                value == null ? null : value.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Runs the job of {@code result}, checks that its changelog materializes to {@code expected}
     * and that it reported one bad record.
     *
     * @return that bad record
     */
    private static BadRecord theOneBadRecord(
            CdcJoin.Result result, Map<String, Integer> expected, Engine engine) throws Exception {
        List<String> rows = new ArrayList<>();
        List<BadRecord> bad = new ArrayList<>();
        DataStream<Object> all =
                result.rows()
                        .map(r -> (Object) r.toString())
                        .union(result.badRecords().map(b -> b));
        try (CloseableIterator<Object> it = all.executeAndCollect()) {
            it.forEachRemaining(
                    o -> {
                        if (o instanceof BadRecord) {
                            bad.add((BadRecord) o);
                        } else {
                            rows.add((String) o);
                        }
                    });
        }
        assertEquals(expected, Changelogs.materialize(rows), engine + " changelog " + rows);
        assertEquals(1, bad.size(), engine + " bad records " + bad);
        return bad.get(0);
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void aBadRecordFailsTheJobNamingWhereItLies(Engine engine) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        CdcJoin.Result result = usersDomains(env, engine, BadRecordPolicy.FAIL);
        result.rows().sinkTo(new DiscardingSink<>());
        Exception e = assertThrows(Exception.class, env::execute);
        String chain = ExceptionUtils.stringifyException(e);
        assertTrue(chain.contains("users record #1: unknown \"op\" value \"t\""), chain);
        assertTrue(chain.contains(WHERE), engine + ": " + chain);
        MiniClusters.awaitTaskManagerWithAllSlotsFree(MINI_CLUSTER, Duration.ofSeconds(30));
    }

    @Test
    void theDecoderAloneReportsTheCoordinates() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        CdcJoin join = join(Engine.NATIVE, BadRecordPolicy.SIDE_OUTPUT);
        DataStream<BadRecord> bad =
                join.leftDecoder()
                        .decodeKafka(env.fromData(users()))
                        .getSideOutput(BadRecord.OUTPUT);
        List<String> reasons = new ArrayList<>();
        try (CloseableIterator<BadRecord> it = bad.executeAndCollect()) {
            it.forEachRemaining(b -> reasons.add(b.offset + " " + b.reason));
        }
        assertEquals(1, reasons.size(), reasons.toString());
        assertTrue(reasons.get(0).startsWith("101 users record #1: "), reasons.get(0));
        assertTrue(reasons.get(0).endsWith(WHERE), reasons.get(0));
    }
}
