package dev.cdcjoin.flink.javajoin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.BadRecord;
import dev.cdcjoin.flink.BadRecordPolicy;
import dev.cdcjoin.flink.Changelogs;
import dev.cdcjoin.flink.JoinType;
import dev.cdcjoin.flink.MiniClusters;
import dev.cdcjoin.flink.javajoin.Support.Vector;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Either;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every shared vector, every join type, through the full Flink path on a MiniCluster (Debezium JSON
 * bytes → Jackson decode → keyBy join key → Java join):
 *
 * <ul>
 *   <li>exact changelog at parallelism 1: both tables' messages in ONE ordered source, joined by
 *       {@link OrderedJavaJoinFunction}, so the join sees the vector's global order (heap and
 *       RocksDB state);
 *   <li>same materialized result through the two-input {@link JavaJoinFunction} (separate left and
 *       right streams) at parallelism 1 and 4.
 * </ul>
 *
 * <p>And bad records: to the side output, or failing the job with a message naming the record.
 */
class JavaJoinVectorsTest {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withSlots(4);

    static Stream<Arguments> vectorsAndBackends() throws Exception {
        List<Arguments> out = new ArrayList<>();
        for (Vector v : Support.vectors()) {
            out.add(Arguments.of(v, "hashmap"));
            out.add(Arguments.of(v, "rocksdb"));
        }
        return out.stream();
    }

    static Stream<Vector> vectors() throws Exception {
        return Support.vectors().stream();
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("vectorsAndBackends")
    void exactChangelogAtParallelismOne(Vector v, String backend) throws Exception {
        StreamExecutionEnvironment env = Support.env(1, backend);
        DataStream<Either<byte[], byte[]>> messages =
                env.fromData(v.messages(), Support.EITHER_BYTES);
        DataStream<String> all = null;
        for (JoinType type : JoinType.values()) {
            DataStream<String> rows =
                    Support.joinInOrder(JavaJoin.of(v.definition(type)), messages)
                            .map(new Changelogs.Tag(type));
            all = all == null ? rows : all.union(rows);
        }
        Map<JoinType, List<String>> actual = Changelogs.collectByType(all, v.file);
        for (JoinType type : JoinType.values()) {
            assertEquals(v.expected.get(type), actual.get(type), v.file + " " + type);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("vectors")
    void sameMaterializedResultThroughTwoInputs(Vector v) throws Exception {
        for (int parallelism : new int[] {1, 4}) {
            StreamExecutionEnvironment env = Support.env(parallelism, "hashmap");
            DataStream<Either<byte[], byte[]>> messages =
                    env.fromData(v.messages(), Support.EITHER_BYTES);
            DataStream<byte[]> left = Support.side(messages, true);
            DataStream<byte[]> right = Support.side(messages, false);
            DataStream<String> all = null;
            for (JoinType type : JoinType.values()) {
                DataStream<String> rows =
                        Support.join(JavaJoin.of(v.definition(type)), left, right)
                                .map(new Changelogs.Tag(type));
                all = all == null ? rows : all.union(rows);
            }
            Map<JoinType, List<String>> actual = Changelogs.collectByType(all, v.file);
            for (JoinType type : JoinType.values()) {
                assertEquals(
                        Support.materialize(v.expected.get(type)),
                        Support.materialize(actual.get(type)),
                        v.file + " " + type + " at parallelism " + parallelism);
            }
        }
    }

    static final String USERS_VECTOR = "users_domains.json";

    static List<String> messages(Vector v, boolean left) {
        List<String> out = new ArrayList<>();
        for (Support.Event e : v.events) {
            if (e.left == left) {
                out.add(new String(e.json, StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    @Test
    void badRecordsGoToTheSideOutputOrFailTheJob() throws Exception {
        Vector v =
                Support.vectors().stream()
                        .filter(x -> x.file.equals(USERS_VECTOR))
                        .findFirst()
                        .orElseThrow();
        List<String> users = messages(v, true);
        users.add(1, "{\"op\":\"t\",\"after\":{\"id\":9}}");
        users.add(2, "not json");
        List<String> domains = messages(v, false);

        StreamExecutionEnvironment env = Support.env(1, "hashmap");
        JavaJoin join =
                JavaJoin.of(v.definition(JoinType.INNER))
                        .badRecordPolicy(BadRecordPolicy.SIDE_OUTPUT);
        SingleOutputStreamOperator<Row> left = join.decodeLeft(env.fromData(users));
        SingleOutputStreamOperator<Row> right = join.decodeRight(env.fromData(domains));
        SingleOutputStreamOperator<Row> joined = join.joinChanges(left, right);
        DataStream<BadRecord> badRecords =
                left.getSideOutput(BadRecord.OUTPUT)
                        .union(
                                right.getSideOutput(BadRecord.OUTPUT),
                                joined.getSideOutput(BadRecord.OUTPUT));
        List<String> bad = new ArrayList<>();
        try (CloseableIterator<BadRecord> it = badRecords.executeAndCollect()) {
            it.forEachRemaining(b -> bad.add(b.source + "#" + b.index + " " + b.reason));
        }
        assertEquals(2, bad.size(), bad.toString());
        assertEquals(
                "users#1 users record #1: unknown \"op\" value \"t\" (expected \"c\", \"r\","
                        + " \"u\" or \"d\")",
                bad.get(0));
        assertTrue(bad.get(1).startsWith("users#2 users record #2: malformed JSON: "), bad.get(1));

        StreamExecutionEnvironment env2 = Support.env(1, "hashmap");
        JavaJoin failing = JavaJoin.of(v.definition(JoinType.INNER));
        Support.join(failing, env2.fromData(users), env2.fromData(domains))
                .sinkTo(new DiscardingSink<>());
        Exception e = assertThrows(Exception.class, env2::execute);
        assertTrue(
                ExceptionUtils.findThrowable(e, DebeziumDecodeException.class)
                        .map(x -> x.getMessage().startsWith("users record #1: unknown \"op\""))
                        .orElse(false),
                ExceptionUtils.stringifyException(e));
    }
}
