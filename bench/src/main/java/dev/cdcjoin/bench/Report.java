package dev.cdcjoin.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.function.Predicate;

/** Builds {@code report.md} and {@code chart.svg} from a suite's output folder. */
final class Report {

    static final Map<String, String> NAMES = new LinkedHashMap<>();

    static {
        NAMES.put("NATIVE", "native (CdcJoin)");
        NAMES.put("NATIVE_5MS", "native, 5 ms flush");
        NAMES.put("NATIVE_ROWDATA", "native, RowData output");
        NAMES.put("NATIVE_KAFKA_MESSAGES", "native, KafkaMessage input");
        NAMES.put("NATIVE_MULTIWAY", "native multi-way join (CdcMultiJoin)");
        NAMES.put("JAVA_HEAP", "pure Java, heap");
        NAMES.put("JAVA_ROCKSDB", "pure Java, RocksDB");
        NAMES.put("SQL_HEAP", "Flink SQL, heap");
        NAMES.put("SQL_ROCKSDB", "Flink SQL, RocksDB");
        NAMES.put("SQL_ROWDATA_HEAP", "Flink SQL, heap, RowData to a sink table");
        NAMES.put("SQL_MULTIJOIN_HEAP", "Flink SQL multi-way join, heap");
    }

    static final Map<String, String> COLORS =
            Map.ofEntries(
                    Map.entry("NATIVE", "#d62728"),
                    Map.entry("JAVA_HEAP", "#1f77b4"),
                    Map.entry("JAVA_ROCKSDB", "#aec7e8"),
                    Map.entry("SQL_HEAP", "#2ca02c"),
                    Map.entry("SQL_ROCKSDB", "#98df8a"),
                    Map.entry("NATIVE_5MS", "#ff9896"),
                    Map.entry("SQL_MULTIJOIN_HEAP", "#9467bd"),
                    Map.entry("NATIVE_MULTIWAY", "#ff7f0e"),
                    Map.entry("NATIVE_ROWDATA", "#8c564b"),
                    Map.entry("SQL_ROWDATA_HEAP", "#bcbd22"),
                    Map.entry("NATIVE_KAFKA_MESSAGES", "#e377c2"));

    private final Path dir;
    private final Suite.Options o;
    private final ObjectMapper json = new ObjectMapper();
    private final List<Map<String, Object>> tp;
    private final List<Map<String, Object>> lat;
    private final List<Map<String, Object>> xmx;
    private final Map<String, Object> machine;
    private final Properties trace;
    private final List<String> variants = new ArrayList<>();
    private final List<int[]> configsP = new ArrayList<>();
    private final List<String[]> configs = new ArrayList<>();

    @SuppressWarnings("unchecked")
    Report(Path dir, Suite.Options o) throws IOException {
        this.dir = dir;
        this.o = o;
        this.tp = Suite.readLines(json, dir.resolve("throughput.jsonl"));
        this.lat = Suite.readLines(json, dir.resolve("latency.jsonl"));
        this.xmx = Suite.readLines(json, dir.resolve("xmx.jsonl"));
        Path m = dir.resolve("machine.json");
        this.machine = Files.exists(m) ? json.readValue(m.toFile(), Map.class) : Map.of();
        this.trace = new Properties();
        if (Files.exists(dir.resolve("trace.properties"))) {
            try (var in = Files.newInputStream(dir.resolve("trace.properties"))) {
                trace.load(in);
            }
        }
        for (String v : NAMES.keySet()) {
            if (tp.stream().anyMatch(r -> v.equals(r.get("variant")))) {
                variants.add(v);
            }
        }
        for (int p : new int[] {1, 2, 4}) {
            for (String j : new String[] {"INNER", "LEFT"}) {
                if (tp.stream()
                        .anyMatch(
                                r ->
                                        Integer.valueOf(p).equals(r.get("parallelism"))
                                                && j.equals(r.get("join")))) {
                    configs.add(new String[] {"" + p, j});
                }
            }
        }
    }

    static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private List<Map<String, Object>> runs(List<Map<String, Object>> rows, String v, String[] c) {
        List<Map<String, Object>> l = new ArrayList<>();
        for (Map<String, Object> r : rows) {
            if (v.equals(r.get("variant"))
                    && c[0].equals("" + r.get("parallelism"))
                    && c[1].equals(r.get("join"))) {
                l.add(r);
            }
        }
        return l;
    }

    private static Predicate<Map<String, Object>> ok() {
        return r -> Boolean.TRUE.equals(r.get("ok"));
    }

    /** Median of a numeric field over the successful runs; NaN if none. */
    private double med(String v, String[] c, String field) {
        double[] x =
                runs(tp, v, c).stream()
                        .filter(ok())
                        .filter(r -> r.get(field) != null)
                        .mapToDouble(r -> ((Number) r.get(field)).doubleValue())
                        .sorted()
                        .toArray();
        return x.length == 0 ? Double.NaN : median(x);
    }

    private double[] range(String v, String[] c, String field) {
        double[] x =
                runs(tp, v, c).stream()
                        .filter(ok())
                        .filter(r -> r.get(field) != null)
                        .mapToDouble(r -> ((Number) r.get(field)).doubleValue())
                        .sorted()
                        .toArray();
        return x.length == 0
                ? new double[] {Double.NaN, Double.NaN}
                : new double[] {x[0], x[x.length - 1]};
    }

    private Map<String, Object> latency(String v, String[] c) {
        List<Map<String, Object>> l = runs(lat, v, c);
        return l.isEmpty() ? null : l.get(l.size() - 1);
    }

    /** Live heap at the end of input after a full GC, plus native state bytes. */
    private double memoryTotal(String v, String[] c) {
        double heap = med(v, c, "liveHeapAtEnd");
        double nat = med(v, c, "nativeStateBytes");
        return heap + (Double.isNaN(nat) ? 0 : nat);
    }

    /** The state's own memory: live heap at end minus the idle heap after the job, plus native. */
    private double memoryState(String v, String[] c) {
        double heap = med(v, c, "liveHeapAtEnd") - med(v, c, "liveHeapIdle");
        double nat = med(v, c, "nativeStateBytes");
        return heap + (Double.isNaN(nat) ? 0 : nat);
    }

    static String mb(double bytes) {
        return Double.isNaN(bytes) ? "–" : String.format(Locale.ROOT, "%.0f MB", bytes / 1e6);
    }

    static String k(double perSec) {
        return Double.isNaN(perSec) ? "–" : String.format(Locale.ROOT, "%.0fk", perSec / 1e3);
    }

    static String x(double ratio) {
        return Double.isNaN(ratio) ? "–" : String.format(Locale.ROOT, "%.2f×", ratio);
    }

    static String f(String fmt, double v) {
        return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, fmt, v);
    }

    private String checks(String v, String[] c) {
        List<Map<String, Object>> l = runs(tp, v, c);
        long good = l.stream().filter(r -> Boolean.TRUE.equals(r.get("checksumOk"))).count();
        return good + "/" + l.size();
    }

    private Integer minXmx(String v) {
        Integer best = null;
        for (Map<String, Object> r : xmx) {
            if (v.equals(r.get("variant")) && Boolean.TRUE.equals(r.get("ok"))) {
                int mb = ((Number) r.get("xmxMb")).intValue();
                best = best == null ? mb : Math.min(best, mb);
            }
        }
        return best;
    }

    private Integer maxFailedXmx(String v) {
        Integer worst = null;
        for (Map<String, Object> r : xmx) {
            if (v.equals(r.get("variant")) && !Boolean.TRUE.equals(r.get("ok"))) {
                int mb = ((Number) r.get("xmxMb")).intValue();
                worst = worst == null ? mb : Math.max(worst, mb);
            }
        }
        return worst;
    }

    private String xmxCell(String v) {
        Integer okMb = minXmx(v);
        Integer bad = maxFailedXmx(v);
        if (okMb == null && bad == null) {
            return "–";
        }
        if (okMb == null) {
            return "> " + bad + " MB";
        }
        if (bad == null && !o.xmxSizes.isEmpty() && okMb.equals(o.xmxSizes.get(0))) {
            return "≤ " + okMb + " MB (smallest tried)";
        }
        return okMb + " MB" + (bad != null ? " (" + bad + " MB fails)" : "");
    }

    /**
     * How skewed the trace came out (the generator's measure, see {@link Workload}): which picks
     * the skew applied to, the rows of the hottest join key and how many keys held more than
     * {@value Workload#BIG_KEY_ROWS} rows, at the peak and at the end; empty for a trace generated
     * before these were recorded.
     */
    private String skewFigures() {
        String big = "keys.over" + Workload.BIG_KEY_ROWS;
        if (trace.getProperty("hottest.peak.rows") == null) {
            return "";
        }
        return String.format(
                Locale.ROOT,
                " (%s; hottest key: %s domain rows at its peak, %s at the end;"
                        + " keys holding > %,d rows: %s at some point, %s at the end)",
                "owners".equals(trace.getProperty("skew.picks"))
                        ? "on the user a domain is inserted under or moved to only"
                        : "on every user pick",
                thousands(trace.getProperty("hottest.peak.rows")),
                thousands(trace.getProperty("hottest.final.rows")),
                Workload.BIG_KEY_ROWS,
                trace.getProperty(big + ".ever"),
                trace.getProperty(big + ".final"));
    }

    /** Whether the run is the three-table mart's ({@code --config mart3}). */
    private boolean mart() {
        return Workload.Shape.MART3.name().equals(trace.getProperty("shape"));
    }

    /** The trace line's tables and snapshot. */
    private String tables() {
        if (!mart()) {
            return "users/domains Debezium JSON, "
                    + trace.getProperty("users")
                    + " users + "
                    + trace.getProperty("domains")
                    + " domains snapshot, ";
        }
        return String.format(
                Locale.ROOT,
                "the three-table mart on one key (`MartWorkload`): users/profiles/settings Debezium"
                        + " JSON, a snapshot of %s users (a profile for %.0f%%, each of %d setting"
                        + " keys at %.0f%%), %s/%s/%s rows at the end, ",
                trace.getProperty("users"),
                MartWorkload.PROFILE_SHARE * 100,
                MartWorkload.SETTING_KEYS_COUNT,
                MartWorkload.SETTING_SHARE * 100,
                trace.getProperty("final.users"),
                trace.getProperty("final.profiles"),
                trace.getProperty("final.settings"));
    }

    private static String thousands(String n) {
        return String.format(Locale.ROOT, "%,d", Long.parseLong(n));
    }

    /**
     * The report lines of the run's date, machine (its {@code machine.json}) and command, which
     * every report of the suite opens with.
     *
     * @param md the report
     * @param machine the machine's description
     * @param command the command, unless the machine's description has it
     * @param cluster what the MiniCluster's one TaskManager has, such as its slots
     */
    static void machineLines(
            StringBuilder md, Map<String, Object> machine, String command, String cluster) {
        md.append("- **Date:** ").append(machine.getOrDefault("date", "?")).append("\n");
        md.append("- **Machine:** ")
                .append(machine.getOrDefault("cpu", "?"))
                .append(", ")
                .append(machine.getOrDefault("cores", "?"))
                .append(" cores (shared with other work), ")
                .append(machine.getOrDefault("memTotal", "?"))
                .append(" RAM, ")
                .append(machine.getOrDefault("os", "?"))
                .append(", ")
                .append(machine.getOrDefault("java", "?"))
                .append(", Flink ")
                .append(machine.getOrDefault("flink", "2.3.0"))
                .append(" MiniCluster (1 TaskManager")
                .append(cluster.isEmpty() ? "" : ", " + cluster)
                .append(")\n");
        md.append("- **Command:** `")
                .append(machine.getOrDefault("command", command))
                .append("`\n");
    }

    void write() throws IOException {
        StringBuilder md = new StringBuilder();
        md.append("# cdcjoin benchmark: native vs pure Java vs Flink SQL")
                .append(mart() ? ", the three-table mart" : "")
                .append(kafka() ? ", through a Kafka broker" : "")
                .append("\n\n");
        machineLines(md, machine, o.command, "slots = parallelism");
        md.append("- **Trace:** ")
                .append(tables())
                .append(trace.getProperty("events"))
                .append(" change events in all (")
                .append(
                        String.format(
                                Locale.ROOT,
                                "%.0f",
                                Double.parseDouble(trace.getProperty("bytes", "0")) / 1e6))
                .append(" MB of JSON, ")
                .append(
                        String.format(
                                Locale.ROOT,
                                "%.0f",
                                Double.parseDouble(trace.getProperty("bytes", "0"))
                                        / Math.max(
                                                1,
                                                Double.parseDouble(
                                                        trace.getProperty("messages", "1")))))
                .append(" B/message), seed ")
                .append(trace.getProperty("seed"))
                .append(", key skew ")
                .append(trace.getProperty("skew"))
                .append(skewFigures())
                .append(", mix `")
                .append(trace.getProperty("mix"))
                .append("`, ")
                .append(trace.getProperty("partitions"))
                .append(" partitions per topic\n");
        md.append("- **Source:** ").append(sourceLine()).append("\n");
        md.append("- **JVM:** ")
                .append(machine.getOrDefault("jvmFlags", ""))
                .append(", one JVM per measured job\n");
        double[] bg =
                tp.stream()
                        .filter(r -> r.get("backgroundCores") != null)
                        .mapToDouble(r -> ((Number) r.get("backgroundCores")).doubleValue())
                        .sorted()
                        .toArray();
        if (bg.length > 0) {
            md.append(
                    String.format(
                            Locale.ROOT,
                            "- **Other processes' CPU** during the measured throughput runs (machine busy time from /proc/stat "
                                    + "minus the benchmark JVM's, in cores of 2): min %.2f, median %.2f, max %.2f\n",
                            Math.max(0, bg[0]),
                            Math.max(0, median(bg)),
                            bg[bg.length - 1]));
        }
        md.append("\n![throughput and memory](chart.svg)\n\n");

        headline(md);
        if (mart()) {
            md.append(
                    "## Targets\n\nNone here: the targets of the comparison benchmark are the"
                            + " two-table join's. The mart's ratios are in the table above.\n\n");
        } else {
            targets(md);
        }
        details(md);
        latencySection(md);
        xmxSection(md);
        jmhSection(md);
        method(md);
        Files.writeString(dir.resolve("report.md"), md.toString());
        Files.writeString(dir.resolve("chart.svg"), chart());
        try {
            SvgToPng.render(dir.resolve("chart.svg"), dir.resolve("chart.png"));
        } catch (IOException | RuntimeException | Error e) {
            System.err.println("chart.png not written: " + e);
        }
        System.out.println(md);
    }

    /** Whether the runs read the trace through a Kafka broker ({@code --source kafka}). */
    private boolean kafka() {
        return tp.stream().anyMatch(r -> "kafka".equals(r.get("source")));
    }

    private String sourceLine() {
        return kafka()
                ? "a Kafka broker on loopback (the e2e suite's), the trace's two topics filled with it beforehand;"
                        + " Flink's KafkaSource (value bytes; KafkaMessages for native, KafkaMessage"
                        + " input) for native and pure Java, Flink SQL's Kafka"
                        + " connector ('format' = 'debezium-json') for SQL; earliest offsets, bounded at the end"
                        + " offsets. The broker's CPU counts as other processes' CPU"
                : "the trace files, read by TraceSource (the SQL tables decode in the source, as the Kafka"
                        + " connector does)";
    }

    private void headline(StringBuilder md) {
        md.append("## Summary")
                .append(kafka() ? " (source: Kafka broker)" : " (source: trace files)")
                .append("\n\n");
        md.append("Input events/s, median of ")
                .append(o.rounds)
                .append(" runs (× = native's throughput ÷ this variant's). ");
        md.append(
                "Memory = live heap after a full GC at the end of the input, plus native state bytes. ");
        md.append("Latency p99 at a fixed input rate of ")
                .append((int) (o.latencyLoad * 100))
                .append("% of the pure-Java heap variant's throughput.\n\n");
        md.append("| variant |");
        for (String[] c : configs) {
            md.append(" ").append(c[1]).append(" p=").append(c[0]).append(" |");
        }
        String[] ref =
                configs.stream()
                        .filter(c -> c[0].equals("1") && c[1].equals("LEFT"))
                        .findFirst()
                        .orElse(configs.isEmpty() ? new String[] {"1", "LEFT"} : configs.get(0));
        String refName = ref[1] + " p=" + ref[0];
        md.append(" CPU µs/event (")
                .append(refName)
                .append(") | p99 ms (")
                .append(refName)
                .append(") | memory (")
                .append(refName)
                .append(") | min -Xmx (")
                .append(refName)
                .append(") |\n|---|");
        for (int i = 0; i < configs.size() + 4; i++) {
            md.append("---|");
        }
        md.append("\n");
        List<String> rowsV = new ArrayList<>(variants);
        if (lat.stream().anyMatch(r -> "NATIVE_5MS".equals(r.get("variant")))
                && !rowsV.contains("NATIVE_5MS")) {
            rowsV.add(1, "NATIVE_5MS");
        }
        for (String v : rowsV) {
            md.append("| ").append(NAMES.get(v)).append(" |");
            for (String[] c : configs) {
                double t = med(v, c, "eventsPerSec");
                double n = med("NATIVE", c, "eventsPerSec");
                md.append(" ")
                        .append(
                                v.equals("NATIVE_5MS")
                                        ? "(latency only)"
                                        : k(t)
                                                + "/s"
                                                + (v.equals("NATIVE") ? "" : " (" + x(n / t) + ")"))
                        .append(" |");
            }
            md.append(" ").append(f("%.2f", med(v, ref, "cpuNsPerEvent") / 1e3)).append(" |");
            Map<String, Object> l = latency(v, ref);
            md.append(" ").append(latencyCell(l, false)).append(" |");
            double mem = memoryTotal(v, ref);
            double memJava = memoryTotal("JAVA_HEAP", ref);
            md.append(" ")
                    .append(
                            v.equals("NATIVE_5MS")
                                    ? ""
                                    : mb(mem)
                                            + (v.equals("JAVA_HEAP") || Double.isNaN(mem)
                                                    ? ""
                                                    : " (" + x(mem / memJava) + " Java heap)")
                                            + (v.contains("ROCKSDB") ? " + RocksDB native" : ""))
                    .append(" |");
            md.append(" ").append(v.equals("NATIVE_5MS") ? "" : xmxCell(v)).append(" |\n");
        }
        md.append("\n");
    }

    private static String latencyCell(Map<String, Object> l, boolean both) {
        if (l == null) {
            return "–";
        }
        if (!Boolean.TRUE.equals(l.get("ok")) || l.get("latencyP99Ms") == null) {
            return "failed";
        }
        double target = ((Number) l.get("targetRate")).doubleValue();
        double achieved = ((Number) l.get("achievedRate")).doubleValue();
        String sat =
                achieved < 0.95 * target
                        ? String.format(
                                Locale.ROOT,
                                " (saturated: %.0fk/s of %.0fk/s)",
                                achieved / 1e3,
                                target / 1e3)
                        : "";
        double p50 = ((Number) l.get("latencyP50Ms")).doubleValue();
        double p99 = ((Number) l.get("latencyP99Ms")).doubleValue();
        return both
                ? String.format(Locale.ROOT, "%.1f / %.1f", p50, p99) + sat
                : String.format(Locale.ROOT, "%.1f", p99) + sat;
    }

    private void targets(StringBuilder md) {
        md.append(
                "## Targets\n\nRatios are native events/s ÷ the variant's (medians); in brackets the same "
                        + "comparison by process CPU time per event (the variant's ÷ native's), which depends less on what else "
                        + "the shared machine was doing. A ratio target is met (✔) when both are.\n\n| target | ");
        for (String[] c : configs) {
            md.append(c[1]).append(" p=").append(c[0]).append(" | ");
        }
        md.append("\n|---|");
        for (int i = 0; i < configs.size(); i++) {
            md.append("---|");
        }
        md.append("\n");
        throughputTarget(md, "native ÷ pure Java heap ≥ 6×", "JAVA_HEAP", 6);
        throughputTarget(md, "native ÷ Flink SQL heap ≥ 8×", "SQL_HEAP", 8);
        throughputTarget(md, "native ÷ pure Java RocksDB ≥ 15×", "JAVA_ROCKSDB", 15);
        throughputTarget(md, "native ÷ Flink SQL RocksDB ≥ 15×", "SQL_ROCKSDB", 15);
        md.append("| native CPU ≤ 1.0 µs per input event (whole process) |");
        for (String[] c : configs) {
            double us = med("NATIVE", c, "cpuNsPerEvent") / 1e3;
            md.append(
                    Double.isNaN(us)
                            ? " – |"
                            : String.format(Locale.ROOT, " %.2f µs%s |", us, mark(us <= 1.0, us)));
        }
        md.append("\n| memory native ÷ pure Java heap ≤ 0.39× (live heap + native state) |");
        for (String[] c : configs) {
            double r = memoryTotal("NATIVE", c) / memoryTotal("JAVA_HEAP", c);
            md.append(" ").append(x(r)).append(mark(r <= 0.39, r)).append(" |");
        }
        md.append("\n| … the state alone (live heap at end − idle heap after the job, + native) |");
        for (String[] c : configs) {
            double r = memoryState("NATIVE", c) / memoryState("JAVA_HEAP", c);
            md.append(" ").append(x(r)).append(" |");
        }
        md.append("\n");
        for (String v : new String[] {"NATIVE", "NATIVE_5MS"}) {
            md.append("| p99 latency ").append(NAMES.get(v)).append(" ≤ pure Java heap's |");
            for (String[] c : configs) {
                Map<String, Object> a = latency(v, c);
                Map<String, Object> b = latency("JAVA_HEAP", c);
                if (a == null
                        || b == null
                        || a.get("latencyP99Ms") == null
                        || b.get("latencyP99Ms") == null) {
                    md.append(" – |");
                    continue;
                }
                double pa = ((Number) a.get("latencyP99Ms")).doubleValue();
                double pb = ((Number) b.get("latencyP99Ms")).doubleValue();
                md.append(
                        String.format(
                                Locale.ROOT, " %.1f vs %.1f ms%s |", pa, pb, mark(pa <= pb, pa)));
            }
            md.append("\n");
        }
        Map<String, Double> jni = jmhScores();
        Double trivial = jni.get("JniCrossingBench.joinTrivialBatch:1024");
        Double empty = jni.get("JniCrossingBench.joinEmptyCall:1024");
        if (trivial != null && empty != null) {
            md.append(
                    String.format(
                            Locale.ROOT,
                            "| JNI crossing ≤ 15 ns/record at batch 1024 | fixed cost per call ÷ 1024: **%.2f ns**%s; "
                                    + "whole trivial batch (Java framing + crossing + one hash probe per record): "
                                    + "%.1f ns/record%s |%n",
                            empty / 1024,
                            mark(empty / 1024 <= 15, 0),
                            trivial / 1024,
                            mark(trivial / 1024 <= 15, 0)));
        }
        md.append("\n");
    }

    private static String mark(boolean ok, double v) {
        return Double.isNaN(v) ? "" : ok ? " ✔" : " ✘";
    }

    private void throughputTarget(StringBuilder md, String label, String v, double target) {
        md.append("| ").append(label).append(" |");
        for (String[] c : configs) {
            double r = med("NATIVE", c, "eventsPerSec") / med(v, c, "eventsPerSec");
            double cpu = med(v, c, "cpuNsPerEvent") / med("NATIVE", c, "cpuNsPerEvent");
            md.append(" ")
                    .append(x(r))
                    .append(mark(r >= target && cpu >= target, r))
                    .append(" (CPU/event: ")
                    .append(x(cpu))
                    .append(") |");
        }
        md.append("\n");
    }

    /** The unmeasured warm-up runs and what each reads: the whole trace, or its first N%. */
    private String warmupTrace() {
        return (o.warmupRuns == 1
                        ? "one unmeasured warm-up run"
                        : o.warmupRuns + " unmeasured warm-up runs")
                + " over "
                + (o.warmupFraction >= 1
                        ? "the whole trace"
                        : "the first " + (int) (o.warmupFraction * 100) + "% of the trace");
    }

    /**
     * The busiest thread's median CPU in cores and its task (the thread name up to its subtask
     * index).
     */
    private String busiest(String v, String[] c) {
        double cores = med(v, c, "busiestThreadCores");
        String name =
                runs(tp, v, c).stream()
                        .map(r -> (String) r.get("busiestThread"))
                        .filter(n -> n != null)
                        .findFirst()
                        .orElse("");
        int cut = name.indexOf(" (");
        return f("%.2f", cores)
                + (name.isEmpty() ? "" : " (" + (cut > 0 ? name.substring(0, cut) : name) + ")");
    }

    private void details(StringBuilder md) {
        md.append("## Per configuration\n\n");
        md.append("Throughput runs read the whole trace as fast as possible (after ")
                .append(warmupTrace())
                .append(
                        " in the same JVM); events/s = trace messages ÷ (last output row − first message read). ")
                .append(
                        "CPU = process CPU time (all threads, GC and JIT included) from the first message to the end of the input, ÷ messages. ")
                .append(
                        "Busiest thread = the Java thread that used the most CPU over the same span, in cores (its task in brackets): ")
                .append("near 1.00 it is the bottleneck, whatever the other core does. ")
                .append(
                        kafka()
                                ? "Through Kafka, the first message read and the end of the input are the consumers' first fetch and the fetch that"
                                        + " completes the trace's message count; the job then ends with its input (bounded), so no final checkpoint or"
                                        + " live heap at the end is measured. Peak heap = highest sampled heap use (10 ms period) "
                                : "At the end of the input the sources pause and a full checkpoint is triggered: its size and end-to-end duration are reported; "
                                        + "then live heap is measured after a full GC while the state is still held. Peak heap = highest sampled heap use (10 ms period) ")
                .append("at -Xmx")
                .append(o.heap)
                .append(
                        "; VmHWM = the JVM's peak RSS. Every run's materialized result (signed count and checksum) ")
                .append(
                        "is checked against the one computed from the generator's final tables.\n\n");
        for (String[] c : configs) {
            md.append("### ")
                    .append(c[1])
                    .append(" JOIN, parallelism ")
                    .append(c[0])
                    .append("\n\n");
            md.append(
                    "| variant | events/s median (min–max) | native ÷ | CPU µs/event | busiest thread (cores) | other processes' CPU (cores) | rows out | result ok | peak heap used | VmHWM (peak RSS) | live heap at end | native state | state only | checkpoint size | checkpoint duration |\n");
            md.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
            for (String v : variants) {
                double t = med(v, c, "eventsPerSec");
                double[] r = range(v, c, "eventsPerSec");
                md.append("| ")
                        .append(NAMES.get(v))
                        .append(" | ")
                        .append(k(t))
                        .append(" (")
                        .append(k(r[0]))
                        .append("–")
                        .append(k(r[1]))
                        .append(")")
                        .append(" | ")
                        .append(v.equals("NATIVE") ? "1" : x(med("NATIVE", c, "eventsPerSec") / t))
                        .append(" | ")
                        .append(f("%.2f", med(v, c, "cpuNsPerEvent") / 1e3))
                        .append(" | ")
                        .append(busiest(v, c))
                        .append(" | ")
                        .append(f("%.2f", med(v, c, "backgroundCores")))
                        .append(" | ")
                        .append(f("%.0f", med(v, c, "rowsOut")))
                        .append(" | ")
                        .append(checks(v, c))
                        .append(" | ")
                        .append(mb(med(v, c, "peakHeapUsed")))
                        .append(" | ")
                        .append(mb(med(v, c, "vmHwm")))
                        .append(" | ")
                        .append(mb(med(v, c, "liveHeapAtEnd")))
                        .append(" | ")
                        .append(mb(med(v, c, "nativeStateBytes")))
                        .append(" | ")
                        .append(mb(memoryState(v, c)))
                        .append(" | ")
                        .append(mb(med(v, c, "checkpointStateSize")))
                        .append(" | ")
                        .append(f("%.0f ms", med(v, c, "checkpointDurationMs")))
                        .append(" |\n");
            }
            md.append("\nCPU µs per event by thread (first run; threads named by the kernel's")
                    .append(" 15 characters, JIT compilers and GC included):\n\n");
            for (String v : variants) {
                md.append("- ")
                        .append(NAMES.get(v))
                        .append(": ")
                        .append(threads(v, c))
                        .append("\n");
            }
            md.append("\n");
        }
    }

    /** The first run's CPU per event of its five busiest kinds of thread. */
    @SuppressWarnings("unchecked")
    private String threads(String v, String[] c) {
        for (Map<String, Object> r : runs(tp, v, c)) {
            if (r.get("cpuByThread") instanceof Map) {
                double events = ((Number) r.get("messages")).doubleValue();
                return ((Map<String, Number>) r.get("cpuByThread"))
                        .entrySet().stream()
                                .limit(5)
                                .map(e -> "`" + e.getKey() + "` " + perEvent(e.getValue(), events))
                                .collect(java.util.stream.Collectors.joining(", "));
            }
        }
        return "–";
    }

    /** CPU seconds as µs per event. */
    private static String perEvent(Number seconds, double events) {
        return f("%.2f", seconds.doubleValue() * 1e6 / events);
    }

    private void latencySection(StringBuilder md) {
        if (lat.isEmpty()) {
            return;
        }
        md.append("## Latency at a fixed input rate\n\n");
        md.append(
                        "Each source subtask emits its share of the rate on a fixed schedule and, every 2 ms, an update of a probe row (negative ids, ")
                .append(
                        "16 probe users each with one probe domain per subtask) carrying its *scheduled* emission time; the sink takes, for each ")
                .append(
                        "joined probe insertion (+I/+U), now − the newer of the two stamps. So a variant that cannot keep up shows its growing lag. ")
                .append(f("%.0f", o.latencySeconds))
                .append(" s per run, after the same full-speed warm-up as the throughput runs (")
                .append(warmupTrace())
                .append(") in the same JVM; the first ")
                .append(f("%.0f", o.latencyWarmup))
                .append(
                        " s of the run are not sampled. Flink's default network buffer timeout (100 ms) applies to all variants; the native operators flush a partial batch after ")
                .append(
                        "`maxFlushDelay` (default 100 ms; 5 ms in the `native, 5 ms flush` variant).\n\n");
        md.append(
                "| config | rate | variant | achieved rate | samples | p50 ms | p99 ms | p99.9 ms | max ms |\n|---|---|---|---|---|---|---|---|---|\n");
        for (String[] c : configs) {
            for (String v : NAMES.keySet()) {
                Map<String, Object> l = latency(v, c);
                if (l == null) {
                    continue;
                }
                md.append("| ")
                        .append(c[1])
                        .append(" p=")
                        .append(c[0])
                        .append(" | ")
                        .append(k(num(l, "targetRate")))
                        .append("/s")
                        .append(" | ")
                        .append(NAMES.get(v))
                        .append(" | ")
                        .append(k(num(l, "achievedRate")))
                        .append("/s")
                        .append(" | ")
                        .append(f("%.0f", num(l, "latencySamples")))
                        .append(" | ")
                        .append(f("%.1f", num(l, "latencyP50Ms")))
                        .append(" | ")
                        .append(f("%.1f", num(l, "latencyP99Ms")))
                        .append(" | ")
                        .append(f("%.1f", num(l, "latencyP999Ms")))
                        .append(" | ")
                        .append(f("%.1f", num(l, "latencyMaxMs")))
                        .append(" |\n");
            }
        }
        md.append("\n");
    }

    /**
     * Appends the run's phase durations ({@code timings.jsonl}) and its {@code notes.md}, when the
     * result folder {@code dir} has them: the common footer of every report.
     */
    static void appendPhasesAndNotes(StringBuilder md, Path dir, ObjectMapper json)
            throws IOException {
        Path t = dir.resolve("timings.jsonl");
        if (Files.exists(t)) {
            md.append("- Phase durations:");
            for (Map<String, Object> r : Suite.readLines(json, t)) {
                md.append(
                        String.format(
                                Locale.ROOT, " %s %.0f s;", r.get("phase"), num(r, "seconds")));
            }
            md.append("\n");
        }
        Path notes = dir.resolve("notes.md");
        if (Files.exists(notes)) {
            md.append(Files.readString(notes).trim()).append("\n");
        }
    }

    private static double num(Map<String, Object> m, String k) {
        Object v = m.get(k);
        return v instanceof Number ? ((Number) v).doubleValue() : Double.NaN;
    }

    private void xmxSection(StringBuilder md) throws IOException {
        if (xmx.isEmpty()) {
            return;
        }
        md.append("## Smallest -Xmx that completes\n\n");
        Properties xp = new Properties();
        if (Files.exists(dir.resolve("xmx-trace.properties"))) {
            try (var in = Files.newInputStream(dir.resolve("xmx-trace.properties"))) {
                xp.load(in);
            }
        }
        md.append("LEFT JOIN, parallelism 1, a smaller trace of the same shape (")
                .append(xp.getProperty("users", "?"))
                .append(" users + ")
                .append(xp.getProperty("domains", "?"))
                .append(" domains snapshot, ")
                .append(xp.getProperty("events", "?"))
                .append(" events), one run per JVM without warm-up; bisection over -Xmx ∈ {")
                .append(
                        o.xmxSizes.stream()
                                .map(String::valueOf)
                                .reduce((a, b) -> a + ", " + b)
                                .orElse(""))
                .append(
                        "} MB. *Completes* = the job finishes with the correct result within 3× its normal duration + 60 s ")
                .append(
                        "(an OutOfMemoryError exits the JVM). Off-heap memory (native state, RocksDB, network buffers) is not bounded by -Xmx.\n\n");
        md.append(
                "| variant | smallest -Xmx that completes | attempts (MB: result, wall s) |\n|---|---|---|\n");
        for (String v : NAMES.keySet()) {
            List<String> attempts = new ArrayList<>();
            for (Map<String, Object> r : xmx) {
                if (v.equals(r.get("variant"))) {
                    attempts.add(
                            r.get("xmxMb")
                                    + ": "
                                    + (Boolean.TRUE.equals(r.get("ok")) ? "ok" : "fail")
                                    + String.format(Locale.ROOT, " %.0f s", num(r, "wallSeconds")));
                }
            }
            if (!attempts.isEmpty()) {
                md.append("| ")
                        .append(NAMES.get(v))
                        .append(" | ")
                        .append(xmxCell(v))
                        .append(" | ")
                        .append(String.join("; ", attempts))
                        .append(" |\n");
            }
        }
        md.append("\n");
    }

    /** benchmark short name (":" param) → score in ns/op. */
    @SuppressWarnings("unchecked")
    private Map<String, Double> jmhScores() {
        Map<String, Double> m = new LinkedHashMap<>();
        Path f = dir.resolve("jmh.json");
        if (!Files.exists(f)) {
            return m;
        }
        try {
            List<Map<String, Object>> rows = json.readValue(f.toFile(), List.class);
            for (Map<String, Object> r : rows) {
                String name = String.valueOf(r.get("benchmark"));
                name = name.substring(name.lastIndexOf('.', name.lastIndexOf('.') - 1) + 1);
                Map<String, Object> params = (Map<String, Object>) r.get("params");
                if (params != null && params.get("batch") != null) {
                    name += ":" + params.get("batch");
                }
                Map<String, Object> pm = (Map<String, Object>) r.get("primaryMetric");
                m.put(name, ((Number) pm.get("score")).doubleValue());
            }
        } catch (IOException e) {
            // no JMH results
        }
        return m;
    }

    private void jmhSection(StringBuilder md) throws IOException {
        Map<String, Double> s = jmhScores();
        if (s.isEmpty()) {
            return;
        }
        double bytesPerMessage = Double.NaN;
        Object traceDir = machine.get("trace");
        if (traceDir != null && Files.exists(Path.of(traceDir.toString(), "domains-0.bin"))) {
            List<byte[]> sample =
                    dev.cdcjoin.bench.jmh.Samples.read(traceDir.toString(), "domains", 8192);
            bytesPerMessage = sample.stream().mapToInt(b -> b.length).average().orElse(Double.NaN);
        }
        md.append("## JMH: decoding alone\n\n");
        md.append(
                String.format(
                        Locale.ROOT,
                        "8192 `domains` messages sampled evenly from the trace (its mix of r/c/u/d; %.0f B/message), one thread. "
                                + "Command: `java -cp … org.openjdk.jmh.Main 'DecodeBench|JniCrossingBench' %s` (run by the suite).%n%n",
                        bytesPerMessage,
                        o.jmhArgs));
        md.append(
                "| decoder | ns/message | messages/s | MB/s | ÷ native batch |\n|---|---|---|---|---|\n");
        Double nat = s.get("DecodeBench.nativeBatch");
        String[][] rows = {
            {
                "DecodeBench.nativeBatch",
                "native, batches of 1024 (`NativeDecoder.decodeJson`, output left in the buffer)"
            },
            {
                "DecodeBench.nativeToRecords",
                "native + framing + materializing `ChangeRecord`s (what the operator does)"
            },
            {"DecodeBench.jackson", "Jackson (`DebeziumJsonReader`, pure-Java join) to `Row`s"},
            {
                "DecodeBench.flinkDebeziumJson",
                "Flink `debezium-json` format (SQL path) to `RowData`"
            }
        };
        for (String[] r : rows) {
            Double ns = s.get(r[0]);
            if (ns == null) {
                continue;
            }
            md.append("| ")
                    .append(r[1])
                    .append(" | ")
                    .append(f("%.0f", ns))
                    .append(" | ")
                    .append(k(1e9 / ns))
                    .append(" | ")
                    .append(f("%.0f", bytesPerMessage / ns * 1e3))
                    .append(" | ")
                    .append(nat == null ? "–" : x(ns / nat))
                    .append(" |\n");
        }
        md.append("\n## JMH: the JNI batch crossing\n\n");
        md.append(
                        "`empty call`: `NativeJoin.processBatch` on an empty batch (JNI transition, two direct-buffer lookups, handle lookup, output copy), ")
                .append(
                        "shown per record of a batch of that size. `trivial batch`: `batch` real changes, each a key group batch of one (the exchange's worst case), framed exactly as `NativeJoinOperator.append` does ")
                .append(
                        "(side and block header, the change copied into the direct buffer) and joined in one call; the records retract users that are not in state, ")
                .append(
                        "so the engine does one hash probe per record and emits nothing (an upper bound: the probe is join work). `framing` is its Java half alone. ")
                .append(
                        "`decoder tombstones`: `NativeDecoder.decodeJson` on `batch` null messages.\n\n");
        md.append(
                "| batch | empty call ns | … per record | trivial batch ns/record | of which Java framing | native call + probe | decoder tombstones ns/record |\n|---|---|---|---|---|---|---|\n");
        for (int b : new int[] {1, 64, 1024, 8192}) {
            Double empty = s.get("JniCrossingBench.joinEmptyCall:" + b);
            Double triv = s.get("JniCrossingBench.joinTrivialBatch:" + b);
            Double frame = s.get("JniCrossingBench.frameOnly:" + b);
            Double tomb = s.get("JniCrossingBench.decodeTombstones:" + b);
            md.append("| ")
                    .append(b)
                    .append(" | ")
                    .append(empty == null ? "–" : f("%.0f", empty))
                    .append(" | ")
                    .append(empty == null ? "–" : f("%.2f", empty / b))
                    .append(" | ")
                    .append(triv == null ? "–" : f("%.1f", triv / b))
                    .append(" | ")
                    .append(frame == null ? "–" : f("%.1f", frame / b))
                    .append(" | ")
                    .append(triv == null || frame == null ? "–" : f("%.1f", (triv - frame) / b))
                    .append(" | ")
                    .append(tomb == null ? "–" : f("%.1f", tomb / b))
                    .append(" |\n");
        }
        md.append("\n");
    }

    private void method(StringBuilder md) throws IOException {
        md.append("## How it was run\n\n");
        if (mart()) {
            md.append(
                    "- Three-table mart (`MartJob`): `"
                            + MartJob.QUERY.replace("%1$s", "[LEFT] JOIN")
                            + "`; native and pure Java = a chain of two `CdcJoin`s (users ⋈ profiles projected to the mart's columns, keyed by the user id, then ⋈ settings); Flink SQL = that query (chained regular joins), multi-way join = the same with `"
                            + MartJob.MULTI_JOIN_OPTION
                            + " = true` (the run fails if the optimized plan has no `MultiJoin`). The two-table descriptions below apply per join.\n");
        }
        md.append(
                        "- Variants: `native (CdcJoin)` = `CdcJoin.builder()…build().joinJson(users, domains)` (native decode, keyBy, native join; batch 1024, max flush delay 100 ms); ")
                .append(
                        "`pure Java` = the same with `.engine(Engine.JAVA)` (Jackson decode chained to the source, keyBy, `KeyedCoProcessFunction` with `ValueState`/`MapState`); ")
                .append(
                        "`Flink SQL` = two tables `(… PRIMARY KEY (id) NOT ENFORCED) WITH ('format' = 'debezium-json')` over the same source (decoded in the source like the Kafka connector) and ")
                .append(
                        "`SELECT u.*, d.* FROM users u [LEFT] JOIN domains d ON u.id = d.user_id`, converted with `toChangelogStream`. Heap = `HashMapStateBackend`; RocksDB = `EmbeddedRocksDBStateBackend` (full checkpoints, managed memory sized for the trace's snapshot: `--managed-bytes-per-row` per row + 256 MB, at least 512 MB).\n")
                .append(
                        kafka()
                                ? "- Same for all: one Kafka source per topic (Flink's `KafkaSource`, or the one Flink SQL's Kafka connector builds) reading the topics filled with the trace (partitions assigned by the Kafka enumerator), "
                                : "- Same for all: one source per topic (`TraceSource`, FLIP-27) reading the pre-generated length-prefixed files from the page cache (partitions k ≡ subtask mod p), ")
                .append(
                        "the same counting/checksum sink (`ChecksumSink`), object reuse on, checkpoints every 10 s to the local file system, default network buffer timeout, parallelism p for every operator.\n")
                .append("- Order: ")
                .append(o.rounds)
                .append(
                        " rounds; each round runs every (parallelism, join, variant) once, one fresh JVM each, so variants alternate in time and share the background load.\n");
        Report.appendPhasesAndNotes(md, dir, json);
        md.append(
                "- Raw data: `throughput.jsonl`, `latency.jsonl`, `xmx.jsonl`, `jmh.json`, `trace.properties`, `machine.json`, child JVM logs in `logs/` (kept where the run was made, not committed); the chart also as `chart.png`.\n");
    }

    // -------------------------------------------------------------------------------------
    // The chart

    private String chart() {
        int w = 980;
        int h = 420;
        StringBuilder s = new StringBuilder();
        s.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"")
                .append(w)
                .append("\" height=\"")
                .append(h)
                .append(
                        "\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        s.append(
                        "<text x=\"10\" y=\"18\" font-size=\"14\" font-weight=\"bold\">cdcjoin: native vs pure Java vs Flink SQL — ")
                .append(
                        esc(
                                String.valueOf(machine.getOrDefault("date", ""))
                                        .substring(
                                                0,
                                                Math.min(
                                                        10,
                                                        String.valueOf(
                                                                        machine.getOrDefault(
                                                                                "date", ""))
                                                                .length()))))
                .append(", ")
                .append(esc(String.valueOf(machine.getOrDefault("cores", "?"))))
                .append(" shared cores, ")
                .append(esc(trace.getProperty("events", "?")))
                .append(" events</text>\n");
        panel(s, 40, 40, 560, 320, "input events/s (median)", (v, c) -> med(v, c, "eventsPerSec"));
        List<String[]> memConfigs = new ArrayList<>();
        for (String[] c : configs) {
            if (c[1].equals("LEFT")) {
                memConfigs.add(c);
            }
        }
        panelMemory(s, 650, 40, 300, 320, memConfigs.isEmpty() ? configs : memConfigs);
        // Legend.
        int lx = 40;
        for (String v : variants) {
            s.append(
                    String.format(
                            Locale.ROOT,
                            "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>",
                            lx,
                            h - 30,
                            COLORS.get(v)));
            s.append(
                    String.format(
                            Locale.ROOT,
                            "<text x=\"%d\" y=\"%d\">%s</text>\n",
                            lx + 16,
                            h - 20,
                            esc(NAMES.get(v))));
            lx += 30 + NAMES.get(v).length() * 6;
        }
        s.append("</svg>\n");
        return s.toString();
    }

    interface Metric {
        double get(String variant, String[] config);
    }

    /** A round top of a panel's axis above every variant's {@code metric} in {@code configs}. */
    private double scaleMax(List<String[]> configs, Metric metric) {
        double max = 0;
        for (String[] c : configs) {
            for (String v : variants) {
                double m = metric.get(v, c);
                if (!Double.isNaN(m)) {
                    max = Math.max(max, m);
                }
            }
        }
        return niceMax(max);
    }

    /** A panel's title above its top left corner. */
    static void panelTitle(StringBuilder s, int x0, int y0, String title) {
        s.append(
                String.format(
                        Locale.ROOT,
                        "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s</text>\n",
                        x0,
                        y0 - 6,
                        esc(title)));
    }

    private void panel(StringBuilder s, int x0, int y0, int w, int h, String title, Metric metric) {
        double max = scaleMax(configs, metric);
        panelTitle(s, x0, y0, title);
        axis(s, x0, y0, w, h, max, true);
        int groups = configs.size();
        double gw = (double) w / Math.max(1, groups);
        double bw = (gw - 16) / Math.max(1, variants.size());
        for (int g = 0; g < groups; g++) {
            String[] c = configs.get(g);
            for (int i = 0; i < variants.size(); i++) {
                double m = metric.get(variants.get(i), c);
                if (Double.isNaN(m)) {
                    continue;
                }
                double bh = h * m / max;
                double bx = x0 + g * gw + 8 + i * bw;
                s.append(
                        String.format(
                                Locale.ROOT,
                                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>",
                                bx,
                                y0 + h - bh,
                                bw - 2,
                                bh,
                                COLORS.get(variants.get(i))));
                s.append(
                        String.format(
                                Locale.ROOT,
                                "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" text-anchor=\"middle\">%.0fk</text>\n",
                                bx + bw / 2 - 1,
                                y0 + h - bh - 3,
                                m / 1e3));
            }
            s.append(
                    String.format(
                            Locale.ROOT,
                            "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s p=%s</text>\n",
                            x0 + g * gw + gw / 2,
                            y0 + h + 16,
                            c[1],
                            c[0]));
        }
    }

    private void panelMemory(StringBuilder s, int x0, int y0, int w, int h, List<String[]> cs) {
        double max = scaleMax(cs, this::memoryTotal);
        panelTitle(s, x0, y0, "memory at end: live heap + native state (MB)");
        axis(s, x0, y0, w, h, max, false);
        double gw = (double) w / Math.max(1, cs.size());
        double bw = (gw - 16) / Math.max(1, variants.size());
        for (int g = 0; g < cs.size(); g++) {
            String[] c = cs.get(g);
            for (int i = 0; i < variants.size(); i++) {
                String v = variants.get(i);
                double heap = med(v, c, "liveHeapAtEnd");
                double nat = med(v, c, "nativeStateBytes");
                if (Double.isNaN(heap)) {
                    continue;
                }
                double bx = x0 + g * gw + 8 + i * bw;
                double hh = h * heap / max;
                s.append(
                        String.format(
                                Locale.ROOT,
                                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>",
                                bx,
                                y0 + h - hh,
                                bw - 2,
                                hh,
                                COLORS.get(v)));
                double top = y0 + h - hh;
                if (!Double.isNaN(nat)) {
                    double nh = h * nat / max;
                    s.append(
                            String.format(
                                    Locale.ROOT,
                                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#444\"/>",
                                    bx,
                                    top - nh,
                                    bw - 2,
                                    nh));
                    top -= nh;
                }
                s.append(
                        String.format(
                                Locale.ROOT,
                                "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" text-anchor=\"middle\">%.0f</text>\n",
                                bx + bw / 2 - 1,
                                top - 3,
                                (heap + (Double.isNaN(nat) ? 0 : nat)) / 1e6));
            }
            s.append(
                    String.format(
                            Locale.ROOT,
                            "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s p=%s</text>\n",
                            x0 + g * gw + gw / 2,
                            y0 + h + 16,
                            c[1],
                            c[0]));
        }
        s.append(
                String.format(
                        Locale.ROOT,
                        "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"#444\"/><text x=\"%d\" y=\"%d\">native state (dark)</text>\n",
                        x0 + w - 120,
                        y0 + 4,
                        x0 + w - 106,
                        y0 + 13));
        s.append(
                String.format(
                        Locale.ROOT,
                        "<text x=\"%d\" y=\"%d\" font-size=\"9\">RocksDB: heap only, its native memory is not counted</text>\n",
                        x0 + w - 245,
                        y0 + 28));
    }

    private static void axis(
            StringBuilder s, int x0, int y0, int w, int h, double max, boolean thousands) {
        s.append(
                String.format(
                        Locale.ROOT,
                        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n",
                        x0,
                        y0 + h,
                        x0 + w,
                        y0 + h));
        s.append(
                String.format(
                        Locale.ROOT,
                        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n",
                        x0,
                        y0,
                        x0,
                        y0 + h));
        for (int i = 0; i <= 4; i++) {
            double v = max * i / 4;
            double y = y0 + h - h * i / 4.0;
            s.append(
                    String.format(
                            Locale.ROOT,
                            "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>",
                            x0,
                            y,
                            x0 + w,
                            y));
            s.append(
                    String.format(
                            Locale.ROOT,
                            "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                            x0 - 4,
                            y + 4,
                            thousands
                                    ? String.format(Locale.ROOT, "%.0fk", v / 1e3)
                                    : String.format(Locale.ROOT, "%.0f", v / 1e6)));
        }
    }

    private static double niceMax(double v) {
        if (v <= 0) {
            return 1;
        }
        double p = Math.pow(10, Math.floor(Math.log10(v)));
        for (double m : new double[] {1, 1.2, 1.6, 2, 2.4, 3, 4, 6, 8, 10}) {
            if (m * p >= v) {
                return m * p;
            }
        }
        return 10 * p;
    }

    private static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }

    static String list(double[] a) {
        return Arrays.toString(a);
    }
}
