package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.demo.UsersDomainsTrace;
import java.net.URI;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.Collector;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A savepoint taken by an earlier release, or on another Flink line, restores into this build: each
 * committed fixture holds a savepoint of a FULL users ⋈ domains join after the first half of a
 * trace (taken at parallelism 2), the trace, the rows emitted before the savepoint, the expected
 * final join, and ({@value #INNER_RESTORE_ERROR}) what restoring it into an INNER join must say.
 * The test restores each fixture the line can read ({@link TestLine#restorableSavepoints}) at
 * parallelism 1, feeds the second half, and checks that the two runs' changelogs together
 * materialize the expected join.
 *
 * <p>The fixtures: {@value #FORMAT_1}, release 0.1.0 on Flink 2.3 (native snapshot format 1, the
 * header-less sections); {@value #FLINK_1_20}, written by the Flink 1.20 build (restored by the 2.x
 * build as well: an upgrade from 1.20 to 2.x). {@link #writeSavepoint} made them (with {@code
 * -Dcdcjoin.savepoint.write=<dir>}); run it with a release's code to add that release's savepoint
 * when the format changes again.
 */
@SuppressWarnings("try")
class SavepointCompatibilityTest {

    /** Release 0.1.0's savepoint, taken on Flink 2.3. */
    static final String FORMAT_1 = "/savepoints/format-1";

    /**
     * A savepoint written by the Flink 1.20 build (Flink 1.20.3, checkpoint metadata version 4).
     */
    static final String FLINK_1_20 = "/savepoints/flink-1.20";

    /** The file of a fixture that holds what restoring it into an INNER join must say. */
    static final String INNER_RESTORE_ERROR = "inner-restore-error.txt";

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withSlots(2);

    static final Queue<String> EMITTED_ROWS = new ConcurrentLinkedQueue<>();
    static final AtomicLong EVENTS_SENT = new AtomicLong();

    /** Emits a slice of the trace, then (when unbounded) idles until the job is stopped. */
    static final class Events implements FlatMapFunction<Long, String> {
        private static final long serialVersionUID = 1L;
        private final String[] events;

        Events(List<String> events) {
            this.events = events.toArray(new String[0]);
        }

        @Override
        public void flatMap(Long i, Collector<String> out) throws Exception {
            if (i < events.length) {
                out.collect(events[i.intValue()]);
                EVENTS_SENT.incrementAndGet();
            } else {
                Thread.sleep(1);
            }
        }
    }

    /** The join of {@code type} the savepoint was taken with (FULL). */
    static CdcJoin join(JoinType type) {
        return RecoveryTest.join(type);
    }

    /**
     * Makes a job of {@code env} fail for good at its first error and, when {@code savepoint} is
     * given, start from it, leaving state no operator claims (the first job's source) behind.
     */
    static void failForGoodFrom(StreamExecutionEnvironment env, Path savepoint) {
        Configuration conf = new Configuration();
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        if (savepoint != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint.toUri().toString());
            conf.set(StateRecoveryOptions.SAVEPOINT_IGNORE_UNCLAIMED_STATE, true);
        }
        env.configure(conf);
    }

    /**
     * Starts a join of {@code type} on {@code events}, from {@code savepoint} if given, failing for
     * good at the first error; rows go to {@link #EMITTED_ROWS}.
     */
    static JobClient start(
            JoinType type, List<String> events, int parallelism, Path savepoint, boolean bounded)
            throws Exception {
        EMITTED_ROWS.clear();
        EVENTS_SENT.set(0);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        String phase = savepoint == null ? "before" : "after";
        failForGoodFrom(env, savepoint);
        env.setParallelism(parallelism);
        env.setMaxParallelism(128);
        DataStream<String> source =
                env.fromSequence(0, bounded ? events.size() - 1 : Long.MAX_VALUE)
                        .uid("source-" + phase)
                        .setParallelism(1)
                        .flatMap(new Events(events))
                        .uid("events-" + phase)
                        .setParallelism(1);
        RecoveryTest.decodeAndJoin(
                join(type),
                source,
                row -> {
                    EMITTED_ROWS.add(row.toString());
                    return row.toString();
                });
        return env.executeAsync("savepoint-" + phase);
    }

    static List<String> lines(Path dir, String file) throws Exception {
        try (Stream<String> lines = Files.lines(dir.resolve(file))) {
            return lines.collect(Collectors.toList());
        }
    }

    static Path committed(String resource) throws Exception {
        URL url = SavepointCompatibilityTest.class.getResource(resource);
        return Paths.get(url.toURI());
    }

    /** Restores a committed savepoint into a join of {@code type} and feeds the second half. */
    static JobClient restoreCommitted(Path committed, JoinType type) throws Exception {
        List<String> events = lines(committed, "events.txt");
        int half = Integer.parseInt(lines(committed, "half.txt").get(0));
        return start(
                type, events.subList(half, events.size()), 1, committed.resolve("savepoint"), true);
    }

    @ParameterizedTest
    @MethodSource("dev.cdcjoin.flink.TestLine#restorableSavepoints")
    void restoresTheCommittedSavepoint(String resource) throws Exception {
        Path committed = committed(resource);
        restoreCommitted(committed, JoinType.FULL)
                .getJobExecutionResult()
                .get(120, TimeUnit.SECONDS);

        List<String> changelog = new ArrayList<>(lines(committed, "emitted-before.txt"));
        assertFalse(EMITTED_ROWS.isEmpty(), "the restored job emitted nothing");
        changelog.addAll(EMITTED_ROWS);
        Map<String, Integer> expected = Changelogs.materialize(lines(committed, "expected.txt"));
        assertEquals(expected, Changelogs.materialize(changelog));
    }

    @ParameterizedTest
    @MethodSource("dev.cdcjoin.flink.TestLine#restorableSavepoints")
    void restoringIntoAnotherJoinTypeFailsNamingTheDifference(String resource) throws Exception {
        Path committed = committed(resource);
        JobClient job = restoreCommitted(committed, JoinType.INNER);
        ExecutionException e =
                assertThrows(
                        ExecutionException.class,
                        () -> job.getJobExecutionResult().get(120, TimeUnit.SECONDS));
        String causes = ExceptionUtils.stringifyException(e);
        assertTrue(causes.contains("cannot restore the join state of key group"), causes);
        String expected = Files.readString(committed.resolve(INNER_RESTORE_ERROR)).strip();
        assertTrue(causes.contains(expected), causes);
    }

    @Test
    @EnabledIfSystemProperty(named = "cdcjoin.savepoint.write", matches = ".+")
    void writeSavepoint(@TempDir Path tmp) throws Exception {
        Path out = Paths.get(System.getProperty("cdcjoin.savepoint.write"));
        UsersDomainsTrace trace = UsersDomainsTrace.generate(5, 600, 60);
        List<String> events = RecoveryTest.encoded(trace);
        events.forEach(e -> assertFalse(e.contains("\n"), e));
        int half = events.size() / 2;
        JobClient job = start(JoinType.FULL, events.subList(0, half), 2, null, false);
        String savepoint;
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (EVENTS_SENT.get() < half && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertEquals(half, EVENTS_SENT.get(), "first half not sent in time");
            savepoint = RecoveryTest.stopWithSavepoint(job, tmp);
            job.getJobExecutionResult().get(60, TimeUnit.SECONDS);
        } catch (Exception | AssertionError e) {
            job.cancel();
            throw e;
        }
        List<String> expected = new ArrayList<>();
        ReferenceJoin.usersDomains(trace, JoinType.FULL)
                .forEach((row, n) -> expected.addAll(Collections.nCopies(n, "+I" + row)));
        Files.createDirectories(out);
        Files.write(out.resolve("events.txt"), events);
        Files.writeString(out.resolve("half.txt"), half + "\n");
        Files.write(out.resolve("emitted-before.txt"), new ArrayList<>(EMITTED_ROWS));
        Files.write(out.resolve("expected.txt"), expected);
        copyTree(Paths.get(URI.create(savepoint)), out.resolve("savepoint"));
    }

    private static void copyTree(Path from, Path to) throws Exception {
        try (Stream<Path> paths = Files.walk(from)) {
            for (Path p : paths.collect(Collectors.toList())) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target);
                }
            }
        }
    }
}
