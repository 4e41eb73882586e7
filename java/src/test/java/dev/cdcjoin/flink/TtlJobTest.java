package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * State TTL end to end through the join operator, on Flink's processing-time clock: rows written
 * before a pause longer than the TTL are gone after it (no match, no null-padded retraction, a
 * delete of one is an absent retraction that emits nothing), expiry itself emits nothing, and rows
 * written after the pause join as usual. Both engines, every join type, exact changelogs; and the
 * multi-way join with a TTL on some inputs only.
 */
@SuppressWarnings("try") // CloseableIterator#close may throw InterruptedException
class TtlJobTest {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withInputCounters(2);

    static final Duration TTL = Duration.ofSeconds(2);
    static final long PAUSE_MS = 5_000;

    /** Passes events on, sleeping {@link #PAUSE_MS} before the first event of phase 2. */
    static final class PauseBefore implements MapFunction<String, String> {
        private static final long serialVersionUID = 1L;
        private final String event;

        PauseBefore(String event) {
            this.event = event;
        }

        @Override
        public String map(String e) throws Exception {
            if (e.equals(event)) {
                Thread.sleep(PAUSE_MS);
            }
            return e;
        }
    }

    @Test
    void expiredRowsAreGoneAndExpiryEmitsNothing() throws Exception {
        List<String> events =
                List.of(
                        // phase 1
                        "L|" + CdcJoinJobTest.user("c", 1, "a"),
                        "L|" + CdcJoinJobTest.user("c", 2, "b"),
                        "L|" + CdcJoinJobTest.user("c", 3, "c"),
                        "R|" + CdcJoinJobTest.domain(10, 1, "a.com"),
                        // phase 2, after the pause: everything above has expired
                        "R|" + CdcJoinJobTest.domain(20, 2, "b.com"),
                        "L|" + CdcJoinJobTest.user("d", 3, "c"),
                        "L|" + CdcJoinJobTest.user("c", 4, "d"),
                        "R|" + CdcJoinJobTest.domain(40, 4, "d.com"),
                        "R|" + CdcJoinJobTest.domain(50, 9, "e.com"));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        env.setBufferTimeout(0);
        int joins = JoinType.values().length * Engine.values().length;
        DataStream<String> source =
                env.fromSequence(0, events.size() - 1)
                        .map(new VectorsTest.EventAt(events, true, joins))
                        .map(new PauseBefore(events.get(4)));
        DataStream<String> left = VectorsTest.pick(source, "L|");
        DataStream<String> right = VectorsTest.pick(source, "R|");
        DataStream<String> all = null;
        for (Engine engine : Engine.values()) {
            for (JoinType type : JoinType.values()) {
                CdcJoin join =
                        CdcJoinJobTest.usersDomains()
                                .joinType(type)
                                .ttl(TTL)
                                .batchSize(1)
                                .engine(engine)
                                .build();
                String tag = engine + " " + type + "|";
                DataStream<String> rows = join.joinStrings(left, right).rows().map(r -> tag + r);
                all = all == null ? rows : all.union(rows);
            }
        }
        Map<Engine, Map<JoinType, List<String>>> out = new EnumMap<>(Engine.class);
        try (CloseableIterator<String> it = all.executeAndCollect("ttl")) {
            it.forEachRemaining(
                    s -> {
                        int bar = s.indexOf('|');
                        String[] tag = s.substring(0, bar).split(" ");
                        out.computeIfAbsent(
                                        Engine.valueOf(tag[0]), e -> new EnumMap<>(JoinType.class))
                                .computeIfAbsent(JoinType.valueOf(tag[1]), t -> new ArrayList<>())
                                .add(s.substring(bar + 1));
                    });
        }
        Map<JoinType, List<String>> expected = new EnumMap<>(JoinType.class);
        expected.put(JoinType.INNER, List.of("+I[1, a, 10, 1, a.com]", "+I[4, d, 40, 4, d.com]"));
        expected.put(
                JoinType.LEFT,
                List.of(
                        "+I[1, a, null, null, null]",
                        "+I[2, b, null, null, null]",
                        "+I[3, c, null, null, null]",
                        "-D[1, a, null, null, null]",
                        "+I[1, a, 10, 1, a.com]",
                        // domain 20 finds no user 2, and emits no -D[2, b, null...]: it has
                        // expired;
                        // the delete of user 3 retracts nothing: it has expired
                        "+I[4, d, null, null, null]",
                        "-D[4, d, null, null, null]",
                        "+I[4, d, 40, 4, d.com]"));
        expected.put(
                JoinType.RIGHT,
                List.of(
                        "+I[1, a, 10, 1, a.com]",
                        "+I[null, null, 20, 2, b.com]",
                        "+I[4, d, 40, 4, d.com]",
                        "+I[null, null, 50, 9, e.com]"));
        expected.put(
                JoinType.FULL,
                List.of(
                        "+I[1, a, null, null, null]",
                        "+I[2, b, null, null, null]",
                        "+I[3, c, null, null, null]",
                        "-D[1, a, null, null, null]",
                        "+I[1, a, 10, 1, a.com]",
                        "+I[null, null, 20, 2, b.com]",
                        "+I[4, d, null, null, null]",
                        "-D[4, d, null, null, null]",
                        "+I[4, d, 40, 4, d.com]",
                        "+I[null, null, 50, 9, e.com]"));
        for (Engine engine : Engine.values()) {
            assertEquals(expected, out.get(engine), engine.toString());
        }
    }

    /**
     * Passes the event of each index on, {@link #GAP_MS} after the previous one (so that the
     * multi-way join, whose inputs arrive over separate channels, receives them in order), and
     * {@link #PAUSE_MS} before the event at index {@code pauseAt}.
     */
    static final class Spaced implements MapFunction<Long, String> {
        private static final long serialVersionUID = 1L;
        static final long GAP_MS = 400;
        private final String[] events;
        private final int pauseAt;

        Spaced(List<String> events, int pauseAt) {
            this.events = events.toArray(new String[0]);
            this.pauseAt = pauseAt;
        }

        @Override
        public String map(Long i) throws Exception {
            Thread.sleep(i == pauseAt ? PAUSE_MS : GAP_MS);
            return events[i.intValue()];
        }
    }

    /**
     * {@code users LEFT JOIN profiles FULL JOIN settings} with a TTL on profiles and settings and
     * none on users ({@code ttl("users", null)}): after the pause, an expired setting pads no new
     * user and is not retracted, a delete of an expired profile emits nothing, and the users, kept,
     * join the profiles written after the pause. Both engines give this trace's changelog (the
     * chain's intermediate rows of phase 1 expire too, but no change of phase 2 reaches them).
     */
    @Test
    void theMultiWayJoinExpiresTheRowsOfEachInputOnItsOwn() throws Exception {
        String c = "{\"op\":\"c\",\"after\":";
        List<String> events =
                List.of(
                        // phase 1
                        "u|" + c + "{\"id\":1,\"name\":\"ana\"}}",
                        "p|" + c + "{\"id\":10,\"user_id\":1,\"bio\":\"p1\"}}",
                        "s|" + c + "{\"user_id\":1,\"theme\":\"dark\"}}",
                        "s|" + c + "{\"user_id\":2,\"theme\":\"light\"}}",
                        // phase 2, after the pause: profiles and settings above have expired
                        "u|" + c + "{\"id\":2,\"name\":\"bo\"}}",
                        "p|{\"op\":\"d\",\"before\":{\"id\":10,\"user_id\":1,\"bio\":\"p1\"}}",
                        "p|" + c + "{\"id\":12,\"user_id\":2,\"bio\":\"p3\"}}");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        env.setBufferTimeout(0);
        DataStream<String> source =
                env.fromSequence(0, events.size() - 1).map(new Spaced(events, 4));
        List<DataStream<byte[]>> inputs = new ArrayList<>();
        for (String table : List.of("u|", "p|", "s|")) {
            inputs.add(MultiJoinTest.bytes(VectorsTest.pick(source, table)));
        }
        DataStream<String> all = null;
        for (Engine engine : Engine.values()) {
            CdcMultiJoin join =
                    MultiJoinTest.mart(engine).ttl(TTL).ttl("users", null).batchSize(1).build();
            DataStream<String> rows =
                    join.joinJson(inputs).rows().map(r -> engine + "|" + r).returns(Types.STRING);
            all = all == null ? rows : all.union(rows);
        }
        Map<Engine, List<String>> out = new EnumMap<>(Engine.class);
        try (CloseableIterator<String> it = all.executeAndCollect("multi-way ttl")) {
            it.forEachRemaining(
                    s -> {
                        int bar = s.indexOf('|');
                        out.computeIfAbsent(
                                        Engine.valueOf(s.substring(0, bar)), e -> new ArrayList<>())
                                .add(s.substring(bar + 1));
                    });
        }
        List<String> expected =
                List.of(
                        "+I[1, ana, null, null, null, null]",
                        "-D[1, ana, null, null, null, null]",
                        "+I[1, ana, 10, p1, null, null]",
                        "-D[1, ana, 10, p1, null, null]",
                        "+I[1, ana, 10, p1, 1, dark]",
                        "+I[null, null, null, null, 2, light]",
                        // user 2 finds its setting expired: padded, no -D of the setting's padding;
                        // the delete of profile 10 retracts nothing: it has expired
                        "+I[2, bo, null, null, null, null]",
                        "-D[2, bo, null, null, null, null]",
                        "+I[2, bo, 12, p3, null, null]");
        for (Engine engine : Engine.values()) {
            assertEquals(expected, out.get(engine), engine.toString());
        }
    }
}
