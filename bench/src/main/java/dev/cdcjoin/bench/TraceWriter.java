package dev.cdcjoin.bench;

import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;

/**
 * Writes the files of a generated trace (the format {@link TraceSource} reads): per topic and
 * partition a sequence of {@code int32 big-endian length | UTF-8 Debezium JSON} ({@code -1} for a
 * Kafka tombstone), each envelope with a full Postgres {@code source} block, and the counts that
 * {@code trace.properties} records. Shared by the generators ({@link Workload}, {@link
 * MartWorkload}), which decide what changes; this class decides how a change is written.
 */
final class TraceWriter {

    /** Writes a trace's changes through a {@link TraceWriter} and returns its properties. */
    interface Generator {
        Properties generate(Path dir) throws IOException;
    }

    private final List<Integer> topics;
    private final int partitions;
    private final boolean tombstones;
    private final DataOutputStream[][] out;
    private final long[][] counts;
    private final long[][] bytes;
    private final long[] lsn = new long[TraceFiles.TOPICS.size()];
    private final Map<String, Long> ops = new LinkedHashMap<>();
    private long ts = 1_700_000_000_000L;
    private long emitted;

    /**
     * Opens the files of {@code topics} (indexes of {@link TraceFiles#TOPICS}) in {@code dir}.
     *
     * @param tombstones whether a Kafka tombstone follows every delete
     */
    TraceWriter(Path dir, List<Integer> topics, int partitions, boolean tombstones)
            throws IOException {
        this.topics = topics;
        this.partitions = partitions;
        this.tombstones = tombstones;
        int n = TraceFiles.TOPICS.size();
        out = new DataOutputStream[n][partitions];
        counts = new long[n][partitions];
        bytes = new long[n][partitions];
        for (int t : topics) {
            for (int p = 0; p < partitions; p++) {
                OutputStream f = new FileOutputStream(dir.resolve(TraceFiles.file(t, p)).toFile());
                out[t][p] = new DataOutputStream(new BufferedOutputStream(f, 1 << 20));
            }
        }
    }

    /**
     * Generates a trace into {@code dir} unless {@code dir/trace.properties} exists: the file is
     * written last (through a temporary name), so a trace that has it is complete.
     *
     * @return the trace's properties
     */
    static Properties generate(Path dir, Generator generator) throws IOException {
        Path meta = dir.resolve("trace.properties");
        if (Files.exists(meta)) {
            return TraceFiles.load(dir);
        }
        Files.createDirectories(dir);
        long t0 = System.nanoTime();
        Properties p = generator.generate(dir);
        p.setProperty("generate.seconds", String.format("%.1f", (System.nanoTime() - t0) / 1e9));
        Path tmp = dir.resolve("trace.properties.tmp");
        try (OutputStream o = Files.newOutputStream(tmp)) {
            p.store(o, "cdcjoin bench trace");
        }
        Files.move(tmp, meta);
        return p;
    }

    /** Messages written so far (tombstones not counted). */
    long emitted() {
        return emitted;
    }

    /**
     * Writes one change of a row of {@code topic}: {@code op} is {@code r}, {@code c}, {@code u} or
     * {@code d}; {@code before} and {@code after} are the row's JSON or null. The row goes to the
     * partition of {@code lineage} (the id it was created with), so all its changes stay in one
     * partition, in order.
     */
    void emit(int topic, long lineage, String op, String before, String after) throws IOException {
        ts++;
        String table = TraceFiles.TOPICS.get(topic);
        String json =
                "{\"before\":"
                        + (before == null ? "null" : before)
                        + ",\"after\":"
                        + (after == null ? "null" : after)
                        + ",\"source\":{\"version\":\"2.7.3.Final\",\"connector\":\"postgresql\","
                        + "\"name\":\"shop\",\"ts_ms\":"
                        + ts
                        + ",\"snapshot\":\""
                        + op.equals("r")
                        + "\",\"db\":\"shop\",\"sequence\":\"[\\\"24023928\\\",\\\"24023928\\\"]\","
                        + "\"schema\":\"public\",\"table\":\""
                        + table
                        + "\",\"txId\":"
                        + (500 + ts % 100_000)
                        + ",\"lsn\":"
                        + (24_023_928 + lsn[topic] * 64)
                        + ",\"xmin\":null},\"op\":\""
                        + op
                        + "\",\"ts_ms\":"
                        + (ts + 3)
                        + ",\"transaction\":null}";
        lsn[topic]++;
        int p = Workload.partition(lineage, partitions);
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        out[topic][p].writeInt(b.length);
        out[topic][p].write(b);
        counts[topic][p]++;
        bytes[topic][p] += b.length;
        emitted++;
        ops.merge(table + "." + op, 1L, Long::sum);
        if (tombstones && op.equals("d")) {
            out[topic][p].writeInt(-1);
            counts[topic][p]++;
            ops.merge(table + ".tombstone", 1L, Long::sum);
        }
    }

    /**
     * Closes the files and puts the counts into {@code p}: {@code topics}, messages and bytes per
     * file and in all, and the count of each (table, op).
     */
    void finish(Properties p) throws IOException {
        for (int t : topics) {
            for (DataOutputStream o : out[t]) {
                o.close();
            }
        }
        p.setProperty(
                "topics",
                topics.stream().map(TraceFiles.TOPICS::get).collect(Collectors.joining(",")));
        long messages = 0;
        long total = 0;
        for (int t : topics) {
            for (int k = 0; k < partitions; k++) {
                p.setProperty("messages." + TraceFiles.file(t, k), "" + counts[t][k]);
                p.setProperty("bytes." + TraceFiles.file(t, k), "" + bytes[t][k]);
                messages += counts[t][k];
                total += bytes[t][k];
            }
        }
        p.setProperty("messages", "" + messages);
        p.setProperty("bytes", "" + total);
        ops.forEach((k, v) -> p.setProperty("ops." + k, "" + v));
    }
}
