package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.TestVectors.Vector;
import dev.cdcjoin.flink.codec.CdcSchema;
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
}
