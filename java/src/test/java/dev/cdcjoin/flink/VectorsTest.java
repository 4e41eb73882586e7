package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cdcjoin.flink.TestVectors.Vector;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The shared vectors through the full Flink path (JSON strings → native decode → keyBy → native
 * join), all four join types in one job: exact changelog at parallelism 1, same materialized result
 * at parallelism 4.
 */
class VectorsTest {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withInputCounters(4);

    static Stream<Vector> vectors() throws Exception {
        return TestVectors.all().stream();
    }

    /**
     * Emits event {@code i}; in ordered mode, only once every join has received all changes of the
     * events before it, so both inputs reach the joins in the events' order.
     */
    static final class EventAt extends RichMapFunction<Long, String> {
        private static final long serialVersionUID = 1L;
        private final String[] events;
        private final long[] changesBefore;
        private final boolean ordered;
        private final int joins;
        private transient String jobId;

        EventAt(List<String> events, boolean ordered) {
            this(events, ordered, JoinType.values().length);
        }

        /** With {@code joins} join operators in the job, each receiving every change. */
        EventAt(List<String> events, boolean ordered, int joins) {
            this.events = events.toArray(new String[0]);
            this.changesBefore = new long[events.size()];
            for (int i = 1; i < events.size(); i++) {
                changesBefore[i] = changesBefore[i - 1] + changes(events.get(i - 1));
            }
            this.ordered = ordered;
            this.joins = joins;
        }

        @Override
        public void open(OpenContext context) {
            jobId = getRuntimeContext().getJobInfo().getJobId().toString();
        }

        @Override
        public String map(Long i) throws Exception {
            if (ordered) {
                await(
                        () ->
                                JoinInputCounters.counters(jobId) >= 2 * joins
                                        && JoinInputCounters.received(jobId)
                                                >= joins * changesBefore[i.intValue()]);
            }
            return events[i.intValue()];
        }
    }

    /** Changes a Debezium event decodes to: 1 for c/r/d, 2 for u, 0 for a tombstone. */
    static int changes(String event) {
        try {
            JsonNode value = TestVectors.JSON.readTree(event.substring(2));
            if (value.has("schema") && value.has("payload")) {
                value = value.get("payload");
            }
            if (value == null || value.isNull()) {
                return 0;
            }
            return value.get("op").asText().equals("u") ? 2 : 1;
        } catch (Exception e) {
            throw new IllegalArgumentException("bad vector event " + event, e);
        }
    }

    static void await(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("joins did not receive the records in time");
            }
            Thread.sleep(2);
        }
    }

    /** Runs the vector through one job; the changelog of each join type, in emission order. */
    static Map<JoinType, List<String>> run(Vector v, int parallelism, boolean ordered)
            throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(parallelism);
        env.setBufferTimeout(0);
        DataStream<String> events =
                env.fromSequence(0, v.events.size() - 1)
                        .setParallelism(1)
                        .map(new EventAt(v.events, ordered))
                        .setParallelism(1);
        DataStream<String> left = pick(events, "L|");
        DataStream<String> right = pick(events, "R|");
        CdcJoin any = join(v, JoinType.INNER);
        SingleOutputStreamOperator<ChangeRecord> l =
                any.leftDecoder().batchSize(1).decodeStrings(left);
        SingleOutputStreamOperator<ChangeRecord> r =
                any.rightDecoder().batchSize(1).decodeStrings(right);
        DataStream<String> all = null;
        for (JoinType type : JoinType.values()) {
            DataStream<String> rows = join(v, type).joinChanges(l, r).map(new Changelogs.Tag(type));
            all = all == null ? rows : all.union(rows);
        }
        return Changelogs.collectByType(all, v.file);
    }

    static DataStream<String> pick(DataStream<String> events, String prefix) {
        return events.filter(e -> e.startsWith(prefix))
                .setParallelism(1)
                .map(e -> e.substring(2))
                .setParallelism(1);
    }

    static CdcJoin join(Vector v, JoinType type) {
        return CdcJoin.builder()
                .left(v.left.name(), v.left.schema(), v.left.joinKey(), v.left.primaryKey())
                .right(v.right.name(), v.right.schema(), v.right.joinKey(), v.right.primaryKey())
                .format(v.left.format(), v.right.format())
                .joinType(type)
                // Each change batched for the join at once: the batching step is chained to the
                // source, whose ordered feeding blocks the thread that would run a flush timer.
                .batchSize(1)
                .build();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("vectors")
    void exactChangelogAtParallelismOne(Vector v) throws Exception {
        Map<JoinType, List<String>> actual = run(v, 1, true);
        for (JoinType type : v.expected.keySet()) {
            assertEquals(v.expected.get(type), actual.get(type), v.file + " " + type);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("vectors")
    void sameMaterializedResultAtParallelismFour(Vector v) throws Exception {
        Map<JoinType, List<String>> actual = run(v, 4, false);
        for (JoinType type : v.expected.keySet()) {
            assertEquals(
                    Changelogs.materialize(v.expected.get(type)),
                    Changelogs.materialize(actual.get(type)),
                    v.file + " " + type);
        }
    }
}
