package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cdcjoin.flink.codec.CdcSchema;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A three-table star through chained joins: orders LEFT JOIN customers (on the order's customer),
 * its output INNER JOIN products (on the order's product), with each engine. The first half of a
 * random trace runs at parallelism 2 and stops with a savepoint, the second half restores it at
 * parallelism 3; the two changelogs together materialize to the star join of the final tables.
 * Orders change products (so their rows move between the second join's keys), never customers: a
 * row moving between the first join's keys reaches the second join from two subtasks, whose changes
 * may interleave (see the README; {@code rust/join/tests/chain.rs} checks one move).
 */
class ChainedJoinTest {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withSlots(4);

    static final CdcSchema ORDERS =
            CdcSchema.of(
                    DataTypes.ROW(
                            DataTypes.FIELD("id", DataTypes.BIGINT().notNull()),
                            DataTypes.FIELD("customer_id", DataTypes.BIGINT()),
                            DataTypes.FIELD("product_id", DataTypes.BIGINT()),
                            DataTypes.FIELD("qty", DataTypes.INT())));

    static final CdcSchema CUSTOMERS =
            CdcSchema.of(
                    DataTypes.ROW(
                            DataTypes.FIELD("id", DataTypes.BIGINT().notNull()),
                            DataTypes.FIELD("name", DataTypes.STRING())));

    static final CdcSchema PRODUCTS =
            CdcSchema.of(
                    DataTypes.ROW(
                            DataTypes.FIELD("id", DataTypes.BIGINT().notNull()),
                            DataTypes.FIELD("title", DataTypes.STRING())));

    /** Output rows per run. */
    static final Map<String, List<String>> OUTPUT = new ConcurrentHashMap<>();

    /** The runs whose gate has emitted every event it may. */
    static final Set<String> DRAINED = ConcurrentHashMap.newKeySet();

    /** orders ⋈ customers, projected to what the mart needs. */
    static CdcJoin ordersCustomers(Engine engine) {
        return CdcJoin.builder()
                .left("orders", ORDERS, List.of("customer_id"), List.of("id"))
                .right("customers", CUSTOMERS, List.of("id"), List.of("id"))
                .joinType(JoinType.LEFT)
                .select("orders.id", "order_id")
                .select("product_id")
                .select("qty")
                .select("name")
                .engine(engine)
                .batchSize(16)
                .maxFlushDelay(Duration.ofMillis(20))
                .build();
    }

    /** The mart: the previous join's output ⋈ products. */
    static CdcJoin mart(CdcJoin ordersCustomers) {
        return CdcJoin.builder()
                .left(
                        "orders_customers",
                        ordersCustomers,
                        List.of("product_id"),
                        List.of("order_id"))
                .right("products", PRODUCTS, List.of("id"), List.of("id"))
                .joinType(JoinType.INNER)
                .select("order_id")
                .select("qty")
                .select("name")
                .select("title")
                .engine(ordersCustomers.engine())
                .batchSize(16)
                .maxFlushDelay(Duration.ofMillis(20))
                .build();
    }

    /** A random trace: {@code "o|json"}, {@code "c|json"}, {@code "p|json"}, and final tables. */
    static final class Trace {
        final List<String> events = new ArrayList<>();
        final Map<Long, Object[]> orders = new TreeMap<>();
        final Map<Long, Object[]> customers = new TreeMap<>();
        final Map<Long, Object[]> products = new TreeMap<>();
        private final ObjectMapper json = new ObjectMapper();

        Trace(long seed, int steps) {
            Random rnd = new Random(seed);
            for (int i = 0; i < steps; i++) {
                int t = rnd.nextInt(5);
                if (t < 3) {
                    order(rnd);
                } else {
                    named(rnd, t == 3 ? "c" : "p", t == 3 ? customers : products);
                }
            }
        }

        /** Writes or deletes an order; an order's customer is a function of its id. */
        private void order(Random rnd) {
            long id = rnd.nextInt(60);
            if (rnd.nextInt(8) == 0) {
                write("o", orders, id, null);
                return;
            }
            Long customer = id % 11 == 0 ? null : id % 13;
            Long product = (long) rnd.nextInt(12);
            write("o", orders, id, new Object[] {id, customer, product, rnd.nextInt(5)});
        }

        private void named(Random rnd, String tag, Map<Long, Object[]> table) {
            long id = rnd.nextInt(10);
            Object[] row = rnd.nextInt(5) == 0 ? null : new Object[] {id, tag + rnd.nextInt(4)};
            write(tag, table, id, row);
        }

        /**
         * Appends the Debezium message turning row {@code id} of {@code table} into {@code row}.
         */
        private void write(String tag, Map<Long, Object[]> table, long id, Object[] row) {
            Object[] old = row == null ? table.remove(id) : table.put(id, row);
            if (old == null && row == null) {
                return;
            }
            String op = old == null ? "c" : row == null ? "d" : "u";
            ObjectNode m = json.createObjectNode();
            m.set("before", image(tag, old));
            m.set("after", image(tag, row));
            m.put("op", op);
            events.add(tag + "|" + m);
        }

        private ObjectNode image(String tag, Object[] row) {
            if (row == null) {
                return null;
            }
            ObjectNode n = json.createObjectNode();
            if (tag.equals("o")) {
                n.put("id", (Long) row[0]);
                n.put("customer_id", (Long) row[1]);
                n.put("product_id", (Long) row[2]);
                n.put("qty", (Integer) row[3]);
            } else {
                n.put("id", (Long) row[0]);
                n.put(tag.equals("c") ? "name" : "title", (String) row[1]);
            }
            return n;
        }

        /** The mart of the final tables: orders LEFT customers, INNER products. */
        Map<String, Integer> oracle() {
            List<String> rows = new ArrayList<>();
            for (Object[] o : orders.values()) {
                Object[] c = o[1] == null ? null : customers.get((Long) o[1]);
                Object[] p = products.get((Long) o[2]);
                if (p != null) {
                    rows.add(
                            "+I"
                                    + Row.of(o[0], o[3], c == null ? null : c[1], p[1])
                                            .toString()
                                            .substring(2));
                }
            }
            return Changelogs.materialize(rows);
        }
    }

    /** Emits events up to its limit, one per tick, its position kept in operator state. */
    static final class Gate implements FlatMapFunction<Long, String>, CheckpointedFunction {
        private static final long serialVersionUID = 1L;
        private final String[] events;
        private final int limit;
        private final String run;
        private transient ListState<Integer> position;
        private transient int next;

        Gate(List<String> events, int limit, String run) {
            this.events = events.toArray(new String[0]);
            this.limit = limit;
            this.run = run;
        }

        @Override
        public void flatMap(Long tick, Collector<String> out) throws Exception {
            if (next < limit) {
                out.collect(events[next++]);
            } else {
                DRAINED.add(run);
                Thread.sleep(1);
            }
        }

        @Override
        public void snapshotState(FunctionSnapshotContext context) throws Exception {
            position.update(List.of(next));
        }

        @Override
        public void initializeState(FunctionInitializationContext context) throws Exception {
            position =
                    context.getOperatorStateStore()
                            .getListState(new ListStateDescriptor<>("next", Integer.class));
            for (Integer n : position.get()) {
                next = n;
            }
        }
    }

    /** Records a run's output rows. */
    static final class Recorder implements MapFunction<Row, String> {
        private static final long serialVersionUID = 1L;
        private final String run;

        Recorder(String run) {
            this.run = run;
        }

        @Override
        public String map(Row row) {
            OUTPUT.computeIfAbsent(run, k -> new CopyOnWriteArrayList<>()).add(row.toString());
            return row.toString();
        }
    }

    private static JobClient start(
            Engine engine, List<String> events, int limit, String run, int p, String savepoint)
            throws Exception {
        DataStream<String> source = gated(events, limit, run, p, savepoint);
        CdcJoin first = ordersCustomers(engine);
        CdcJoin.Result orders =
                first.joinStrings(VectorsTest.pick(source, "o|"), VectorsTest.pick(source, "c|"));
        CdcJoin.Result mart = mart(first).joinStrings(orders, VectorsTest.pick(source, "p|"));
        mart.rows().map(new Recorder(run));
        return source.getExecutionEnvironment().executeAsync(run);
    }

    /**
     * The events up to {@code limit} through a {@link Gate} of {@code run}, in a new job at
     * parallelism {@code p} (max 128, a checkpoint every 50 ms) restoring {@code savepoint} if not
     * null.
     */
    static DataStream<String> gated(
            List<String> events, int limit, String run, int p, String savepoint) {
        DataStream<String> source = gatedAtDefaultMaxParallelism(events, limit, run, p, savepoint);
        source.getExecutionEnvironment().setMaxParallelism(128);
        return source;
    }

    /**
     * As {@link #gated}, the job's max parallelism left unset: Flink's default per operator, or the
     * one a savepoint restores.
     */
    private static DataStream<String> gatedAtDefaultMaxParallelism(
            List<String> events, int limit, String run, int p, String savepoint) {
        Configuration conf = new Configuration();
        if (savepoint != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(p);
        env.enableCheckpointing(50);
        DataStream<String> source =
                env.fromSequence(0, Long.MAX_VALUE)
                        .uid("ticks")
                        .setParallelism(1)
                        .flatMap(new Gate(events, limit, run))
                        .uid("gate")
                        .setParallelism(1);
        return source;
    }

    /** Waits until the run's gate is drained and its output has stopped growing (60 s at most). */
    static void awaitQuiet(String run) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!DRAINED.contains(run)) {
            assertTrue(System.nanoTime() < deadline, run + ": the trace was not emitted in 60 s");
            Thread.sleep(20);
        }
        for (int seen = -1; seen != output(run).size(); ) {
            assertTrue(System.nanoTime() < deadline, run + ": output still growing after 60 s");
            seen = output(run).size();
            Thread.sleep(500);
        }
    }

    /**
     * Waits until {@code earlier} and the output of {@code run} materialize to {@code expected} (60
     * s at most; the caller's assertion then shows what differs). Waiting for the output to stop
     * growing instead guessed: on a loaded machine a join can pause longer than any quiet window (a
     * 500 ms one once ended a run before its last rows, on the 1.20 line).
     */
    static void awaitMart(List<String> earlier, String run, Map<String, Integer> expected)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            List<String> changelog = new ArrayList<>(earlier);
            changelog.addAll(output(run));
            if (expected.equals(Changelogs.materialize(changelog))) {
                return;
            }
            Thread.sleep(50);
        }
    }

    static List<String> output(String run) {
        return OUTPUT.getOrDefault(run, List.of());
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void aStarThroughChainedJoinsSurvivesASavepointAndRescaling(
            Engine engine, @TempDir Path savepoints) throws Exception {
        Trace trace = new Trace(15, 1500);
        List<String> changelog =
                acrossASavepoint(
                        trace,
                        "star-" + engine,
                        savepoints,
                        (limit, run, savepoint) ->
                                start(
                                        engine,
                                        trace.events,
                                        limit,
                                        run,
                                        savepoint == null ? 2 : 3,
                                        savepoint));
        Map<String, Integer> expected = trace.oracle();
        assertTrue(expected.size() > 10, "a mart of some rows: " + expected);
        assertEquals(expected, Changelogs.materialize(changelog));
    }

    /**
     * A savepoint restores the last join's max parallelism: 256, set on it in the first run and on
     * nothing in the second, where Flink takes the savepoint's while the first join and the decode
     * steps have its default, 128; each keys its batches for the join it feeds.
     */
    @Test
    void aMaxParallelismRestoredFromASavepointIsTheJoinsOwn(@TempDir Path savepoints)
            throws Exception {
        Trace trace = new Trace(19, 1500);
        List<String> changelog =
                acrossASavepoint(
                        trace,
                        "restored-max-parallelism",
                        savepoints,
                        (limit, run, savepoint) -> startStar(trace.events, limit, run, savepoint));
        assertEquals(trace.oracle(), Changelogs.materialize(changelog));
    }

    /** Starts a run of a trace's events up to {@code limit}, restoring {@code savepoint} if set. */
    @FunctionalInterface
    interface Starter {
        JobClient start(int limit, String run, String savepoint) throws Exception;
    }

    /**
     * Runs the first half of {@code trace} ({@code name-first}), stops it with a savepoint, runs
     * the whole trace from there ({@code name-restored}) until the mart is complete, and returns
     * both runs' output.
     */
    private static List<String> acrossASavepoint(
            Trace trace, String name, Path savepoints, Starter starter) throws Exception {
        String first = name + "-first";
        String second = name + "-restored";
        JobClient job = starter.start(trace.events.size() / 2, first, null);
        String savepoint;
        try {
            awaitQuiet(first);
            savepoint = RecoveryTest.stopWithSavepoint(job, savepoints);
        } catch (Exception | AssertionError e) {
            job.cancel();
            throw e;
        }
        JobClient restored = starter.start(trace.events.size(), second, savepoint);
        try {
            awaitMart(output(first), second, trace.oracle());
        } finally {
            restored.cancel().get(60, TimeUnit.SECONDS);
        }
        List<String> changelog = new ArrayList<>(output(first));
        changelog.addAll(output(second));
        return changelog;
    }

    /**
     * Starts the native star over the events up to {@code limit} at parallelism 2, no max
     * parallelism set but the last join's 256 in a first run ({@code savepoint} null).
     */
    private static JobClient startStar(List<String> events, int limit, String run, String savepoint)
            throws Exception {
        DataStream<String> source = gatedAtDefaultMaxParallelism(events, limit, run, 2, savepoint);
        CdcJoin.Result mart =
                star(Engine.NATIVE)
                        .joinStrings(
                                VectorsTest.pick(source, "o|"),
                                List.of(
                                        VectorsTest.pick(source, "c|"),
                                        VectorsTest.pick(source, "p|")));
        if (savepoint == null) {
            mart.rows().setMaxParallelism(256);
        }
        mart.rows().map(new Recorder(run));
        return source.getExecutionEnvironment().executeAsync(run);
    }

    /** The same mart declared as a star: the builder wires the chain and its projections. */
    static CdcStar star(Engine engine) {
        return CdcStar.builder()
                .fact("orders", ORDERS, List.of("id"))
                .dimension(
                        "customers",
                        CUSTOMERS,
                        List.of("customer_id"),
                        List.of("id"),
                        JoinType.LEFT)
                .dimension(
                        "products", PRODUCTS, List.of("product_id"), List.of("id"), JoinType.INNER)
                .select("orders.id", "order_id")
                .select("orders.qty")
                .select("customers.name")
                .select("products.title")
                .engine(engine)
                .build();
    }

    /**
     * Runs the mart {@code wiring} builds over {@code trace}'s tables ({@code "o|"}, {@code "c|"},
     * {@code "p|"}) at parallelism 2 until its output is quiet, recording its rows as {@code run}.
     */
    private static void runMart(
            Trace trace,
            String run,
            Function<Map<String, DataStream<String>>, CdcJoin.Result> wiring)
            throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        DataStream<String> source =
                env.fromSequence(0, Long.MAX_VALUE)
                        .setParallelism(1)
                        .flatMap(new Gate(trace.events, trace.events.size(), run))
                        .setParallelism(1);
        Map<String, DataStream<String>> tables = new TreeMap<>();
        for (String table : List.of("o|", "c|", "p|")) {
            tables.put(table, VectorsTest.pick(source, table));
        }
        wiring.apply(tables).rows().map(new Recorder(run));
        JobClient job = env.executeAsync(run);
        try {
            awaitMart(List.of(), run, trace.oracle());
        } finally {
            job.cancel().get(60, TimeUnit.SECONDS);
        }
    }

    /**
     * The star builder wires the same mart, here with a last join that has a max parallelism of its
     * own, 256, where the first join has Flink's default, 128: the first join keys the changes it
     * feeds the last for the last join's, read from the {@code keyBy} between them.
     */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void theStarBuilderWiresTheSameMart(Engine engine) throws Exception {
        Trace trace = new Trace(16, 1200);
        String run = "star-builder-" + engine;
        CdcStar star = star(engine);
        runMart(
                trace,
                run,
                t -> {
                    CdcJoin.Result mart =
                            star.joinStrings(t.get("o|"), List.of(t.get("c|"), t.get("p|")));
                    mart.rows().setMaxParallelism(256);
                    return mart;
                });
        assertEquals(
                List.of("order_id", "qty", "name", "title"),
                List.of(star.joins().get(1).spec().outputNames()));
        assertEquals(
                List.of("orders$id", "orders$product_id", "orders$qty", "customers$name"),
                List.of(star.joins().get(0).spec().outputNames()),
                "the first step carries the fact's key, the next join key and the selections");
        assertEquals(trace.oracle(), Changelogs.materialize(output(run)));
    }

    /**
     * The same mart with the chained input on the right side: products INNER JOIN (orders ⋈
     * customers).
     */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void aChainedInputOnTheRightSideGivesTheSameMart(Engine engine) throws Exception {
        Trace trace = new Trace(17, 1200);
        String run = "right-chained-" + engine;
        CdcJoin first = ordersCustomers(engine);
        CdcJoin mart =
                CdcJoin.builder()
                        .left("products", PRODUCTS, List.of("id"), List.of("id"))
                        .right(
                                "orders_customers",
                                first,
                                List.of("product_id"),
                                List.of("order_id"))
                        .joinType(JoinType.INNER)
                        .select("order_id")
                        .select("qty")
                        .select("name")
                        .select("title")
                        .engine(engine)
                        .batchSize(16)
                        .maxFlushDelay(Duration.ofMillis(20))
                        .build();
        runMart(
                trace,
                run,
                t -> mart.joinStrings(t.get("p|"), first.joinStrings(t.get("o|"), t.get("c|"))));
        Map<String, Integer> expected = trace.oracle();
        assertTrue(expected.size() > 10, "a mart of some rows: " + expected);
        assertEquals(expected, Changelogs.materialize(output(run)));
    }

    /**
     * A change the first join rejects (an unchanged TOASTed customer name with no stored customer
     * to take it from) reaches the chained result's bad records under {@code SIDE_OUTPUT}, named by
     * its side and reason, and the rest of the mart is joined.
     */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void aRejectionOfTheFirstJoinReachesTheMartsBadRecords(Engine engine) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        CdcJoin first =
                CdcJoin.builder()
                        .left("orders", ORDERS, List.of("customer_id"), List.of("id"))
                        .right("customers", CUSTOMERS, List.of("id"), List.of("id"))
                        .joinType(JoinType.LEFT)
                        .format(
                                DebeziumFormat.defaults(),
                                DebeziumFormat.defaults().withUpsert(true))
                        .badRecordPolicy(BadRecordPolicy.SIDE_OUTPUT)
                        .select("orders.id", "order_id")
                        .select("product_id")
                        .select("qty")
                        .select("name")
                        .engine(engine)
                        .build();
        String placeholder = "__debezium_unavailable_value";
        DataStream<String> orders =
                env.fromData(
                        "{\"op\":\"c\",\"after\":{\"id\":1,\"customer_id\":7,\"product_id\":3,\"qty\":2}}");
        DataStream<String> customers =
                env.fromData(
                        "{\"op\":\"c\",\"after\":{\"id\":7,\"name\":\"Ana\"}}",
                        "{\"op\":\"u\",\"before\":null,\"after\":{\"id\":8,\"name\":\""
                                + placeholder
                                + "\"}}");
        DataStream<String> products =
                env.fromData("{\"op\":\"c\",\"after\":{\"id\":3,\"title\":\"pen\"}}");
        CdcJoin.Result mart =
                mart(first).joinStrings(first.joinStrings(orders, customers), products);
        List<String> out = rowsAndBadRecords(mart);
        List<String> bad =
                out.stream().filter(o -> o.startsWith("BAD")).collect(Collectors.toList());
        assertEquals(1, bad.size(), "one bad record: " + out);
        assertTrue(
                bad.get(0).startsWith("BAD customers: ")
                        && bad.get(0).contains("column 'name' is unavailable"),
                bad.get(0));
        List<String> rows =
                out.stream().filter(o -> !o.startsWith("BAD")).collect(Collectors.toList());
        assertEquals(Map.of("[1, 2, Ana, pen]", 1), Changelogs.materialize(rows), "" + rows);
    }

    /**
     * Runs a bounded job to its end: the result's rows, and its bad records as {@code "BAD
     * <source>: <reason>"}.
     */
    /**
     * The star's tables as ({@code before}, {@code op}, {@code after}) of each change, in order.
     */
    private static final Object[][][] STAR_CHANGES = {
        // orders (id, customer_id, product_id, qty): o2's qty changes, o3 is deleted
        {
            {null, "c", new Object[] {1L, 10L, 100L, 2}},
            {null, "c", new Object[] {2L, 11L, 101L, 1}},
            {new Object[] {2L, 11L, 101L, 1}, "u", new Object[] {2L, 11L, 101L, 5}},
            {null, "c", new Object[] {3L, 12L, 100L, 7}},
            {new Object[] {3L, 12L, 100L, 7}, "d", null}
        },
        // customers (id, name): bo is renamed
        {
            {null, "c", new Object[] {10L, "ana"}},
            {null, "c", new Object[] {11L, "bo"}},
            {new Object[] {11L, "bo"}, "u", new Object[] {11L, "bob"}}
        },
        // products (id, title)
        {{null, "c", new Object[] {100L, "pen"}}, {null, "c", new Object[] {101L, "ink"}}}
    };

    private static final RowTypeInfo[] STAR_TYPES = {
        new RowTypeInfo(Types.LONG, Types.LONG, Types.LONG, Types.INT),
        new RowTypeInfo(Types.LONG, Types.STRING),
        new RowTypeInfo(Types.LONG, Types.STRING)
    };

    /** Table {@code t} of {@link #STAR_CHANGES} as {@code Row(before, op, after)} envelopes. */
    private static DataStream<Row> envelopes(StreamExecutionEnvironment env, int t) {
        List<Row> rows = new ArrayList<>();
        for (Object[] change : STAR_CHANGES[t]) {
            Object[] before = (Object[]) change[0];
            Object[] after = (Object[]) change[2];
            rows.add(
                    Row.of(
                            before == null ? null : Row.of(before),
                            change[1],
                            after == null ? null : Row.of(after)));
        }
        RowTypeInfo type = STAR_TYPES[t];
        return env.fromData(rows, new RowTypeInfo(type, Types.STRING, type)).setParallelism(1);
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void theStarJoinsRowEnvelopes(Engine engine) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        CdcJoin.Result result =
                star(engine)
                        .joinRows(envelopes(env, 0), List.of(envelopes(env, 1), envelopes(env, 2)));
        List<String> out = new ArrayList<>();
        try (var it = result.rows().map(Row::toString).returns(Types.STRING).executeAndCollect()) {
            it.forEachRemaining(out::add);
        }
        assertEquals(
                Map.of("[1, 2, ana, pen]", 1, "[2, 5, bob, ink]", 1),
                Changelogs.materialize(out),
                "" + out);
    }

    static List<String> rowsAndBadRecords(CdcJoin.Result result) throws Exception {
        List<String> out = new ArrayList<>();
        try (var it =
                result.rows()
                        .map(Row::toString)
                        .returns(Types.STRING)
                        .union(
                                result.badRecords()
                                        .map(b -> "BAD " + b.source + ": " + b.reason)
                                        .returns(Types.STRING))
                        .executeAndCollect()) {
            it.forEachRemaining(out::add);
        }
        return out;
    }

    /**
     * A chained side's primary key may not hold a column the join before can null-pad: every padded
     * row (customers without orders in orders RIGHT JOIN customers; users without settings in a
     * multi-way FULL step) would share that key, and each would replace the one before it. A key of
     * a preserved input, or none, is accepted.
     */
    @Test
    void aChainedPrimaryKeyOfAPaddedInputIsRefused() {
        CdcJoin customersFirst =
                CdcJoin.builder()
                        .left("orders", ORDERS, List.of("customer_id"), List.of("id"))
                        .right("customers", CUSTOMERS, List.of("id"), List.of("id"))
                        .joinType(JoinType.RIGHT)
                        .select("orders.id", "order_id")
                        .select("customers.id", "customer")
                        .select("product_id")
                        .build();
        CdcMultiJoin settingsFull =
                CdcMultiJoin.builder()
                        .input("users", MultiJoinChainTest.USERS, List.of("id"), List.of("id"))
                        .input(
                                "settings",
                                MultiJoinTest.SETTINGS,
                                List.of("user_id"),
                                List.of("user_id"),
                                JoinType.FULL)
                        .select("users.id", "uid")
                        .select("theme")
                        .build();
        List<String> product = List.of("product_id");
        List<String> order = List.of("order_id");
        List<String> uid = List.of("uid");
        List<Executable> refused =
                List.of(
                        () -> CdcJoin.builder().left("oc", customersFirst, product, order),
                        () -> CdcJoin.builder().right("oc", customersFirst, product, order),
                        () -> CdcJoin.builder().left("people", settingsFull, uid, uid));
        for (Executable declaration : refused) {
            String message = assertThrows(IllegalArgumentException.class, declaration).getMessage();
            assertTrue(message.contains("can null-pad"), message);
        }
        CdcJoin.builder().left("oc", customersFirst, product, null);
        CdcJoin.builder().left("oc", ordersCustomers(Engine.NATIVE), product, order);
    }

    @Test
    void aChainedJoinReadsOnlyTheDeclaredJoinWithItsEngine() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        DataStream<String> none = env.fromData("x");
        CdcJoin nativeFirst = ordersCustomers(Engine.NATIVE);
        CdcJoin.Result nativeOrders = nativeFirst.joinStrings(none, none);
        CdcJoin javaMart = mart(ordersCustomers(Engine.JAVA));
        IllegalArgumentException other =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> javaMart.joinStrings(nativeOrders, none));
        assertTrue(other.getMessage().contains("not the output of the join"), other.getMessage());
        CdcJoin mixed =
                CdcJoin.builder()
                        .left("oc", nativeFirst, List.of("product_id"), List.of("order_id"))
                        .right("products", PRODUCTS, List.of("id"), List.of("id"))
                        .engine(Engine.JAVA)
                        .build();
        IllegalArgumentException engines =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> mixed.joinStrings(nativeOrders, none));
        assertTrue(engines.getMessage().contains("same engine"), engines.getMessage());
    }
}
