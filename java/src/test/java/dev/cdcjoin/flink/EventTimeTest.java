package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Event time through the joins, in a job: the inputs carry timestamps and watermarks, and every
 * joined row leaves with the timestamp of the change that caused it and ahead of every watermark
 * that follows that change (a row behind a watermark is late: an event-time window or a CEP pattern
 * after the join would drop it). The batching operators hold changes back, so this holds only
 * because each flushes its batch before it forwards a watermark: here a batch is flushed only then
 * or when it is full (a flush delay of an hour).
 *
 * <p>Three tables whose rows carry the time of their last write ({@code uts}, {@code dts}, {@code
 * tts}, the time of the change that wrote them), joined by the two-table join, the multi-way join
 * and a star of two chained joins, each on both engines, at parallelism 2, with Flink's object
 * reuse off and on (a job tuned for speed turns it on: chained operators then pass objects without
 * copies). Each result is also checked against the join of the tables the trace leaves.
 */
@SuppressWarnings("try") // CloseableIterator#close may throw InterruptedException
class EventTimeTest {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withSlots(4);

    static final CdcSchema USERS =
            CdcSchema.of(Column.notNull("id", "INT"), Column.nullable("uts", "BIGINT"));
    static final CdcSchema DOMAINS =
            CdcSchema.of(
                    Column.notNull("id", "INT"),
                    Column.nullable("user_id", "INT"),
                    Column.nullable("tag_id", "INT"),
                    Column.nullable("dts", "BIGINT"));
    static final CdcSchema TAGS =
            CdcSchema.of(Column.notNull("id", "INT"), Column.nullable("tts", "BIGINT"));

    static final int USER_IDS = 30;
    static final int DOMAIN_IDS = 120;
    static final int TAG_IDS = 20;

    /** A watermark after every this many messages of a topic. */
    static final int WATERMARK_EVERY = 5;

    /**
     * Flush delay of every batching operator: longer than the test, so only watermarks and full
     * batches flush.
     */
    static final Duration NO_TIMER_FLUSH = Duration.ofHours(1);

    /** Records per batch: fewer than between two watermarks, so batches flush when full too. */
    static final int BATCH = 4;

    /**
     * A trace of the three tables, message {@code i} (from 1) at time {@code i}; a domain keeps its
     * user (the star's first step is exact only then, README "Known limit"), and changes its tag.
     */
    static final class Trace {
        final Map<String, List<String>> messages = new LinkedHashMap<>();
        final Map<Integer, Long> users = new TreeMap<>();
        final Map<Integer, long[]> domains = new TreeMap<>(); // tag_id, dts
        final Map<Integer, Long> tags = new TreeMap<>();

        Trace(long seed, int events) {
            List.of("users", "domains", "tags").forEach(t -> messages.put(t, new ArrayList<>()));
            Random rnd = new Random(seed);
            for (long ts = 1; ts <= events; ts++) {
                int pick = rnd.nextInt(10);
                if (pick < 2) {
                    int id = rnd.nextInt(USER_IDS);
                    Long old = users.get(id);
                    Long now = old == null || rnd.nextInt(10) < 7 ? ts : null;
                    put(users, id, now);
                    add("users", ts, user(id, old), user(id, now));
                } else if (pick < 8) {
                    int id = rnd.nextInt(DOMAIN_IDS);
                    long[] old = domains.get(id);
                    long[] now =
                            old == null || rnd.nextInt(10) < 7
                                    ? new long[] {rnd.nextInt(TAG_IDS), ts}
                                    : null;
                    put(domains, id, now);
                    add("domains", ts, domain(id, old), domain(id, now));
                } else {
                    int id = rnd.nextInt(TAG_IDS);
                    Long old = tags.get(id);
                    Long now = old == null || rnd.nextInt(10) < 7 ? ts : null;
                    put(tags, id, now);
                    add("tags", ts, tag(id, old), tag(id, now));
                }
            }
        }

        private static <V> void put(Map<Integer, V> table, int id, V row) {
            if (row == null) {
                table.remove(id);
            } else {
                table.put(id, row);
            }
        }

        private void add(String table, long ts, String before, String after) {
            String op = before == null ? "c" : after == null ? "d" : "u";
            messages.get(table)
                    .add(
                            String.format(
                                    "{\"before\":%s,\"after\":%s,\"op\":\"%s\",\"ts_ms\":%d}",
                                    before, after, op, ts));
        }

        private static String user(int id, Long uts) {
            return uts == null ? null : String.format("{\"id\":%d,\"uts\":%d}", id, uts);
        }

        private static String domain(int id, long[] d) {
            return d == null
                    ? null
                    : String.format(
                            "{\"id\":%d,\"user_id\":%d,\"tag_id\":%d,\"dts\":%d}",
                            id, userOf(id), d[0], d[1]);
        }

        private static String tag(int id, Long tts) {
            return tts == null ? null : String.format("{\"id\":%d,\"tts\":%d}", id, tts);
        }

        static int userOf(int domain) {
            return domain % USER_IDS;
        }

        /** domains LEFT JOIN users, all columns. */
        Map<String, Integer> domainsUsers() {
            Map<String, Integer> rows = new TreeMap<>();
            domains.forEach(
                    (id, d) -> {
                        Long uts = users.get(userOf(id));
                        add(rows, id, userOf(id), d[0], d[1], uts == null ? null : userOf(id), uts);
                    });
            return rows;
        }

        /** users LEFT JOIN domains USING (id = user_id), all columns. */
        Map<String, Integer> usersDomains() {
            Map<String, Integer> rows = new TreeMap<>();
            users.forEach(
                    (uid, uts) -> {
                        boolean any = false;
                        for (Map.Entry<Integer, long[]> d : domains.entrySet()) {
                            if (userOf(d.getKey()) == uid) {
                                long[] v = d.getValue();
                                add(rows, uid, uts, d.getKey(), uid, v[0], v[1]);
                                any = true;
                            }
                        }
                        if (!any) {
                            add(rows, uid, uts, null, null, null, null);
                        }
                    });
            return rows;
        }

        /** The star: domains LEFT JOIN users LEFT JOIN tags, as {@link #star} selects. */
        Map<String, Integer> star() {
            Map<String, Integer> rows = new TreeMap<>();
            domains.forEach(
                    (id, d) -> add(rows, id, d[1], users.get(userOf(id)), tags.get((int) d[0])));
            return rows;
        }

        private static void add(Map<String, Integer> rows, Object... values) {
            rows.merge(Row.of(values).toString().substring(2), 1, Integer::sum);
        }
    }

    /** Each message's time is its {@code ts_ms}; a watermark just behind every fifth message. */
    static final class EveryFifth implements WatermarkGenerator<String> {
        private static final long serialVersionUID = 1L;
        private long seen;

        @Override
        public void onEvent(String message, long timestamp, WatermarkOutput out) {
            if (++seen % WATERMARK_EVERY == 0) {
                out.emitWatermark(new Watermark(timestamp - 1));
            }
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput out) {}
    }

    static long tsMs(String message) {
        int at = message.lastIndexOf("\"ts_ms\":") + "\"ts_ms\":".length();
        return Long.parseLong(message.substring(at, message.length() - 1));
    }

    /**
     * Passes each row on as {@code tag|row}, and reports as {@code tag|!...} a row without a
     * timestamp, one not ahead of the watermark, and an insertion of present sides whose timestamp
     * is no side's write time (the versions columns); {@code tag|~} marks a row that came after a
     * watermark.
     */
    static final class CheckTime extends ProcessFunction<Row, String> {
        private static final long serialVersionUID = 1L;
        private final String tag;
        private final int[] versions;

        CheckTime(String tag, int... versions) {
            this.tag = tag;
            this.versions = versions;
        }

        @Override
        public void processElement(Row row, Context ctx, Collector<String> out) {
            Long ts = ctx.timestamp();
            long watermark = ctx.timerService().currentWatermark();
            if (ts == null) {
                out.collect(tag + "|!no timestamp: " + row);
            } else if (ts <= watermark) {
                out.collect(tag + "|!late: " + row + " at " + ts + ", watermark " + watermark);
            } else if (!stampedByAWrite(row, ts)) {
                out.collect(tag + "|!stamped " + ts + ", no side's write time: " + row);
            }
            if (watermark > Long.MIN_VALUE) {
                out.collect(tag + "|~");
            }
            out.collect(tag + "|" + row);
        }

        /**
         * An insertion whose sides are all present holds the version its change wrote (a retraction
         * holds older ones, a null-padded row may come from the other side's change).
         */
        private boolean stampedByAWrite(Row row, long ts) {
            if (row.getKind() != RowKind.INSERT && row.getKind() != RowKind.UPDATE_AFTER) {
                return true;
            }
            boolean written = false;
            for (int c : versions) {
                Object v = row.getField(c);
                if (v == null) {
                    return true;
                }
                written |= ((Long) v) == ts;
            }
            return written;
        }
    }

    @ParameterizedTest(name = "object reuse {0}")
    @ValueSource(booleans = {false, true})
    void rowsKeepTheirChangesTimeAndStayAheadOfTheWatermark(boolean objectReuse) throws Exception {
        Trace trace = new Trace(11, 3000);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        if (objectReuse) {
            env.getConfig().enableObjectReuse();
        }
        WatermarkStrategy<String> time =
                WatermarkStrategy.forGenerator(ctx -> new EveryFifth())
                        .withTimestampAssigner((m, t) -> tsMs(m));
        Map<String, DataStream<String>> topics = new HashMap<>();
        trace.messages.forEach(
                (t, m) ->
                        topics.put(
                                t,
                                env.fromData(m)
                                        .setParallelism(1)
                                        .assignTimestampsAndWatermarks(time)
                                        .setParallelism(1)));
        List<DataStream<String>> checked = new ArrayList<>();
        for (Engine engine : Engine.values()) {
            checked.add(
                    pair(engine)
                            .joinStrings(topics.get("domains"), topics.get("users"))
                            .rows()
                            .process(new CheckTime("pair-" + engine, 3, 5)));
            checked.add(
                    multi(engine)
                            .joinJson(
                                    List.of(
                                            bytes(topics.get("users")),
                                            bytes(topics.get("domains"))))
                            .rows()
                            .process(new CheckTime("multi-" + engine, 1, 5)));
            checked.add(
                    star(engine)
                            .joinStrings(
                                    topics.get("domains"),
                                    List.of(topics.get("users"), topics.get("tags")))
                            .rows()
                            .process(new CheckTime("star-" + engine, 1, 2, 3)));
        }
        DataStream<String> all = checked.get(0);
        for (DataStream<String> s : checked.subList(1, checked.size())) {
            all = all.union(s);
        }
        Map<String, List<String>> changelogs = new TreeMap<>();
        Map<String, List<String>> problems = new TreeMap<>();
        Map<String, Integer> afterWatermark = new TreeMap<>();
        try (CloseableIterator<String> it = all.executeAndCollect("event time")) {
            it.forEachRemaining(
                    s -> {
                        int bar = s.indexOf('|');
                        String tag = s.substring(0, bar);
                        String what = s.substring(bar + 1);
                        if (what.startsWith("!")) {
                            problems.computeIfAbsent(tag, k -> new ArrayList<>()).add(what);
                        } else if (what.equals("~")) {
                            afterWatermark.merge(tag, 1, Integer::sum);
                        } else {
                            changelogs.computeIfAbsent(tag, k -> new ArrayList<>()).add(what);
                        }
                    });
        }
        assertEquals(Map.of(), problems, "rows late or stamped wrong");
        for (Engine engine : Engine.values()) {
            check("pair-" + engine, trace.domainsUsers(), changelogs, afterWatermark);
            check("multi-" + engine, trace.usersDomains(), changelogs, afterWatermark);
            check("star-" + engine, trace.star(), changelogs, afterWatermark);
        }
    }

    /**
     * The join's result is the tables', and watermarks came between its rows, so the checks of
     * lateness were not idle: a tenth of the rows at least came after one (47-99% in runs here,
     * depending on how the sources' threads interleave).
     */
    private static void check(
            String tag,
            Map<String, Integer> expected,
            Map<String, List<String>> changelogs,
            Map<String, Integer> afterWatermark) {
        List<String> changelog = changelogs.getOrDefault(tag, List.of());
        assertEquals(expected, Changelogs.materialize(changelog), tag);
        int after = afterWatermark.getOrDefault(tag, 0);
        assertTrue(
                after > changelog.size() / 10,
                tag + ": " + after + " of " + changelog.size() + " rows came after a watermark");
    }

    static CdcJoin pair(Engine engine) {
        return CdcJoin.builder()
                .left("domains", DOMAINS, List.of("user_id"), List.of("id"))
                .right("users", USERS, List.of("id"), List.of("id"))
                .joinType(JoinType.LEFT)
                .engine(engine)
                .batchSize(BATCH)
                .maxFlushDelay(NO_TIMER_FLUSH)
                .build();
    }

    static CdcMultiJoin multi(Engine engine) {
        return CdcMultiJoin.builder()
                .input("users", USERS, List.of("id"), List.of("id"))
                .input("domains", DOMAINS, List.of("user_id"), List.of("id"), JoinType.LEFT)
                .engine(engine)
                .batchSize(BATCH)
                .maxFlushDelay(NO_TIMER_FLUSH)
                .build();
    }

    static CdcStar star(Engine engine) {
        return CdcStar.builder()
                .fact("domains", DOMAINS, List.of("id"))
                .dimension("users", USERS, List.of("user_id"), List.of("id"), JoinType.LEFT)
                .dimension("tags", TAGS, List.of("tag_id"), List.of("id"), JoinType.LEFT)
                .select("domains.id")
                .select("domains.dts")
                .select("users.uts")
                .select("tags.tts")
                .engine(engine)
                .batchSize(BATCH)
                .maxFlushDelay(NO_TIMER_FLUSH)
                .build();
    }

    static DataStream<byte[]> bytes(DataStream<String> messages) {
        return messages.map(m -> m.getBytes(StandardCharsets.UTF_8))
                .returns(PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO)
                .setParallelism(1); // in order, as the topic's partition
    }
}
