package dev.cdcjoin.flink;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;

/** The MiniClusters the job tests register: one task manager with a few slots. */
public final class MiniClusters {

    private MiniClusters() {}

    /**
     * A MiniCluster of one task manager.
     *
     * @param slots its task slots, the highest parallelism a test job may use
     * @return the extension to register with {@code @RegisterExtension}
     */
    public static MiniClusterExtension withSlots(int slots) {
        return create(slots, new Configuration());
    }

    /**
     * A MiniCluster of one task manager that reports the join operators' input counters to
     * {@link JoinInputCounters}, so a test can feed the joins in a fixed order.
     *
     * @param slots its task slots, the highest parallelism a test job may use
     * @return the extension to register with {@code @RegisterExtension}
     */
    public static MiniClusterExtension withInputCounters(int slots) {
        Configuration conf = new Configuration();
        conf.setString(JoinInputCounters.CONFIG_KEY, JoinInputCounters.Factory.class.getName());
        return create(slots, conf);
    }

    private static MiniClusterExtension create(int slots, Configuration conf) {
        return new MiniClusterExtension(
                new MiniClusterResourceConfiguration.Builder()
                        .setNumberTaskManagers(1)
                        .setNumberSlotsPerTaskManager(slots)
                        .setConfiguration(conf)
                        .build());
    }
}
