package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.demo.UsersDomainsTrace;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Operator uids ({@link JoinBuilder#uid}): every operator a join adds gets a uid under the join's
 * prefix, the same whatever the job around it, so that a savepoint restores the join's state into a
 * job that changed elsewhere; without them Flink derives the IDs from the job's shape and does not
 * find the join's state in the changed job.
 */
class OperatorUidTest {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withSlots(2);

    static final Queue<String> EMITTED = new ConcurrentLinkedQueue<>();

    /** The uids the test itself gives (sources, user functions, sinks). */
    private static final Set<String> TEST_UIDS =
            Set.of(
                    "source-before",
                    "events-before",
                    "source-after",
                    "events-after",
                    "users",
                    "domains",
                    "profiles",
                    "settings",
                    "reshape",
                    "collect",
                    "sink");

    private static CdcJoin join(JoinType type, Engine engine, String uid) {
        CdcJoin.Builder b = RecoveryTest.builder(type).engine(engine);
        return uid == null ? b.build() : b.uid(uid).build();
    }

    /**
     * {@code events} (each {@code "L|"} or {@code "R|"} and a message; after them, the source idles
     * unless {@code bounded}), through an extra operator when {@code reshaped}, joined by {@code
     * join}. The source's uids name the phase: the job after the savepoint reads the rest of the
     * events from a source of its own.
     */
    private static CdcJoin.Result pipeline(
            StreamExecutionEnvironment env,
            List<String> events,
            boolean reshaped,
            CdcJoin join,
            String phase,
            boolean bounded) {
        DataStream<String> all =
                env.fromSequence(0, bounded ? events.size() - 1 : Long.MAX_VALUE)
                        .uid("source-" + phase)
                        .setParallelism(1)
                        .flatMap(new SavepointCompatibilityTest.Events(events))
                        .uid("events-" + phase)
                        .setParallelism(1);
        if (reshaped) {
            all = all.filter(e -> !e.isEmpty()).uid("reshape").setParallelism(1);
        }
        return join.joinStrings(side(all, "L|", "users"), side(all, "R|", "domains"));
    }

    /** The messages of {@code all} that start with {@code prefix}, without it. */
    private static DataStream<String> side(DataStream<String> all, String prefix, String uid) {
        return all.flatMap(
                        (String e, Collector<String> out) -> {
                            if (e.startsWith(prefix)) {
                                out.collect(e.substring(prefix.length()));
                            }
                        })
                .returns(String.class)
                .uid(uid)
                .setParallelism(1);
    }

    /** The uids of the job's operators, {@code null} for none. */
    private static List<String> uids(StreamExecutionEnvironment env) {
        return env.getStreamGraph().getStreamNodes().stream()
                .map(StreamNode::getTransformationUID)
                .collect(Collectors.toList());
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void everyOperatorOfTheJoinHasAUidUnderItsPrefix(Engine engine) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        CdcJoin join = join(JoinType.LEFT, engine, "mart");
        everyOutput(pipeline(env, List.of(), false, join, "before", false));
        List<String> ours = ours(env);
        ours.forEach(uid -> assertTrue(uid.startsWith("mart/"), uid));
        List<String> roles =
                List.of("decode-users", "decode-domains", "join", "join-rowdata", "join-raw");
        roles.forEach(r -> assertTrue(ours.contains("mart/" + r), r + " not in " + ours));
        assertEquals(ours.size(), new HashSet<>(ours).size(), "uids repeat: " + ours);

        // One more operator upstream, and another join type: the same uids.
        StreamExecutionEnvironment changed = StreamExecutionEnvironment.getExecutionEnvironment();
        CdcJoin inner = join(JoinType.INNER, engine, "mart");
        everyOutput(pipeline(changed, List.of(), true, inner, "before", false));
        assertEquals(new HashSet<>(ours), new HashSet<>(ours(changed)));
    }

    /** Adds every output of {@code result} to its job: the three forms and the bad records. */
    private static void everyOutput(CdcJoin.Result result) {
        result.rows().sinkTo(new DiscardingSink<>());
        result.rowData().sinkTo(new DiscardingSink<>());
        result.rawRows().sinkTo(new DiscardingSink<>());
        result.badRecords().sinkTo(new DiscardingSink<>());
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void aStarNamesEachStepUnderItsDimension(Engine engine) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        DataStream<String> all = events(env);
        CdcStar.builder()
                .fact("domains", UsersDomainsTrace.DOMAINS, List.of("id"))
                .dimension(
                        "users",
                        UsersDomainsTrace.USERS,
                        List.of("user_id"),
                        List.of("id"),
                        JoinType.LEFT)
                .select("domains.domain")
                .select("users.name")
                .engine(engine)
                .uid("star")
                .build()
                .joinStrings(side(all, "R|", "domains"), List.of(side(all, "L|", "users")))
                .rows()
                .sinkTo(new DiscardingSink<>());
        List<String> ours = ours(env);
        assertFalse(ours.isEmpty());
        ours.forEach(uid -> assertTrue(uid.startsWith("star/users/"), uid));
        assertTrue(ours.contains("star/users/join"), ours.toString());
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void aMultiWayJoinNamesItsOperators(Engine engine) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        DataStream<String> all = events(env);
        List<DataStream<byte[]>> inputs = new ArrayList<>();
        for (String table : List.of("users", "profiles", "settings")) {
            inputs.add(side(all, "L|", table).map(String::getBytes).uid(table + "-bytes"));
        }
        CdcJoin.Result result = MultiJoinTest.mart(engine).uid("mart").build().joinJson(inputs);
        result.rows().sinkTo(new DiscardingSink<>());
        result.rowData().sinkTo(new DiscardingSink<>());
        List<String> ours = ours(env);
        ours.forEach(uid -> assertTrue(uid.startsWith("mart/"), uid));
        assertTrue(ours.containsAll(List.of("mart/join", "mart/join-rowdata")), ours.toString());
        assertEquals(ours.size(), new HashSet<>(ours).size(), "uids repeat: " + ours);
    }

    /** A stream of no events, named as {@link #pipeline}'s. */
    private static DataStream<String> events(StreamExecutionEnvironment env) {
        return env.fromSequence(0, 0)
                .uid("source-before")
                .map(String::valueOf)
                .uid("events-before");
    }

    /** The uids of the job's operators that the test did not give. */
    private static List<String> ours(StreamExecutionEnvironment env) {
        List<String> ours = new ArrayList<>();
        for (String uid : uids(env)) {
            if (uid != null && !TEST_UIDS.contains(uid) && !uid.endsWith("-bytes")) {
                ours.add(uid);
            }
        }
        return ours;
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void withoutAUidTheJoinLeavesFlinkToGenerateTheIds(Engine engine) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        pipeline(env, List.of(), false, join(JoinType.LEFT, engine, null), "before", false)
                .rows()
                .sinkTo(new DiscardingSink<>());
        for (String uid : uids(env)) {
            assertTrue(uid == null || TEST_UIDS.contains(uid), uid);
        }
    }

    @Test
    void aSavepointRestoresTheJoinIntoAJobChangedUpstream(@TempDir Path tmp) throws Exception {
        UsersDomainsTrace trace = UsersDomainsTrace.generate(11, 400, 40);
        Map<String, Integer> expected = ReferenceJoin.usersDomains(trace, JoinType.LEFT);
        assertEquals(expected, savepointAndChangedJob(trace, "mart", tmp), "the result");
    }

    @Test
    void withoutAUidTheChangedJobDoesNotFindTheJoinsState(@TempDir Path tmp) throws Exception {
        UsersDomainsTrace trace = UsersDomainsTrace.generate(11, 400, 40);
        Map<String, Integer> expected = ReferenceJoin.usersDomains(trace, JoinType.LEFT);
        assertNotEquals(
                expected,
                savepointAndChangedJob(trace, null, tmp),
                "the changed job found the join's state without uids: this test shows nothing");
    }

    /**
     * The materialized result of {@code trace} joined by a job (join {@code uid}) stopped with a
     * savepoint halfway and the rest joined by a job with one more operator upstream, restored from
     * it (the first job's source state left unclaimed: the second reads from a source of its own).
     */
    private static Map<String, Integer> savepointAndChangedJob(
            UsersDomainsTrace trace, String uid, Path tmp) throws Exception {
        List<String> events = RecoveryTest.encoded(trace);
        int half = events.size() / 2;
        List<String> changelog = firstHalf(events.subList(0, half), uid, tmp);
        start(events.subList(half, events.size()), true, uid, savepointOf(tmp))
                .getJobExecutionResult()
                .get(60, TimeUnit.SECONDS);
        changelog.addAll(EMITTED);
        return Changelogs.materialize(changelog);
    }

    /**
     * Runs the unchanged job on {@code events} until they are all sent, stops it with a savepoint
     * into {@code dir}, and returns what it emitted.
     */
    private static List<String> firstHalf(List<String> events, String uid, Path dir)
            throws Exception {
        JobClient job = start(events, false, uid, null);
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (SavepointCompatibilityTest.EVENTS_SENT.get() < events.size()
                    && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertEquals(
                    events.size(),
                    SavepointCompatibilityTest.EVENTS_SENT.get(),
                    "first half not sent");
            RecoveryTest.stopWithSavepoint(job, dir);
            job.getJobExecutionResult().get(60, TimeUnit.SECONDS);
        } catch (Exception | AssertionError e) {
            job.cancel();
            throw e;
        }
        List<String> emitted = new ArrayList<>(EMITTED);
        assertFalse(emitted.isEmpty(), "the first half emitted nothing");
        return emitted;
    }

    /** The one savepoint written into {@code dir}. */
    private static Path savepointOf(Path dir) throws Exception {
        try (Stream<Path> found = Files.list(dir)) {
            return found.filter(p -> p.getFileName().toString().startsWith("savepoint-"))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no savepoint in " + dir));
        }
    }

    /** Starts the native join's job on {@code events}, restoring {@code savepoint} if given. */
    private static JobClient start(
            List<String> events, boolean reshaped, String uid, Path savepoint) throws Exception {
        EMITTED.clear();
        SavepointCompatibilityTest.EVENTS_SENT.set(0);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        SavepointCompatibilityTest.failForGoodFrom(env, savepoint);
        env.setParallelism(2);
        env.setMaxParallelism(128);
        boolean after = savepoint != null;
        CdcJoin join = join(JoinType.LEFT, Engine.NATIVE, uid);
        pipeline(env, events, reshaped, join, after ? "after" : "before", after)
                .rows()
                .map(
                        row -> {
                            EMITTED.add(row.toString());
                            return row.toString();
                        })
                .uid("collect")
                .sinkTo(new DiscardingSink<>())
                .uid("sink");
        return env.executeAsync(after ? "uids-after" : "uids-before");
    }
}
