package dev.cdcjoin.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.cdcjoin.flink.CdcJoin;
import dev.cdcjoin.flink.Engine;
import dev.cdcjoin.flink.JoinType;
import dev.cdcjoin.flink.KafkaMessage;
import dev.cdcjoin.flink.runtime.NativeJoinOperator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.function.ToLongFunction;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.configuration.WebOptions;
import org.apache.flink.core.execution.CheckpointType;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.checkpoint.AbstractCheckpointStats;
import org.apache.flink.runtime.checkpoint.CheckpointStatsStatus;
import org.apache.flink.runtime.checkpoint.CompletedCheckpointStats;
import org.apache.flink.runtime.checkpoint.SubtaskStateStats;
import org.apache.flink.runtime.checkpoint.TaskStateStats;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.AccessExecution;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;

/**
 * Runs one variant of the join, one configuration (parallelism, join type), several times in one
 * JVM on one embedded MiniCluster, and appends one JSON line per run to {@code --out}.
 *
 * <p>Throughput runs read the whole trace flat out; the sources then pause, the harness triggers a
 * full checkpoint (its size and duration are reported; the barrier also flushes the native
 * operators' partial batches), reads the sink's checksum, measures the live heap after a full GC
 * while the state is still held, and releases the sources. Latency runs read the trace at a fixed
 * rate for a fixed time with probe updates and report the probes' latency percentiles.
 */
public final class Runner {

    /** The variants. */
    enum Variant {
        /** Native decode + native join (CdcJoin), defaults: batch 1024, max flush delay 100 ms. */
        NATIVE("hashmap"),
        /** The same with a 5 ms max flush delay (latency-tuned). */
        NATIVE_5MS("hashmap"),
        /**
         * {@code NATIVE} with the output as Flink's internal rows ({@code Result#rowData()}), the
         * sink reading {@code RowData} (same checksum): the two-table join only.
         */
        NATIVE_ROWDATA("hashmap"),
        /**
         * {@code NATIVE} reading the topics as {@code KafkaMessage}s ({@code joinKafka}: each
         * record's topic, partition and offset with its bytes) rather than value bytes: {@code
         * --source kafka}, the two-table join only.
         */
        NATIVE_KAFKA_MESSAGES("hashmap"),
        /** Pure-Java decode + join (CdcJoin with Engine.JAVA) on HashMapStateBackend. */
        JAVA_HEAP("hashmap"),
        /** Pure-Java decode + join on RocksDB. */
        JAVA_ROCKSDB("rocksdb"),
        /** Flink SQL regular join over debezium-json tables, HashMapStateBackend. */
        SQL_HEAP("hashmap"),
        /** Flink SQL on RocksDB. */
        SQL_ROCKSDB("rocksdb"),
        /**
         * {@code SQL_HEAP} with the query inserted into a sink table ({@link ChecksumTableFactory})
         * that reads the join's {@code RowData}, instead of {@code toChangelogStream}'s {@link
         * Row}s: the two-table join only.
         */
        SQL_ROWDATA_HEAP("hashmap"),
        /**
         * Flink SQL with its multi-way join ({@code table.optimizer.multi-join.enabled}, Flink
         * 2.1+), HashMapStateBackend: the three-table mart only ({@link MartJob}).
         */
        SQL_MULTIJOIN_HEAP("hashmap"),
        /**
         * The native multi-way join ({@code CdcMultiJoin}), HashMapStateBackend: the three-table
         * mart only ({@link MartJob}).
         */
        NATIVE_MULTIWAY("hashmap");

        final String backend;

        Variant(String backend) {
            this.backend = backend;
        }

        /** Sets a {@code CdcJoin} variant's engine and flush delay on {@code b}. */
        CdcJoin.Builder configure(CdcJoin.Builder b) {
            if (this == NATIVE_5MS) {
                b.maxFlushDelay(Duration.ofMillis(5));
            }
            if (this == JAVA_HEAP || this == JAVA_ROCKSDB) {
                b.engine(Engine.JAVA);
            }
            return b;
        }

        /** Whether the variant is a Flink SQL query (else a {@code CdcJoin} job). */
        boolean sql() {
            return this == SQL_HEAP
                    || this == SQL_ROCKSDB
                    || this == SQL_MULTIJOIN_HEAP
                    || this == SQL_ROWDATA_HEAP;
        }

        /** Whether the variant's sink reads Flink's internal rows (else {@link Row}s). */
        boolean rowData() {
            return this == NATIVE_ROWDATA || this == SQL_ROWDATA_HEAP;
        }
    }

    static final class Options {
        Variant variant;
        int parallelism = 1;
        JoinType join = JoinType.LEFT;
        String trace;
        int runs = 3;
        String mode = "throughput";
        double rate;
        double seconds = 20;
        double warmup = 6;
        String out;
        long checkpointIntervalMs = 10_000;
        long timeoutSeconds = 1800;
        boolean measureState = true;
        double warmupFraction = 0.3;

        /** Unmeasured warm-up runs before the measured ones (each over {@link #warmupFraction}). */
        int warmupRuns = 1;

        int runNumber = 1;
        String managedMemory = "512m";
        boolean restore;

        /** Flink's snapshot compression switch (the native joins write LZ4 sections with it). */
        boolean snapshotCompression;

        /**
         * After the restore, restore the same savepoint again at this parallelism (a rescaling
         * restore, on a cluster of its own with as many slots); 0 = none.
         */
        int rescaledRestore;

        /** The Kafka broker (host:port) whose topics hold the trace; null: read the trace files. */
        String kafka;

        static Options parse(String[] args) {
            Options o = new Options();
            for (int i = 0; i < args.length; i += 2) {
                String v = args[i + 1];
                switch (args[i]) {
                    case "--variant":
                        o.variant = Variant.valueOf(v);
                        break;
                    case "--parallelism":
                        o.parallelism = Integer.parseInt(v);
                        break;
                    case "--join":
                        o.join = JoinType.valueOf(v);
                        break;
                    case "--trace":
                        o.trace = v;
                        break;
                    case "--runs":
                        o.runs = Integer.parseInt(v);
                        break;
                    case "--mode":
                        o.mode = v;
                        break;
                    case "--rate":
                        o.rate = Double.parseDouble(v);
                        break;
                    case "--seconds":
                        o.seconds = Double.parseDouble(v);
                        break;
                    case "--warmup":
                        o.warmup = Double.parseDouble(v);
                        break;
                    case "--out":
                        o.out = v;
                        break;
                    case "--checkpoint-interval-ms":
                        o.checkpointIntervalMs = Long.parseLong(v);
                        break;
                    case "--timeout-s":
                        o.timeoutSeconds = Long.parseLong(v);
                        break;
                    case "--measure-state":
                        o.measureState = Boolean.parseBoolean(v);
                        break;
                    case "--warmup-fraction":
                        o.warmupFraction = Double.parseDouble(v);
                        break;
                    case "--warmup-runs":
                        o.warmupRuns = Integer.parseInt(v);
                        break;
                    case "--run-number":
                        o.runNumber = Integer.parseInt(v);
                        break;
                    case "--managed-memory":
                        o.managedMemory = v;
                        break;
                    case "--restore":
                        o.restore = Boolean.parseBoolean(v);
                        break;
                    case "--snapshot-compression":
                        o.snapshotCompression = Boolean.parseBoolean(v);
                        break;
                    case "--rescaled-restore":
                        o.rescaledRestore = Integer.parseInt(v);
                        break;
                    case "--kafka":
                        o.kafka = v;
                        // A Kafka job ends with its input: no paused end to measure the state at.
                        o.measureState = false;
                        break;
                    default:
                        throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (o.kafka != null && (o.restore || !o.mode.equals("throughput"))) {
                throw new IllegalArgumentException("--kafka: throughput runs only, no restore");
            }
            return o;
        }
    }

    private final Options o;
    private final Properties trace;

    /** Whether the trace is the three-table mart's ({@link MartWorkload}). */
    private final boolean mart;

    private final MiniCluster cluster;
    private final Metrics.HeapSampler sampler = new Metrics.HeapSampler();
    private final Path checkpoints;

    Runner(Options o) throws Exception {
        this.o = o;
        this.trace = TraceFiles.load(Path.of(o.trace));
        this.mart = Workload.Shape.MART3.name().equals(trace.getProperty("shape"));
        this.checkpoints =
                Files.createTempDirectory(
                        Path.of(System.getProperty("java.io.tmpdir")), "cdcjoin-bench-ckpt");
        cluster = startCluster(o.parallelism);
        sampler.start();
    }

    /**
     * A started MiniCluster of one TaskManager with {@code slots} slots, which share the run's
     * managed memory.
     */
    private MiniCluster startCluster(int slots) throws Exception {
        Configuration conf = new Configuration();
        conf.set(TaskManagerOptions.NUM_TASK_SLOTS, slots);
        conf.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.parse(o.managedMemory));
        conf.set(StateBackendOptions.STATE_BACKEND, o.variant.backend);
        conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpoints.toUri().toString());
        // Every checkpoint of a run stays in its statistics (the default keeps the last 10).
        conf.set(WebOptions.CHECKPOINTS_HISTORY_SIZE, 100_000);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        conf.set(RestOptions.BIND_PORT, "0");
        RestoreGauges.register(conf);
        MiniCluster c =
                new MiniCluster(
                        new MiniClusterConfiguration.Builder()
                                .setConfiguration(conf)
                                .setNumTaskManagers(1)
                                .setNumSlotsPerTaskManager(slots)
                                .build());
        c.start();
        return c;
    }

    public static void main(String[] args) throws Exception {
        Options o = Options.parse(args);
        Runner r = new Runner(o);
        int code = 0;
        try {
            for (int k = 0; k < o.warmupRuns && o.warmupFraction > 0 && code == 0; k++) {
                Map<String, Object> w = r.warmupRun();
                System.out.println("warm-up: " + new ObjectMapper().writeValueAsString(w));
                if (!Boolean.TRUE.equals(w.get("ok"))) {
                    code = 3;
                }
            }
            for (int i = 1; i <= o.runs && code == 0; i++) {
                Map<String, Object> result =
                        o.mode.equals("latency") ? r.latencyRun(i) : r.throughputRun(i);
                if (i == o.runs
                        && o.measureState
                        && !o.mode.equals("latency")
                        && Boolean.TRUE.equals(result.get("ok"))) {
                    result.put("liveHeapIdle", Metrics.settledLiveHeap());
                }
                String line = new ObjectMapper().writeValueAsString(result);
                System.out.println(line);
                if (o.out != null) {
                    Files.writeString(
                            Path.of(o.out),
                            line + "\n",
                            StandardOpenOption.CREATE,
                            StandardOpenOption.APPEND);
                }
                if (!Boolean.TRUE.equals(result.get("ok"))) {
                    code = 2;
                }
            }
        } catch (Throwable t) {
            t.printStackTrace();
            code = 1;
        } finally {
            try {
                r.cluster.closeAsync().get(60, TimeUnit.SECONDS);
            } catch (Exception e) {
                // exiting anyway
            }
            deleteTree(r.checkpoints);
        }
        System.exit(code);
    }

    /** A run over a prefix of the trace, not reported: class loading and JIT warm-up. */
    Map<String, Object> warmupRun() throws Exception {
        Map<String, Object> m = base(0);
        resetRun();
        TraceSource.Spec spec = spec();
        spec.fraction = o.warmupFraction;
        StreamExecutionEnvironment env = env();
        build(env, spec, false);
        long t0 = System.nanoTime();
        JobID job = submit(env);
        JobResult done = cluster.requestJobResult(job).get(o.timeoutSeconds, TimeUnit.SECONDS);
        if (!done.isSuccess()) {
            return failed(m, done);
        }
        m.put("messages", RunControl.messagesEmitted.get());
        m.put("wallSeconds", (System.nanoTime() - t0) / 1e9);
        m.put("releaseSeconds", awaitReleased());
        if (o.measureState) {
            m.put("liveHeapAfter", Metrics.settledLiveHeap()); // the warm-up's state must be gone
        }
        m.put("ok", true);
        return m;
    }

    /** Resets {@link RunControl} for a new job over the whole trace. */
    private void resetRun() {
        RunControl.reset();
        RunControl.expectedMessages = Long.parseLong(trace.getProperty("messages"));
        // A Kafka job's input ends once (KafkaInput.Progress), a trace's once per source subtask.
        RunControl.sources = o.kafka != null ? 1 : TraceFiles.topics(trace).size() * o.parallelism;
    }

    private StreamExecutionEnvironment env() {
        Configuration jobConf = new Configuration();
        jobConf.set(StateBackendOptions.STATE_BACKEND, o.variant.backend);
        // A failed job fails its run at once with its exception: no restarts.
        jobConf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        jobConf.set(ExecutionOptions.SNAPSHOT_COMPRESSION, o.snapshotCompression);
        StreamExecutionEnvironment env =
                StreamExecutionEnvironment.getExecutionEnvironment(jobConf);
        env.setParallelism(o.parallelism);
        env.getConfig().enableObjectReuse();
        if (o.checkpointIntervalMs > 0) {
            env.enableCheckpointing(o.checkpointIntervalMs);
            env.getCheckpointConfig().setCheckpointTimeout(600_000);
        }
        return env;
    }

    /** Builds the job: sources → variant → checksum sink. */
    private void build(StreamExecutionEnvironment env, TraceSource.Spec spec, boolean probes) {
        if (o.variant.rowData()) {
            if (mart) {
                throw new IllegalArgumentException(o.variant + " joins two tables, not mart3");
            }
            pairRowData(env, spec, probes);
            return;
        }
        DataStream<Row> rows = mart ? martRows(env, spec) : pairRows(env, spec);
        rows.sinkTo(new ChecksumSink<>(probes, RowAccess.ROWS)).name("checksum sink");
    }

    /** The users/domains join's changelog as Flink's internal rows into the checksum sink. */
    private void pairRowData(
            StreamExecutionEnvironment env, TraceSource.Spec spec, boolean probes) {
        if (o.variant.sql()) {
            StreamTableEnvironment t = tableEnv(env);
            t.executeSql(
                    "CREATE TABLE checksum (id INT, firstname STRING, lastname STRING,"
                            + " domain_id INT, user_id INT, domain_name STRING) WITH ("
                            + "'connector' = 'cdcjoin-bench-checksum', 'probes' = '"
                            + probes
                            + "')");
            t.createStatementSet()
                    .addInsertSql("INSERT INTO checksum " + sqlPairQuery(t, spec))
                    .attachAsDataStream();
            return;
        }
        CdcJoin join = pairJoin();
        join.joinJson(
                        source(env, spec.copyForTopic(0), "users"),
                        source(env, spec.copyForTopic(1), "domains"))
                .rowData()
                .sinkTo(new ChecksumSink<>(probes, RowAccess.rowData(join.spec().rowType())))
                .name("checksum sink");
    }

    /** The users/domains join's changelog. */
    private DataStream<Row> pairRows(StreamExecutionEnvironment env, TraceSource.Spec spec) {
        if (o.variant == Variant.SQL_MULTIJOIN_HEAP || o.variant == Variant.NATIVE_MULTIWAY) {
            throw new IllegalArgumentException(
                    o.variant + " joins three tables: run it on --config mart3");
        }
        if (o.variant.sql()) {
            StreamTableEnvironment t = tableEnv(env);
            return t.toChangelogStream(t.sqlQuery(sqlPairQuery(t, spec)));
        }
        if (o.variant == Variant.NATIVE_KAFKA_MESSAGES) {
            return pairJoin()
                    .joinKafka(messages(env, 0, "users"), messages(env, 1, "domains"))
                    .rows();
        }
        DataStream<byte[]> users = source(env, spec.copyForTopic(0), "users");
        DataStream<byte[]> domains = source(env, spec.copyForTopic(1), "domains");
        return pairJoin().joinJson(users, domains).rows();
    }

    /** The users/domains {@code CdcJoin} of the variant. */
    private CdcJoin pairJoin() {
        return o.variant
                .configure(CdcJoin.builder())
                .left("users", Workload.USERS, List.of("id"), List.of("id"))
                .right("domains", Workload.DOMAINS, List.of("user_id"), List.of("id"))
                .joinType(o.join)
                .build();
    }

    /** Declares the users and domains tables in {@code t}; returns the join's query over them. */
    private String sqlPairQuery(StreamTableEnvironment t, TraceSource.Spec spec) {
        t.executeSql(
                "CREATE TABLE users (id INT NOT NULL, firstname STRING, lastname STRING,"
                        + " PRIMARY KEY (id) NOT ENFORCED) WITH ("
                        + tableOptions(spec, 0)
                        + ")");
        t.executeSql(
                "CREATE TABLE domains (id INT NOT NULL, user_id INT, domain_name STRING,"
                        + " PRIMARY KEY (id) NOT ENFORCED) WITH ("
                        + tableOptions(spec, 1)
                        + ")");
        String join = o.join == JoinType.LEFT ? "LEFT JOIN" : "JOIN";
        return "SELECT u.id, u.firstname, u.lastname, d.id AS domain_id, d.user_id, d.domain_name"
                + " FROM users AS u "
                + join
                + " domains AS d ON u.id = d.user_id";
    }

    /** The three-table mart's changelog ({@link MartJob}). */
    private DataStream<Row> martRows(StreamExecutionEnvironment env, TraceSource.Spec spec) {
        if (o.variant.sql()) {
            return MartJob.sql(tableEnv(env), t -> tableOptions(spec, t), o.variant, o.join);
        }
        if (o.variant == Variant.NATIVE_KAFKA_MESSAGES) {
            throw new IllegalArgumentException(o.variant + " joins two tables, not mart3");
        }
        IntFunction<DataStream<byte[]>> topics =
                t -> source(env, spec.copyForTopic(t), TraceFiles.TOPICS.get(t));
        if (o.variant == Variant.NATIVE_MULTIWAY) {
            return MartJob.multiway(topics, o.join);
        }
        return MartJob.chain(topics, o.variant, o.join);
    }

    private StreamTableEnvironment tableEnv(StreamExecutionEnvironment env) {
        StreamTableEnvironment t = StreamTableEnvironment.create(env);
        t.getConfig().set("table.exec.resource.default-parallelism", "" + o.parallelism);
        return t;
    }

    /**
     * The {@code WITH} options of the SQL table of topic {@code topic} (of {@link
     * TraceFiles#TOPICS}): the Kafka connector's, or the trace connector's ({@link
     * TraceTableFactory}) with the run's source settings.
     */
    private String tableOptions(TraceSource.Spec spec, int topic) {
        if (o.kafka != null) {
            return KafkaInput.sqlOptions(o.kafka, Path.of(o.trace), topic);
        }
        return "'connector' = 'cdcjoin-bench-trace', 'format' = 'debezium-json', 'trace' = '"
                + spec.dir
                + "', 'rate' = '"
                + spec.rate
                + "', 'max-seconds' = '"
                + spec.maxSeconds
                + "', 'pause-at-end' = '"
                + spec.pauseAtEnd
                + "', 'probes' = '"
                + spec.probes
                + "', 'probe-interval-ns' = '"
                + spec.probeIntervalNanos
                + "', 'fraction' = '"
                + spec.fraction
                + "', 'topic' = '"
                + TraceFiles.TOPICS.get(topic)
                + "'";
    }

    /** Topic {@code t}'s records as {@code KafkaMessage}s, from the Kafka broker only. */
    private DataStream<KafkaMessage> messages(StreamExecutionEnvironment env, int t, String name) {
        if (o.kafka == null) {
            throw new IllegalArgumentException(
                    o.variant + " reads Kafka: run it with --source kafka");
        }
        return KafkaInput.messages(env, o.kafka, Path.of(o.trace), t, name);
    }

    /** The byte[] messages of one topic: from the Kafka broker, or from the trace files. */
    private DataStream<byte[]> source(
            StreamExecutionEnvironment env, TraceSource.Spec spec, String name) {
        if (o.kafka != null) {
            return KafkaInput.source(env, o.kafka, Path.of(o.trace), spec.topic, name);
        }
        return env.fromSource(
                new TraceSource<>(spec, new Emitters.Bytes()),
                WatermarkStrategy.noWatermarks(),
                name,
                PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO);
    }

    private TraceSource.Spec spec() {
        TraceSource.Spec s = new TraceSource.Spec();
        s.dir = o.trace;
        return s;
    }

    private JobID submit(StreamExecutionEnvironment env) throws Exception {
        JobGraph graph = env.getStreamGraph().getJobGraph();
        cluster.submitJob(graph).get();
        return graph.getJobID();
    }

    private Map<String, Object> base(int run) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("variant", o.variant.name());
        m.put("parallelism", o.parallelism);
        m.put("join", o.join.name());
        m.put("mode", o.mode);
        m.put("source", o.kafka != null ? "kafka" : "trace");
        m.put("run", o.runNumber + run - 1);
        m.put("trace", o.trace);
        m.put(
                "storedRows",
                trace.stringPropertyNames().stream()
                        .filter(k -> k.startsWith("final."))
                        .mapToLong(k -> Long.parseLong(trace.getProperty(k)))
                        .sum());
        m.put("checkpointIntervalMs", o.checkpointIntervalMs);
        m.put("snapshotCompression", o.snapshotCompression);
        m.put("managedMemory", o.managedMemory);
        m.put("xmx", Runtime.getRuntime().maxMemory());
        m.put("loadBefore", Metrics.loadAverage());
        return m;
    }

    Map<String, Object> throughputRun(int run) throws Exception {
        Map<String, Object> m = base(run);
        String restorePath = null;
        resetRun();
        sampler.takePeak();
        TraceSource.Spec spec = spec();
        spec.pauseAtEnd = true;
        StreamExecutionEnvironment env = env();
        build(env, spec, false);
        JobID job = submit(env);
        CompletableFuture<JobResult> result = cluster.requestJobResult(job);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(o.timeoutSeconds);
        while (RunControl.exhausted.get() < RunControl.sources) {
            if (result.isDone()) {
                return failed(m, result.get());
            }
            if (System.nanoTime() > deadline) {
                cluster.cancelJob(job);
                m.put("ok", false);
                m.put("error", "timeout");
                return m;
            }
            Thread.sleep(2);
        }
        long cpuEnd = Metrics.processCpuNanos();
        // The busiest thread, in cores: near 1, that thread bounds the throughput. Named now, while
        // it lives (a Kafka job ends with its input).
        Map.Entry<String, Long> busiest =
                Metrics.busiestThread(RunControl.threadCpuAtFirstEmit, Metrics.threadCpuNanos());
        Map<String, Long> cpuByKindEnd = Metrics.cpuByThreadKind();
        Map<String, Long> kernelCpuByKindEnd = Metrics.kernelCpuByThreadKind();
        long minorFaultsEnd = Metrics.minorFaults();
        double machineEnd = Metrics.machineBusySeconds();
        long exhaustedAt = RunControl.exhaustedAt;
        // The final checkpoint: flushes the native batches; its size is the whole final state. A
        // Kafka job is not paused at its end: it ends, and its result is read after it.
        long ckptStart = System.nanoTime();
        Long ckpt = null;
        if (o.kafka != null) {
            JobResult ended = result.get(o.timeoutSeconds, TimeUnit.SECONDS);
            if (!ended.isSuccess()) {
                return failed(m, ended);
            }
        }
        for (int attempt = 0; o.kafka == null && ckpt == null && attempt < 20; attempt++) {
            try {
                ckpt =
                        cluster.triggerCheckpoint(job, CheckpointType.FULL)
                                .get(600, TimeUnit.SECONDS);
            } catch (Exception e) {
                m.put("checkpointRetry", String.valueOf(e.getMessage()));
                Thread.sleep(500);
            }
        }
        long ckptWall = System.nanoTime() - ckptStart;
        long messages = RunControl.messagesEmitted.get();
        long first = RunControl.firstEmit.get();
        long last = Math.max(RunControl.lastRow.get(), exhaustedAt);
        double seconds = (last - first) / 1e9;
        long cpu = cpuEnd - RunControl.cpuAtFirstEmit;
        m.put("messages", messages);
        m.put("seconds", seconds);
        m.put("eventsPerSec", messages / seconds);
        m.put("cpuSeconds", cpu / 1e9);
        m.put("cpuNsPerEvent", (double) cpu / messages);
        // CPU used by other processes meanwhile, in cores: the machine's busy time minus ours.
        double inputSeconds = (exhaustedAt - first) / 1e9;
        m.put(
                "backgroundCores",
                (machineEnd - RunControl.machineAtFirstEmit - cpu / 1e9) / inputSeconds);
        if (busiest != null) {
            m.put("busiestThread", busiest.getKey());
            m.put("busiestThreadCores", busiest.getValue() / 1e9 / inputSeconds);
        }
        // Where the CPU went, by thread kind (task chains, JIT compilers, GC): in seconds.
        m.put(
                "cpuByThread",
                Metrics.cpuSecondsBetween(RunControl.cpuByKindAtFirstEmit, cpuByKindEnd));
        // The kernel's part of it (page faults above all) and the page faults themselves.
        m.put(
                "kernelCpuByThread",
                Metrics.cpuSecondsBetween(
                        RunControl.kernelCpuByKindAtFirstEmit, kernelCpuByKindEnd));
        m.put("minorFaults", minorFaultsEnd - RunControl.minorFaultsAtFirstEmit);
        m.put("rowsOut", RunControl.rowsOut.get());
        long count = RunControl.signedCount.get();
        String sum = Long.toHexString(RunControl.checksum.get());
        String expectedCount = trace.getProperty("expected." + o.join + ".count");
        String expectedSum = trace.getProperty("expected." + o.join + ".checksum");
        m.put("resultCount", count);
        m.put("resultChecksum", sum);
        m.put("checksumOk", expectedCount.equals("" + count) && expectedSum.equals(sum));
        m.put("peakHeapUsed", sampler.takePeak());
        if (ckpt != null) {
            AbstractCheckpointStats stats = checkpointStats(job, ckpt);
            if (stats != null) {
                m.put("checkpointId", ckpt);
                m.put("checkpointStateSize", stats.getStateSize());
                m.put("checkpointedSize", stats.getCheckpointedSize());
                m.put("checkpointDurationMs", stats.getEndToEndDuration());
            }
            m.put("checkpointWallMs", ckptWall / 1e6);
        }
        m.put("checkpoints", checkpointHistory(job));
        if (o.restore) {
            restorePath = savepoint(job, m);
        }
        if (o.measureState) {
            m.put("liveHeapAtEnd", Metrics.liveHeapAfterFullGc());
            Map<String, Long> status = Metrics.procStatus();
            m.put("rssAtEnd", status.get("VmRSS"));
            m.put("rssAnonAtEnd", status.get("RssAnon"));
        }
        RunControl.release.complete(null);
        JobResult done = result.get(o.timeoutSeconds, TimeUnit.SECONDS);
        if (!done.isSuccess()) {
            return failed(m, done);
        }
        m.put("releaseSeconds", awaitReleased());
        JobExecutionResult r = done.toJobExecutionResult(Runner.class.getClassLoader());
        Object nativeBytes = r.getAccumulatorResult(NativeJoinOperator.ACC_STATE_HEAP_BYTES);
        if (nativeBytes != null) {
            m.put("nativeStateBytes", nativeBytes);
            m.put("nativeStateRows", r.getAccumulatorResult(NativeJoinOperator.ACC_STATE_ROWS));
            m.put(
                    "nativeStateRowBytes",
                    r.getAccumulatorResult(NativeJoinOperator.ACC_STATE_ROW_BYTES));
        }
        Map<String, Long> status = Metrics.procStatus();
        m.put("vmHwm", status.get("VmHWM"));
        m.put("loadAfter", Metrics.loadAverage());
        m.put("ok", m.get("checksumOk"));
        if (o.restore && Boolean.TRUE.equals(m.get("ok"))) {
            m.putAll(restore(cluster, restorePath, o.parallelism));
            if (o.rescaledRestore > 0) {
                m.put("rescaledRestore", rescaledRestore(restorePath));
            }
        }
        return m;
    }

    Map<String, Object> latencyRun(int run) throws Exception {
        Map<String, Object> m = base(run);
        resetRun();
        RunControl.enableLatencySamples();
        sampler.takePeak();
        TraceSource.Spec spec = spec();
        spec.rate = o.rate;
        spec.maxSeconds = o.seconds;
        spec.probes = 16;
        spec.probeIntervalNanos = 2_000_000;
        StreamExecutionEnvironment env = env();
        build(env, spec, true);
        JobID job = submit(env);
        CompletableFuture<JobResult> result = cluster.requestJobResult(job);
        while (RunControl.firstEmit.get() == Long.MAX_VALUE && !result.isDone()) {
            Thread.sleep(1);
        }
        long first = RunControl.firstEmit.get();
        RunControl.warmupUntil = first + (long) (o.warmup * 1e9);
        JobResult done = result.get(o.timeoutSeconds, TimeUnit.SECONDS);
        if (!done.isSuccess()) {
            return failed(m, done);
        }
        long messages = RunControl.messagesEmitted.get();
        double seconds = (RunControl.exhaustedAt - first) / 1e9;
        double own = (Metrics.processCpuNanos() - RunControl.cpuAtFirstEmit) / 1e9;
        m.put(
                "backgroundCores",
                (Metrics.machineBusySeconds() - RunControl.machineAtFirstEmit - own)
                        / ((System.nanoTime() - first) / 1e9));
        m.put("targetRate", o.rate);
        m.put("messages", messages);
        m.put("probes", RunControl.probesEmitted.get());
        m.put("achievedRate", messages / seconds);
        int n = Math.min(RunControl.latencyCount.get(), RunControl.latencies.length);
        long[] l = Arrays.copyOf(RunControl.latencies, n);
        Arrays.sort(l);
        m.put("latencySamples", n);
        if (n > 0) {
            m.put("latencyP50Ms", l[(int) (0.50 * (n - 1))] / 1e6);
            m.put("latencyP99Ms", l[(int) (0.99 * (n - 1))] / 1e6);
            m.put("latencyP999Ms", l[(int) (0.999 * (n - 1))] / 1e6);
            m.put("latencyMaxMs", l[n - 1] / 1e6);
        }
        m.put("peakHeapUsed", sampler.takePeak());
        m.put("vmHwm", Metrics.procStatus().get("VmHWM"));
        m.put("loadAfter", Metrics.loadAverage());
        m.put("checkpoints", checkpointHistory(job));
        m.put("ok", n > 0);
        return m;
    }

    /**
     * Every completed checkpoint of a job: its id, end-to-end duration, state size, and the longest
     * synchronous and asynchronous phase of any subtask (the pause of the task thread and the
     * background write), with the operator chain each was in.
     */
    private List<Map<String, Object>> checkpointHistory(JobID job) throws Exception {
        AccessExecutionGraph graph = cluster.getExecutionGraph(job).get();
        List<Map<String, Object>> list = new ArrayList<>();
        for (AbstractCheckpointStats s :
                graph.getCheckpointStatsSnapshot().getHistory().getCheckpoints()) {
            if (s.getStatus() != CheckpointStatsStatus.COMPLETED
                    || s.getProperties().isSavepoint()) {
                continue;
            }
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("id", s.getCheckpointId());
            c.put("triggeredMs", s.getTriggerTimestamp());
            c.put("endToEndMs", s.getEndToEndDuration());
            c.put("stateSize", s.getStateSize());
            c.put("checkpointedSize", s.getCheckpointedSize());
            putLongestPhase(c, graph, s, "sync", SubtaskStateStats::getSyncCheckpointDuration);
            putLongestPhase(c, graph, s, "async", SubtaskStateStats::getAsyncCheckpointDuration);
            list.add(c);
        }
        list.sort(Comparator.comparingLong(c -> (Long) c.get("id")));
        return list;
    }

    /** Puts the longest {@code phase} duration of any subtask of a checkpoint, and its chain. */
    private static void putLongestPhase(
            Map<String, Object> c,
            AccessExecutionGraph graph,
            AbstractCheckpointStats s,
            String phase,
            ToLongFunction<SubtaskStateStats> duration) {
        long longest = -1;
        String where = null;
        for (TaskStateStats task : s.getAllTaskStateStats()) {
            for (SubtaskStateStats sub : task.getSubtaskStats()) {
                if (sub != null && duration.applyAsLong(sub) > longest) {
                    longest = duration.applyAsLong(sub);
                    where = graph.getJobVertex(task.getJobVertexId()).getName();
                }
            }
        }
        c.put(phase + "Ms", longest);
        c.put(phase + "Task", where);
    }

    /**
     * Takes a savepoint in the native format (the bytes a full checkpoint writes; unlike a
     * checkpoint it outlives the finished job) while the sources pause at the end of the input, and
     * puts its size; returns its path.
     */
    private String savepoint(JobID job, Map<String, Object> m) throws Exception {
        String path =
                cluster.triggerSavepoint(
                                job,
                                checkpoints.resolve("savepoints").toUri().toString(),
                                false,
                                SavepointFormatType.NATIVE)
                        .get(o.timeoutSeconds, TimeUnit.SECONDS);
        CompletedCheckpointStats s =
                cluster.getExecutionGraph(job)
                        .get()
                        .getCheckpointStatsSnapshot()
                        .getHistory()
                        .getLatestSavepoint();
        m.put("savepointSize", s == null ? null : s.getStateSize());
        return path;
    }

    /**
     * Starts the same job from the savepoint at {@code path} (taken at the end of the input) and
     * measures how long its subtasks take to restore: from submission until every subtask runs, and
     * the time each subtask spent initializing (restoring its state and opening its operators), the
     * longest of all and of the join's (a task named "…Join…"), on the cluster {@code on} at {@code
     * parallelism}. The restored job is cancelled once it runs.
     */
    private Map<String, Object> restore(MiniCluster on, String path, int parallelism)
            throws Exception {
        Map<String, Object> m = new LinkedHashMap<>();
        if (path == null || !Files.exists(localPath(path).resolve("_metadata"))) {
            m.put("restoreError", "no savepoint at " + path);
            return m;
        }
        resetRun();
        TraceSource.Spec spec = spec();
        spec.pauseAtEnd = true;
        StreamExecutionEnvironment env = env();
        env.setParallelism(parallelism);
        build(env, spec, false);
        JobGraph graph = env.getStreamGraph().getJobGraph();
        graph.setSavepointRestoreSettings(SavepointRestoreSettings.forPath(path, false));
        long t0 = System.nanoTime();
        on.submitJob(graph).get();
        CompletableFuture<JobResult> result = on.requestJobResult(graph.getJobID());
        long deadline = t0 + TimeUnit.SECONDS.toNanos(o.timeoutSeconds);
        AccessExecutionGraph running;
        while (!allRunning(running = on.getExecutionGraph(graph.getJobID()).get())) {
            if (result.isDone()) {
                JobResult failed = result.get();
                m.put("restoreError", failed(new LinkedHashMap<>(), failed).get("error"));
                return m;
            }
            if (System.nanoTime() > deadline) {
                m.put("restoreError", "timeout");
                break;
            }
            Thread.sleep(5);
        }
        m.put("restoreWallMs", (System.nanoTime() - t0) / 1e6);
        Map<String, Long> byTask = new LinkedHashMap<>();
        for (AccessExecutionVertex v : running.getAllExecutionVertices()) {
            AccessExecution e = v.getCurrentExecutionAttempt();
            long init =
                    e.getStateTimestamp(ExecutionState.RUNNING)
                            - e.getStateTimestamp(ExecutionState.INITIALIZING);
            byTask.merge(v.getTaskNameWithSubtaskIndex(), init, Math::max);
        }
        m.put(
                "restoreInitMs",
                byTask.values().stream().mapToLong(Long::longValue).max().orElse(-1));
        m.put("restoreInitMsByTask", byTask);
        m.put(
                "restoreJoinInitMs",
                byTask.entrySet().stream()
                        .filter(t -> !t.getKey().startsWith("Source"))
                        .mapToLong(Map.Entry::getValue)
                        .max()
                        .orElse(-1));
        // The join's own reading of its snapshot (all its subtasks' bytes, the longest one's time).
        m.put(
                "restoreStateBytes",
                RestoreGauges.sumAndMax(dev.cdcjoin.flink.CdcJoinMetrics.RESTORED_STATE_BYTES)[0]);
        m.put(
                "restoreStateMs",
                RestoreGauges.sumAndMax(dev.cdcjoin.flink.CdcJoinMetrics.STATE_RESTORE_MILLIS)[1]);
        on.cancelJob(graph.getJobID()).get();
        RunControl.release.complete(null);
        result.get(o.timeoutSeconds, TimeUnit.SECONDS);
        awaitReleased();
        return m;
    }

    /**
     * The restore of {@link #restore} again, from the same savepoint, at {@link
     * Options#rescaledRestore} subtasks on a cluster of that many slots (the run's cluster has one
     * per subtask of the run, and its managed memory is shared by its slots): the key groups of
     * each subtask of the run spread over the new subtasks.
     */
    private Map<String, Object> rescaledRestore(String path) throws Exception {
        MiniCluster rescaled = startCluster(o.rescaledRestore);
        try {
            Map<String, Object> m = restore(rescaled, path, o.rescaledRestore);
            m.put("parallelism", o.rescaledRestore);
            return m;
        } finally {
            rescaled.closeAsync().get(60, TimeUnit.SECONDS);
        }
    }

    /** A local checkpoint path as Flink reports it ({@code file:/…} or a plain path). */
    private static Path localPath(String path) {
        return path.startsWith("file:") ? Path.of(java.net.URI.create(path)) : Path.of(path);
    }

    /**
     * Whether the job and every subtask run (a job still initializing shows a graph without
     * subtasks).
     */
    private static boolean allRunning(AccessExecutionGraph graph) {
        if (graph.getState() != JobStatus.RUNNING) {
            return false;
        }
        boolean any = false;
        for (AccessExecutionVertex v : graph.getAllExecutionVertices()) {
            if (v.getExecutionState() != ExecutionState.RUNNING) {
                return false;
            }
            any = true;
        }
        return any;
    }

    /**
     * Waits until the finished job's slots are free again: the TaskExecutor holds a finished task,
     * and with it its heap state, until then (seconds on a loaded machine). Returns the wait.
     */
    private double awaitReleased() throws Exception {
        long t0 = System.nanoTime();
        while (System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(60)) {
            var overview = cluster.requestClusterOverview().get();
            if (overview.getNumSlotsAvailable() == overview.getNumSlotsTotal()
                    && overview.getNumJobsRunningOrPending() == 0) {
                break;
            }
            Thread.sleep(50);
        }
        Thread.sleep(500);
        return (System.nanoTime() - t0) / 1e9;
    }

    private AbstractCheckpointStats checkpointStats(JobID job, long id) throws Exception {
        for (int i = 0; i < 100; i++) {
            AbstractCheckpointStats s =
                    cluster.getExecutionGraph(job)
                            .get()
                            .getCheckpointStatsSnapshot()
                            .getHistory()
                            .getCheckpointById(id);
            if (s != null && s.getStatus() == CheckpointStatsStatus.COMPLETED) {
                return s;
            }
            Thread.sleep(50);
        }
        return null;
    }

    /**
     * Marks a run failed with its job's exception: the root cause's line first (Flink wraps it,
     * e.g. in "Recovery is suppressed by NoRestartBackoffTimeStrategy"), then the stack trace.
     */
    private static Map<String, Object> failed(Map<String, Object> m, JobResult r) {
        m.put("ok", false);
        String trace =
                r.getSerializedThrowable()
                        .map(t -> t.getFullStringifiedStackTrace())
                        .orElse("job failed");
        String cause =
                trace.lines()
                        .filter(l -> l.startsWith("Caused by: "))
                        .reduce((a, b) -> b)
                        .map(l -> l.substring("Caused by: ".length()))
                        .orElse(trace.lines().findFirst().orElse(""));
        m.put("error", cause + "\n" + (trace.length() > 4000 ? trace.substring(0, 4000) : trace));
        return m;
    }

    private static void deleteTree(Path p) {
        try (var walk = Files.walk(p)) {
            walk.sorted((a, b) -> b.compareTo(a)).forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            // best effort
        }
    }
}
