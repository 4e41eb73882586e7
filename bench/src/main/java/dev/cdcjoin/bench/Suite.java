package dev.cdcjoin.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.runtime.util.EnvironmentInformation;

/**
 * The whole comparison (issue 4), one child JVM per measured job so that every variant starts from
 * the same state and its peak RSS is its own:
 *
 * <ol>
 *   <li>generate the trace (once; reused when it exists);
 *   <li>throughput: {@code rounds} rounds; in each round every (parallelism, join type, variant)
 *       runs once in a fresh JVM (an unmeasured warm-up over the trace, then the measured run), so
 *       the variants are interleaved in time and background load hits them alike; the median of the
 *       rounds is reported;
 *   <li>latency: every variant at a fixed input rate, {@code latency-load} × the Java heap
 *       variant's median throughput of the same configuration, with probes;
 *   <li>smallest -Xmx: a bisection over a list of heap sizes per variant (parallelism 1, LEFT);
 *   <li>JMH: decoding alone and the JNI batch crossing;
 *   <li>the report: Markdown, an SVG chart, and the raw JSON lines, in {@code results/<date>/}.
 * </ol>
 *
 * <p>{@code --phases report --out DIR} rebuilds the report from an earlier run's data.
 */
public final class Suite {

    static final List<String> JVM_FLAGS =
            List.of(
                    "-XX:+UseG1GC",
                    "-XX:MaxDirectMemorySize=1g",
                    "-XX:+ExitOnOutOfMemoryError",
                    "--add-opens=java.base/java.util=ALL-UNNAMED",
                    "--add-opens=java.base/java.lang=ALL-UNNAMED",
                    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
                    "--add-opens=java.base/java.io=ALL-UNNAMED",
                    "--add-opens=java.base/java.nio=ALL-UNNAMED",
                    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
                    "--add-opens=java.base/java.time=ALL-UNNAMED",
                    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
                    "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
                    "--add-opens=java.base/java.net=ALL-UNNAMED",
                    "--add-opens=java.base/java.text=ALL-UNNAMED",
                    "--add-opens=java.sql/java.sql=ALL-UNNAMED");

    /**
     * The variants of {@code --config mart3} unless {@code --variants} says otherwise: the {@code
     * CdcJoin} chain on each engine, the native multi-way join, Flink SQL's chained joins and its
     * multi-way join.
     */
    static final List<String> MART_VARIANTS =
            List.of("NATIVE", "NATIVE_MULTIWAY", "JAVA_HEAP", "SQL_HEAP", "SQL_MULTIJOIN_HEAP");

    /**
     * {@link #MART_VARIANTS} on Flink {@code version}: without Flink SQL's multi-way join on the
     * 1.x line, which does not have it (FLIP-516 came with 2.1).
     */
    static List<String> martVariants(String version) {
        if (!version.startsWith("1.")) {
            return MART_VARIANTS;
        }
        return MART_VARIANTS.stream()
                .filter(v -> !v.equals("SQL_MULTIJOIN_HEAP"))
                .collect(Collectors.toList());
    }

    /** The mix of {@code --config hot}: the default one without user deletes. */
    static final String HOT_MIX =
            "insert_user=10,insert_domain=20,rename_user=15,rename_domain=15,move_domain=15,"
                    + "renumber_domain=5,delete_domain=15,delete_user=0";

    static final class Options {
        long events = 5_000_000;
        Integer users;
        Integer domains;
        long seed = 42;
        double skew = 1.0;
        Workload.SkewPicks skewPicks = Workload.SkewPicks.ALL;
        String mix = Workload.DEFAULT_MIX;
        Workload.Shape shape = Workload.Shape.USERS_DOMAINS;
        int partitions = 4;
        boolean tombstones;
        int rounds = 3;
        List<Integer> parallelisms = List.of(1, 2);
        List<String> joins = List.of("INNER", "LEFT");
        List<String> variants =
                List.of("NATIVE", "JAVA_HEAP", "JAVA_ROCKSDB", "SQL_HEAP", "SQL_ROCKSDB");
        List<String> latencyVariants =
                List.of(
                        "NATIVE",
                        "NATIVE_5MS",
                        "JAVA_HEAP",
                        "JAVA_ROCKSDB",
                        "SQL_HEAP",
                        "SQL_ROCKSDB");
        double latencySeconds = 12;
        double latencyWarmup = 4;
        double latencyLoad = 0.5;
        List<Integer> xmxSizes = List.of(48, 64, 96, 128, 192, 256, 384, 512, 768, 1024);
        List<String> xmxVariants = null;
        String heap = "4g";
        double warmupFraction = 1.0;

        /**
         * Warm-up runs before each measured throughput or latency run: after one, the C2 compiler
         * still spent 0.3-0.6 s of the measured native run recompiling Flink's runtime for the new
         * job; after two, 0.1-0.3 s (bench/README.md, 2026-12-05).
         */
        int warmupRuns = 2;

        List<String> phases = List.of("throughput", "latency", "xmx", "jmh", "report");
        String out;
        String traceRoot = "/tmp/cdcjoin-bench/traces";
        String jmhArgs = "-f 1 -wi 3 -i 5 -w 1s -r 1s";
        String command = "bench/run.sh";
        long xmxEvents = -1;
        double quietWaitSeconds = 0;
        double quietCores = 0.5;
        Map<Double, List<String>> statePlan =
                plan(
                        "5=NATIVE,JAVA_HEAP,JAVA_ROCKSDB,SQL_HEAP,SQL_ROCKSDB;"
                                + "20=NATIVE,JAVA_ROCKSDB,SQL_ROCKSDB,JAVA_HEAP;40=NATIVE");
        double stateLatencyRate = 400_000;
        List<String> stateLatencyVariants = List.of("NATIVE");

        /** The native state run's savepoint is also restored at this parallelism; 0 = not. */
        int stateRescaledRestore = 2;

        /**
         * Pairs of native state runs (checkpoints every 10 s, then none), alternated: their
         * throughput ratio swings by 0.15-0.3 between two pairs on a shared 2-core machine, so the
         * target is read off the median pair. Only the first pair restores.
         */
        int statePairs = 1;

        /**
         * Events of a state trace per stored row: the snapshot (one per row), then changes for the
         * rest. At 1.1 a 20M-row run's input now lasts about one checkpoint interval (9.5-11 s), so
         * whether it holds a checkpoint of the state is luck; at 1.6 (15-22 s) each of sixteen runs
         * held one or two (bench/README.md, 2026-12-05).
         */
        double stateEventsPerRow = 1.1;

        /** Whether the state runs turn on Flink's snapshot compression (LZ4 native sections). */
        boolean stateSnapshotCompression;

        long managedBytesPerRow = 128;
        long heapBytesPerRow = 800;

        /**
         * Where the jobs read the trace: {@code trace} (its files, {@link TraceSource}) or {@code
         * kafka} (topics filled with it in a broker on loopback, {@link KafkaTrace}).
         */
        String source = "trace";

        static Options parse(String[] args) {
            Options o = new Options();
            String config = null;
            boolean shapeGiven = false;
            boolean variantsGiven = false;
            for (int i = 0; i < args.length; i += 2) {
                String v = args[i + 1];
                switch (args[i]) {
                    case "--events":
                        o.events = Long.parseLong(v);
                        break;
                    case "--users":
                        o.users = Integer.parseInt(v);
                        break;
                    case "--domains":
                        o.domains = Integer.parseInt(v);
                        break;
                    case "--seed":
                        o.seed = Long.parseLong(v);
                        break;
                    case "--skew":
                        o.skew = Double.parseDouble(v);
                        shapeGiven = true;
                        break;
                    case "--skew-picks":
                        o.skewPicks = Workload.SkewPicks.parse(v);
                        shapeGiven = true;
                        break;
                    case "--config":
                        config = v;
                        break;
                    case "--mix":
                        o.mix = v;
                        shapeGiven = true;
                        break;
                    case "--partitions":
                        o.partitions = Integer.parseInt(v);
                        break;
                    case "--tombstones":
                        o.tombstones = Boolean.parseBoolean(v);
                        break;
                    case "--rounds":
                        o.rounds = Integer.parseInt(v);
                        break;
                    case "--parallelisms":
                        o.parallelisms = ints(v);
                        break;
                    case "--joins":
                        o.joins = List.of(v.split(","));
                        break;
                    case "--variants":
                        o.variants = List.of(v.split(","));
                        variantsGiven = true;
                        break;
                    case "--latency-variants":
                        o.latencyVariants = List.of(v.split(","));
                        break;
                    case "--latency-seconds":
                        o.latencySeconds = Double.parseDouble(v);
                        break;
                    case "--latency-warmup":
                        o.latencyWarmup = Double.parseDouble(v);
                        break;
                    case "--latency-load":
                        o.latencyLoad = Double.parseDouble(v);
                        break;
                    case "--xmx-sizes":
                        o.xmxSizes = ints(v);
                        break;
                    case "--xmx-variants":
                        o.xmxVariants = List.of(v.split(","));
                        break;
                    case "--heap":
                        o.heap = v;
                        break;
                    case "--warmup-fraction":
                        o.warmupFraction = Double.parseDouble(v);
                        break;
                    case "--warmup-runs":
                        o.warmupRuns = Integer.parseInt(v);
                        break;
                    case "--phases":
                        o.phases = List.of(v.split(","));
                        break;
                    case "--out":
                        o.out = v;
                        break;
                    case "--trace-root":
                        o.traceRoot = v;
                        break;
                    case "--jmh-args":
                        o.jmhArgs = v;
                        break;
                    case "--command":
                        o.command = v;
                        break;
                    case "--xmx-events":
                        o.xmxEvents = Long.parseLong(v);
                        break;
                    case "--quiet-wait-s":
                        o.quietWaitSeconds = Double.parseDouble(v);
                        break;
                    case "--quiet-cores":
                        o.quietCores = Double.parseDouble(v);
                        break;
                    case "--state-plan":
                        o.statePlan = plan(v);
                        break;
                    case "--state-latency-rate":
                        o.stateLatencyRate = Double.parseDouble(v);
                        break;
                    case "--state-rescaled-restore":
                        o.stateRescaledRestore = Integer.parseInt(v);
                        break;
                    case "--state-pairs":
                        o.statePairs = Integer.parseInt(v);
                        break;
                    case "--state-events-per-row":
                        o.stateEventsPerRow = Double.parseDouble(v);
                        break;
                    case "--state-snapshot-compression":
                        o.stateSnapshotCompression = Boolean.parseBoolean(v);
                        break;
                    case "--state-latency-variants":
                        o.stateLatencyVariants = v.isEmpty() ? List.of() : List.of(v.split(","));
                        break;
                    case "--managed-bytes-per-row":
                        o.managedBytesPerRow = Long.parseLong(v);
                        break;
                    case "--heap-bytes-per-row":
                        o.heapBytesPerRow = Long.parseLong(v);
                        break;
                    case "--source":
                        o.source = v;
                        break;
                    default:
                        throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (config != null) {
                if (shapeGiven) {
                    throw new IllegalArgumentException(
                            "--config "
                                    + config
                                    + " sets the skew and the mix: drop --skew, --skew-picks and"
                                    + " --mix");
                }
                o.applyConfig(config);
            }
            if (o.shape == Workload.Shape.MART3) {
                o.checkMart(variantsGiven);
            }
            o.checkSource();
            return o;
        }

        /**
         * {@code --config mart3}: throughput and report phases on the trace files; by default the
         * variants that build the three-table mart.
         */
        private void checkMart(boolean variantsGiven) {
            if (!variantsGiven) {
                variants = martVariants(EnvironmentInformation.getVersion());
            }
            if (!source.equals("trace")
                    || !phases.stream()
                            .allMatch(p -> p.equals("throughput") || p.equals("report"))) {
                throw new IllegalArgumentException(
                        "--config mart3 runs the phases throughput and report on --source trace");
            }
        }

        /** {@code --source kafka} runs the throughput phase (and the report) only. */
        private void checkSource() {
            if (!source.equals("trace") && !source.equals("kafka")) {
                throw new IllegalArgumentException(
                        "--source must be trace or kafka, not " + source);
            }
            if (source.equals("kafka")
                    && !phases.stream()
                            .allMatch(p -> p.equals("throughput") || p.equals("report"))) {
                throw new IllegalArgumentException(
                        "--source kafka runs the phases throughput and report only, not " + phases);
            }
            if (source.equals("kafka") && warmupFraction != 0 && warmupFraction != 1) {
                // A Kafka job reads its topics to their end: the warm-up is all or nothing.
                throw new IllegalArgumentException("--source kafka: --warmup-fraction 0 or 1");
            }
        }

        /**
         * A named trace configuration: {@code uniform} (the default), {@code skewed} ({@code --skew
         * 4}: hot users, which are also the most renamed and deleted, so their groups are big for a
         * while and then deleted whole), {@code hot} ({@code --skew 4 --skew-picks owners} and
         * {@link #HOT_MIX}: the big customers stay, each hot user keeps its domains to the end; at
         * 1M events the hottest holds 14.8k rows at the end), {@code mart3} (the three-table mart
         * on one key, {@link MartWorkload}: users, profiles and settings, events/10 users).
         */
        private void applyConfig(String name) {
            switch (name) {
                case "uniform":
                    skew = 1.0;
                    skewPicks = Workload.SkewPicks.ALL;
                    break;
                case "skewed":
                    skew = 4.0;
                    skewPicks = Workload.SkewPicks.ALL;
                    break;
                case "hot":
                    skew = 4.0;
                    skewPicks = Workload.SkewPicks.OWNERS;
                    mix = HOT_MIX;
                    break;
                case "mart3":
                    shape = Workload.Shape.MART3;
                    mix = MartWorkload.DEFAULT_MIX;
                    break;
                default:
                    throw new IllegalArgumentException(
                            "--config must be uniform, skewed, hot or mart3, not '" + name + "'");
            }
        }

        /**
         * The state-scale plan: {@code millions=VARIANT,VARIANT;millions=…}, stored rows in
         * millions and the variants run at that size, in order (none: only the latency runs).
         */
        static Map<Double, List<String>> plan(String v) {
            Map<Double, List<String>> plan = new LinkedHashMap<>();
            for (String step : v.split(";")) {
                String[] kv = step.split("=", -1);
                if (kv.length != 2) {
                    throw new IllegalArgumentException(
                            "--state-plan step '" + step + "' is not millions=VARIANT,…");
                }
                plan.put(
                        Double.parseDouble(kv[0]),
                        kv[1].isEmpty() ? List.of() : List.of(kv[1].split(",")));
            }
            return plan;
        }

        /**
         * The state-scale trace of {@code rows} stored rows: the shape (a snapshot of
         * rows/5 users and 4·rows/5 domains, then changes for another tenth of the rows).
         */
        Workload.Config stateWorkload(long rows) {
            return workload(
                    Math.round(rows * stateEventsPerRow),
                    (int) (rows / 5),
                    (int) (rows - rows / 5));
        }

        /**
         * Managed memory for a job holding {@code rows} rows: {@code --managed-bytes-per-row} per
         * row (the native state and, while a snapshot is written, its frozen copies; the RocksDB
         * block cache and write buffers) plus 256 MB, and never less than 512 MB.
         */
        String managedMemory(long rows) {
            return Math.max(512, 256 + rows * managedBytesPerRow / (1 << 20)) + "m";
        }

        /**
         * The -Xmx of a variant holding {@code rows} rows: {@code --heap-bytes-per-row} per row
         * plus 2 GB for the heap backends, whose state is Java objects; {@code --heap} otherwise.
         */
        String heapFor(String variant, long rows) {
            if (!variant.endsWith("_HEAP")) {
                return heap;
            }
            return Math.max(4096, 2048 + rows * heapBytesPerRow / (1 << 20)) + "m";
        }

        static List<Integer> ints(String v) {
            return Arrays.stream(v.split(",")).map(Integer::parseInt).collect(Collectors.toList());
        }

        Workload.Config workload() {
            return workload(events, users, domains);
        }

        /**
         * The workload for the -Xmx bisection: {@code --xmx-events} (default: half the trace),
         * scaled alike.
         */
        Workload.Config xmxWorkload() {
            long e = xmxEvents > 0 ? xmxEvents : events / 2;
            double f = (double) e / events;
            return workload(
                    e,
                    users == null ? null : (int) (users * f),
                    domains == null ? null : (int) (domains * f));
        }

        Workload.Config workload(long events, Integer users, Integer domains) {
            Workload.Config c = new Workload.Config();
            c.shape = shape;
            c.events = events;
            int perUser = shape == Workload.Shape.MART3 ? 10 : 25;
            c.users = users != null ? users : (int) Math.max(1, events / perUser);
            c.domains = domains != null ? domains : (int) Math.max(1, events / 5);
            c.seed = seed;
            c.skew = skew;
            c.skewPicks = skewPicks;
            c.mix = mix;
            c.partitions = partitions;
            c.tombstones = tombstones;
            return c;
        }
    }

    private final Options o;
    private final Path out;
    private final Path logs;
    private Path trace;

    /** The Kafka broker's host:port under {@code --source kafka}, else null. */
    private String kafka;

    private final ObjectMapper json = new ObjectMapper();
    private final String classpath = System.getProperty("java.class.path");

    Suite(Options o) throws IOException {
        this.o = o;
        String stamp =
                LocalDateTime.now(ZoneOffset.UTC)
                        .format(DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HHmm'Z'"));
        this.out = Path.of(o.out != null ? o.out : "results/" + stamp);
        this.logs = out.resolve("logs");
        Files.createDirectories(logs);
    }

    public static void main(String[] args) throws Exception {
        Options o = Options.parse(args);
        Suite s = new Suite(o);
        s.log("output: " + s.out.toAbsolutePath());
        long t0 = System.nanoTime();
        Workload.Config cfg = o.workload();
        s.trace = Path.of(o.traceRoot).resolve(cfg.id());
        boolean stateOnly =
                o.phases.stream().allMatch(p -> p.equals("state") || p.equals("report"))
                        && (o.phases.contains("state")
                                || Files.exists(s.out.resolve("state.jsonl")));
        if (!stateOnly
                && (!o.phases.equals(List.of("report"))
                        || !Files.exists(s.out.resolve("trace.properties")))) {
            s.log("trace: " + s.trace);
            Properties p = Workload.generate(cfg, s.trace);
            Files.copy(
                    s.trace.resolve("trace.properties"),
                    s.out.resolve("trace.properties"),
                    java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            s.log(
                    "trace: "
                            + p.getProperty("messages")
                            + " messages, "
                            + p.getProperty("bytes")
                            + " bytes");
        }
        s.writeMachine();
        KafkaTrace broker = null;
        if (o.source.equals("kafka") && o.phases.contains("throughput")) {
            broker = KafkaTrace.broker(s::log);
            broker.fill(s.trace, TraceFiles.load(s.trace));
            s.kafka = broker.bootstrap();
        }
        try {
            s.phases(t0);
        } finally {
            if (broker != null) {
                broker.stop();
            }
        }
    }

    /** Runs the phases of {@code --phases}, in order. */
    private void phases(long t0) throws Exception {
        for (String phase : o.phases) {
            long p0 = System.nanoTime();
            switch (phase) {
                case "throughput":
                    throughput();
                    break;
                case "latency":
                    latency();
                    break;
                case "xmx":
                    xmx();
                    break;
                case "jmh":
                    jmh();
                    break;
                case "state":
                    state();
                    break;
                case "report":
                    if (Files.exists(out.resolve("throughput.jsonl"))) {
                        new Report(out, o).write();
                    }
                    if (Files.exists(out.resolve("state.jsonl"))) {
                        new StateReport(out, o).write();
                    }
                    break;
                default:
                    throw new IllegalArgumentException("unknown phase " + phase);
            }
            log(String.format("phase %s: %.0f s", phase, (System.nanoTime() - p0) / 1e9));
            appendTiming(phase, (System.nanoTime() - p0) / 1e9);
        }
        log(String.format("total: %.0f s", (System.nanoTime() - t0) / 1e9));
    }

    void log(String line) {
        String l =
                LocalDateTime.now(ZoneOffset.UTC)
                                .format(DateTimeFormatter.ISO_LOCAL_TIME)
                                .substring(0, 8)
                        + " "
                        + line;
        System.out.println(l);
        try {
            Files.writeString(
                    out.resolve("suite.log"),
                    l + "\n",
                    StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            // ignore
        }
    }

    private void appendTiming(String phase, double seconds) throws IOException {
        Files.writeString(
                out.resolve("timings.jsonl"),
                json.writeValueAsString(Map.of("phase", phase, "seconds", seconds)) + "\n",
                StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
    }

    private void writeMachine() throws IOException {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("date", LocalDateTime.now(ZoneOffset.UTC).toString() + "Z");
        try {
            m.put("host", InetAddress.getLocalHost().getHostName());
        } catch (IOException e) {
            m.put("host", "?");
        }
        String cpu = "?";
        for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
            if (line.startsWith("model name")) {
                cpu = line.substring(line.indexOf(':') + 1).trim();
                break;
            }
        }
        m.put("cpu", cpu);
        m.put("cores", Runtime.getRuntime().availableProcessors());
        for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
            if (line.startsWith("MemTotal")) {
                m.put("memTotal", line.replaceAll("\\s+", " ").substring(10));
            }
        }
        m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
        m.put(
                "java",
                System.getProperty("java.vm.name")
                        + " "
                        + System.getProperty("java.runtime.version"));
        m.put("flink", EnvironmentInformation.getVersion());
        m.put("jvmFlags", "-Xmx" + o.heap + " " + String.join(" ", JVM_FLAGS.subList(0, 3)));
        m.put("command", o.command);
        m.put("trace", trace.toString());
        Path f = out.resolve("machine.json");
        if (!Files.exists(f)) {
            Files.writeString(f, json.writerWithDefaultPrettyPrinter().writeValueAsString(m));
        }
    }

    /**
     * Waits (up to {@code --quiet-wait-s}) until other processes use less than {@code
     * --quiet-cores} cores over one second; returns the last measured background use.
     */
    private double waitQuiet() throws InterruptedException {
        long deadline = System.nanoTime() + (long) (o.quietWaitSeconds * 1e9);
        while (true) {
            double m0 = Metrics.machineBusySeconds();
            long own0 = Metrics.processCpuNanos();
            long t0 = System.nanoTime();
            Thread.sleep(1000);
            double busy =
                    (Metrics.machineBusySeconds() - m0 - (Metrics.processCpuNanos() - own0) / 1e9)
                            / ((System.nanoTime() - t0) / 1e9);
            if (busy < o.quietCores || System.nanoTime() > deadline || Double.isNaN(busy)) {
                return busy;
            }
        }
    }

    /** Runs one child JVM; returns its exit code, or -1 on timeout. */
    private int child(String name, String heap, List<String> args, long timeoutSeconds)
            throws Exception {
        long w0 = System.nanoTime();
        double background = waitQuiet();
        log(
                String.format(
                        "%s: background %.2f cores after %.0f s wait",
                        name, background, (System.nanoTime() - w0) / 1e9));
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx" + heap);
        cmd.addAll(JVM_FLAGS);
        cmd.add("-Djava.io.tmpdir=/tmp/cdcjoin-bench/tmp");
        cmd.add("-cp");
        cmd.add(classpath);
        cmd.addAll(args);
        Files.createDirectories(Path.of("/tmp/cdcjoin-bench/tmp"));
        File logFile = logs.resolve(name + ".log").toFile();
        Process p =
                new ProcessBuilder(cmd)
                        .redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile))
                        .start();
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor();
            return -1;
        }
        return p.exitValue();
    }

    /**
     * A Runner's arguments on the suite's trace, managed memory sized for its snapshot (the mart's:
     * about 3.6 rows a user, see {@link MartWorkload}).
     */
    private List<String> runner(String variant, int parallelism, String join) {
        Workload.Config c = o.workload();
        long rows =
                c.shape == Workload.Shape.MART3 ? c.users * 36L / 10 : c.users + (long) c.domains;
        return runner(variant, parallelism, join, trace, rows);
    }

    /** A Runner's arguments on {@code trace}, managed memory sized for {@code rows}. */
    private List<String> runner(
            String variant, int parallelism, String join, Path trace, long rows) {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "dev.cdcjoin.bench.Runner",
                                "--variant",
                                variant,
                                "--parallelism",
                                "" + parallelism,
                                "--join",
                                join,
                                "--trace",
                                trace.toString(),
                                "--managed-memory",
                                o.managedMemory(rows)));
        if (kafka != null) {
            args.addAll(List.of("--kafka", kafka));
        }
        return args;
    }

    void throughput() throws Exception {
        Path file = out.resolve("throughput.jsonl");
        for (int round = 1; round <= o.rounds; round++) {
            for (int p : o.parallelisms) {
                for (String join : o.joins) {
                    for (String v : o.variants) {
                        List<String> a = runner(v, p, join);
                        a.addAll(
                                List.of(
                                        "--runs",
                                        "1",
                                        "--run-number",
                                        "" + round,
                                        "--out",
                                        file.toString(),
                                        "--warmup-fraction",
                                        "" + o.warmupFraction,
                                        "--warmup-runs",
                                        "" + o.warmupRuns));
                        long t0 = System.nanoTime();
                        int code =
                                child(
                                        "throughput-" + v + "-p" + p + "-" + join + "-r" + round,
                                        o.heap,
                                        a,
                                        1800);
                        log(
                                String.format(
                                        "throughput round %d %s p=%d %s: exit %d, %.0f s (load %.1f)",
                                        round,
                                        v,
                                        p,
                                        join,
                                        code,
                                        (System.nanoTime() - t0) / 1e9,
                                        Metrics.loadAverage()));
                    }
                }
            }
        }
    }

    static List<Map<String, Object>> readLines(ObjectMapper json, Path file) throws IOException {
        List<Map<String, Object>> rows = new ArrayList<>();
        if (!Files.exists(file)) {
            return rows;
        }
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (!line.isBlank()) {
                @SuppressWarnings("unchecked")
                Map<String, Object> m = json.readValue(line, Map.class);
                rows.add(m);
            }
        }
        return rows;
    }

    /** Median events/s of a variant's successful throughput runs in one configuration, or NaN. */
    static double medianThroughput(
            List<Map<String, Object>> rows, String variant, int p, String join) {
        double[] v =
                rows.stream()
                        .filter(
                                r ->
                                        variant.equals(r.get("variant"))
                                                && Integer.valueOf(p).equals(r.get("parallelism"))
                                                && join.equals(r.get("join"))
                                                && Boolean.TRUE.equals(r.get("ok")))
                        .mapToDouble(r -> ((Number) r.get("eventsPerSec")).doubleValue())
                        .sorted()
                        .toArray();
        return v.length == 0 ? Double.NaN : Report.median(v);
    }

    void latency() throws Exception {
        List<Map<String, Object>> tp = readLines(json, out.resolve("throughput.jsonl"));
        Path file = out.resolve("latency.jsonl");
        for (int p : o.parallelisms) {
            for (String join : o.joins) {
                double javaRate = medianThroughput(tp, "JAVA_HEAP", p, join);
                if (Double.isNaN(javaRate)) {
                    log("latency p=" + p + " " + join + ": no JAVA_HEAP throughput, skipped");
                    continue;
                }
                double rate = Math.floor(o.latencyLoad * javaRate / 1000) * 1000;
                for (String v : o.latencyVariants) {
                    List<String> a = runner(v, p, join);
                    a.addAll(
                            List.of(
                                    "--mode",
                                    "latency",
                                    "--runs",
                                    "1",
                                    "--rate",
                                    "" + rate,
                                    "--seconds",
                                    "" + o.latencySeconds,
                                    "--warmup",
                                    "" + o.latencyWarmup,
                                    "--out",
                                    file.toString(),
                                    "--warmup-fraction",
                                    "" + o.warmupFraction,
                                    "--warmup-runs",
                                    "" + o.warmupRuns));
                    long t0 = System.nanoTime();
                    int code =
                            child(
                                    "latency-" + v + "-p" + p + "-" + join,
                                    o.heap,
                                    a,
                                    (long) (o.latencySeconds * 4 + 120));
                    log(
                            String.format(
                                    "latency %s p=%d %s at %.0f/s: exit %d, %.0f s",
                                    v, p, join, rate, code, (System.nanoTime() - t0) / 1e9));
                }
            }
        }
    }

    void xmx() throws Exception {
        List<Map<String, Object>> tp = readLines(json, out.resolve("throughput.jsonl"));
        Path file = out.resolve("xmx.jsonl");
        Workload.Config xc = o.xmxWorkload();
        Path xmxTrace = Path.of(o.traceRoot).resolve(xc.id());
        Properties xp = Workload.generate(xc, xmxTrace);
        Files.copy(
                xmxTrace.resolve("trace.properties"),
                out.resolve("xmx-trace.properties"),
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        double scale =
                Double.parseDouble(xp.getProperty("messages"))
                        / Double.parseDouble(TraceFiles.load(trace).getProperty("messages"));
        int p = 1;
        String join = "LEFT";
        for (String v : o.xmxVariants != null ? o.xmxVariants : o.variants) {
            double rate = medianThroughput(tp, v, p, join);
            double messages =
                    Double.parseDouble(TraceFiles.load(trace).getProperty("messages")) * scale;
            double normal = Double.isNaN(rate) ? 120 : messages / rate;
            long timeout = (long) (3 * normal + 60);
            // Bisection over the sorted sizes: sizes[hi] completes (hi == size: none tried does),
            // sizes[lo] does not.
            int lo = -1;
            int hi = o.xmxSizes.size();
            while (hi - lo > 1) {
                int mid = (lo + hi) / 2;
                int mb = o.xmxSizes.get(mid);
                List<String> a = runner(v, p, join);
                a.set(a.indexOf(trace.toString()), xmxTrace.toString());
                Path attempt = out.resolve("xmx-attempt.jsonl");
                Files.deleteIfExists(attempt);
                a.addAll(
                        List.of(
                                "--runs",
                                "1",
                                "--out",
                                attempt.toString(),
                                "--warmup-fraction",
                                "0",
                                "--measure-state",
                                "false"));
                long t0 = System.nanoTime();
                int code = child("xmx-" + v + "-" + mb + "m", mb + "m", a, timeout);
                double secs = (System.nanoTime() - t0) / 1e9;
                List<Map<String, Object>> r = readLines(json, attempt);
                boolean ok = code == 0 && !r.isEmpty() && Boolean.TRUE.equals(r.get(0).get("ok"));
                Map<String, Object> rec = new LinkedHashMap<>();
                rec.put("variant", v);
                rec.put("parallelism", p);
                rec.put("join", join);
                rec.put("xmxMb", mb);
                rec.put("ok", ok);
                rec.put("exit", code);
                rec.put("wallSeconds", secs);
                rec.put("timeoutSeconds", timeout);
                if (!r.isEmpty()) {
                    rec.put("eventsPerSec", r.get(0).get("eventsPerSec"));
                }
                Files.writeString(
                        file,
                        json.writeValueAsString(rec) + "\n",
                        StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND);
                log(
                        String.format(
                                "xmx %s %d MB: %s (exit %d, %.0f s)",
                                v, mb, ok ? "ok" : "FAILED", code, secs));
                if (ok) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            Files.deleteIfExists(out.resolve("xmx-attempt.jsonl"));
        }
    }

    /**
     * The state-scale configuration (issue 18): for each size of the plan, a trace holding that
     * many stored rows at its end (INNER, p=1), then every planned variant once in a fresh JVM with
     * managed memory sized for the state and checkpoints every 10 s: throughput, CPU, peak RSS,
     * every checkpoint's phases and size, and the restore from the checkpoint taken at the end of
     * the input (the native variant's also at {@code --state-rescaled-restore} subtasks, a
     * rescaling restore). The native variant runs a second time without periodic checkpoints (the
     * throughput they cost; {@code --state-pairs} such pairs in all, alternated, every second one
     * without checkpoints first, the later ones without restore), and the latency variants at
     * {@code --state-latency-rate} over the whole trace, its state growing to the size, checkpoints
     * every 10 s.
     */
    void state() throws Exception {
        Path file = out.resolve("state.jsonl");
        for (Map.Entry<Double, List<String>> step : o.statePlan.entrySet()) {
            long rows = Math.round(step.getKey() * 1e6);
            Workload.Config cfg = o.stateWorkload(rows);
            Path t = stateTrace(cfg);
            Files.copy(
                    t.resolve("trace.properties"),
                    out.resolve("trace-" + cfg.id() + ".properties"),
                    java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            double warmup = Math.min(1, 1e6 / cfg.events);
            for (String v : step.getValue()) {
                if (v.equals("NATIVE") && o.statePairs > 1) {
                    // Unmeasured: the first JVM after a pause (the trace's generation, another
                    // suite) pays the host's faults for most of its memory on a virtual machine
                    // (3-5x the kernel CPU of the runs after it), which would make the first
                    // pair's ratio the memory's luck.
                    Path settle = out.resolve("state-settle.jsonl");
                    stateRun(v, t, rows, warmup, NO_PERIODIC_CHECKPOINT_MS, false, settle);
                }
                stateRun(v, t, rows, warmup, 10_000, true, file);
                if (v.equals("NATIVE")) {
                    stateRun(v, t, rows, warmup, NO_PERIODIC_CHECKPOINT_MS, false, file);
                    // Alternately without first: a run's place in the sequence (after the
                    // trace's read-ahead, after a run that just freed its memory) changes what
                    // its first touches of memory cost on a virtual machine.
                    for (int pair = 2; pair <= o.statePairs; pair++) {
                        boolean withFirst = pair % 2 == 1;
                        for (boolean with : new boolean[] {withFirst, !withFirst}) {
                            long interval = with ? 10_000 : NO_PERIODIC_CHECKPOINT_MS;
                            stateRun(v, t, rows, warmup, interval, false, file);
                        }
                    }
                }
            }
            for (String v : o.stateLatencyVariants) {
                stateLatencyRun(v, t, rows, cfg.events, warmup);
            }
        }
    }

    /** A checkpoint interval longer than any run: no periodic checkpoint, the final one only. */
    static final long NO_PERIODIC_CHECKPOINT_MS = 3_600_000;

    /** The trace of a state-scale step, generated in a child JVM with room for its tables. */
    private Path stateTrace(Workload.Config cfg) throws Exception {
        Path t = Path.of(o.traceRoot).resolve(cfg.id());
        if (Files.exists(t.resolve("trace.properties"))) {
            return t;
        }
        long heapMb = Math.max(1024, 1024 + (cfg.users + (long) cfg.domains) * 300 / (1 << 20));
        List<String> a =
                new ArrayList<>(
                        List.of(
                                "dev.cdcjoin.bench.Workload",
                                "--root",
                                o.traceRoot,
                                "--users",
                                "" + cfg.users,
                                "--domains",
                                "" + cfg.domains,
                                "--events",
                                "" + cfg.events,
                                "--seed",
                                "" + cfg.seed,
                                "--skew",
                                "" + cfg.skew,
                                "--mix",
                                cfg.mix,
                                "--partitions",
                                "" + cfg.partitions,
                                "--tombstones",
                                "" + cfg.tombstones));
        int code = child("generate-" + cfg.id(), heapMb + "m", a, 3600);
        if (code != 0 || !Files.exists(t.resolve("trace.properties"))) {
            throw new IllegalStateException(
                    "generating " + t + " failed (exit " + code + "), see logs/");
        }
        return t;
    }

    private void stateRun(
            String v, Path t, long rows, double warmup, long intervalMs, boolean restore, Path file)
            throws Exception {
        List<String> a = runner(v, 1, "INNER", t, rows);
        a.addAll(
                List.of(
                        "--runs",
                        "1",
                        "--out",
                        file.toString(),
                        "--warmup-fraction",
                        "" + warmup,
                        "--checkpoint-interval-ms",
                        "" + intervalMs,
                        "--restore",
                        "" + restore,
                        "--snapshot-compression",
                        "" + o.stateSnapshotCompression));
        if (v.equals("NATIVE") && restore) {
            a.addAll(List.of("--rescaled-restore", "" + o.stateRescaledRestore));
        }
        String name = "state-" + v + "-" + rows + (intervalMs == 10_000 ? "" : "-nockpt");
        warmPageCache(t);
        int before = readLines(json, file).size();
        long t0 = System.nanoTime();
        int code = child(name, o.heapFor(v, rows), a, 3600);
        log(
                String.format(
                        "%s: exit %d, %.0f s (load %.1f)%s",
                        name,
                        code,
                        (System.nanoTime() - t0) / 1e9,
                        Metrics.loadAverage(),
                        newError(file, before, name)));
    }

    /**
     * Reads the trace's files once before a run, where they fit in half the available memory, so
     * that each run of a pair finds them in the page cache: otherwise the run measured first pays
     * the disk reads its predecessor's memory use evicted (the 20M trace is 8.5 GB on a 24 GB
     * machine; the 40M one, 17 GB, does not fit, and both runs of its pair read from disk).
     */
    private void warmPageCache(Path t) throws IOException {
        List<Path> files;
        try (Stream<Path> list = Files.list(t)) {
            files = list.filter(Files::isRegularFile).toList();
        }
        long size = 0;
        for (Path f : files) {
            size += Files.size(f);
        }
        long available = memAvailableBytes();
        if (size > available / 2) {
            log(
                    String.format(
                            "trace %.1f GB: not read ahead (%.1f GB available)",
                            size / 1e9, available / 1e9));
            return;
        }
        long t0 = System.nanoTime();
        ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20);
        for (Path f : files) {
            try (FileChannel c = FileChannel.open(f)) {
                while (c.read(buf.clear()) > 0) {
                    // read ahead only
                }
            }
        }
        log(
                String.format(
                        "trace %.1f GB read ahead in %.1f s",
                        size / 1e9, (System.nanoTime() - t0) / 1e9));
    }

    /** MemAvailable of /proc/meminfo, in bytes (0 where unreadable: nothing is read ahead). */
    private static long memAvailableBytes() throws IOException {
        Path meminfo = Path.of("/proc/meminfo");
        if (!Files.exists(meminfo)) {
            return 0;
        }
        for (String line : Files.readAllLines(meminfo)) {
            if (line.startsWith("MemAvailable:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        return 0;
    }

    private void stateLatencyRun(String v, Path t, long rows, long events, double warmup)
            throws Exception {
        List<String> a = runner(v, 1, "INNER", t, rows);
        Path file = out.resolve("state-latency.jsonl");
        double seconds = Math.ceil(events / o.stateLatencyRate);
        a.addAll(
                List.of(
                        "--mode",
                        "latency",
                        "--runs",
                        "1",
                        "--rate",
                        "" + o.stateLatencyRate,
                        "--seconds",
                        "" + seconds,
                        "--warmup",
                        "" + o.latencyWarmup,
                        "--out",
                        file.toString(),
                        "--warmup-fraction",
                        "" + warmup));
        String name = "state-latency-" + v + "-" + rows;
        int before = readLines(json, file).size();
        long t0 = System.nanoTime();
        int code = child(name, o.heapFor(v, rows), a, (long) (seconds * 3 + 600));
        log(
                String.format(
                        "%s at %.0f/s: exit %d, %.0f s%s",
                        name,
                        o.stateLatencyRate,
                        code,
                        (System.nanoTime() - t0) / 1e9,
                        newError(file, before, name)));
    }

    /**
     * For the log: the first line of the error of the run that wrote lines after the first {@code
     * before} of {@code file}, or that it wrote none; empty if it succeeded.
     */
    private String newError(Path file, int before, String name) throws IOException {
        List<Map<String, Object>> rows = readLines(json, file);
        if (rows.size() == before) {
            return ": no result written, see logs/" + name + ".log";
        }
        Object e = rows.get(rows.size() - 1).get("error");
        return e == null ? "" : ": " + String.valueOf(e).lines().findFirst().orElse("");
    }

    void jmh() throws Exception {
        List<String> a = new ArrayList<>();
        a.add("-Dcdcjoin.bench.trace=" + trace);
        a.add("org.openjdk.jmh.Main");
        a.add("DecodeBench|JniCrossingBench");
        a.addAll(Arrays.asList(o.jmhArgs.split(" ")));
        a.addAll(List.of("-rf", "json", "-rff", out.resolve("jmh.json").toString()));
        long t0 = System.nanoTime();
        int code = child("jmh", "2g", a, 3600);
        log(String.format("jmh: exit %d, %.0f s", code, (System.nanoTime() - t0) / 1e9));
    }
}
