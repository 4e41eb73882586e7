package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Upsert-kafka shaped topics (record key = primary key, value = row, null value = delete) joined by
 * both engines: a value for a stored key replaces the row, a null value deletes it by key, and a
 * record that does not decode goes to the bad records.
 */
class UpsertRecordsTest {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withSlots(2);

    private static UpsertRecord record(String key, String value) {
        return new UpsertRecord(
                key.getBytes(StandardCharsets.UTF_8),
                value == null ? null : value.getBytes(StandardCharsets.UTF_8));
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void replacesAndDeletesByKey(Engine engine) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        DataStream<UpsertRecord> accounts =
                env.fromData(
                        record("{\"id\":1}", "{\"id\":1,\"name\":\"ana\"}"),
                        record("{\"id\":2}", "{\"id\":2,\"name\":\"bo\"}"),
                        record("{\"id\":1}", "{\"id\":1,\"name\":\"anna\"}"),
                        record("{\"id\":2}", null),
                        record("{\"id\":3}", "{\"id\":\"three\",\"name\":\"cy\"}"));
        DataStream<UpsertRecord> balances =
                env.fromData(
                        record("{\"account_id\":1}", "{\"account_id\":1,\"amount\":10}"),
                        record("{\"account_id\":2}", "{\"account_id\":2,\"amount\":20}"),
                        record("{\"account_id\":1}", "{\"account_id\":1,\"amount\":11}"));
        List<String> rows = new ArrayList<>();
        List<String> bad = new ArrayList<>();
        join(engine, accounts, balances, rows, bad);
        assertEquals(
                Map.of("[1, anna, 1, 11]", 1),
                Changelogs.materialize(rows),
                engine + " changelog " + rows);
        assertEquals(1, bad.size(), engine + " bad records " + bad);
        assertTrue(bad.get(0).contains("accounts record #4"), bad.get(0));
    }

    /**
     * A value without its primary key (missing, null, or a value Kafka Connect's JsonConverter
     * wrapped as {@code {"schema", "payload"}}) has no identity: a bad record naming the column, in
     * the same words from both engines.
     */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void aValueWithoutItsPrimaryKeyIsABadRecord(Engine engine) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        DataStream<UpsertRecord> accounts =
                env.fromData(
                        record("{\"id\":1}", "{\"id\":1,\"name\":\"ana\"}"),
                        record("{\"id\":2}", "{\"name\":\"bo\"}"),
                        record("{\"id\":3}", "{\"id\":null,\"name\":\"cy\"}"),
                        record(
                                "{\"id\":4}",
                                "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"int64\","
                                        + "\"optional\":false,\"field\":\"id\"},{\"type\":\"string\","
                                        + "\"optional\":true,\"field\":\"name\"}],\"optional\":false,"
                                        + "\"name\":\"accounts.Value\"},\"payload\":{\"id\":4,\"name\":\"di\"}}"),
                        new UpsertRecord(null, null));
        DataStream<UpsertRecord> balances =
                env.fromData(record("{\"account_id\":1}", "{\"account_id\":1,\"amount\":10}"));
        List<String> rows = new ArrayList<>();
        List<String> bad = new ArrayList<>();
        join(engine, accounts, balances, rows, bad);
        assertEquals(
                Map.of("[1, ana, 1, 10]", 1),
                Changelogs.materialize(rows),
                engine + " changelog " + rows);
        String reason =
                ": the value's primary key column \"id\" is missing or null (a value wrapped by"
                        + " Kafka Connect's JsonConverter needs schemas.enable=false; values"
                        + " written with value.fields-include=EXCEPT_KEY are not read)";
        bad.sort(null);
        assertEquals(
                List.of(
                        "accounts record #1" + reason,
                        "accounts record #2" + reason,
                        "accounts record #3" + reason,
                        "accounts record #4: an upsert-kafka delete (a null value) needs the record"
                                + " key, which holds the primary key"),
                bad,
                engine + ": the same words from both engines");
    }

    /**
     * Upsert-kafka records on tables not in upsert mode are refused when the job is built, naming
     * the table: at run time every record would be a bad record.
     */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void upsertRecordsNeedUpsertModeWhenTheJobIsBuilt(Engine engine) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        CdcJoin join = accountsBalances(engine, DebeziumFormat.defaults());
        DataStream<UpsertRecord> records = env.fromData(record("{\"id\":1}", "{\"id\":1}"));
        DataStream<KafkaMessage> messages =
                env.fromData(new KafkaMessage("accounts", 0, 0, null, null));
        List<Executable> builds =
                List.of(
                        () -> join.joinUpsert(records, records),
                        () -> join.joinKafkaUpsert(messages, messages),
                        () -> DebeziumDecoder.of(join.spec().left()).decodeUpsert(records),
                        () -> DebeziumDecoder.of(join.spec().left()).decodeKafkaUpsert(messages));
        for (Executable build : builds) {
            String message = assertThrows(IllegalArgumentException.class, build).getMessage();
            assertTrue(message.startsWith("table 'accounts' reads upsert-kafka records"), message);
        }
    }

    /**
     * Runs {@link #accountsBalances} over {@code accounts} and {@code balances}: the rows it emits
     * into {@code rows}, the reasons of its bad records into {@code bad}.
     */
    private static void join(
            Engine engine,
            DataStream<UpsertRecord> accounts,
            DataStream<UpsertRecord> balances,
            List<String> rows,
            List<String> bad)
            throws Exception {
        CdcJoin.Result result = accountsBalances(engine).joinUpsert(accounts, balances);
        DataStream<String> all =
                result.rows()
                        .map(r -> "row " + r)
                        .union(result.badRecords().map(b -> "bad " + b.reason));
        try (CloseableIterator<String> it = all.executeAndCollect()) {
            it.forEachRemaining(
                    line -> (line.startsWith("row ") ? rows : bad).add(line.substring(4)));
        }
    }

    /** Accounts LEFT JOIN balances on the account id, both sides upsert-kafka shaped. */
    static CdcJoin accountsBalances(Engine engine) {
        return accountsBalances(engine, DebeziumFormat.defaults().withUpsert(true));
    }

    /** {@link #accountsBalances(Engine)} with both tables in {@code format}. */
    static CdcJoin accountsBalances(Engine engine, DebeziumFormat format) {
        return CdcJoin.builder()
                .left(
                        "accounts",
                        CdcSchema.of(
                                Column.notNull("id", "BIGINT"), Column.nullable("name", "STRING")),
                        List.of("id"),
                        List.of("id"))
                .right(
                        "balances",
                        CdcSchema.of(
                                Column.notNull("account_id", "BIGINT"),
                                Column.nullable("amount", "BIGINT")),
                        List.of("account_id"),
                        List.of("account_id"))
                .joinType(JoinType.LEFT)
                .format(format)
                .badRecordPolicy(BadRecordPolicy.SIDE_OUTPUT)
                .engine(engine)
                .build();
    }
}
