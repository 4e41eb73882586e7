package dev.cdcjoin.flink.javajoin;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.cdcjoin.flink.Changelogs;
import dev.cdcjoin.flink.JoinType;
import dev.cdcjoin.flink.MiniClusters;
import dev.cdcjoin.flink.javajoin.Traces.Keys;
import dev.cdcjoin.flink.javajoin.Traces.Trace;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Either;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Random users/domains CDC traces (deterministic seeds) through the full Flink path on a
 * MiniCluster: for every join type, the materialized output (+I/+U add a row, -U/-D remove one,
 * never below zero) equals a reference join of the final tables, at parallelism 1 and 4, with
 * primary keys (value and map layouts, with re-deliveries and replacements of stored rows, which
 * must leave no stale joined row) and without (multiset layout, with duplicate rows), on heap and
 * on RocksDB state.
 */
class JavaJoinRandomTraceTest {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withSlots(4);

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (Keys keys : Keys.values()) {
            for (long seed : new long[] {1, 2, 3}) {
                out.add(Arguments.of(keys, seed, 1, "hashmap", false));
                out.add(Arguments.of(keys, seed, 4, "hashmap", false));
            }
            out.add(Arguments.of(keys, 4L, 2, "rocksdb", false));
            out.add(Arguments.of(keys, 5L, 4, "hashmap", true));
            out.add(Arguments.of(keys, 6L, 2, "rocksdb", true));
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} seed {1} parallelism {2} {3} ordered={4}")
    @MethodSource("cases")
    void materializedOutputEqualsTheJoinOfTheFinalTables(
            Keys keys, long seed, int parallelism, String backend, boolean ordered)
            throws Exception {
        // Re-deliveries and replacements only where a primary key can tell them from new rows.
        Trace trace = Traces.generate(seed, 3000, 60, 200, 300, keys == Keys.PRIMARY_KEYS);
        StreamExecutionEnvironment env = Support.env(parallelism, backend);
        List<Either<byte[], byte[]>> messages =
                trace.events.stream().map(Support.Event::either).collect(Collectors.toList());
        // One source (parallelism 1): each table's messages stay in order up to the keyBy.
        DataStream<Either<byte[], byte[]>> source = env.fromData(messages, Support.EITHER_BYTES);
        DataStream<byte[]> left = Support.side(source, true);
        DataStream<byte[]> right = Support.side(source, false);
        DataStream<String> all = null;
        for (JoinType type : JoinType.values()) {
            JavaJoin join = JavaJoin.of(Traces.definition(keys, type));
            DataStream<String> rows =
                    (ordered ? Support.joinInOrder(join, source) : Support.join(join, left, right))
                            .map(new Changelogs.Tag(type));
            all = all == null ? rows : all.union(rows);
        }
        Map<JoinType, List<String>> actual = Changelogs.collectByType(all, "trace " + seed);
        for (JoinType type : JoinType.values()) {
            Map<String, Integer> want = trace.expected(keys, type);
            Map<String, Integer> got = Support.materialize(actual.get(type));
            assertEquals(want, got, keys + " " + type + " seed " + seed);
        }
    }
}
