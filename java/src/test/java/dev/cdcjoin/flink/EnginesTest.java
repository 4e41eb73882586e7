package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.TestVectors.Vector;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.StringUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link CdcJoin.Builder#engine(Engine)}: the pure-Java engine and the native one, built by the
 * same builder calls, give the same changelog (row for row, in order, at parallelism 1 with the
 * inputs read in the vector's order) and the same bytes from {@link CdcJoin.Result#rawRows()} on
 * every shared vector and join type; and the same result on Row envelopes and on natively decoded
 * changes.
 */
@SuppressWarnings("try") // CloseableIterator#close may throw InterruptedException
class EnginesTest {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withInputCounters(4);

    static Stream<Vector> vectors() throws Exception {
        return VectorsTest.vectors();
    }

    static CdcJoin join(Vector v, JoinType type, Engine engine) {
        return CdcJoin.builder()
                .left(v.left.name(), v.left.schema(), v.left.joinKey(), v.left.primaryKey())
                .right(v.right.name(), v.right.schema(), v.right.joinKey(), v.right.primaryKey())
                .format(v.left.format(), v.right.format())
                .joinType(type)
                .batchSize(1)
                .engine(engine)
                .build();
    }

    /** Prefixes a raw output record (as hex) with its join type. */
    static final class TagBytes implements MapFunction<byte[], String> {
        private static final long serialVersionUID = 1L;
        private final JoinType type;

        TagBytes(JoinType type) {
            this.type = type;
        }

        @Override
        public String map(byte[] record) {
            return "raw " + type + "|" + StringUtils.byteToHexString(record);
        }
    }

    /**
     * Runs a vector through every join type with one engine, rows and raw output, in one job; each
     * join reads its inputs in the vector's order.
     */
    static Map<String, List<String>> run(Vector v, Engine engine) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        env.setBufferTimeout(0);
        int joins = 2 * JoinType.values().length; // a rows and a raw join operator per type
        DataStream<String> events =
                env.fromSequence(0, v.events.size() - 1)
                        .map(new VectorsTest.EventAt(v.events, true, joins));
        DataStream<String> left = VectorsTest.pick(events, "L|");
        DataStream<String> right = VectorsTest.pick(events, "R|");
        DataStream<String> all = null;
        for (JoinType type : JoinType.values()) {
            CdcJoin.Result result = join(v, type, engine).joinStrings(left, right);
            DataStream<String> rows =
                    result.rows()
                            .map(new Changelogs.Tag(type))
                            .union(result.rawRows().map(new TagBytes(type)));
            all = all == null ? rows : all.union(rows);
        }
        Map<String, List<String>> out = new java.util.TreeMap<>();
        try (CloseableIterator<String> it = all.executeAndCollect(v.file + " " + engine)) {
            it.forEachRemaining(
                    s -> {
                        int bar = s.indexOf('|');
                        out.computeIfAbsent(s.substring(0, bar), k -> new ArrayList<>())
                                .add(s.substring(bar + 1));
                    });
        }
        return out;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("vectors")
    void bothEnginesGiveTheSameChangelog(Vector v) throws Exception {
        Map<String, List<String>> nativeOut = run(v, Engine.NATIVE);
        Map<String, List<String>> javaOut = run(v, Engine.JAVA);
        for (JoinType type : JoinType.values()) {
            List<String> expected = v.expected.get(type);
            if (expected != null) {
                assertEquals(
                        expected,
                        nativeOut.getOrDefault(type.name(), List.of()),
                        v.file + " " + type + " native");
            }
            assertEquals(
                    nativeOut.getOrDefault(type.name(), List.of()),
                    javaOut.getOrDefault(type.name(), List.of()),
                    v.file + " " + type + " rows");
            assertEquals(
                    nativeOut.getOrDefault("raw " + type, List.of()),
                    javaOut.getOrDefault("raw " + type, List.of()),
                    v.file + " " + type + " raw");
            // The raw output decodes to the rows, in order.
            RawJoinOutput decoder = new RawJoinOutput(join(v, type, Engine.JAVA).spec());
            List<String> decoded = new ArrayList<>();
            for (String hex : javaOut.getOrDefault("raw " + type, List.of())) {
                decoded.add(decoder.toRow(StringUtils.hexStringToByte(hex)).toString());
            }
            assertEquals(
                    javaOut.getOrDefault(type.name(), List.of()),
                    decoded,
                    v.file + " " + type + " raw decoded");
        }
        assertFalse(nativeOut.isEmpty(), "no output for " + v.file);
    }

    static final CdcSchema USERS = CdcJoinJobTest.USERS;
    static final CdcSchema DOMAINS = CdcJoinJobTest.DOMAINS;

    /** Row envelopes, bad ones included, through both engines: same rows, same bad records. */
    @Test
    void rowEnvelopesGiveTheSameResultWithBothEngines() throws Exception {
        Map<Engine, List<String>> out = new EnumMap<>(Engine.class);
        for (Engine engine : Engine.values()) {
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
            env.setParallelism(1);
            RowTypeInfo usersType = new RowTypeInfo(Types.LONG, Types.STRING);
            RowTypeInfo domainsType = new RowTypeInfo(Types.LONG, Types.LONG, Types.STRING);
            List<Row> users =
                    List.of(
                            Row.of(null, "r", Row.of(1L, "ana")),
                            Row.of(Row.of(1L, "ana"), "u", Row.of(1L, "anna")),
                            Row.of(null, "c", Row.of(2L, "bo")),
                            Row.of(null, "c", Row.of(null, "no id")),
                            Row.of(null, "t", Row.of(3L, "truncate")),
                            Row.of(null, "u", Row.of(2L, "bob")),
                            Row.of(Row.of(2L, "bo"), "d", null));
            List<Row> domains =
                    List.of(
                            Row.of(null, "c", Row.of(10L, 1L, "a.com")),
                            Row.of(null, "c", Row.of(11L, 2L, "b.com")),
                            Row.of(null, "c", Row.of(12L, 3L, "c.com")),
                            Row.of(Row.of(11L, 2L, "b.com"), "d", null));
            CdcJoin join =
                    CdcJoinJobTest.usersDomains()
                            .joinType(JoinType.FULL)
                            .badRecordPolicy(BadRecordPolicy.SIDE_OUTPUT)
                            .engine(engine)
                            .build();
            CdcJoin.Result result =
                    join.joinRows(
                            env.fromData(
                                    users, new RowTypeInfo(usersType, Types.STRING, usersType)),
                            env.fromData(
                                    domains,
                                    new RowTypeInfo(domainsType, Types.STRING, domainsType)));
            DataStream<String> all =
                    result.rows()
                            .map(Row::toString)
                            .union(result.badRecords().map(b -> "BAD " + b.reason));
            List<String> rows = new ArrayList<>();
            try (CloseableIterator<String> it = all.executeAndCollect()) {
                it.forEachRemaining(rows::add);
            }
            List<String> bad =
                    rows.stream()
                            .filter(s -> s.startsWith("BAD "))
                            .sorted()
                            .collect(Collectors.toList());
            rows.removeAll(bad);
            List<String> summary = new ArrayList<>(bad);
            summary.add(Changelogs.materialize(rows).toString());
            out.put(engine, summary);
        }
        assertEquals(4, out.get(Engine.NATIVE).size(), out.toString());
        assertEquals(out.get(Engine.NATIVE), out.get(Engine.JAVA));
        assertEquals(
                "{[1, anna, 10, 1, a.com]=1, [null, null, 12, 3, c.com]=1}",
                out.get(Engine.JAVA).get(3));
    }

    /** Natively decoded changes joined by the Java engine ({@code joinChanges}). */
    @Test
    void javaEngineJoinsNativelyDecodedChanges() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        CdcJoin java =
                CdcJoinJobTest.usersDomains()
                        .joinType(JoinType.LEFT)
                        .engine(Engine.JAVA)
                        .ttl(Duration.ofHours(1))
                        .build();
        DataStream<String> users =
                env.fromData(
                                CdcJoinJobTest.user("c", 1, "a"),
                                CdcJoinJobTest.user("c", 2, "b"),
                                CdcJoinJobTest.user("d", 2, "b"))
                        .setParallelism(1);
        DataStream<String> domains =
                env.fromData(
                                CdcJoinJobTest.domain(10, 1, "a.com"),
                                CdcJoinJobTest.domain(11, 3, "c.com"))
                        .setParallelism(1);
        DataStream<Row> rows =
                java.joinChanges(
                        java.leftDecoder().decodeStrings(users),
                        java.rightDecoder().decodeStrings(domains));
        List<String> out = new ArrayList<>();
        try (CloseableIterator<Row> it = rows.executeAndCollect()) {
            it.forEachRemaining(r -> out.add(r.toString()));
        }
        assertEquals(Map.of("[1, a, 10, 1, a.com]", 1), Changelogs.materialize(out));
        assertEquals(Engine.JAVA, java.engine());
    }

    @Test
    void joinOfDecodedChangesRunsTheChosenEngine() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        for (Engine engine : Engine.values()) {
            CdcJoin join = CdcJoinJobTest.usersDomains().engine(engine).build();
            String name =
                    join.join(
                                    join.leftDecoder().decodeStrings(env.fromData("{}")),
                                    join.rightDecoder().decodeStrings(env.fromData("{}")))
                            .rows()
                            .getName();
            String expected = engine == Engine.JAVA ? "JavaJoin INNER" : "CdcJoin INNER";
            assertTrue(name.startsWith(expected), engine + ": " + name);
        }
    }

    @Test
    void definitionExposesTtlAndAbsentRetractionPolicy() {
        CdcJoin j =
                CdcJoinJobTest.usersDomains()
                        .ttl(Duration.ofMinutes(5), null)
                        .failOnAbsentRetraction(true)
                        .build();
        assertEquals(Duration.ofMinutes(5), j.spec().left().ttl());
        assertEquals(null, j.spec().right().ttl());
        assertEquals(true, j.spec().failOnAbsentRetraction());
        assertEquals(false, CdcJoinJobTest.usersDomains().build().spec().failOnAbsentRetraction());
        assertEquals(Engine.NATIVE, CdcJoinJobTest.usersDomains().build().engine());
        assertThrows(NullPointerException.class, () -> CdcJoinJobTest.usersDomains().engine(null));
    }

    /** One decoding case: a left table of {@code id} and {@code c}, its format and messages. */
    static final class Case {
        final String name;
        final String type;
        final DebeziumFormat format;
        final List<String> messages;

        Case(String name, String type, DebeziumFormat format, String... messages) {
            this.name = name;
            this.type = type;
            this.format = format;
            this.messages = List.of(messages);
        }
    }

    /** Prefixes a row with its case's name. */
    static final class TagCase implements MapFunction<Row, String> {
        private static final long serialVersionUID = 1L;
        private final String name;

        TagCase(String name) {
            this.name = name;
        }

        @Override
        public String map(Row row) {
            return name + " " + row;
        }
    }

    private static String create(int id, String c) {
        return "{\"op\":\"c\",\"after\":{\"id\":" + id + ",\"c\":" + c + "}}";
    }

    /** A schema-wrapped create whose row struct lists {@code columns}. */
    private static String wrapped(String columns, String after) {
        return "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"struct\",\"fields\":["
                + columns
                + "],\"optional\":true,\"field\":\"before\"},{\"type\":\"struct\",\"fields\":["
                + columns
                + "],\"optional\":true,\"field\":\"after\"}],\"name\":\"my.shop.t.Envelope\"},"
                + "\"payload\":{\"before\":null,\"after\":"
                + after
                + ",\"op\":\"c\"}}";
    }

    private static final String ID = "{\"type\":\"int32\",\"optional\":false,\"field\":\"id\"}";

    /** A wrapped create of {@code id} and {@code c}, whose Connect schema is {@code node}. */
    private static String wrapped(int id, String node, String c) {
        return wrapped(
                ID + ",{" + node + ",\"field\":\"c\"}", "{\"id\":" + id + ",\"c\":" + c + "}");
    }

    /**
     * The decoding rules of the review of both decoders (Postgres' infinite timestamps, isostring
     * texts at UTC, TOASTed hstore, Connect types, unlisted columns) on the same messages: the same
     * rows and the same bad records from both engines.
     */
    static List<Case> decodingCases() {
        DebeziumFormat pg = DebeziumFormat.debeziumDefaults();
        String toastedHstore =
                "\"{\\\"__debezium_unavailable_value\\\":\\\"__debezium_unavailable_value\\\"}\"";
        String decimal =
                "\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\","
                        + "\"parameters\":{\"scale\":\"2\"}";
        String bits =
                "\"type\":\"bytes\",\"name\":\"io.debezium.data.Bits\","
                        + "\"parameters\":{\"length\":\"24\"}";
        return List.of(
                new Case(
                        "infinity",
                        "TIMESTAMP(6)",
                        pg.withSourcePrecision("c", 6),
                        create(1, "1706696130123456"),
                        create(2, "9223372036825200000"),
                        create(3, "-9223372036832400000"),
                        create(4, "253402300799999999"),
                        create(5, "253402300800000000")),
                new Case(
                        "nanos",
                        "TIMESTAMP(7)",
                        pg.withSourcePrecision("c", 9),
                        create(1, "9223372036854775806"),
                        create(2, "9223372036854775807"),
                        create(3, "-9223372036854775808"),
                        create(4, "-9223372036854775807"),
                        create(5, "-9223372036854775700")),
                new Case(
                        "days",
                        "DATE",
                        pg,
                        create(1, "2932896"),
                        create(2, "2932897"),
                        create(3, "-719528"),
                        create(4, "-719529"),
                        create(5, "2147483647")),
                new Case(
                        "iso",
                        "TIMESTAMP(6)",
                        pg.withTimePrecision(DebeziumFormat.TimePrecision.ISOSTRING),
                        create(1, "\"2024-01-31T10:15:30.123456Z\""),
                        create(2, "\"2024-01-31T10:15:30+00:00\""),
                        create(3, "\"2018-03-27T01:34:56.007891-11:00\""),
                        create(4, "\"2018-03-27T01:34:56.007891+01:00\"")),
                new Case(
                        "hstore",
                        "STRING",
                        pg,
                        create(1, "\"{\\\"k\\\":\\\"v\\\"}\""),
                        "{\"op\":\"u\",\"before\":{\"id\":1,\"c\":\"{\\\"k\\\":\\\"v\\\"}\"},"
                                + "\"after\":{\"id\":1,\"c\":"
                                + toastedHstore
                                + "}}"),
                new Case(
                        "connectString",
                        "STRING",
                        pg,
                        wrapped(1, decimal, "\"BNI=\""),
                        wrapped(2, bits, "\"AQI=\""),
                        wrapped(
                                3,
                                "\"type\":\"string\",\"name\":\"io.debezium.data.Json\"",
                                "\"{}\""),
                        wrapped(4, "\"type\":\"int32\"", "7")),
                new Case(
                        "connectNumbers",
                        "DOUBLE",
                        pg,
                        wrapped(1, "\"type\":\"string\"", "\"Infinity\""),
                        wrapped(2, "\"type\":\"double\"", "\"NaN\""),
                        wrapped(3, "\"type\":\"int64\"", "7")),
                new Case(
                        "bits",
                        "BYTES",
                        pg.withBinaryHandling(DebeziumFormat.BinaryHandling.HEX),
                        wrapped(1, bits, "\"ABCD\""),
                        wrapped(2, decimal, "\"BNI=\""),
                        wrapped(3, "\"type\":\"string\"", "\"0102\"")),
                new Case(
                        "unlisted",
                        "DECIMAL(10, 2)",
                        DebeziumFormat.defaults(),
                        wrapped(ID, "{\"id\":1,\"c\":\"1000\"}"),
                        wrapped(ID, "{\"id\":2,\"c\":null}"),
                        wrapped(ID, "{\"id\":3}"),
                        "{\"schema\":{\"type\":\"struct\"},\"payload\":"
                                + create(4, "\"1000\"")
                                + "}"));
    }

    /** Each case's rows ({@code "<case> +I[..]"}) in order, then its bad records, sorted. */
    static List<String> decodeCases(List<Case> cases, Engine engine) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        DataStream<String> all = null;
        for (Case c : cases) {
            CdcSchema left =
                    CdcSchema.of(Column.notNull("id", "INT"), Column.nullable("c", c.type));
            CdcJoin join =
                    CdcJoin.builder()
                            .left(c.name, left, List.of("id"), List.of("id"))
                            .right(
                                    c.name + "_r",
                                    CdcSchema.of(Column.notNull("id", "INT")),
                                    List.of("id"),
                                    List.of("id"))
                            .format(c.format, DebeziumFormat.defaults())
                            .joinType(JoinType.LEFT)
                            .badRecordPolicy(BadRecordPolicy.SIDE_OUTPUT)
                            .batchSize(1)
                            .engine(engine)
                            .build();
            CdcJoin.Result result = join.joinStrings(env.fromData(c.messages), env.fromData(""));
            DataStream<String> out =
                    result.rows()
                            .map(new TagCase(c.name))
                            .union(result.badRecords().map(b -> "BAD " + b.reason));
            all = all == null ? out : all.union(out);
        }
        List<String> rows = new ArrayList<>();
        List<String> bad = new ArrayList<>();
        try (CloseableIterator<String> it = all.executeAndCollect("decoding cases " + engine)) {
            it.forEachRemaining(s -> (s.startsWith("BAD ") ? bad : rows).add(s));
        }
        List<String> out = new ArrayList<>();
        for (Case c : cases) {
            rows.stream().filter(r -> r.startsWith(c.name + " ")).forEach(out::add);
        }
        bad.sort(null);
        out.addAll(bad);
        return out;
    }

    /** The records of {@code bad} ({@code "<case> record #<i>"}), for both engines' words. */
    private static List<String> badRecords(List<String> out) {
        return out.stream()
                .filter(s -> s.startsWith("BAD "))
                .map(s -> s.substring(4, s.indexOf(':')))
                .collect(Collectors.toList());
    }

    @Test
    void bothEnginesDecodeTheReviewedRulesAlike() throws Exception {
        List<Case> cases = decodingCases();
        List<String> nativeOut = decodeCases(cases, Engine.NATIVE);
        List<String> javaOut = decodeCases(cases, Engine.JAVA);
        List<String> rows =
                List.of(
                        "infinity +I[1, 2024-01-31T10:15:30.123456, null]",
                        "infinity +I[4, 9999-12-31T23:59:59.999999, null]",
                        "nanos +I[1, 2262-04-11T23:47:16.854775800, null]",
                        "nanos +I[5, 1677-09-21T00:12:43.145224300, null]",
                        "days +I[1, 9999-12-31, null]",
                        "days +I[3, 0000-01-01, null]",
                        "iso +I[1, 2024-01-31T10:15:30.123456, null]",
                        "iso +I[2, 2024-01-31T10:15:30, null]",
                        "hstore +I[1, {\"k\":\"v\"}, null]",
                        "hstore -D[1, {\"k\":\"v\"}, null]",
                        "hstore +I[1, {\"k\":\"v\"}, null]",
                        "connectString +I[3, {}, null]",
                        "connectNumbers +I[2, NaN, null]",
                        "connectNumbers +I[3, 7.0, null]",
                        "bits +I[1, [0, 16, -125], null]",
                        "bits +I[3, [1, 2], null]",
                        "unlisted +I[2, null, null]",
                        "unlisted +I[3, null, null]",
                        "unlisted +I[4, 1000.00, null]");
        List<String> bad =
                List.of(
                        "bits record #1",
                        "connectNumbers record #0",
                        "connectString record #0",
                        "connectString record #1",
                        "connectString record #3",
                        "days record #1",
                        "days record #3",
                        "days record #4",
                        "infinity record #1",
                        "infinity record #2",
                        "infinity record #4",
                        "iso record #2",
                        "iso record #3",
                        "nanos record #1",
                        "nanos record #2",
                        "nanos record #3",
                        "unlisted record #0");
        for (Map.Entry<Engine, List<String>> e :
                Map.of(Engine.NATIVE, nativeOut, Engine.JAVA, javaOut).entrySet()) {
            List<String> out = e.getValue();
            List<String> got =
                    out.stream().filter(s -> !s.startsWith("BAD ")).collect(Collectors.toList());
            assertEquals(rows, got, e.getKey() + " rows: " + out);
            assertEquals(bad, badRecords(out), e.getKey() + " bad records: " + out);
        }
        assertEquals(nativeOut.size(), javaOut.size(), nativeOut + "\n" + javaOut);
        for (int i = 0; i < nativeOut.size(); i++) {
            String n = nativeOut.get(i);
            String j = javaOut.get(i);
            if (n.startsWith("BAD ")
                    && !n.contains(" is out of range")
                    && !n.contains("does not list")) {
                continue; // the engines word what a column expects each its own way
            }
            assertEquals(n, j, "the same rows and out-of-range words from both engines");
        }
    }

    /**
     * {@link DebeziumFormat#mysqlDefaults()}: a MySQL TIME(0) is microseconds of the day under the
     * MySQL connector's default {@code adaptive_time_microseconds}, with no source precision.
     */
    @Test
    void mysqlDefaultsReadATimeAsMicrosecondsWithBothEngines() throws Exception {
        DebeziumFormat mysql = DebeziumFormat.mysqlDefaults();
        assertEquals(DebeziumFormat.DecimalHandling.PRECISE, mysql.decimalHandling());
        assertEquals(
                DebeziumFormat.TimePrecision.ADAPTIVE_TIME_MICROSECONDS, mysql.timePrecision());
        assertEquals(DebeziumFormat.BinaryHandling.BYTES, mysql.binaryHandling());
        List<Case> cases = List.of(new Case("mysql", "TIME(0)", mysql, create(1, "60000000")));
        for (Engine engine : Engine.values()) {
            assertEquals(
                    List.of("mysql +I[1, 00:01, null]"), // Row prints 00:01:00 as 00:01
                    decodeCases(cases, engine),
                    engine.name());
        }
    }
}
