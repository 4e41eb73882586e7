package dev.cdcjoin.bench;

import dev.cdcjoin.flink.CdcJoinMetrics;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

/**
 * A metric reporter of the benchmark's MiniCluster (same JVM) that keeps the native join's restore
 * gauges ({@link CdcJoinMetrics#RESTORED_STATE_BYTES}, {@link CdcJoinMetrics#STATE_RESTORE_MILLIS})
 * of every live subtask, so that the state-scale benchmark reports how fast the join read its
 * snapshot, apart from what starting a task costs anyway.
 */
public final class RestoreGauges implements MetricReporter {

    private static final List<String> NAMES =
            List.of(CdcJoinMetrics.RESTORED_STATE_BYTES, CdcJoinMetrics.STATE_RESTORE_MILLIS);

    /** Live gauges by their full identifier (one per subtask and name). */
    private static final Map<String, Gauge<?>> LIVE = new ConcurrentHashMap<>();

    /** Adds this reporter to a MiniCluster's configuration. */
    static void register(Configuration conf) {
        conf.setString("metrics.reporter.restore.factory.class", Factory.class.getName());
    }

    /**
     * The sum over live subtasks of the gauge {@code name} and the largest single value, as {sum,
     * max}; {0, 0} when none is registered.
     */
    static long[] sumAndMax(String name) {
        long sum = 0;
        long max = 0;
        for (Map.Entry<String, Gauge<?>> e : LIVE.entrySet()) {
            if (e.getKey().endsWith("." + name)
                    && e.getValue().getValue() instanceof Number value) {
                sum += value.longValue();
                max = Math.max(max, value.longValue());
            }
        }
        return new long[] {sum, max};
    }

    @Override
    public void open(MetricConfig config) {}

    @Override
    public void close() {}

    @Override
    public void notifyOfAddedMetric(Metric metric, String name, MetricGroup group) {
        if (NAMES.contains(name) && metric instanceof Gauge<?> gauge) {
            LIVE.put(group.getMetricIdentifier(name), gauge);
        }
    }

    @Override
    public void notifyOfRemovedMetric(Metric metric, String name, MetricGroup group) {
        LIVE.remove(group.getMetricIdentifier(name));
    }

    /** Flink's way of instantiating a reporter named in the configuration. */
    public static final class Factory implements MetricReporterFactory {
        @Override
        public MetricReporter createMetricReporter(Properties properties) {
            return new RestoreGauges();
        }
    }
}
