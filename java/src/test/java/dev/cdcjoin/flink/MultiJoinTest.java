package dev.cdcjoin.flink;

import static dev.cdcjoin.flink.RowDataOutputTest.converter;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.runtime.NativeJoinOperator;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.types.DataType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.ExceptionUtils;
import org.apache.flink.util.StringUtils;
import org.apache.flink.util.function.ThrowingRunnable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The multi-way join end to end: users LEFT JOIN profiles USING (user) FULL JOIN settings USING
 * (user), from generated Debezium JSON, with each engine. The first half of a random trace runs at
 * parallelism 2 on the heap and stops with a savepoint, the second half restores it at parallelism
 * 3 on RocksDB; the two changelogs together materialize to the join of the final tables. Profiles
 * move between users.
 */
class MultiJoinTest {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withInputCounters(4);

    static final CdcSchema USERS =
            CdcSchema.of(
                    DataTypes.ROW(
                            DataTypes.FIELD("id", DataTypes.BIGINT().notNull()),
                            DataTypes.FIELD("name", DataTypes.STRING())));

    static final CdcSchema PROFILES =
            CdcSchema.of(
                    DataTypes.ROW(
                            DataTypes.FIELD("id", DataTypes.BIGINT().notNull()),
                            DataTypes.FIELD("user_id", DataTypes.BIGINT()),
                            DataTypes.FIELD("bio", DataTypes.STRING())));

    static final CdcSchema SETTINGS =
            CdcSchema.of(
                    DataTypes.ROW(
                            DataTypes.FIELD("user_id", DataTypes.BIGINT().notNull()),
                            DataTypes.FIELD("theme", DataTypes.STRING())));

    static CdcMultiJoin.Builder mart(Engine engine) {
        return CdcMultiJoin.builder()
                .input("users", USERS, List.of("id"), List.of("id"))
                .input("profiles", PROFILES, List.of("user_id"), List.of("id"), JoinType.LEFT)
                .input("settings", SETTINGS, List.of("user_id"), List.of("user_id"), JoinType.FULL)
                .select("users.id", "uid")
                .select("name")
                .select("profiles.id", "pid")
                .select("bio")
                .select("settings.user_id", "sid")
                .select("theme")
                .engine(engine)
                .batchSize(16)
                .maxFlushDelay(Duration.ofMillis(20));
    }

    /** A random trace: {@code "u|json"}, {@code "p|json"}, {@code "s|json"}, and final tables. */
    static final class Trace {
        final List<String> events = new ArrayList<>();
        final Map<Long, Object[]> users = new TreeMap<>();
        final Map<Long, Object[]> profiles = new TreeMap<>();
        final Map<Long, Object[]> settings = new TreeMap<>();
        private final ObjectMapper json = new ObjectMapper();

        Trace(long seed, int steps) {
            Random rnd = new Random(seed);
            for (int i = 0; i < steps; i++) {
                int t = rnd.nextInt(4);
                long id = rnd.nextInt(t == 0 ? 40 : 12);
                boolean delete = rnd.nextInt(6) == 0;
                if (t == 0) {
                    Long user = id % 9 == 0 ? null : (long) rnd.nextInt(14);
                    write("p", profiles, id, delete ? null : row(id, user, "b" + rnd.nextInt(3)));
                } else if (t == 1) {
                    write("s", settings, id, delete ? null : row(id, "t" + rnd.nextInt(3)));
                } else {
                    write("u", users, id, delete ? null : row(id, "n" + rnd.nextInt(3)));
                }
            }
        }

        private static Object[] row(Object... values) {
            return values;
        }

        /** Appends the Debezium message turning row {@code id} of a table into {@code row}. */
        private void write(String tag, Map<Long, Object[]> table, long id, Object[] row) {
            Object[] old = row == null ? table.remove(id) : table.put(id, row);
            if (old == null && row == null) {
                return;
            }
            ObjectNode m = json.createObjectNode();
            m.set("before", image(tag, old));
            m.set("after", image(tag, row));
            m.put("op", old == null ? "c" : row == null ? "d" : "u");
            events.add(tag + "|" + m);
        }

        private ObjectNode image(String tag, Object[] row) {
            if (row == null) {
                return null;
            }
            ObjectNode n = json.createObjectNode();
            String[] names =
                    tag.equals("u")
                            ? new String[] {"id", "name"}
                            : tag.equals("p")
                                    ? new String[] {"id", "user_id", "bio"}
                                    : new String[] {"user_id", "theme"};
            for (int i = 0; i < names.length; i++) {
                n.putPOJO(names[i], row[i]);
            }
            return n;
        }

        /**
         * users LEFT JOIN profiles USING (user) FULL JOIN settings USING (user), of the final
         * tables.
         */
        Map<String, Integer> oracle() {
            List<String> rows = new ArrayList<>();
            List<Object[]> left = new ArrayList<>();
            for (Object[] u : users.values()) {
                boolean matched = false;
                for (Object[] p : profiles.values()) {
                    if (u[0].equals(p[1])) {
                        left.add(new Object[] {u[0], u[1], p[0], p[2]});
                        matched = true;
                    }
                }
                if (!matched) {
                    left.add(new Object[] {u[0], u[1], null, null});
                }
            }
            for (Object[] l : left) {
                Object[] s = settings.get((Long) l[0]);
                rows.add(
                        change(
                                l[0],
                                l[1],
                                l[2],
                                l[3],
                                s == null ? null : s[0],
                                s == null ? null : s[1]));
            }
            for (Object[] s : settings.values()) {
                if (!users.containsKey((Long) s[0])) {
                    rows.add(change(null, null, null, null, s[0], s[1]));
                }
            }
            return Changelogs.materialize(rows);
        }

        private static String change(Object... values) {
            return "+I" + Row.of(values).toString().substring(2);
        }
    }

    static DataStream<byte[]> bytes(DataStream<String> json) {
        return json.map(s -> s.getBytes(StandardCharsets.UTF_8))
                .returns(PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO)
                .setParallelism(1);
    }

    /** Starts a run on {@code backend}. */
    private static JobClient start(
            Engine engine,
            List<String> events,
            int limit,
            String run,
            int p,
            String savepoint,
            StateBackend backend)
            throws Exception {
        DataStream<String> source = ChainedJoinTest.gated(events, limit, run, p, savepoint);
        Configuration conf = new Configuration();
        backend.configure(conf);
        source.getExecutionEnvironment().configure(conf);
        List<DataStream<byte[]>> inputs = new ArrayList<>();
        for (String table : List.of("u|", "p|", "s|")) {
            inputs.add(bytes(VectorsTest.pick(source, table)));
        }
        mart(engine).build().joinJson(inputs).rows().map(new ChainedJoinTest.Recorder(run));
        return source.getExecutionEnvironment().executeAsync(run);
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void threeInputsSurviveASavepointAndRescaling(Engine engine, @TempDir Path savepoints)
            throws Exception {
        Trace trace = new Trace(21, 1500);
        String first = "multi-" + engine + "-first";
        String second = "multi-" + engine + "-restored";
        int half = trace.events.size() / 2;
        JobClient job = start(engine, trace.events, half, first, 2, null, StateBackend.HEAP);
        String savepoint;
        try {
            ChainedJoinTest.awaitQuiet(first);
            savepoint = RecoveryTest.stopWithSavepoint(job, savepoints);
        } catch (Exception | AssertionError e) {
            job.cancel();
            throw e;
        }
        JobClient restored =
                start(
                        engine,
                        trace.events,
                        trace.events.size(),
                        second,
                        3,
                        savepoint,
                        StateBackend.ROCKSDB_INCREMENTAL);
        try {
            ChainedJoinTest.awaitMart(ChainedJoinTest.output(first), second, trace.oracle());
        } finally {
            restored.cancel().get(60, TimeUnit.SECONDS);
        }
        List<String> changelog = new ArrayList<>(ChainedJoinTest.output(first));
        changelog.addAll(ChainedJoinTest.output(second));
        Map<String, Integer> expected = trace.oracle();
        assertTrue(expected.size() > 10, "a mart of some rows: " + expected);
        assertTrue(
                expected.keySet().stream().anyMatch(r -> r.startsWith("[null, null, null, null")),
                "settings without a user, padded by the FULL step: " + expected);
        assertEquals(expected, Changelogs.materialize(changelog));
    }

    private static final List<String> USERS_JSON =
            List.of("{\"op\":\"c\",\"after\":{\"id\":1,\"name\":\"ana\"}}");
    private static final List<String> PROFILES_JSON =
            List.of("{\"op\":\"c\",\"after\":{\"id\":5,\"user_id\":1,\"bio\":\"hi\"}}");
    private static final String BAD = "{\"op\":\"c\",\"after\":{\"user_id\":";

    /** The three inputs of {@link #mart}, the settings with an undecodable record first. */
    private static List<DataStream<byte[]>> withBadSettings(StreamExecutionEnvironment env) {
        List<String> settings = new ArrayList<>(List.of(BAD));
        for (long i = 1; i < 2_000; i++) {
            settings.add("{\"op\":\"c\",\"after\":{\"user_id\":" + i + ",\"theme\":\"dark\"}}");
        }
        return List.of(
                bytes(env.fromData(USERS_JSON)),
                bytes(env.fromData(PROFILES_JSON)),
                bytes(env.fromData(settings)));
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void anUndecodableRecordOfTheThirdInputIsABadRecordUnderSideOutput(Engine engine)
            throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        CdcJoin.Result result =
                mart(engine)
                        .badRecordPolicy(BadRecordPolicy.SIDE_OUTPUT)
                        .build()
                        .joinJson(withBadSettings(env));
        List<String> out = ChainedJoinTest.rowsAndBadRecords(result);
        List<String> bad =
                out.stream().filter(o -> o.startsWith("BAD")).collect(Collectors.toList());
        assertEquals(1, bad.size(), "one bad record: " + bad);
        assertTrue(bad.get(0).startsWith("BAD settings: "), bad.get(0));
        List<String> rows =
                out.stream().filter(o -> !o.startsWith("BAD")).collect(Collectors.toList());
        Map<String, Integer> table = Changelogs.materialize(rows);
        assertEquals(1999, table.size(), "every user id of settings, one joined: " + table.size());
        assertEquals(
                1, table.get("[1, ana, 5, hi, 1, dark]"), "" + table.keySet().iterator().next());
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void anUndecodableRecordFailsTheJobUnderFailNamingIt(Engine engine) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        mart(engine)
                .badRecordPolicy(BadRecordPolicy.FAIL)
                .batchSize(1)
                .build()
                .joinJson(withBadSettings(env))
                .rows()
                .sinkTo(new DiscardingSink<>());
        Exception e = assertThrows(Exception.class, env::execute);
        String chain = ExceptionUtils.stringifyException(e);
        assertTrue(chain.contains("settings record #0"), chain);
        if (engine == Engine.NATIVE) {
            assertTrue(chain.contains("record: " + BAD), chain);
        }
        MiniClusters.awaitTaskManagerWithAllSlotsFree(MINI_CLUSTER, Duration.ofSeconds(30));
    }

    /**
     * The multi-way join's max parallelism is its own (256, the decode steps' Flink's default,
     * 128): each decode step keys its batches for the join's, read from the {@code keyBy} that the
     * input's tag chained to it feeds. With chaining disabled the decode step reaches no {@code
     * keyBy} in its task and keys them for its own: the join fails the job naming both numbers.
     */
    @Test
    void theJoinsMaxParallelismIsItsOwn() throws Exception {
        Trace trace = new Trace(22, 600);
        for (boolean chaining : new boolean[] {true, false}) {
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
            env.setParallelism(2);
            if (!chaining) {
                env.disableOperatorChaining();
            }
            DataStream<String> source = env.fromData(trace.events).setParallelism(1);
            List<DataStream<byte[]>> inputs = new ArrayList<>();
            for (String table : List.of("u|", "p|", "s|")) {
                inputs.add(bytes(VectorsTest.pick(source, table)));
            }
            SingleOutputStreamOperator<Row> rows =
                    mart(Engine.NATIVE).build().joinJson(inputs).rows();
            rows.setMaxParallelism(256);
            List<String> out = new ArrayList<>();
            ThrowingRunnable<Exception> run =
                    () -> {
                        try (var it = rows.map(Row::toString).executeAndCollect()) {
                            it.forEachRemaining(out::add);
                        }
                    };
            if (chaining) {
                run.run();
                assertEquals(trace.oracle(), Changelogs.materialize(out));
            } else {
                String chain =
                        ExceptionUtils.stringifyException(assertThrows(Exception.class, run::run));
                assertTrue(
                        chain.contains("partitioned for max parallelism 128, this join's is 256"),
                        chain);
                MiniClusters.awaitTaskManagerWithAllSlotsFree(MINI_CLUSTER, Duration.ofSeconds(30));
            }
        }
    }

    /**
     * A FULL step before a later one: rows padded by it keep the key of their present input (the
     * {@code USING} key), so {@code settings FULL JOIN users USING (user) LEFT JOIN profiles USING
     * (user)} attaches a profile to a user without settings, and to settings without a user; {@code
     * rowData()}, read with Flink's converter, is the same changelog.
     */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void rowsPaddedByAFullStepMeetLaterInputsOnTheirOwnKey(Engine engine) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        CdcMultiJoin join =
                CdcMultiJoin.builder()
                        .input("settings", SETTINGS, List.of("user_id"), List.of("user_id"))
                        .input("users", USERS, List.of("id"), List.of("id"), JoinType.FULL)
                        .input(
                                "profiles",
                                PROFILES,
                                List.of("user_id"),
                                List.of("id"),
                                JoinType.LEFT)
                        .engine(engine)
                        .build();
        String c = "{\"op\":\"c\",\"after\":";
        List<DataStream<byte[]>> inputs =
                List.of(
                        bytes(
                                env.fromData(
                                        c + "{\"user_id\":1,\"theme\":\"dark\"}}",
                                        c + "{\"user_id\":3,\"theme\":\"light\"}}")),
                        bytes(
                                env.fromData(
                                        c + "{\"id\":1,\"name\":\"ana\"}}",
                                        c + "{\"id\":2,\"name\":\"bo\"}}")),
                        bytes(
                                env.fromData(
                                        c + "{\"id\":10,\"user_id\":2,\"bio\":\"p2\"}}",
                                        c + "{\"id\":11,\"user_id\":3,\"bio\":\"p3\"}}",
                                        c + "{\"id\":12,\"user_id\":1,\"bio\":\"p1\"}}")));
        CdcJoin.Result result = join.joinJson(inputs);
        DataStream<String> rows = result.rows().map(Row::toString).returns(Types.STRING);
        DataType type = join.spec().dataType();
        // rowData(), read with Flink's converter: the same rows again.
        rows =
                rows.union(
                        result.rowData()
                                .map(r -> RowDataOutputTest.external(converter(type), r).toString())
                                .returns(Types.STRING));
        rows = rows.union(result.rawRows().map(MultiJoinTest::raw).returns(Types.STRING));
        List<String> out = new ArrayList<>();
        JobClient job;
        try (var it = rows.collectAsync()) {
            job = env.executeAsync();
            it.forEachRemaining(out::add);
        }
        JobExecutionResult done = job.getJobExecutionResult().get(60, TimeUnit.SECONDS);
        if (engine == Engine.NATIVE) {
            // The gauges are read as the tasks close their metric groups: three joins, two
            // subtasks.
            String id = job.getJobID().toString();
            JoinInputCounters.awaitClosed(id, "cdcjoinStateRows", 3 * 2);
            assertNativeGauges(JoinInputCounters.closedGauges(id));
            assertNativeAccumulators(done);
        }
        Map<String, Integer> expected =
                new TreeMap<>(
                        Map.of(
                                "[1, dark, 1, ana, 12, 1, p1]", 2,
                                "[3, light, null, null, 11, 3, p3]", 2,
                                "[null, null, 2, bo, 10, 2, p2]", 2,
                                "[row, row, row]", 1,
                                "[row, null, row]", 1,
                                "[null, row, row]", 1));
        assertEquals(expected, Changelogs.materialize(out), "" + out);
    }

    /**
     * The job accumulators of that job's three native multi-way joins (as {@link
     * NativeJoinOperator}'s, which benchmarks read): their state at the end, summed.
     */
    private static void assertNativeAccumulators(JobExecutionResult done) {
        assertEquals(3 * 7L, (Long) done.getAccumulatorResult(NativeJoinOperator.ACC_STATE_ROWS));
        assertEquals(
                0L, (Long) done.getAccumulatorResult(NativeJoinOperator.ACC_ABSENT_RETRACTIONS));
        long heap = done.getAccumulatorResult(NativeJoinOperator.ACC_STATE_HEAP_BYTES);
        long rows = done.getAccumulatorResult(NativeJoinOperator.ACC_STATE_ROW_BYTES);
        assertTrue(heap >= rows && rows > 0, "heap " + heap + ", rows " + rows);
        long out = done.getAccumulatorResult(NativeJoinOperator.ACC_ROWS_OUT);
        assertTrue(out >= 3 * 3, "rows out " + out);
    }

    /**
     * The native multi-way join's gauges at the end of that job, summed over its three join
     * operators ({@code rows()}, {@code rowData()} and {@code rawRows()} each add one over the same
     * inputs) and their two subtasks: one per native counter but the rows out (a counter), and none
     * for inputs it does not have.
     */
    private static void assertNativeGauges(Map<String, Long> gauges) {
        int joins = 3;
        Map<String, Long> expected =
                Map.of(
                        "cdcjoinRecordsIn0", 2L,
                        "cdcjoinRecordsIn1", 2L,
                        "cdcjoinRecordsIn2", 3L,
                        "cdcjoinStateRows", 7L,
                        "cdcjoinStateKeys", 3L,
                        "cdcjoinRejected", 0L,
                        "cdcjoinAbsentRetractions", 0L);
        for (Map.Entry<String, Long> e : expected.entrySet()) {
            long all = joins * e.getValue();
            assertEquals(all, gauges.get(e.getKey()), e.getKey() + " in " + gauges);
        }
        assertTrue(gauges.get("cdcjoinStateHeapBytes") > 0, "" + gauges);
        assertFalse(gauges.containsKey("cdcjoinRecordsIn3"), "" + gauges);
        assertFalse(gauges.containsKey("cdcjoinRowsOut"), "a counter, not a gauge: " + gauges);
    }

    /**
     * A raw output record ({@code kind u8 | (len i32 | row)*3}) as its kind and which inputs it
     * holds, e.g. {@code +I[row, null, row]}.
     */
    private static String raw(byte[] record) {
        ByteBuffer b = ByteBuffer.wrap(record).order(ByteOrder.LITTLE_ENDIAN);
        List<String> inputs = new ArrayList<>();
        int at = 1;
        for (int i = 0; i < 3; i++) {
            int length = b.getInt(at);
            inputs.add(length < 0 ? "null" : "row");
            at += 4 + Math.max(length, 0);
        }
        assertEquals(record.length, at, "three inputs and nothing else");
        return RowKind.fromByteValue(record[0]).shortString() + inputs;
    }

    /**
     * {@code rawRows()} of both engines in one job over the trace of {@link
     * #threeInputsSurviveASavepointAndRescaling}: the records materialize to the same multiset of
     * bytes (the Java engine encodes each input's row with the codec the native rows are written
     * in), one per row of the mart, padded inputs included.
     */
    @Test
    void bothEnginesGiveTheSameRawRows() throws Exception {
        Trace trace = new Trace(21, 1500);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        DataStream<String> source = env.fromData(trace.events).setParallelism(1);
        List<DataStream<byte[]>> inputs = new ArrayList<>();
        for (String table : List.of("u|", "p|", "s|")) {
            inputs.add(bytes(VectorsTest.pick(source, table)));
        }
        DataStream<String> all = null;
        for (Engine engine : Engine.values()) {
            DataStream<String> raw =
                    mart(engine)
                            .build()
                            .joinJson(inputs)
                            .rawRows()
                            .map(r -> engine + " " + hex(r))
                            .returns(Types.STRING);
            all = all == null ? raw : all.union(raw);
        }
        List<String> out = new ArrayList<>();
        try (var it = all.executeAndCollect()) {
            it.forEachRemaining(out::add);
        }
        Map<String, Integer> natively = materialized(out, Engine.NATIVE);
        assertEquals(trace.oracle().size(), natively.size(), "one record per row: " + natively);
        assertEquals(natively, materialized(out, Engine.JAVA));
    }

    /** A raw record as a changelog entry: its kind, then its bytes after the kind in hex. */
    private static String hex(byte[] record) {
        String kind = RowKind.fromByteValue(record[0]).shortString();
        return kind + "[" + StringUtils.byteToHexString(record, 1, record.length) + "]";
    }

    /** The records of {@code engine} in {@code out}, materialized. */
    private static Map<String, Integer> materialized(List<String> out, Engine engine) {
        String tag = engine + " ";
        return Changelogs.materialize(
                out.stream()
                        .filter(o -> o.startsWith(tag))
                        .map(o -> o.substring(tag.length()))
                        .collect(Collectors.toList()));
    }

    @Test
    void javaRawRowsNeedANotNullColumnInAPaddedInput() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        CdcSchema nullable =
                CdcSchema.of(
                        DataTypes.ROW(
                                DataTypes.FIELD("user_id", DataTypes.BIGINT()),
                                DataTypes.FIELD("note", DataTypes.STRING())));
        DataStream<byte[]> none = bytes(env.fromData("{}"));
        CdcJoin.Result result =
                CdcMultiJoin.builder()
                        .input("users", USERS, List.of("id"), List.of("id"))
                        .input("notes", nullable, List.of("user_id"), null, JoinType.LEFT)
                        .engine(Engine.JAVA)
                        .build()
                        .joinJson(List.of(none, none));
        UnsupportedOperationException e =
                assertThrows(UnsupportedOperationException.class, result::rawRows);
        assertTrue(e.getMessage().contains("NOT NULL column in input notes"), e.getMessage());
    }

    @Test
    void theDeclarationIsChecked() {
        CdcMultiJoin withTtl =
                mart(Engine.NATIVE)
                        .ttl(Duration.ofHours(1))
                        .ttl("users", null)
                        .ttl("settings", Duration.ofMinutes(5))
                        .build();
        List<Duration> ttls = new ArrayList<>();
        withTtl.spec().inputs().forEach(i -> ttls.add(i.ttl()));
        assertEquals(Arrays.asList(null, Duration.ofHours(1), Duration.ofMinutes(5)), ttls);
        IllegalArgumentException unknown =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> mart(Engine.NATIVE).ttl("user", Duration.ofHours(1)).build());
        assertEquals(
                "ttl of unknown input 'user': the inputs are [users, profiles, settings]",
                unknown.getMessage());
        IllegalStateException first =
                assertThrows(
                        IllegalStateException.class,
                        () ->
                                CdcMultiJoin.builder()
                                        .input(
                                                "a",
                                                USERS,
                                                List.of("id"),
                                                List.of("id"),
                                                JoinType.LEFT));
        assertTrue(first.getMessage().contains("the first input has no join type"));
        IllegalArgumentException one =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                CdcMultiJoin.builder()
                                        .input("a", USERS, List.of("id"), List.of("id"))
                                        .build());
        assertTrue(one.getMessage().contains("2 to 8 inputs, not 1"), one.getMessage());
        MultiJoinSpec all =
                CdcMultiJoin.builder()
                        .input("users", USERS, List.of("id"), List.of("id"))
                        .input(
                                "profiles",
                                PROFILES,
                                List.of("user_id"),
                                List.of("id"),
                                JoinType.LEFT)
                        .input("settings", SETTINGS, List.of("user_id"), null, JoinType.RIGHT)
                        .build()
                        .spec();
        assertEquals(
                List.of(
                        "users_id",
                        "name",
                        "profiles_id",
                        "profiles_user_id",
                        "bio",
                        "settings_user_id",
                        "theme"),
                List.of(all.outputNames()));
        assertEquals(
                List.of(true, true, false), List.of(all.padded(0), all.padded(1), all.padded(2)));
    }
}
