package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cdcjoin.flink.codec.CdcSchema;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A multi-way join's result feeding a two-table join on another key: users LEFT JOIN profiles USING
 * (user) LEFT JOIN settings USING (user), then LEFT JOIN companies on the user's company, from a
 * random Debezium trace where users change company and companies change title, on each engine, with
 * the multi-way join on either side of the next join. The changelog materializes to the join of the
 * final tables; on the native engine the rows cross to the next join as its input batches (the
 * multi-way operator emits them re-keyed).
 */
class MultiJoinChainTest {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withSlots(4);

    static final CdcSchema USERS =
            CdcSchema.of(
                    DataTypes.ROW(
                            DataTypes.FIELD("id", DataTypes.BIGINT().notNull()),
                            DataTypes.FIELD("name", DataTypes.STRING()),
                            DataTypes.FIELD("company_id", DataTypes.BIGINT())));

    static final CdcSchema PROFILES =
            CdcSchema.of(
                    DataTypes.ROW(
                            DataTypes.FIELD("user_id", DataTypes.BIGINT().notNull()),
                            DataTypes.FIELD("bio", DataTypes.STRING())));

    static final CdcSchema COMPANIES =
            CdcSchema.of(
                    DataTypes.ROW(
                            DataTypes.FIELD("id", DataTypes.BIGINT().notNull()),
                            DataTypes.FIELD("title", DataTypes.STRING())));

    private static final String[][] COLUMNS = {
        {"id", "name", "company_id"}, {"user_id", "bio"}, {"user_id", "theme"}, {"id", "title"}
    };

    private static final String TAGS = "upsc";

    /** users ⋈ profiles ⋈ settings on the user id, projected to what the mart needs. */
    static CdcMultiJoin people(Engine engine) {
        return CdcMultiJoin.builder()
                .input("users", USERS, List.of("id"), List.of("id"))
                .input("profiles", PROFILES, List.of("user_id"), List.of("user_id"), JoinType.LEFT)
                .input(
                        "settings",
                        MultiJoinTest.SETTINGS,
                        List.of("user_id"),
                        List.of("user_id"),
                        JoinType.LEFT)
                .select("users.id", "uid")
                .select("name")
                .select("company_id")
                .select("bio")
                .select("theme")
                .engine(engine)
                .batchSize(16)
                .maxFlushDelay(Duration.ofMillis(20))
                .build();
    }

    /** The mart's projection: the same columns whichever side the people are on. */
    private static CdcJoin.Builder mart(Engine engine) {
        return CdcJoin.builder()
                .select("uid")
                .select("name")
                .select("bio")
                .select("theme")
                .select("title")
                .engine(engine)
                .batchSize(16)
                .maxFlushDelay(Duration.ofMillis(20));
    }

    /** A random trace: {@code "<tag>|json"} per change, tag one of {@link #TAGS}. */
    static final class Trace {
        final List<String> events = new ArrayList<>();
        final List<Map<Long, Object[]>> tables = new ArrayList<>();
        private final ObjectMapper json = new ObjectMapper();

        Trace(long seed, int steps) {
            for (int t = 0; t < TAGS.length(); t++) {
                tables.add(new TreeMap<>());
            }
            Random rnd = new Random(seed);
            for (int i = 0; i < steps; i++) {
                int table = rnd.nextInt(TAGS.length());
                long id = rnd.nextInt(table == 3 ? 6 : 20);
                boolean delete = rnd.nextInt(6) == 0;
                Object[] row;
                if (table == 0) {
                    Long company = rnd.nextInt(7) == 0 ? null : (long) rnd.nextInt(7);
                    row = new Object[] {id, "n" + rnd.nextInt(3), company};
                } else {
                    row = new Object[] {id, TAGS.charAt(table) + "" + rnd.nextInt(3)};
                }
                write(table, id, delete ? null : row);
            }
        }

        /** Appends the Debezium message turning row {@code id} of a table into {@code row}. */
        private void write(int table, long id, Object[] row) {
            Map<Long, Object[]> rows = tables.get(table);
            Object[] old = row == null ? rows.remove(id) : rows.put(id, row);
            if (old == null && row == null) {
                return;
            }
            ObjectNode m = json.createObjectNode();
            m.set("before", image(table, old));
            m.set("after", image(table, row));
            m.put("op", old == null ? "c" : row == null ? "d" : "u");
            events.add(TAGS.charAt(table) + "|" + m);
        }

        private ObjectNode image(int table, Object[] row) {
            if (row == null) {
                return null;
            }
            ObjectNode n = json.createObjectNode();
            for (int c = 0; c < row.length; c++) {
                n.putPOJO(COLUMNS[table][c], row[c]);
            }
            return n;
        }

        /** The mart of the final tables: every user with its profile, settings and company. */
        Map<String, Integer> oracle() {
            List<String> rows = new ArrayList<>();
            for (Object[] u : tables.get(0).values()) {
                Object[] p = tables.get(1).get((Long) u[0]);
                Object[] s = tables.get(2).get((Long) u[0]);
                Object[] c = u[2] == null ? null : tables.get(3).get((Long) u[2]);
                rows.add(
                        Row.of(
                                        u[0],
                                        u[1],
                                        p == null ? null : p[1],
                                        s == null ? null : s[1],
                                        c == null ? null : c[1])
                                .toString());
            }
            return Changelogs.materialize(rows);
        }
    }

    /** The events of table {@code tag} as bytes, in trace order. */
    private static DataStream<byte[]> table(DataStream<String> events, char tag) {
        return VectorsTest.pick(events, tag + "|")
                .map(s -> s.getBytes(StandardCharsets.UTF_8))
                .returns(PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO)
                .setParallelism(1);
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void aMultiWayJoinFeedsEitherSideOfATwoTableJoin(Engine engine) throws Exception {
        Trace trace = new Trace(7, 1500);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        DataStream<String> events = env.fromData(trace.events).setParallelism(1);
        List<DataStream<byte[]>> inputs = new ArrayList<>();
        for (char tag : TAGS.substring(0, 3).toCharArray()) {
            inputs.add(table(events, tag));
        }
        DataStream<byte[]> companies = table(events, 'c');
        CdcMultiJoin people = people(engine);
        CdcJoin onLeft =
                mart(engine)
                        .left("people", people, List.of("company_id"), List.of("uid"))
                        .right("companies", COMPANIES, List.of("id"), List.of("id"))
                        .joinType(JoinType.LEFT)
                        .build();
        CdcJoin onRight =
                mart(engine)
                        .left("companies", COMPANIES, List.of("id"), List.of("id"))
                        .right("people", people, List.of("company_id"), List.of("uid"))
                        .joinType(JoinType.RIGHT)
                        .build();
        DataStream<String> left =
                onLeft.joinJson(people.joinJson(inputs), companies)
                        .rows()
                        .map(r -> "L" + r)
                        .returns(Types.STRING);
        DataStream<String> right =
                onRight.joinJson(companies, people.joinJson(inputs))
                        .rows()
                        .map(r -> "R" + r)
                        .returns(Types.STRING);
        String plan = env.getExecutionPlan();
        String chained = "CdcMultiJoin: users LEFT profiles LEFT settings → people";
        assertEquals(engine == Engine.NATIVE, plan.contains(chained), plan);
        List<String> out = new ArrayList<>();
        try (var it = left.union(right).executeAndCollect()) {
            it.forEachRemaining(out::add);
        }
        Map<String, Integer> expected = trace.oracle();
        assertTrue(expected.size() > 10, "a mart of some rows: " + expected);
        assertTrue(
                expected.keySet().stream().anyMatch(r -> r.endsWith(", null]")),
                "users without a company, padded by the LEFT join: " + expected);
        for (String side : List.of("L", "R")) {
            List<String> changelog =
                    out.stream()
                            .filter(o -> o.startsWith(side))
                            .map(o -> o.substring(1))
                            .collect(Collectors.toList());
            assertEquals(expected, Changelogs.materialize(changelog), side + " " + changelog);
        }
    }
}
