package dev.cdcjoin.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;

/**
 * The report of the state-scale configuration (issue 18, {@code --phases state,report}): one table
 * over every size of the plan, so that what grows with the state (a checkpoint's synchronous pause,
 * its size, the restore) shows beside what should not; the throughput checkpoints cost the native
 * join; latency at a fixed rate while the state grows; the targets. Written to {@code
 * report.md} and {@code chart.svg}/{@code chart.png}, or {@code state-report.md} and {@code
 * state-chart.svg} when the folder also holds the comparison's data.
 */
final class StateReport {

    /**
     * Checkpoint bytes per stored row before the asynchronous snapshot: issue 18 measured 740 MB on
     * the 20M trace, whose final state holds 19,838,328 rows.
     */
    static final double BYTES_PER_ROW_BEFORE = 740e6 / 19_838_328;

    /** The rows of the one trace the bytes per row before were measured on. */
    static final long ROWS_BEFORE = 19_838_328;

    /** The synchronous phase the issue allows per checkpoint, in ms. */
    static final double SYNC_TARGET_MS = 20;

    private final Path dir;
    private final Suite.Options o;
    private final ObjectMapper json = new ObjectMapper();
    private final List<Map<String, Object>> runs;
    private final List<Map<String, Object>> latency;
    private final Map<String, Object> machine;
    private final TreeSet<Long> sizes = new TreeSet<>();
    private final List<String> variants = new ArrayList<>();

    @SuppressWarnings("unchecked")
    StateReport(Path dir, Suite.Options o) throws IOException {
        this.dir = dir;
        this.o = o;
        this.runs = Suite.readLines(json, dir.resolve("state.jsonl"));
        this.latency = Suite.readLines(json, dir.resolve("state-latency.jsonl"));
        Path m = dir.resolve("machine.json");
        this.machine = Files.exists(m) ? json.readValue(m.toFile(), Map.class) : Map.of();
        for (Map<String, Object> r : runs) {
            sizes.add(num(r, "storedRows").longValue());
        }
        for (String v : Report.NAMES.keySet()) {
            if (runs.stream().anyMatch(r -> v.equals(r.get("variant")))) {
                variants.add(v);
            }
        }
    }

    void write() throws IOException {
        boolean alone = !Files.exists(dir.resolve("throughput.jsonl"));
        String chart = alone ? "chart" : "state-chart";
        StringBuilder md = new StringBuilder();
        header(md, chart);
        mainTable(md);
        checkpointCost(md);
        latencyTable(md);
        targets(md);
        failures(md);
        method(md);
        Files.writeString(dir.resolve(alone ? "report.md" : "state-report.md"), md.toString());
        Files.writeString(dir.resolve(chart + ".svg"), chart());
        try {
            SvgToPng.render(dir.resolve(chart + ".svg"), dir.resolve(chart + ".png"));
        } catch (IOException | RuntimeException | Error e) {
            System.err.println(chart + ".png not written: " + e);
        }
        System.out.println(md);
    }

    // -------------------------------------------------------------------------------------
    // Selection and per-run figures

    /**
     * The first run of a variant at a size with periodic checkpoints (the one that restores too);
     * null if none.
     */
    private Map<String, Object> run(String v, long size) {
        for (Map<String, Object> r : runs) {
            if (v.equals(r.get("variant"))
                    && num(r, "storedRows").longValue() == size
                    && periodic(r)) {
                return r;
            }
        }
        return null;
    }

    /**
     * The native runs at a size as pairs (with periodic checkpoints, without), in the order they
     * ran ({@code --state-pairs}); only pairs whose runs both succeeded.
     */
    private List<Map<String, Object>[]> pairs(long size) {
        List<Map<String, Object>> with = new ArrayList<>();
        List<Map<String, Object>> without = new ArrayList<>();
        for (Map<String, Object> r : runs) {
            if ("NATIVE".equals(r.get("variant")) && num(r, "storedRows").longValue() == size) {
                (periodic(r) ? with : without).add(r);
            }
        }
        List<Map<String, Object>[]> pairs = new ArrayList<>();
        for (int i = 0; i < Math.min(with.size(), without.size()); i++) {
            if (ok(with.get(i)) && ok(without.get(i))) {
                @SuppressWarnings("unchecked")
                Map<String, Object>[] pair = new Map[] {with.get(i), without.get(i)};
                pairs.add(pair);
            }
        }
        return pairs;
    }

    /** How many pairs a median ratio is of, and how many were left out; empty for one pair. */
    private static String medianOf(List<Map<String, Object>[]> pairs) {
        long counted = pairs.stream().filter(StateReport::measured).count();
        long left = pairs.size() - counted;
        if (pairs.size() < 2) {
            return left == 0 ? "" : " (its run with checkpoints took none during its input)";
        }
        return " (median of "
                + counted
                + " pairs"
                + (left == 0 ? "" : "; " + left + " without a checkpoint during the input left out")
                + ")";
    }

    /** The system CPU seconds of all of a run's threads during its input; NaN if not recorded. */
    private static double kernelSeconds(Map<String, Object> r) {
        Object k = r.get("kernelCpuByThread");
        if (!(k instanceof Map<?, ?> m)) {
            return Double.NaN;
        }
        return m.values().stream().mapToDouble(v -> ((Number) v).doubleValue()).sum();
    }

    /** The throughput with periodic checkpoints over without, of a pair. */
    private static double ratio(Map<String, Object>[] pair) {
        return num(pair[0], "eventsPerSec") / num(pair[1], "eventsPerSec");
    }

    /**
     * The median of the throughput ratios of the pairs that {@linkplain #measured measured} a
     * checkpoint (the lower middle one of an even count); NaN if none did.
     */
    private static double medianRatio(List<Map<String, Object>[]> pairs) {
        double[] q =
                pairs.stream()
                        .filter(StateReport::measured)
                        .mapToDouble(StateReport::ratio)
                        .sorted()
                        .toArray();
        return q.length == 0 ? Double.NaN : q[(q.length - 1) / 2];
    }

    /**
     * Whether the pair's run with checkpoints wrote, during its input, at least a tenth of its
     * final state: a run that ends before its first checkpoint after the start (the one at the
     * start holds next to nothing) measures no checkpoint, and its ratio only the runs' noise.
     */
    private static boolean measured(Map<String, Object>[] pair) {
        return writtenDuringInput(pair[0]) >= 0.1 * num(pair[0], "checkpointStateSize");
    }

    /** The bytes of the checkpoints a run took during its input (all but the final one). */
    private static double writtenDuringInput(Map<String, Object> r) {
        double last = num(r, "checkpointId");
        return checkpoints(r).stream()
                .filter(c -> num(c, "id") < last)
                .mapToDouble(c -> num(c, "stateSize"))
                .sum();
    }

    /** Whether the runs had Flink's snapshot compression on. */
    private boolean compressed() {
        return runs.stream().anyMatch(r -> Boolean.TRUE.equals(r.get("snapshotCompression")));
    }

    /** Whether run {@code r} took checkpoints during its input (not only the final one). */
    private static boolean periodic(Map<String, Object> r) {
        return num(r, "checkpointIntervalMs").longValue() != Suite.NO_PERIODIC_CHECKPOINT_MS;
    }

    private static boolean ok(Map<String, Object> r) {
        return r != null && Boolean.TRUE.equals(r.get("ok"));
    }

    private static Double num(Map<String, Object> r, String k) {
        Object v = r == null ? null : r.get(k);
        return v instanceof Number ? ((Number) v).doubleValue() : Double.NaN;
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> checkpoints(Map<String, Object> r) {
        Object c = r == null ? null : r.get("checkpoints");
        return c instanceof List ? (List<Map<String, Object>>) c : List.of();
    }

    /** Max and median of a checkpoint field over a run's checkpoints; NaN, NaN if none. */
    private static double[] maxMedian(Map<String, Object> r, String field) {
        double[] x =
                checkpoints(r).stream()
                        .mapToDouble(c -> num(c, field))
                        .filter(d -> !Double.isNaN(d) && d >= 0)
                        .sorted()
                        .toArray();
        return x.length == 0
                ? new double[] {Double.NaN, Double.NaN}
                : new double[] {x[x.length - 1], Report.median(x)};
    }

    /** Bytes of state per stored row in memory: native state, or the live heap's growth. */
    private static double stateBytesPerRow(Map<String, Object> r) {
        double rows = num(r, "storedRows");
        double nat = num(r, "nativeStateBytes");
        if (!Double.isNaN(nat)) {
            return nat / rows;
        }
        if (String.valueOf(r.get("variant")).endsWith("_ROCKSDB")) {
            return Double.NaN; // in RocksDB's files and memtables, not measured here
        }
        return (num(r, "liveHeapAtEnd") - num(r, "liveHeapIdle")) / rows;
    }

    /**
     * The longest initialization, in the restore, of the sources' subtasks ({@code sources}) or of
     * the others (the join's, with the sink chained); NaN if not measured.
     */
    @SuppressWarnings("unchecked")
    private static double initMs(Map<String, Object> r, boolean sources) {
        Object by = r.get("restoreInitMsByTask");
        if (!(by instanceof Map)) {
            return Double.NaN;
        }
        return ((Map<String, Object>) by)
                .entrySet().stream()
                        .filter(e -> e.getKey().startsWith("Source") == sources)
                        .mapToDouble(e -> ((Number) e.getValue()).doubleValue())
                        .max()
                        .orElse(Double.NaN);
    }

    private static String millions(long rows) {
        return String.format(Locale.ROOT, "%.1fM", rows / 1e6);
    }

    private static String pair(double[] v, String fmt) {
        return Report.f(fmt, v[0]) + " / " + Report.f(fmt, v[1]);
    }

    // -------------------------------------------------------------------------------------
    // Sections

    private void header(StringBuilder md, String chart) throws IOException {
        md.append("# cdcjoin state-scale benchmark (issue 18)\n\n");
        Report.machineLines(md, machine, o.command, "");
        md.append("- **Traces** (users/domains Debezium JSON; a snapshot of rows/5 users and ")
                .append("4·rows/5 domains, then changes for another tenth):");
        for (Properties t : traces()) {
            md.append(
                    String.format(
                            Locale.ROOT,
                            " %s events, %s + %s rows at the end, %.1f GB;",
                            t.getProperty("events"),
                            t.getProperty("final.users"),
                            t.getProperty("final.domains"),
                            Double.parseDouble(t.getProperty("bytes", "0")) / 1e9));
        }
        md.append("\n\n![throughput and checkpoint pauses](").append(chart).append(".svg)\n\n");
    }

    /** The plan's traces: the copies of their trace.properties in the output folder. */
    private List<Properties> traces() throws IOException {
        List<Path> files = new ArrayList<>();
        try (var s = Files.list(dir)) {
            s.filter(p -> p.getFileName().toString().startsWith("trace-u"))
                    .sorted()
                    .forEach(files::add);
        }
        List<Properties> l = new ArrayList<>();
        for (Path f : files) {
            Properties p = new Properties();
            try (var in = Files.newInputStream(f)) {
                p.load(in);
            }
            l.add(p);
        }
        l.sort(Comparator.comparingLong(p -> Long.parseLong(p.getProperty("events"))));
        return l;
    }

    private void mainTable(StringBuilder md) {
        md.append("## Throughput, memory, checkpoints, restore\n\n")
                .append("INNER join, parallelism 1, checkpoints every 10 s (full, to the local ")
                .append("file system")
                .append(
                        compressed()
                                ? "; Flink's snapshot compression on: LZ4-compressed native sections"
                                : "")
                .append("), one run each. Sync/async = the longest synchronous and ")
                .append("asynchronous phase of any subtask in a checkpoint, max / median over ")
                .append("the run's checkpoints (the last one taken at the end of the input, ")
                .append("holding the whole state); restore = the time the join's subtask spent ")
                .append("initializing (reading its state) when the job starts again from a ")
                .append("savepoint in the native format taken at the end of the input (a full ")
                .append("checkpoint's bytes; a checkpoint is discarded with its finished job), ")
                .append("and that savepoint's size over it; beside it the longest of the other ")
                .append("subtasks (sources, nearly no state): what initializing costs anyway; ")
                .append("state read = the native join's own reading and restoring of its ")
                .append("snapshot (its restore gauges: all its subtasks' bytes over the longest ")
                .append("one's time); rescaled to p=N = the same savepoint restored again at N ")
                .append(
                        "subtasks (a rescaling restore: the key groups of the run's subtask spread ")
                .append("over N; initializing = the longest of the join's N subtasks).\n\n")
                .append(
                        "| stored rows | variant | events/s | CPU µs/event | peak RSS | state B/row ")
                .append("| checkpoints | sync ms max / median | async ms max / median ")
                .append("| size MB max / median | checkpoint B/row | restore |\n")
                .append("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (long size : sizes) {
            for (String v : variants) {
                Map<String, Object> r = run(v, size);
                if (r != null) {
                    md.append(row(r, size, v));
                }
            }
        }
        md.append("\n");
    }

    /**
     * The native join's own reading of its snapshot in the restore (its gauges): "; state read 1.2
     * s (615 MB/s)", or nothing for a variant without them.
     */
    private static String stateRead(Map<String, Object> r) {
        double bytes = num(r, "restoreStateBytes");
        double ms = num(r, "restoreStateMs");
        if (!(bytes > 0 && ms > 0)) {
            return "";
        }
        return String.format(
                Locale.ROOT, "; state read %.2f s (%.0f MB/s)", ms / 1e3, bytes / 1e6 / (ms / 1e3));
    }

    /**
     * The rescaling restore of the same savepoint (its subtasks' longest initialization, their
     * state read): " | rescaled to p=2: 1.1 s (700 MB/s); state read …", or nothing if not run.
     */
    @SuppressWarnings("unchecked")
    private static String rescaled(Map<String, Object> r, double savepoint) {
        if (!(r.get("rescaledRestore") instanceof Map<?, ?> m)) {
            return "";
        }
        Map<String, Object> rescaled = (Map<String, Object>) m;
        String to = "; rescaled to p=" + rescaled.get("parallelism") + ": ";
        if (rescaled.get("restoreError") != null) {
            return to + "failed: " + rescaled.get("restoreError");
        }
        double ms = initMs(rescaled, false);
        return to
                + String.format(
                        Locale.ROOT, "%.1f s (%.0f MB/s)", ms / 1e3, savepoint / 1e6 / (ms / 1e3))
                + stateRead(rescaled);
    }

    private String row(Map<String, Object> r, long size, String v) {
        String name = Report.NAMES.get(v);
        if (!ok(r)) {
            return "| " + millions(size) + " | " + name + " | failed (below) |||||||||||\n";
        }
        double[] size2 = maxMedian(r, "stateSize");
        double finalSize = num(r, "checkpointStateSize");
        double restoreMs = initMs(r, false);
        double savepoint = num(r, "savepointSize");
        String restore =
                r.get("restoreError") != null
                        ? "failed (below)"
                        : String.format(
                                        Locale.ROOT,
                                        "%.1f s (%.0f MB/s); sources %.1f s",
                                        restoreMs / 1e3,
                                        savepoint / 1e6 / (restoreMs / 1e3),
                                        initMs(r, true) / 1e3)
                                + stateRead(r)
                                + rescaled(r, savepoint);
        return String.format(
                Locale.ROOT,
                "| %s | %s | %s | %s | %s | %s | %d | %s | %s | %s | %s | %s |\n",
                millions(size),
                name,
                Report.k(num(r, "eventsPerSec")),
                Report.f("%.2f", num(r, "cpuNsPerEvent") / 1e3),
                Report.mb(num(r, "vmHwm")),
                Report.f("%.0f", stateBytesPerRow(r)),
                checkpoints(r).size(),
                pair(maxMedian(r, "syncMs"), "%.0f"),
                pair(maxMedian(r, "asyncMs"), "%.0f"),
                Report.f("%.0f", size2[0] / 1e6) + " / " + Report.f("%.0f", size2[1] / 1e6),
                Report.f("%.1f", finalSize / size),
                restore);
    }

    private void checkpointCost(StringBuilder md) {
        md.append("## What checkpoints cost the native join\n\n")
                .append("The same trace run twice: checkpoints every 10 s, and none but the one ")
                .append("at the end of the input (not inside the measured time); with ")
                .append("`--state-pairs` N, N such pairs, alternated (the ratio swings between ")
                .append("pairs on a shared machine; the target reads the median pair). Written = ")
                .append("the bytes of the checkpoints taken during the input (each one full); CPU ")
                .append("per event is the steadier comparison on a shared machine, peak RSS shows ")
                .append("what a snapshot holds while it is written (the frozen versions of the ")
                .append("keys the join changed before their key group was written out); other ")
                .append("processes = the machine's busy cores not ours (with steal time) during ")
                .append("each run, what slows a run on a shared machine; kernel CPU and page ")
                .append("faults = the process's system time and minor page faults during the ")
                .append("input: on a virtual machine whose host backs its memory lazily, a run ")
                .append("that gets pages new to the host pays several times more per fault, ")
                .append("whatever it runs. The pairs run with checkpoints first, then without, ")
                .append("then the other way round, alternately. A pair whose run with ")
                .append("checkpoints ended before it wrote a tenth of the state (its input ")
                .append("shorter than an interval) measured no checkpoint: its ratio is shown ")
                .append("but not counted.\n\n")
                .append(
                        "| stored rows | pair | events/s, every 10 s | none | ratio | CPU µs/event, ")
                .append("every 10 s | none | checkpoints, written | peak RSS, every 10 s | none ")
                .append("| other processes, cores | kernel CPU s | page faults, thousands |\n")
                .append("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (long size : sizes) {
            List<Map<String, Object>[]> pairs = pairs(size);
            for (int i = 0; i < pairs.size(); i++) {
                Map<String, Object> with = pairs.get(i)[0];
                Map<String, Object> without = pairs.get(i)[1];
                double last = num(with, "checkpointId");
                long during = checkpoints(with).stream().filter(c -> num(c, "id") < last).count();
                boolean measured = measured(pairs.get(i));
                md.append(
                        String.format(
                                Locale.ROOT,
                                "| %s | %d | %s | %s | %s | %s | %s | %d, %s | %s | %s | %s / %s"
                                        + " | %s / %s | %s / %s |\n",
                                millions(size),
                                i + 1,
                                Report.k(num(with, "eventsPerSec")),
                                Report.k(num(without, "eventsPerSec")),
                                Report.f("%.3f", ratio(pairs.get(i)))
                                        + (measured ? "" : " (no checkpoint: not counted)"),
                                Report.f("%.2f", num(with, "cpuNsPerEvent") / 1e3),
                                Report.f("%.2f", num(without, "cpuNsPerEvent") / 1e3),
                                during,
                                Report.mb(writtenDuringInput(with)),
                                Report.mb(num(with, "vmHwm")),
                                Report.mb(num(without, "vmHwm")),
                                Report.f("%.2f", num(with, "backgroundCores")),
                                Report.f("%.2f", num(without, "backgroundCores")),
                                Report.f("%.1f", kernelSeconds(with)),
                                Report.f("%.1f", kernelSeconds(without)),
                                Report.f("%.0f", num(with, "minorFaults") / 1e3),
                                Report.f("%.0f", num(without, "minorFaults") / 1e3)));
            }
            if (pairs.size() > 1) {
                md.append(
                        String.format(
                                Locale.ROOT,
                                "| %s | median | | | **%.3f** | | | | | | | | |\n",
                                millions(size),
                                medianRatio(pairs)));
            }
        }
        md.append("\n");
    }

    private void latencyTable(StringBuilder md) {
        if (latency.isEmpty()) {
            return;
        }
        md.append("## Latency at a fixed input rate, checkpoints every 10 s\n\n")
                .append("The whole trace read at a fixed rate (the state grows to its size ")
                .append("meanwhile); probe rows updated every 2 ms, latency = sink time − ")
                .append("scheduled emission, after a ")
                .append(Report.f("%.0f", o.latencyWarmup))
                .append(" s warm-up. A checkpoint's pause shows as p99.9 / max.\n\n")
                .append("| stored rows | variant | rate | achieved | p50 ms | p99 ms | p99.9 ms ")
                .append("| max ms | checkpoints | sync ms max | async ms max |\n")
                .append("|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Map<String, Object> r : latency) {
            if (!ok(r)) {
                md.append("| ")
                        .append(millions(num(r, "storedRows").longValue()))
                        .append(" | ")
                        .append(Report.NAMES.get(String.valueOf(r.get("variant"))))
                        .append(
                                r.get("error") == null
                                        ? " | no probe after the warm-up |||||||||\n"
                                        : " | failed (below) |||||||||\n");
                continue;
            }
            md.append(
                    String.format(
                            Locale.ROOT,
                            "| %s | %s | %s | %s | %s | %s | %s | %s | %d | %s | %s |\n",
                            millions(num(r, "storedRows").longValue()),
                            Report.NAMES.get(String.valueOf(r.get("variant"))),
                            Report.k(num(r, "targetRate")),
                            Report.k(num(r, "achievedRate")),
                            Report.f("%.1f", num(r, "latencyP50Ms")),
                            Report.f("%.1f", num(r, "latencyP99Ms")),
                            Report.f("%.1f", num(r, "latencyP999Ms")),
                            Report.f("%.1f", num(r, "latencyMaxMs")),
                            checkpoints(r).size(),
                            Report.f("%.0f", maxMedian(r, "syncMs")[0]),
                            Report.f("%.0f", maxMedian(r, "asyncMs")[0])));
        }
        md.append("\n");
    }

    private void targets(StringBuilder md) {
        md.append("## Targets (native)\n\n");
        StringBuilder sync = new StringBuilder();
        StringBuilder bytes = new StringBuilder();
        StringBuilder ratio = new StringBuilder();
        for (long size : sizes) {
            Map<String, Object> r = run("NATIVE", size);
            if (!ok(r)) {
                continue;
            }
            double s = maxMedian(r, "syncMs")[0];
            double b = num(r, "checkpointStateSize") / size;
            sync.append(
                    String.format(
                            Locale.ROOT,
                            " %s: %.0f ms %s;",
                            millions(size),
                            s,
                            mark(s <= SYNC_TARGET_MS)));
            bytes.append(
                    String.format(
                            Locale.ROOT,
                            " %s: %.1f B %s;",
                            millions(size),
                            b,
                            size == ROWS_BEFORE
                                    ? mark(b <= BYTES_PER_ROW_BEFORE)
                                    : "(no earlier figure at this size)"));
            List<Map<String, Object>[]> pairs = pairs(size);
            if (!pairs.isEmpty()) {
                double q = medianRatio(pairs);
                ratio.append(
                        String.format(
                                Locale.ROOT,
                                " %s: %.3f%s %s;",
                                millions(size),
                                q,
                                medianOf(pairs),
                                mark(q >= 0.9)));
            }
        }
        md.append("- Synchronous phase ≤ ")
                .append(Report.f("%.0f", SYNC_TARGET_MS))
                .append(" ms per checkpoint, whatever the size (longest of any checkpoint):")
                .append(sync)
                .append("\n- Throughput with checkpoints every 10 s ≥ 0.9 × without:")
                .append(ratio)
                .append("\n- Checkpoint bytes per stored row ≤ ")
                .append(Report.f("%.1f", BYTES_PER_ROW_BEFORE))
                .append(" (before the asynchronous snapshot: 740 MB for the 20M trace's ")
                .append("19.84M rows, the only size measured before):")
                .append(bytes)
                .append("\n\n");
    }

    private static String mark(boolean met) {
        return met ? "(met)" : "(**missed**)";
    }

    private void failures(StringBuilder md) {
        List<Map<String, Object>> all = new ArrayList<>(runs);
        all.addAll(latency);
        StringBuilder f = new StringBuilder();
        for (Map<String, Object> r : all) {
            for (String k : List.of("error", "restoreError")) {
                if (r.get(k) != null) {
                    f.append("- ")
                            .append(millions(num(r, "storedRows").longValue()))
                            .append(" ")
                            .append(Report.NAMES.get(String.valueOf(r.get("variant"))))
                            .append(" (")
                            .append(k)
                            .append("): `")
                            .append(String.valueOf(r.get(k)).lines().findFirst().orElse(""))
                            .append("`\n");
                }
            }
        }
        if (f.length() > 0) {
            md.append("## Failed runs\n\n").append(f).append("\n");
        }
    }

    private void method(StringBuilder md) throws IOException {
        md.append("## How it was run\n\n")
                .append("- One fresh JVM per job; a warm-up run over the trace's first million ")
                .append("messages (all of a shorter trace), then the measured run. Managed memory ")
                .append(o.managedBytesPerRow)
                .append(" B per stored row + 256 MB (per run: `managedMemory` in `state.jsonl`); ")
                .append("-Xmx ")
                .append(o.heap)
                .append(", heap backends ")
                .append(o.heapBytesPerRow)
                .append(" B per stored row + 2 GB. No restarts: a failed job fails its run with ")
                .append("its exception.\n")
                .append("- Events/s, CPU and peak RSS as in the comparison benchmark ")
                .append("(bench/README.md). State B/row: the native state's bytes, or the live ")
                .append("heap's growth after a full GC (heap backends), over the stored rows; ")
                .append("RocksDB's is not measured. Checkpoint B/row: the last checkpoint's size ")
                .append("over the stored rows.\n")
                .append("- Per-checkpoint figures from Flink's checkpoint statistics ")
                .append("(`CheckpointStatsSnapshot`, what the REST API's ")
                .append("`/jobs/:id/checkpoints` serves): raw in `state.jsonl` (`checkpoints`).\n");
        Report.appendPhasesAndNotes(md, dir, json);
    }

    // -------------------------------------------------------------------------------------
    // The chart: events/s and the longest synchronous pause, by size and variant

    private String chart() {
        StringBuilder s = new StringBuilder();
        s.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"980\" height=\"360\" ")
                .append("font-family=\"sans-serif\" font-size=\"12\">\n")
                .append("<rect x=\"0\" y=\"0\" width=\"980\" height=\"360\" fill=\"#fff\"/>\n");
        bars(s, 50, 40, 400, 250, "events/s (k)", r -> num(r, "eventsPerSec") / 1e3, false);
        bars(
                s,
                540,
                40,
                400,
                250,
                "longest sync pause, ms (log)",
                r -> maxMedian(r, "syncMs")[0],
                true);
        int x = 50;
        for (String v : variants) {
            s.append(
                    String.format(
                            Locale.ROOT,
                            "<rect x=\"%d\" y=\"330\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                                    + "<text x=\"%d\" y=\"341\">%s</text>\n",
                            x,
                            Report.COLORS.get(v),
                            x + 16,
                            Report.NAMES.get(v)));
            x += 180;
        }
        return s.append("</svg>\n").toString();
    }

    private void bars(
            StringBuilder s,
            int x0,
            int y0,
            int w,
            int h,
            String title,
            ToDoubleFunction<Map<String, Object>> metric,
            boolean log) {
        double max = 0;
        for (Map<String, Object> r : runs) {
            if (ok(r) && num(r, "checkpointIntervalMs") != Suite.NO_PERIODIC_CHECKPOINT_MS) {
                max = Math.max(max, metric.applyAsDouble(r));
            }
        }
        double top = log ? Math.pow(10, Math.ceil(Math.log10(Math.max(10, max)))) : max * 1.15;
        s.append(
                String.format(
                        Locale.ROOT,
                        "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s</text>\n",
                        x0,
                        y0 - 10,
                        title));
        s.append(
                String.format(
                        Locale.ROOT,
                        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n",
                        x0,
                        y0 + h,
                        x0 + w,
                        y0 + h));
        double gw = (double) w / Math.max(1, sizes.size());
        double bw = (gw - 16) / Math.max(1, variants.size());
        int g = 0;
        for (long size : sizes) {
            for (int i = 0; i < variants.size(); i++) {
                Map<String, Object> r = run(variants.get(i), size);
                double m = ok(r) ? metric.applyAsDouble(r) : Double.NaN;
                if (Double.isNaN(m) || m < 0) {
                    continue;
                }
                double frac = log ? Math.log10(Math.max(1, m)) / Math.log10(top) : m / top;
                double bh = Math.max(1, h * frac);
                double bx = x0 + g * gw + 8 + i * bw;
                s.append(
                        String.format(
                                Locale.ROOT,
                                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>"
                                        + "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" text-anchor=\"middle\">%.0f</text>\n",
                                bx,
                                y0 + h - bh,
                                bw - 2,
                                bh,
                                Report.COLORS.get(variants.get(i)),
                                bx + bw / 2 - 1,
                                y0 + h - bh - 3,
                                m));
            }
            s.append(
                    String.format(
                            Locale.ROOT,
                            "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s rows</text>\n",
                            x0 + g * gw + gw / 2,
                            y0 + h + 16,
                            millions(size)));
            g++;
        }
    }
}
