package dev.cdcjoin.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The broker of {@code --source kafka} and the trace's two topics in it.
 *
 * <p>The broker is the e2e suite's ({@code e2e/lib/install.sh kafka}, {@code e2e/lib/kafka.sh}): a
 * KRaft broker on loopback, on ports of its own ({@code E2E_KAFKA_PORT}, default {@value
 * #DEFAULT_PORT}, and {@code E2E_KAFKA_CONTROLLER_PORT}, default {@value #DEFAULT_CONTROLLER_PORT},
 * so the e2e suite can run beside it) and with its data in {@code E2E_RUN} (default {@value
 * #DEFAULT_RUN}, kept between runs, so the topics are filled once per trace). A broker already
 * listening on the port is used as it is; one started here is stopped by {@link #stop()}.
 *
 * <p>Each topic gets the trace's partition count and, partition by partition, the trace file's
 * messages in order: the value as in the trace (a tombstone where the trace has one) and the row's
 * Debezium key {@code {"id":N}} (a tombstone repeats its delete's key). Filling is skipped when the
 * topics already hold the trace: the same partitions, each from offset 0 to the trace file's
 * message count.
 */
final class KafkaTrace {

    static final String DEFAULT_PORT = "19192";
    static final String DEFAULT_CONTROLLER_PORT = "19193";
    static final String DEFAULT_RUN = "/tmp/cdcjoin-bench/kafka";

    private static final String[] TABLES = {"users", "domains"};
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Map<String, String> env = new HashMap<>();
    private final Consumer<String> log;
    private final String bootstrap;
    private boolean started;

    private KafkaTrace(Consumer<String> log) {
        this.log = log;
        env.put("E2E_KAFKA_PORT", System.getenv().getOrDefault("E2E_KAFKA_PORT", DEFAULT_PORT));
        env.put(
                "E2E_KAFKA_CONTROLLER_PORT",
                System.getenv().getOrDefault("E2E_KAFKA_CONTROLLER_PORT", DEFAULT_CONTROLLER_PORT));
        env.put("E2E_RUN", System.getenv().getOrDefault("E2E_RUN", DEFAULT_RUN));
        this.bootstrap = "127.0.0.1:" + env.get("E2E_KAFKA_PORT");
    }

    /** The topic of table {@code t} (0 = users, 1 = domains) of the trace in {@code trace}. */
    static String topic(Path trace, int t) {
        return "bench." + trace.getFileName() + "." + TABLES[t];
    }

    /**
     * The broker on {@code E2E_KAFKA_PORT}: the one listening there, or one installed and started
     * through the e2e scripts (run from the repository root, the suite's working directory).
     */
    static KafkaTrace broker(Consumer<String> log) throws IOException, InterruptedException {
        KafkaTrace k = new KafkaTrace(log);
        if (k.listening()) {
            log.accept("kafka: using the broker listening on " + k.bootstrap);
        } else {
            k.script("e2e/lib/install.sh", "kafka");
            k.script("e2e/lib/kafka.sh", "start");
            k.started = true;
        }
        return k;
    }

    /** host:port of the broker. */
    String bootstrap() {
        return bootstrap;
    }

    /** Stops the broker if it was started here. */
    void stop() throws IOException, InterruptedException {
        if (started) {
            script("e2e/lib/kafka.sh", "stop");
            started = false;
        }
    }

    private boolean listening() {
        String[] hp = bootstrap.split(":");
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(hp[0], Integer.parseInt(hp[1])), 1000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private void script(String script, String arg) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder("bash", script, arg).redirectErrorStream(true);
        pb.environment().putAll(env);
        File out = Path.of(env.get("E2E_RUN"), "bench-" + arg + ".log").toFile();
        Files.createDirectories(out.toPath().getParent());
        pb.redirectOutput(ProcessBuilder.Redirect.appendTo(out));
        Process p = pb.start();
        if (!p.waitFor(600, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IOException(script + " " + arg + " failed, see " + out);
        }
        log.accept("kafka: " + script + " " + arg + " ok (" + env + ", log " + out + ")");
    }

    /**
     * Makes the trace's two topics hold the trace, unless they already do.
     *
     * @param trace the trace directory
     * @param meta its {@code trace.properties}
     */
    void fill(Path trace, Properties meta) throws Exception {
        int partitions = Integer.parseInt(meta.getProperty("partitions"));
        try (Admin admin =
                Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            for (int t = 0; t < TABLES.length; t++) {
                String topic = topic(trace, t);
                Map<Integer, Long> want = new HashMap<>();
                for (int k = 0; k < partitions; k++) {
                    want.put(
                            k,
                            Long.parseLong(meta.getProperty("messages." + TraceFiles.file(t, k))));
                }
                if (want.equals(offsets(admin, topic))) {
                    log.accept("kafka: " + topic + " already holds the trace " + want);
                    continue;
                }
                recreate(admin, topic, partitions);
                long t0 = System.nanoTime();
                produce(trace, t, topic, partitions);
                Map<Integer, Long> got = offsets(admin, topic);
                if (!want.equals(got)) {
                    throw new IOException(topic + ": end offsets " + got + ", expected " + want);
                }
                log.accept(
                        String.format(
                                "kafka: %s filled with %s messages in %.1f s",
                                topic, want, (System.nanoTime() - t0) / 1e9));
            }
        }
    }

    /**
     * The message count of each partition of {@code topic} (its end offset), or null when the topic
     * is missing or a partition does not start at offset 0.
     */
    private static Map<Integer, Long> offsets(Admin admin, String topic) throws Exception {
        TopicDescription d;
        try {
            d = admin.describeTopics(Set.of(topic)).allTopicNames().get().get(topic);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return null;
            }
            throw e;
        }
        Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        d.partitions()
                .forEach(
                        p -> {
                            earliest.put(
                                    new TopicPartition(topic, p.partition()),
                                    OffsetSpec.earliest());
                            latest.put(
                                    new TopicPartition(topic, p.partition()), OffsetSpec.latest());
                        });
        Map<Integer, Long> ends = new HashMap<>();
        var starts = admin.listOffsets(earliest).all().get();
        var lasts = admin.listOffsets(latest).all().get();
        for (TopicPartition tp : latest.keySet()) {
            if (starts.get(tp).offset() != 0) {
                return null;
            }
            ends.put(tp.partition(), lasts.get(tp).offset());
        }
        return ends;
    }

    private void recreate(Admin admin, String topic, int partitions) throws Exception {
        try {
            admin.deleteTopics(Set.of(topic)).all().get();
            log.accept("kafka: " + topic + " deleted (it did not hold the trace)");
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                throw e;
            }
        }
        // A deleted topic's name is free again once the controller has removed it.
        for (int attempt = 0; ; attempt++) {
            try {
                admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
                return;
            } catch (ExecutionException e) {
                if (attempt >= 60) {
                    throw e;
                }
                Thread.sleep(500);
            }
        }
    }

    /**
     * Sends every partition file of table {@code t} to its partition of {@code topic}, in order.
     */
    private void produce(Path trace, int t, String topic, int partitions) throws IOException {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true"); // in order, no duplicates
        p.put(ProducerConfig.LINGER_MS_CONFIG, "20");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "" + (512 << 10));
        List<Exception> failures = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int k = 0; k < partitions; k++) {
                try (InputStream f = Files.newInputStream(trace.resolve(TraceFiles.file(t, k)))) {
                    DataInputStream in = new DataInputStream(new BufferedInputStream(f, 1 << 20));
                    byte[] key = null;
                    for (int length; (length = readLength(in)) != -2; ) {
                        byte[] value = length < 0 ? null : in.readNBytes(length);
                        key = value == null ? key : key(value);
                        producer.send(
                                new ProducerRecord<>(topic, k, key, value),
                                (md, e) -> {
                                    if (e != null) {
                                        synchronized (failures) {
                                            failures.add(e);
                                        }
                                    }
                                });
                    }
                }
            }
            producer.flush();
        }
        if (!failures.isEmpty()) {
            throw new IOException(
                    topic + ": " + failures.size() + " sends failed", failures.get(0));
        }
    }

    /** The next length prefix, -1 for a tombstone, -2 at the end of the file. */
    private static int readLength(DataInputStream in) throws IOException {
        int b = in.read();
        if (b < 0) {
            return -2;
        }
        return (b << 24)
                | (in.readUnsignedByte() << 16)
                | (in.readUnsignedByte() << 8)
                | in.readUnsignedByte();
    }

    /** Debezium's JSON key of a change: the row's id ({@code after}'s, or {@code before}'s). */
    static byte[] key(byte[] value) throws IOException {
        JsonNode m = JSON.readTree(value);
        JsonNode row = m.path("after").isObject() ? m.get("after") : m.get("before");
        return ("{\"id\":" + row.get("id").asLong() + "}").getBytes(StandardCharsets.UTF_8);
    }
}
