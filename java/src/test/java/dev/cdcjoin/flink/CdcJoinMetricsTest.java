package dev.cdcjoin.flink;

import static dev.cdcjoin.flink.CdcJoinJobTest.domain;
import static dev.cdcjoin.flink.CdcJoinJobTest.user;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The metrics the operators register ({@link CdcJoinMetrics}, the README's list): both engines
 * count the same things under the same names, and each registers exactly the metrics the README
 * lists for it, read from a metric reporter as the operators closed.
 */
class CdcJoinMetricsTest {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withInputCounters(2);

    /** A user, a message that is not JSON, a tombstone, a delete of a user never inserted. */
    private static final List<String> USERS =
            List.of(user("c", 1, "ana"), "{not json", "null", user("d", 9, "x"));

    /**
     * A domain; a domain whose value is Debezium's placeholder for an unchanged TOASTed column,
     * with nothing to take it from (the join rejects it); a tombstone; an update of the first.
     */
    private static final List<String> DOMAINS =
            List.of(
                    domain(10, 1, "a.com"),
                    domain(11, 1, "__debezium_unavailable_value"),
                    "null",
                    "{\"op\":\"u\",\"before\":{\"id\":10,\"user_id\":1,\"domain\":\"a.com\"},"
                            + "\"after\":{\"id\":10,\"user_id\":1,\"domain\":\"b.com\"}}");

    /** What both engines count of those, under the same names. */
    private static final Map<String, Long> SHARED =
            Map.of(
                    CdcJoinMetrics.BAD_RECORDS, 1L,
                    CdcJoinMetrics.TOMBSTONES, 2L,
                    CdcJoinMetrics.RECORDS_IN_LEFT, 2L,
                    CdcJoinMetrics.RECORDS_IN_RIGHT, 4L,
                    CdcJoinMetrics.ABSENT_RETRACTIONS, 1L,
                    CdcJoinMetrics.REJECTED, 1L);

    /** The closed counters and gauges of one run of the job on {@code engine}. */
    private static Map<String, Map<String, Long>> run(Engine engine) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        CdcJoin.Result result =
                CdcJoinJobTest.usersDomains()
                        .badRecordPolicy(BadRecordPolicy.SIDE_OUTPUT)
                        .engine(engine)
                        .maxFlushDelay(Duration.ofMillis(20))
                        .build()
                        .joinStrings(env.fromData(USERS), env.fromData(DOMAINS));
        result.rows().sinkTo(new DiscardingSink<>());
        result.badRecords().sinkTo(new DiscardingSink<>());
        JobClient job = env.executeAsync("metrics " + engine);
        job.getJobExecutionResult().get(60, TimeUnit.SECONDS);
        String id = job.getJobID().toString();
        JoinInputCounters.awaitClosed(id, CdcJoinMetrics.BAD_RECORDS, 2); // the decode steps
        JoinInputCounters.awaitClosed(id, CdcJoinMetrics.RECORDS_IN_LEFT, 1); // the join
        return Map.of(
                "counters", JoinInputCounters.closedCounters(id),
                "gauges", JoinInputCounters.closedGauges(id));
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void bothEnginesCountTheSameUnderTheSameNames(Engine engine) throws Exception {
        Map<String, Map<String, Long>> metrics = run(engine);
        Map<String, Long> all = new TreeMap<>(metrics.get("gauges"));
        all.putAll(metrics.get("counters"));
        Map<String, Long> shared = new TreeMap<>(all);
        shared.keySet().retainAll(SHARED.keySet());
        assertEquals(new TreeMap<>(SHARED), shared, engine + ": " + metrics);
    }

    @Test
    void theNativeEngineRegistersWhatTheReadmeLists() throws Exception {
        Map<String, Map<String, Long>> metrics = run(Engine.NATIVE);
        assertEquals(
                Set.of(
                        CdcJoinMetrics.RECORDS_IN,
                        CdcJoinMetrics.CHANGES_OUT,
                        CdcJoinMetrics.BAD_RECORDS,
                        CdcJoinMetrics.TOMBSTONES,
                        CdcJoinMetrics.BATCHES,
                        CdcJoinMetrics.RECORDS_IN_LEFT,
                        CdcJoinMetrics.RECORDS_IN_RIGHT,
                        CdcJoinMetrics.ROWS_OUT),
                metrics.get("counters").keySet(),
                "counters: " + metrics);
        assertEquals(
                Set.of(
                        CdcJoinMetrics.LAST_BATCH_SIZE,
                        CdcJoinMetrics.RESTORED_STATE_BYTES,
                        CdcJoinMetrics.STATE_RESTORE_MILLIS,
                        CdcJoinMetrics.ABSENT_RETRACTIONS,
                        CdcJoinMetrics.REJECTED,
                        "cdcjoinExpiredRows",
                        "cdcjoinStateRows",
                        "cdcjoinStateKeys",
                        "cdcjoinStateRowBytes",
                        "cdcjoinStateHeapBytes",
                        "cdcjoinStateFrozenBytes"),
                metrics.get("gauges").keySet(),
                "gauges: " + metrics);
        Map<String, Long> values = new TreeMap<>(metrics.get("counters"));
        values.putAll(metrics.get("gauges"));
        // 4 + 4 records in; 2 + 4 changes out (an update is two); ana and b.com stored.
        Map<String, Long> expected =
                Map.of(
                        CdcJoinMetrics.RECORDS_IN,
                        8L,
                        CdcJoinMetrics.CHANGES_OUT,
                        6L,
                        "cdcjoinStateRows",
                        2L,
                        "cdcjoinStateFrozenBytes",
                        0L);
        Map<String, Long> actual = new TreeMap<>(values);
        actual.keySet().retainAll(expected.keySet());
        assertEquals(new TreeMap<>(expected), actual, "" + values);
    }

    @Test
    void theJavaEngineRegistersWhatTheReadmeLists() throws Exception {
        Map<String, Map<String, Long>> metrics = run(Engine.JAVA);
        assertEquals(SHARED.keySet(), metrics.get("counters").keySet(), "" + metrics);
        assertEquals(Set.of(), metrics.get("gauges").keySet(), "" + metrics);
    }
}
