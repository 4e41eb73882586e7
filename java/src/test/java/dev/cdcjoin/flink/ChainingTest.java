package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.junit.jupiter.api.Test;

/**
 * The operators the library adds chain the same way on every Flink line (1.20 starts a new chain at
 * an operator given to {@code transform} unless told otherwise, 2.x chains it): decoding and key
 * group batching run in their source's task, and a sink after the join in the join's task, so no
 * record crosses a task boundary that the job did not ask for. Read from the job graph.
 */
class ChainingTest {

    /**
     * The job's tasks, by the names Flink gives chained operators ({@code a -> b}; a sink's writer
     * named as its sink).
     */
    private static List<String> tasks(StreamExecutionEnvironment env) {
        List<String> names = new ArrayList<>();
        for (JobVertex v : env.getStreamGraph().getJobGraph().getVertices()) {
            names.add(v.getName().replace(": Writer", ""));
        }
        names.sort(null);
        return names;
    }

    private static StreamExecutionEnvironment env() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        return env;
    }

    @Test
    void theDecoderChainsToItsSourceAndTheSinkToTheJoin() {
        StreamExecutionEnvironment env = env();
        CdcJoin join = CdcJoinJobTest.usersDomains().build();
        DataStream<String> users = env.fromData("u").name("users in");
        DataStream<String> domains = env.fromData("d").name("domains in");
        join.joinStrings(users, domains).rows().sinkTo(new DiscardingSink<>()).name("out");
        assertEquals(
                List.of(
                        "CdcJoin INNER: users ⋈ domains -> out",
                        "Source: domains in -> Debezium decode to key group batches: domains",
                        "Source: users in -> Debezium decode to key group batches: users"),
                tasks(env));
    }

    @Test
    void keyGroupBatchingOfDecodedChangesChainsToTheDecoder() {
        StreamExecutionEnvironment env = env();
        CdcJoin join = CdcJoinJobTest.usersDomains().build();
        SingleOutputStreamOperator<ChangeRecord> users =
                join.leftDecoder().decodeStrings(env.fromData("u").name("users in"));
        SingleOutputStreamOperator<ChangeRecord> domains =
                join.rightDecoder().decodeStrings(env.fromData("d").name("domains in"));
        join.join(users, domains).rows().sinkTo(new DiscardingSink<>()).name("out");
        assertEquals(
                List.of(
                        "CdcJoin INNER: users ⋈ domains -> out",
                        "Source: domains in -> Debezium decode: domains -> Key group batches: domains",
                        "Source: users in -> Debezium decode: users -> Key group batches: users"),
                tasks(env));
    }
}
