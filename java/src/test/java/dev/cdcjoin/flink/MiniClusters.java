package dev.cdcjoin.flink;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;

/**
 * The MiniClusters the job tests register: one task manager with a few slots. A job waits at most
 * {@link #SLOT_REQUEST_TIMEOUT} for slots (Flink's default is 5 minutes), so a test that cannot get
 * any fails quickly with {@code NoResourceAvailableException}; the reason is then in Flink's log,
 * {@code java/target/flink-tests.log}.
 */
public final class MiniClusters {

    /** How long a job waits for slots before it fails. */
    static final Duration SLOT_REQUEST_TIMEOUT = Duration.ofSeconds(30);

    private MiniClusters() {}

    /**
     * A MiniCluster of one task manager.
     *
     * @param slots its task slots, the highest parallelism a test job may use
     * @return the extension to register with {@code @RegisterExtension}
     */
    public static MiniClusterExtension withSlots(int slots) {
        return create(slots, configuration());
    }

    /**
     * A MiniCluster of one task manager that reports the join operators' input counters to {@link
     * JoinInputCounters}, so a test can feed the joins in a fixed order.
     *
     * @param slots its task slots, the highest parallelism a test job may use
     * @return the extension to register with {@code @RegisterExtension}
     */
    public static MiniClusterExtension withInputCounters(int slots) {
        Configuration conf = configuration();
        conf.setString(JoinInputCounters.CONFIG_KEY, JoinInputCounters.Factory.class.getName());
        return create(slots, conf);
    }

    /**
     * The configuration every test MiniCluster starts from.
     *
     * @return a new configuration with the short slot request timeout
     */
    public static Configuration configuration() {
        Configuration conf = new Configuration();
        conf.set(JobManagerOptions.SLOT_REQUEST_TIMEOUT, SLOT_REQUEST_TIMEOUT);
        return conf;
    }

    /**
     * Waits until the cluster's only task manager reports all its slots free (REST {@code
     * /taskmanagers}): after a failed job, the task manager must still be there and its slots
     * released, or the next job waits for slots that never come.
     *
     * @param cluster the running cluster
     * @param timeout how long to wait
     * @throws AssertionError naming what the cluster last reported, after {@code timeout}
     */
    public static void awaitTaskManagerWithAllSlotsFree(
            MiniClusterExtension cluster, Duration timeout) throws Exception {
        Configuration client = cluster.getClientConfiguration();
        URI uri =
                URI.create(
                        "http://"
                                + client.get(RestOptions.ADDRESS)
                                + ":"
                                + client.get(RestOptions.PORT)
                                + "/taskmanagers");
        HttpClient http = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            last = http.send(HttpRequest.newBuilder(uri).build(), BodyHandlers.ofString()).body();
            JsonNode tms = new ObjectMapper().readTree(last).path("taskmanagers");
            if (tms.size() == 1
                    && tms.get(0).path("freeSlots").asInt(-1) == cluster.getNumberSlots()) {
                return;
            }
            Thread.sleep(100);
        }
        throw new AssertionError(
                "expected one task manager with all "
                        + cluster.getNumberSlots()
                        + " slots free after "
                        + timeout
                        + "; /taskmanagers says "
                        + last);
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
