package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Whole jobs: bad input under both policies, Row envelopes, the Table API bridge. */
@SuppressWarnings("try") // CloseableIterator#close may throw InterruptedException
class CdcJoinJobTest {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withSlots(4);

    static final CdcSchema USERS =
            CdcSchema.of(
                    DataTypes.ROW(
                            DataTypes.FIELD("id", DataTypes.BIGINT().notNull()),
                            DataTypes.FIELD("name", DataTypes.STRING())));
    static final CdcSchema DOMAINS =
            CdcSchema.of(
                    Column.notNull("id", "BIGINT"),
                    Column.nullable("user_id", "BIGINT"),
                    Column.nullable("domain", "STRING"));

    static CdcJoin.Builder usersDomains() {
        return CdcJoin.builder()
                .left("users", USERS, List.of("id"), List.of("id"))
                .right("domains", DOMAINS, List.of("user_id"), List.of("id"))
                .maxFlushDelay(java.time.Duration.ofMillis(20));
    }

    static String user(String op, long id, String name) {
        String row = "{\"id\":" + id + ",\"name\":\"" + name + "\"}";
        return op.equals("d")
                ? "{\"op\":\"d\",\"before\":" + row + "}"
                : "{\"op\":\"" + op + "\",\"after\":" + row + "}";
    }

    static String domain(long id, long user, String name) {
        return "{\"op\":\"c\",\"after\":{\"id\":"
                + id
                + ",\"user_id\":"
                + user
                + ",\"domain\":\""
                + name
                + "\"}}";
    }

    static final List<String> BAD_USERS =
            List.of(
                    "{\"op\":\"c\",\"after\":{\"id\":7,",
                    "{\"op\":\"t\",\"after\":{\"id\":8}}",
                    "{\"op\":\"u\",\"before\":null,\"after\":{\"id\":9,\"name\":\"x\"}}",
                    "{\"op\":\"c\",\"after\":{\"id\":\"ten\",\"name\":\"x\"}}");

    static List<String> usersWithBadOnes() {
        List<String> users = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            users.add(user("c", i, "u" + i));
            if (i % 5 == 0) {
                users.add(BAD_USERS.get(i / 5));
                users.add("null");
            }
        }
        return users;
    }

    static List<String> domains() {
        List<String> domains = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            domains.add(domain(100 + i, i, "d" + i + ".com"));
        }
        return domains;
    }

    @Test
    void badRecordsGoToTheSideOutputAndGoodOnesAreJoined() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        CdcJoin join =
                usersDomains().badRecordPolicy(BadRecordPolicy.SIDE_OUTPUT).batchSize(3).build();
        CdcJoin.Result result =
                join.joinStrings(
                        env.fromData(usersWithBadOnes()).setParallelism(1),
                        env.fromData(domains()).setParallelism(1));
        DataStream<String> all =
                result.rows()
                        .map(Row::toString)
                        .union(
                                result.badRecords()
                                        .map(
                                                b ->
                                                        "BAD "
                                                                + b.source
                                                                + "|"
                                                                + b.reason
                                                                + "|"
                                                                + b.rawAsString()));
        List<String> rows = new ArrayList<>();
        List<String> bad = new ArrayList<>();
        try (CloseableIterator<String> it = all.executeAndCollect()) {
            it.forEachRemaining(s -> (s.startsWith("BAD ") ? bad : rows).add(s));
        }
        Map<String, Integer> expected = new TreeMap<>();
        for (int i = 0; i < 20; i++) {
            expected.put(
                    "[" + i + ", u" + i + ", " + (100 + i) + ", " + i + ", d" + i + ".com]", 1);
        }
        assertEquals(expected, Changelogs.materialize(rows));
        Collections.sort(bad);
        assertEquals(4, bad.size(), bad.toString());
        for (String b : bad) {
            assertTrue(b.startsWith("BAD users|users record #"), b);
        }
        String joined = String.join("\n", bad);
        assertTrue(joined.contains("malformed JSON"), joined);
        assertTrue(joined.contains("unknown \"op\" value \"t\""), joined);
        assertTrue(joined.contains("The \"before\" field of UPDATE message is null"), joined);
        assertTrue(
                joined.contains("column \"id\" (BIGINT) of the \"after\" row: expected"), joined);
        for (String raw : BAD_USERS) {
            assertTrue(joined.contains("|" + raw), "raw record missing: " + raw);
        }
    }

    @Test
    void badRecordFailsTheJobNamingTheRecord() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        // Batches of one and records after the bad one: the job fails while the source is still
        // reading, so the first failure Flink reports is the decoder's.
        CdcJoin join = usersDomains().badRecordPolicy(BadRecordPolicy.FAIL).batchSize(1).build();
        List<String> users =
                new ArrayList<>(List.of(user("c", 1, "a"), "{\"op\":\"x\",\"after\":{\"id\":2}}"));
        for (int i = 3; i < 10_000; i++) {
            users.add(user("c", i, "u"));
        }
        CdcJoin.Result result = join.joinStrings(env.fromData(users), env.fromData(domains()));
        // A discarding sink rather than executeAndCollect: the collect sink's close waits for its
        // socket thread, a blocking point of Flink's own in a job whose tasks get cancelled.
        result.rows().sinkTo(new DiscardingSink<>());
        Exception e = assertThrows(Exception.class, env::execute);
        String chain = ExceptionUtils.stringifyException(e);
        assertTrue(
                chain.contains("Bad Debezium record: users record #1: unknown \"op\" value \"x\""),
                chain);
        assertTrue(chain.contains("record: {\"op\":\"x\",\"after\":{\"id\":2}}"), chain);
        // A job failing in a native operator leaves the task manager up, its slots free.
        MiniClusters.awaitTaskManagerWithAllSlotsFree(MINI_CLUSTER, Duration.ofSeconds(30));
    }

    static Row envelope(Row before, String op, Row after) {
        return Row.of(before, op, after);
    }

    @Test
    void rowEnvelopesAreEncodedInJavaAndSplitNatively() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        RowTypeInfo usersType = new RowTypeInfo(Types.LONG, Types.STRING);
        RowTypeInfo domainsType = new RowTypeInfo(Types.LONG, Types.LONG, Types.STRING);
        RowTypeInfo userEnvelope = new RowTypeInfo(usersType, Types.STRING, usersType);
        RowTypeInfo domainEnvelope = new RowTypeInfo(domainsType, Types.STRING, domainsType);
        List<Row> users =
                List.of(
                        envelope(null, "r", Row.of(1L, "ana")),
                        envelope(Row.of(1L, "ana"), "u", Row.of(1L, "anna")),
                        envelope(null, "c", Row.of(2L, "bo")),
                        envelope(null, "c", Row.of(null, "no id")));
        List<Row> domains =
                List.of(
                        envelope(null, "c", Row.of(10L, 1L, "a.com")),
                        envelope(null, "c", Row.of(11L, 2L, "b.com")),
                        envelope(Row.of(11L, 2L, "b.com"), "d", null));
        CdcJoin join = usersDomains().badRecordPolicy(BadRecordPolicy.SIDE_OUTPUT).build();
        CdcJoin.Result result =
                join.joinRows(
                        env.fromData(users, userEnvelope), env.fromData(domains, domainEnvelope));
        DataStream<String> all =
                result.rows()
                        .map(Row::toString)
                        .union(result.badRecords().map(b -> "BAD " + b.reason));
        List<String> out = new ArrayList<>();
        try (CloseableIterator<String> it = all.executeAndCollect()) {
            it.forEachRemaining(out::add);
        }
        List<String> bad =
                out.stream().filter(s -> s.startsWith("BAD ")).collect(Collectors.toList());
        assertEquals(1, bad.size(), out.toString());
        assertTrue(
                bad.get(0).contains("users record #3: column 'id' is declared NOT NULL"),
                bad.get(0));
        out.removeAll(bad);
        assertEquals(Map.of("[1, anna, 10, 1, a.com]", 1), Changelogs.materialize(out));
    }

    @Test
    void fromChangelogStreamAcceptsTheOutput() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        CdcJoin join =
                usersDomains()
                        .joinType(JoinType.LEFT)
                        .select("users.id", "uid")
                        .select("name")
                        .select("domain")
                        .build();
        CdcJoin.Result result =
                join.joinStrings(
                        env.fromData(List.of(user("c", 1, "a"), user("c", 2, "b"))),
                        env.fromData(List.of(domain(10, 1, "a.com"))));
        Table t = tEnv.fromChangelogStream(result.rows());
        Table counts = tEnv.sqlQuery("SELECT COUNT(*) AS n, COUNT(domain) AS d FROM " + t);
        List<String> out = new ArrayList<>();
        try (CloseableIterator<Row> it = counts.execute().collect()) {
            it.forEachRemaining(r -> out.add(r.toString()));
        }
        Map<String, Integer> finalRows = Changelogs.materialize(out);
        assertEquals(Map.of("[2, 1]", 1), finalRows, out.toString());
        assertEquals("uid", join.rowTypeInfo().getFieldNames()[0]);
    }
}
