package dev.cdcjoin.flink;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

/**
 * A metric reporter (in the MiniCluster's JVM) that keeps the join operators' input counters
 * ({@code cdcjoinRecordsInLeft/Right}) per job, so a test source can wait until the joins have
 * received every record sent so far: that makes the order in which a two-input operator reads its
 * inputs deterministic. It also keeps the last values of cdcjoin's gauges and counters ({@code
 * cdcjoin*}, {@link CdcJoinMetrics}), summed over subtasks, as they read when the operators closed.
 */
public final class JoinInputCounters implements MetricReporter {

    /** Configuration key prefix that installs this reporter. */
    static final String CONFIG_KEY = "metrics.reporter.cdcjoin-test.factory.class";

    private static final Map<String, Set<Counter>> BY_JOB = new ConcurrentHashMap<>();

    /** Per job, gauge name, operator and subtask: the gauge's value when it was removed. */
    private static final Map<String, Map<String, Map<String, Long>>> CLOSED_GAUGES =
            new ConcurrentHashMap<>();

    /** The same for counters. */
    private static final Map<String, Map<String, Map<String, Long>>> CLOSED_COUNTERS =
            new ConcurrentHashMap<>();

    /** Creates the reporter (found through {@code META-INF/services}). */
    public static final class Factory implements MetricReporterFactory {
        @Override
        public MetricReporter createMetricReporter(Properties properties) {
            return new JoinInputCounters();
        }
    }

    @Override
    public void open(MetricConfig config) {}

    @Override
    public void close() {}

    @Override
    public void notifyOfAddedMetric(Metric metric, String name, MetricGroup group) {
        boolean joinInput =
                name.equals("cdcjoinRecordsInLeft") || name.equals("cdcjoinRecordsInRight");
        if (metric instanceof Counter && joinInput) {
            BY_JOB.computeIfAbsent(job(group), j -> ConcurrentHashMap.newKeySet())
                    .add((Counter) metric);
        }
    }

    @Override
    public void notifyOfRemovedMetric(Metric metric, String name, MetricGroup group) {
        Object value = null;
        Map<String, Map<String, Map<String, Long>>> closed = null;
        if (metric instanceof Gauge && name.startsWith("cdcjoin")) {
            value = ((Gauge<?>) metric).getValue();
            closed = CLOSED_GAUGES;
        } else if (metric instanceof Counter && name.startsWith("cdcjoin")) {
            value = ((Counter) metric).getCount();
            closed = CLOSED_COUNTERS;
        }
        if (value instanceof Number) {
            closed.computeIfAbsent(job(group), j -> new ConcurrentHashMap<>())
                    .computeIfAbsent(name, n -> new ConcurrentHashMap<>())
                    .put(
                            group.getAllVariables().get("<operator_id>")
                                    + "/"
                                    + group.getAllVariables().get("<subtask_index>"),
                            ((Number) value).longValue());
        }
        Set<Counter> counters = BY_JOB.get(job(group));
        if (counters != null) {
            counters.remove(metric);
        }
    }

    private static String job(MetricGroup group) {
        return String.valueOf(group.getAllVariables().get("<job_id>"));
    }

    /**
     * The join gauges of a finished job, by name: their values when the operators closed, summed
     * over subtasks.
     */
    static Map<String, Long> closedGauges(String jobId) {
        return sums(CLOSED_GAUGES, jobId);
    }

    /**
     * The cdcjoin counters of a finished job, by name: their values when the operators closed,
     * summed over subtasks and operators.
     */
    static Map<String, Long> closedCounters(String jobId) {
        return sums(CLOSED_COUNTERS, jobId);
    }

    private static Map<String, Long> sums(
            Map<String, Map<String, Map<String, Long>>> closed, String jobId) {
        Map<String, Long> sums = new TreeMap<>();
        closed.getOrDefault(jobId, Map.of())
                .forEach(
                        (name, bySubtask) ->
                                sums.put(
                                        name,
                                        bySubtask.values().stream()
                                                .mapToLong(Long::longValue)
                                                .sum()));
        return sums;
    }

    /**
     * Waits (at most 10 s) until {@code instances} operator subtasks of a finished job have closed
     * their metric {@code name}: a task closes its metric group as it ends, which can come after
     * the job's result, so the closed values are complete only then.
     */
    static void awaitClosed(String jobId, String name, int instances) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (closedInstances(jobId, name) < instances) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(
                        name
                                + " closed by "
                                + closedInstances(jobId, name)
                                + " of "
                                + instances
                                + " operator subtasks 10 s after the job ended; counters "
                                + closedCounters(jobId)
                                + ", gauges "
                                + closedGauges(jobId));
            }
            Thread.sleep(20);
        }
    }

    private static int closedInstances(String jobId, String name) {
        int n = 0;
        for (Map<String, Map<String, Map<String, Long>>> closed :
                List.of(CLOSED_GAUGES, CLOSED_COUNTERS)) {
            n += closed.getOrDefault(jobId, Map.of()).getOrDefault(name, Map.of()).size();
        }
        return n;
    }

    /** Number of join input counters registered by the job. */
    static int counters(String jobId) {
        Set<Counter> c = BY_JOB.get(jobId);
        return c == null ? 0 : c.size();
    }

    /** Records received by all join operators of the job, both inputs. */
    static long received(String jobId) {
        Set<Counter> c = BY_JOB.get(jobId);
        return c == null ? 0 : c.stream().mapToLong(Counter::getCount).sum();
    }
}
