package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.RandomCdc.Shape;
import dev.cdcjoin.flink.RandomCdc.Trace;
import dev.cdcjoin.flink.codec.Column;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Random CDC traces (the users/domains shape and a composite-key shape with a side without a
 * primary key), every join type, parallelism 1 and 4, in one job per case: the native operator's
 * materialized output equals the reference join of the final tables AND the materialized output of
 * Flink SQL's own regular join over the same decoded changelogs (turned into tables with {@code
 * fromChangelogStream}, primary keys declared where the tables have them).
 */
@SuppressWarnings("try") // CloseableIterator#close may throw InterruptedException
class SqlEquivalenceTest {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withSlots(4);

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of(Shape.USERS_DOMAINS, 1L, 1),
                Arguments.of(Shape.USERS_DOMAINS, 2L, 4),
                Arguments.of(Shape.COMPOSITE, 3L, 1),
                Arguments.of(Shape.COMPOSITE, 4L, 4));
    }

    @ParameterizedTest(name = "{0} seed {1} parallelism {2}")
    @MethodSource("cases")
    void nativeJoinEqualsReferenceAndFlinkSql(Shape shape, long seed, int parallelism)
            throws Exception {
        Trace trace = RandomCdc.generate(shape, seed, 2500, 200);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(parallelism);
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);

        // One source: each table's messages keep their order up to the keyBy / the SQL exchange.
        DataStream<String> events = env.fromData(trace.events).setParallelism(1);
        CdcJoin decoding = shape.join(JoinType.INNER).build();
        SingleOutputStreamOperator<ChangeRecord> left =
                decoding.leftDecoder().batchSize(16).decodeStrings(VectorsTest.pick(events, "L|"));
        SingleOutputStreamOperator<ChangeRecord> right =
                decoding.rightDecoder().batchSize(16).decodeStrings(VectorsTest.pick(events, "R|"));

        tEnv.createTemporaryView("l_t", table(tEnv, left, shape.left));
        tEnv.createTemporaryView("r_t", table(tEnv, right, shape.right));

        DataStream<String> all = null;
        for (JoinType type : JoinType.values()) {
            DataStream<String> nativeRows =
                    shape.join(type)
                            .batchSize(32)
                            .build()
                            .joinChanges(left, right)
                            .map(new Changelogs.Tag(type))
                            .map(s -> "native|" + s);
            Table sql = tEnv.sqlQuery(sql(shape, type));
            DataStream<String> sqlRows =
                    tEnv.toChangelogStream(sql).map(new Changelogs.Tag(type)).map(s -> "sql|" + s);
            DataStream<String> both = nativeRows.union(sqlRows);
            all = all == null ? both : all.union(both);
        }
        Map<String, Map<JoinType, List<String>>> out =
                Map.of(
                        "native",
                        new EnumMap<>(JoinType.class),
                        "sql",
                        new EnumMap<>(JoinType.class));
        try (CloseableIterator<String> it = all.executeAndCollect(shape + " seed " + seed)) {
            it.forEachRemaining(
                    s -> {
                        String[] parts = s.split("\\|", 3);
                        out.get(parts[0])
                                .computeIfAbsent(JoinType.valueOf(parts[1]), t -> new ArrayList<>())
                                .add(parts[2]);
                    });
        }
        for (JoinType type : JoinType.values()) {
            Map<String, Integer> expected = trace.expected(type);
            assertTrue(expected.size() > 20, "too small a result: " + expected.size());
            List<String> nativeLog = out.get("native").getOrDefault(type, List.of());
            List<String> sqlLog = out.get("sql").getOrDefault(type, List.of());
            assertEquals(
                    expected, Changelogs.materialize(nativeLog), shape + " " + type + " native");
            assertEquals(
                    expected, Changelogs.materialize(sqlLog), shape + " " + type + " Flink SQL");
        }
    }

    /**
     * The decoded changes of one table as a Flink table: rows of its schema with their kinds, exact
     * column types and its primary key (if any) declared.
     */
    static Table table(
            StreamTableEnvironment tEnv, DataStream<ChangeRecord> changes, SideSpec side) {
        DataStream<Row> rows =
                changes.map(new JavaBackend.ChangeToRow(side.schema()))
                        .returns(side.schema().rowTypeInfo())
                        .setParallelism(changes.getParallelism());
        Schema.Builder schema = Schema.newBuilder().fromRowDataType(side.schema().dataType());
        if (side.primaryKey() != null) {
            schema.primaryKey(side.primaryKey());
        }
        return tEnv.fromChangelogStream(rows, schema.build(), ChangelogMode.all());
    }

    /** The regular join in SQL, output columns left then right, as the native join's. */
    static String sql(Shape shape, JoinType type) {
        String select =
                Stream.concat(columns(shape.left, "l").stream(), columns(shape.right, "r").stream())
                        .collect(Collectors.joining(", "));
        String on =
                java.util.stream.IntStream.range(0, shape.left.joinKey().size())
                        .mapToObj(
                                i ->
                                        "l.`"
                                                + shape.left.joinKey().get(i)
                                                + "` = r.`"
                                                + shape.right.joinKey().get(i)
                                                + "`")
                        .collect(Collectors.joining(" AND "));
        String join = type == JoinType.INNER ? "INNER JOIN" : type + " OUTER JOIN";
        return "SELECT " + select + " FROM l_t AS l " + join + " r_t AS r ON " + on;
    }

    static List<String> columns(SideSpec side, String alias) {
        List<String> out = new ArrayList<>();
        for (Column c : side.schema().columns()) {
            out.add(alias + ".`" + c.name() + "` AS `" + alias + "_" + c.name() + "`");
        }
        return out;
    }
}
