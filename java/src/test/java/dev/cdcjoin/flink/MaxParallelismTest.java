package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.cdcjoin.flink.demo.UsersDomainsTrace;
import java.util.ArrayList;
import java.util.List;
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

    @ParameterizedTest(name = "max parallelism {0}")
    @ValueSource(ints = {3, 7, 1000, 32768})
    void everyMaxParallelismJoinsAlike(int maxParallelism) throws Exception {
        UsersDomainsTrace trace = RawOutputTest.jobTrace();
        List<String> users = new ArrayList<>();
        List<String> domains = new ArrayList<>();
        trace.events().forEach(e -> (e.users ? users : domains).add(e.json));
        for (Engine engine : Engine.values()) {
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
            env.setParallelism(3);
            env.setMaxParallelism(maxParallelism);
            CdcJoin join = RawOutputTest.usersDomains(JoinType.FULL).engine(engine).build();
            List<String> changelog = new ArrayList<>();
            try (CloseableIterator<String> it =
                    join.joinStrings(
                                    env.fromData(users).setParallelism(1),
                                    env.fromData(domains).setParallelism(1))
                            .rows()
                            .map(Row::toString)
                            .executeAndCollect("max parallelism " + maxParallelism)) {
                it.forEachRemaining(changelog::add);
            }
            assertEquals(
                    ReferenceJoin.usersDomains(trace, JoinType.FULL),
                    Changelogs.materialize(changelog),
                    engine + " at max parallelism " + maxParallelism);
        }
    }
}
