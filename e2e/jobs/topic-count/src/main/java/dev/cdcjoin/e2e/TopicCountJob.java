package dev.cdcjoin.e2e;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * The e2e harness's proof job: reads the Debezium topics as raw bytes with the Kafka source, counts
 * records per (topic, Debezium op) in keyed state, and prints the counts to the TaskManagers'
 * stdout once a second:
 *
 * <pre>E2E_COUNT topic=e2e.public.users op=c count=1234 job=GROUP subtask=1 tm=tm-2</pre>
 *
 * Arguments (all --key value): --bootstrap host:port, --topics a,b, --group id, --checkpoint-ms n
 * (0 = off). Unbounded: the harness cancels it through the REST API.
 */
public final class TopicCountJob {

    public static void main(String[] args) throws Exception {
        Map<String, String> a = parse(args);
        String bootstrap = a.getOrDefault("bootstrap", "127.0.0.1:9092");
        List<String> topics =
                Arrays.asList(
                        a.getOrDefault("topics", "e2e.public.users,e2e.public.domains").split(","));
        String group = a.getOrDefault("group", "e2e-topic-count");
        long checkpointMs = Long.parseLong(a.getOrDefault("checkpoint-ms", "5000"));

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        if (checkpointMs > 0) {
            env.enableCheckpointing(checkpointMs);
        }

        KafkaSource<Tuple2<String, String>> source =
                KafkaSource.<Tuple2<String, String>>builder()
                        .setBootstrapServers(bootstrap)
                        .setTopics(topics)
                        .setGroupId(group)
                        .setStartingOffsets(OffsetsInitializer.earliest())
                        .setDeserializer(new TopicAndOp())
                        .build();

        env.fromSource(source, WatermarkStrategy.noWatermarks(), "debezium-topics")
                .keyBy(t -> t.f0 + " op=" + t.f1, Types.STRING)
                .process(new CountPerKey(group))
                .name("count-per-topic-op")
                .sinkTo(new DiscardingSink<>())
                .name("discard");

        env.execute("e2e-topic-count " + String.join(",", topics));
    }

    /** (topic, op) of one Debezium record; a tombstone (null value) has op "tombstone". */
    static final class TopicAndOp
            implements KafkaRecordDeserializationSchema<Tuple2<String, String>> {
        @Override
        public void deserialize(
                ConsumerRecord<byte[], byte[]> record, Collector<Tuple2<String, String>> out) {
            out.collect(Tuple2.of(record.topic(), op(record.value())));
        }

        @Override
        public TypeInformation<Tuple2<String, String>> getProducedType() {
            return Types.TUPLE(Types.STRING, Types.STRING);
        }

        static String op(byte[] value) {
            if (value == null) {
                return "tombstone";
            }
            String s = new String(value, StandardCharsets.UTF_8);
            int i = s.lastIndexOf("\"op\":\"");
            if (i < 0) {
                return "unknown";
            }
            int from = i + 6;
            int to = s.indexOf('"', from);
            return to < 0 ? "unknown" : s.substring(from, to);
        }
    }

    /** Counts per key; prints a key's count at most once a second, when it changed. */
    static final class CountPerKey
            extends KeyedProcessFunction<String, Tuple2<String, String>, String> {
        private final String label;
        private transient ValueState<Long> count;
        private transient ValueState<Long> printed;

        CountPerKey(String label) {
            this.label = label;
        }

        @Override
        public void open(org.apache.flink.api.common.functions.OpenContext ctx) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
            printed =
                    getRuntimeContext().getState(new ValueStateDescriptor<>("printed", Types.LONG));
        }

        @Override
        public void processElement(Tuple2<String, String> in, Context ctx, Collector<String> out)
                throws Exception {
            Long c = count.value();
            count.update(c == null ? 1L : c + 1);
            long now = ctx.timerService().currentProcessingTime();
            ctx.timerService().registerProcessingTimeTimer((now / 1000 + 1) * 1000);
        }

        @Override
        public void onTimer(long ts, OnTimerContext ctx, Collector<String> out) throws Exception {
            Long c = count.value();
            Long p = printed.value();
            if (c != null && !c.equals(p)) {
                printed.update(c);
                String line =
                        "E2E_COUNT topic="
                                + ctx.getCurrentKey()
                                + " count="
                                + c
                                + " job="
                                + label
                                + " subtask="
                                + getRuntimeContext().getTaskInfo().getIndexOfThisSubtask()
                                + " tm="
                                + System.getProperty("e2e.tm", "?");
                System.out.println(line);
                out.collect(line);
            }
        }
    }

    private static Map<String, String> parse(String[] args) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --key value pairs, got " + args[i]);
            }
            m.put(args[i].substring(2), args[i + 1]);
        }
        return m;
    }

    private TopicCountJob() {}
}
