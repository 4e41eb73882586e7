package dev.cdcjoin.flink;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.function.Predicate;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;

/**
 * The MiniClusters the job tests register: one task manager with a few slots. A job waits at most
 * {@link #SLOT_REQUEST_TIMEOUT} for slots (Flink's default is 5 minutes), so a test that cannot get
 * any fails quickly with {@code NoResourceAvailableException}; the reason is then in Flink's log,
 * {@code java/target/flink-tests.log}.
 *
 * <p>A task that does not exit within {@code task.cancellation.timeout} of being cancelled makes
 * Flink's watchdog report a fatal error, and a MiniCluster then closes that task manager for good
 * while the JVM lives on: one of the two ways a test cluster loses its only task manager (see
 * {@code TaskManagerSurvivalTest}). Task threads still alive {@link #CANCELLATION_INTERVAL} after
 * the cancel have their stack logged ("did not react to cancelling signal") at that interval
 * (Flink's default is 30 s), so the log names where such a task is stuck long before the watchdog
 * fires.
 */
public final class MiniClusters {

    /** How long a job waits for slots before it fails. */
    static final Duration SLOT_REQUEST_TIMEOUT = Duration.ofSeconds(30);

    /** How often a cancelled task that is still running is interrupted and its stack logged. */
    static final Duration CANCELLATION_INTERVAL = Duration.ofSeconds(2);

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
     * @return a new configuration with the short slot request timeout and cancellation interval
     */
    public static Configuration configuration() {
        Configuration conf = new Configuration();
        // Any free port for the REST endpoint: a cluster built by hand would take 8081, and fail to
        // start while another test JVM on the machine holds it.
        conf.set(RestOptions.BIND_PORT, "0");
        conf.set(JobManagerOptions.SLOT_REQUEST_TIMEOUT, SLOT_REQUEST_TIMEOUT);
        conf.set(TaskManagerOptions.TASK_CANCELLATION_INTERVAL, CANCELLATION_INTERVAL);
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
        URI rest =
                URI.create(
                        "http://"
                                + client.get(RestOptions.ADDRESS)
                                + ":"
                                + client.get(RestOptions.PORT));
        awaitTaskManagers(
                rest,
                tms ->
                        tms.size() == 1
                                && tms.get(0).path("freeSlots").asInt(-1)
                                        == cluster.getNumberSlots(),
                "one task manager with all " + cluster.getNumberSlots() + " slots free",
                timeout);
    }

    /**
     * Waits until the cluster's task managers, as its REST API lists them ({@code GET
     * /taskmanagers}), satisfy {@code condition}.
     *
     * @param rest the cluster's REST address
     * @param condition tested on the {@code taskmanagers} array of each answer
     * @param expected what the condition means, for the failure message
     * @param timeout how long to wait
     * @throws AssertionError naming what the cluster last reported, after {@code timeout}
     */
    public static void awaitTaskManagers(
            URI rest, Predicate<JsonNode> condition, String expected, Duration timeout)
            throws Exception {
        URI uri = rest.resolve("/taskmanagers");
        HttpClient http = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            last = http.send(HttpRequest.newBuilder(uri).build(), BodyHandlers.ofString()).body();
            if (condition.test(new ObjectMapper().readTree(last).path("taskmanagers"))) {
                return;
            }
            Thread.sleep(100);
        }
        throw new AssertionError(
                "expected " + expected + " after " + timeout + "; /taskmanagers says " + last);
    }

    /**
     * A MiniCluster of one task manager started with {@code conf} (start from {@link
     * #configuration()}).
     *
     * @param slots its task slots, the highest parallelism a test job may use
     * @param conf the cluster's configuration
     * @return the extension to register with {@code @RegisterExtension}
     */
    public static MiniClusterExtension create(int slots, Configuration conf) {
        return new MiniClusterExtension(
                new MiniClusterResourceConfiguration.Builder()
                        .setNumberTaskManagers(1)
                        .setNumberSlotsPerTaskManager(slots)
                        .setConfiguration(conf)
                        .build());
    }
}
