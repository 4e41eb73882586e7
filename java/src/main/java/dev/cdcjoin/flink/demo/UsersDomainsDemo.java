package dev.cdcjoin.flink.demo;

import dev.cdcjoin.flink.BadRecord;
import dev.cdcjoin.flink.BadRecordPolicy;
import dev.cdcjoin.flink.CdcJoin;
import dev.cdcjoin.flink.JoinType;
import dev.cdcjoin.flink.KafkaMessage;
import dev.cdcjoin.flink.KafkaMessageDeserializer;
import dev.cdcjoin.flink.runtime.NativeJoinOperator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.accumulators.LongMaximum;
import org.apache.flink.api.common.accumulators.LongMinimum;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.KafkaSourceBuilder;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.types.Row;

/**
 * The demo: joins a generated users/domains Debezium trace (or two Kafka topics of Debezium JSON)
 * in an embedded Flink MiniCluster, printing the changelog as it comes and a summary at the end.
 *
 * <pre>
 * mvn -q -B package -DskipTests exec:exec -Ddemo.args="--join-type LEFT --changes 1000000"
 * mvn -q -B package -DskipTests exec:exec \
 *     -Ddemo.args="--kafka-bootstrap localhost:9092 --users-topic shop.public.users --domains-topic shop.public.domains"
 * </pre>
 *
 * Options: {@code --join-type INNER|LEFT|RIGHT|FULL} (default LEFT), {@code --changes N} (default
 * 300000), {@code --users N} (user id space, default 20000), {@code --seed N}, {@code --parallelism
 * N} (default 2), {@code --print N} (rows printed, default 50; -1 for all).
 *
 * <p>Kafka instead of the generated trace: {@code --kafka-bootstrap HOST:PORT} reads the record
 * values (bytes) of {@code --users-topic} (default {@code users}) and {@code --domains-topic}
 * (default {@code domains}) with flink-connector-kafka, from the earliest offsets, in consumer
 * group {@code --kafka-group} (default {@code cdcjoin-demo}); the tables must have the demo's
 * columns ({@code users(id BIGINT, name)}, {@code domains(id BIGINT, user_id BIGINT, domain)}). The
 * job stops at the offsets that were the latest when it started, unless {@code --follow true} keeps
 * it reading. Tombstones (null values) are passed on as empty messages, which the decoder skips and
 * counts.
 */
public final class UsersDomainsDemo {

    private UsersDomainsDemo() {}

    /** Parsed command line. */
    static final class Options {
        JoinType joinType = JoinType.LEFT;
        int changes = 300_000;
        int users = 20_000;
        long seed = 1;
        int parallelism = 2;
        long print = 50;
        String kafkaBootstrap;
        String usersTopic = "users";
        String domainsTopic = "domains";
        String kafkaGroup = "cdcjoin-demo";
        boolean follow;

        static Options parse(String[] given) {
            // Maven passes -Ddemo.args as one argument: split on blanks.
            String[] args = String.join(" ", given).trim().split("\\s+");
            if (args.length == 1 && args[0].isEmpty()) {
                args = new String[0];
            }
            Options o = new Options();
            for (int i = 0; i + 1 < args.length; i += 2) {
                String v = args[i + 1];
                switch (args[i]) {
                    case "--join-type":
                        o.joinType = JoinType.valueOf(v.toUpperCase(Locale.ROOT));
                        break;
                    case "--changes":
                        o.changes = Integer.parseInt(v);
                        break;
                    case "--users":
                        o.users = Integer.parseInt(v);
                        break;
                    case "--seed":
                        o.seed = Long.parseLong(v);
                        break;
                    case "--parallelism":
                        o.parallelism = Integer.parseInt(v);
                        break;
                    case "--print":
                        o.print = Long.parseLong(v);
                        break;
                    case "--kafka-bootstrap":
                        o.kafkaBootstrap = v;
                        break;
                    case "--users-topic":
                        o.usersTopic = v;
                        break;
                    case "--domains-topic":
                        o.domainsTopic = v;
                        break;
                    case "--kafka-group":
                        o.kafkaGroup = v;
                        break;
                    case "--follow":
                        o.follow = Boolean.parseBoolean(v);
                        break;
                    default:
                        throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (args.length % 2 != 0) {
                throw new IllegalArgumentException("options come in pairs: --name value");
            }
            return o;
        }
    }

    /** Picks one table's messages out of the trace. */
    static final class Pick implements MapFunction<Long, String> {
        private static final long serialVersionUID = 1L;
        private final String[] json;

        Pick(List<String> json) {
            this.json = json.toArray(new String[0]);
        }

        @Override
        public String map(Long i) {
            return json[i.intValue()];
        }
    }

    /**
     * Runs the demo.
     *
     * @param args options (see the class documentation)
     * @throws Exception if the job fails
     */
    public static void main(String[] args) throws Exception {
        Options o = Options.parse(args);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(o.parallelism);
        CdcJoin join =
                CdcJoin.builder()
                        .left("users", UsersDomainsTrace.USERS, List.of("id"), List.of("id"))
                        .right(
                                "domains",
                                UsersDomainsTrace.DOMAINS,
                                List.of("user_id"),
                                List.of("id"))
                        .joinType(o.joinType)
                        .badRecordPolicy(BadRecordPolicy.SIDE_OUTPUT)
                        .maxFlushDelay(Duration.ofMillis(50))
                        .uid("users-domains")
                        .build();
        CdcJoin.Result result;
        if (o.kafkaBootstrap != null) {
            System.out.printf(
                    "cdcjoin demo: %s JOIN of Kafka topics %s (users) and %s (domains) at %s,"
                            + " parallelism %d%n",
                    o.joinType, o.usersTopic, o.domainsTopic, o.kafkaBootstrap, o.parallelism);
            result =
                    join.joinKafka(
                            kafka(env, o, o.usersTopic)
                                    .map(new CountIn<KafkaMessage>())
                                    .setParallelism(1),
                            kafka(env, o, o.domainsTopic)
                                    .map(new CountIn<KafkaMessage>())
                                    .setParallelism(1));
        } else {
            UsersDomainsTrace trace = UsersDomainsTrace.generate(o.seed, o.changes, o.users);
            List<String> users = new ArrayList<>();
            List<String> domains = new ArrayList<>();
            trace.events().forEach(e -> (e.users ? users : domains).add(e.json));
            System.out.printf(
                    "cdcjoin demo: %s JOIN of users (%d messages) and domains (%d messages),"
                            + " parallelism %d%n",
                    o.joinType, users.size(), domains.size(), o.parallelism);
            result = join.joinStrings(source(env, users), source(env, domains));
        }
        result.badRecords().map(new ReportBad()).sinkTo(new DiscardingSink<>());
        // The first rows are printed by one subtask in the job itself: collecting every row to
        // this client would make the collect RPC the pipeline's bottleneck.
        result.rows()
                .map(new PrintFirst(o.print))
                .setParallelism(1)
                .sinkTo(new DiscardingSink<>())
                .setParallelism(1);
        long start = System.currentTimeMillis();
        JobExecutionResult done = env.execute("cdcjoin users/domains demo");
        summary(acc(done, PrintFirst.ACCUMULATOR), start, System.currentTimeMillis(), done);
    }

    /**
     * A Kafka source of one topic's records.
     *
     * @param env the environment
     * @param o the options (bootstrap servers, group, whether to follow the topic)
     * @param topic the topic
     * @return the records, one source subtask (each table's changes stay in order)
     */
    static DataStream<KafkaMessage> kafka(StreamExecutionEnvironment env, Options o, String topic) {
        return env.fromSource(
                        kafkaSource(o, topic), WatermarkStrategy.noWatermarks(), "kafka " + topic)
                .setParallelism(1);
    }

    /** The source of {@link #kafka}: earliest offsets; bounded by the latest unless following. */
    static KafkaSource<KafkaMessage> kafkaSource(Options o, String topic) {
        KafkaSourceBuilder<KafkaMessage> b =
                KafkaSource.<KafkaMessage>builder()
                        .setBootstrapServers(o.kafkaBootstrap)
                        .setTopics(topic)
                        .setGroupId(o.kafkaGroup)
                        .setClientIdPrefix(o.kafkaGroup + "-" + topic)
                        .setStartingOffsets(OffsetsInitializer.earliest())
                        .setDeserializer(new KafkaMessageDeserializer());
        if (!o.follow) {
            b.setBounded(OffsetsInitializer.latest());
        }
        return b.build();
    }

    /**
     * Counts the records it maps in an accumulator (summed over subtasks).
     *
     * @param <I> the input type
     * @param <O> the output type
     */
    abstract static class CountingMap<I, O> extends RichMapFunction<I, O> {
        private static final long serialVersionUID = 1L;
        private final String accumulator;
        private transient LongCounter count;

        CountingMap(String accumulator) {
            this.accumulator = accumulator;
        }

        @Override
        public void open(OpenContext context) {
            count = new LongCounter();
            getRuntimeContext().addAccumulator(accumulator, count);
        }

        @Override
        public O map(I record) {
            count.add(1);
            return apply(record);
        }

        /** Maps one record, already counted. */
        abstract O apply(I record);
    }

    /** Prints the first {@code print} rows ({@code -1}: all) and counts them all. */
    static final class PrintFirst extends CountingMap<Row, Row> {
        private static final long serialVersionUID = 1L;
        static final String ACCUMULATOR = "cdcjoin.demo.rowsOut";
        private final long print;
        private long seen;

        PrintFirst(long print) {
            super(ACCUMULATOR);
            this.print = print;
        }

        @Override
        Row apply(Row row) {
            if (print < 0 || seen < print) {
                System.out.println(row);
            } else if (seen == print) {
                System.out.println("... (use --print -1 to see every row)");
            }
            seen++;
            return row;
        }
    }

    /** Prints each undecodable record's reason and counts them in {@value #ACCUMULATOR}. */
    static final class ReportBad extends CountingMap<BadRecord, String> {
        private static final long serialVersionUID = 1L;
        static final String ACCUMULATOR = "cdcjoin.demo.badRecords";

        ReportBad() {
            super(ACCUMULATOR);
        }

        @Override
        String apply(BadRecord bad) {
            System.out.println("bad record: " + bad.reason);
            return bad.reason;
        }
    }

    /**
     * Counts the messages read in the {@value #ACCUMULATOR} accumulator (summed over inputs), and
     * notes when the first and the last were read ({@value #FIRST_MS}, {@value #LAST_MS}, epoch
     * milliseconds), so that the summary gives the rate while events flowed, not one diluted by the
     * job's start.
     *
     * @param <T> the message type
     */
    static final class CountIn<T> extends CountingMap<T, T> {
        private static final long serialVersionUID = 1L;
        static final String ACCUMULATOR = "cdcjoin.demo.eventsIn";
        static final String FIRST_MS = "cdcjoin.demo.firstEventMs";
        static final String LAST_MS = "cdcjoin.demo.lastEventMs";
        private transient LongMinimum first;
        private transient LongMaximum last;

        CountIn() {
            super(ACCUMULATOR);
        }

        @Override
        public void open(OpenContext context) {
            super.open(context);
            first = new LongMinimum();
            last = new LongMaximum();
            getRuntimeContext().addAccumulator(FIRST_MS, first);
            getRuntimeContext().addAccumulator(LAST_MS, last);
        }

        @Override
        T apply(T message) {
            long now = System.currentTimeMillis();
            if (first.getLocalValuePrimitive() == Long.MAX_VALUE) {
                first.add(now);
            }
            last.add(now);
            return message;
        }
    }

    private static DataStream<String> source(StreamExecutionEnvironment env, List<String> json) {
        return env.fromSequence(0, json.size() - 1)
                .setParallelism(1)
                .map(new Pick(json))
                .setParallelism(1)
                .map(new CountIn<String>())
                .setParallelism(1);
    }

    private static void summary(long out, long submittedMs, long doneMs, JobExecutionResult r) {
        long in = acc(r, CountIn.ACCUMULATOR);
        long first = acc(r, CountIn.FIRST_MS);
        double flowing = Math.max(1, acc(r, CountIn.LAST_MS) - first) / 1e3;
        System.out.println("---- summary ----");
        System.out.printf("events in:            %,d%n", in);
        System.out.printf("rows out:             %,d%n", out);
        System.out.printf(
                "job start:            %.2f s (submission to first event)%n",
                (first - submittedMs) / 1e3);
        System.out.printf("events flowing:       %.2f s (first to last event read)%n", flowing);
        System.out.printf(
                "throughput:           %,.0f events/s while events flowed"
                        + " (this JVM also generates the trace and prints the changelog)%n",
                in / flowing);
        System.out.printf(
                "wall time:            %.2f s (job start and shutdown included)%n",
                (doneMs - submittedMs) / 1e3);
        System.out.printf("native state rows:    %,d%n", acc(r, NativeJoinOperator.ACC_STATE_ROWS));
        System.out.printf(
                "native state bytes:   %,d heap (%,d bytes of stored rows with their headers)%n",
                acc(r, NativeJoinOperator.ACC_STATE_HEAP_BYTES),
                acc(r, NativeJoinOperator.ACC_STATE_ROW_BYTES));
        System.out.printf(
                "absent retractions:   %,d%n", acc(r, NativeJoinOperator.ACC_ABSENT_RETRACTIONS));
        System.out.printf("bad records:          %,d%n", acc(r, ReportBad.ACCUMULATOR));
    }

    private static long acc(JobExecutionResult r, String name) {
        Object v = r.getAccumulatorResult(name);
        return v instanceof Long ? (Long) v : 0L;
    }
}
