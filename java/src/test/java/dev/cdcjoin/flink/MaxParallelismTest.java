package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.cdcjoin.flink.demo.UsersDomainsTrace;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The key groups are the job's max parallelism, whatever it is: as few as the parallelism, a number
 * that is no power of two, and Flink's largest, 32,768 (the native decoder routes each change to
 * one of them with Flink's own function; the join's state is kept per key group). Each gives the
 * join of the trace's final tables, on both engines.
 */
@SuppressWarnings("try") // CloseableIterator#close may throw InterruptedException
class MaxParallelismTest {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withSlots(4);

    private static final UsersDomainsTrace TRACE = RawOutputTest.jobTrace();

    @ParameterizedTest(name = "max parallelism {0}")
    @ValueSource(ints = {3, 7, 1000, 32768})
    void everyMaxParallelismJoinsAlike(int maxParallelism) throws Exception {
        for (Engine engine : Engine.values()) {
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
            env.setParallelism(3);
            env.setMaxParallelism(maxParallelism);
            CdcJoin join = RawOutputTest.usersDomains(JoinType.FULL).engine(engine).build();
            Tables tables = new Tables(env);
            assertJoins(
                    join.joinStrings(tables.users, tables.domains).rows(),
                    engine + " at max parallelism " + maxParallelism);
        }
    }

    /**
     * The join's max parallelism is its own: set on the join only, it differs from the decode
     * steps' (Flink's default, 128), and each decode step keys its batches for the join's, read
     * from the {@code keyBy} it feeds. The per-change path ({@code joinChanges}, whose batcher keys
     * the changes) does the same.
     */
    @ParameterizedTest(name = "join max parallelism {0}")
    @ValueSource(ints = {7, 256})
    void theJoinNeedNotShareItsMaxParallelismWithTheDecodeSteps(int maxParallelism)
            throws Exception {
        for (Engine engine : Engine.values()) {
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
            env.setParallelism(3);
            CdcJoin join = RawOutputTest.usersDomains(JoinType.FULL).engine(engine).build();
            Tables tables = new Tables(env);
            SingleOutputStreamOperator<Row> rows =
                    join.joinStrings(tables.users, tables.domains).rows();
            rows.setMaxParallelism(maxParallelism);
            assertJoins(rows, engine + ", join at max parallelism " + maxParallelism);

            env = StreamExecutionEnvironment.getExecutionEnvironment();
            env.setParallelism(3);
            tables = new Tables(env);
            rows =
                    join.joinChanges(
                            join.leftDecoder().decodeStrings(tables.users),
                            join.rightDecoder().decodeStrings(tables.domains));
            rows.setMaxParallelism(maxParallelism);
            assertJoins(rows, engine + ", joinChanges at max parallelism " + maxParallelism);
        }
    }

    /** The trace's two tables, each from a source at parallelism 1. */
    private static final class Tables {
        final DataStream<String> users;
        final DataStream<String> domains;

        Tables(StreamExecutionEnvironment env) {
            List<String> u = new ArrayList<>();
            List<String> d = new ArrayList<>();
            TRACE.events().forEach(e -> (e.users ? u : d).add(e.json));
            users = env.fromData(u).setParallelism(1);
            domains = env.fromData(d).setParallelism(1);
        }
    }

    /** Runs the job of {@code rows} and checks its changelog is the FULL join of the trace. */
    private static void assertJoins(SingleOutputStreamOperator<Row> rows, String run)
            throws Exception {
        List<String> changelog = new ArrayList<>();
        try (CloseableIterator<String> it = rows.map(Row::toString).executeAndCollect(run)) {
            it.forEachRemaining(changelog::add);
        }
        assertEquals(
                ReferenceJoin.usersDomains(TRACE, JoinType.FULL),
                Changelogs.materialize(changelog),
                run);
    }
}
