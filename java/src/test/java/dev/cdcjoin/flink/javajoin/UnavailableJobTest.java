package dev.cdcjoin.flink.javajoin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.BadRecord;
import dev.cdcjoin.flink.BadRecordPolicy;
import dev.cdcjoin.flink.DebeziumFormat;
import dev.cdcjoin.flink.JoinSpec;
import dev.cdcjoin.flink.JoinType;
import dev.cdcjoin.flink.MiniClusters;
import dev.cdcjoin.flink.SideSpec;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.flink.api.common.typeinfo.Types;
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

/**
 * A Postgres table at {@code REPLICA IDENTITY DEFAULT} with a TOASTed column, joined in upsert mode
 * on a MiniCluster: unavailable columns cross the {@code keyBy} (their serializer), are filled from
 * state, and a change that cannot be filled is a bad record under either policy.
 */
class UnavailableJobTest {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withSlots(2);

    static final String PLACEHOLDER = "__debezium_unavailable_value";

    static JoinSpec usersProfiles() {
        CdcSchema users =
                CdcSchema.of(Column.notNull("id", "INT"), Column.nullable("name", "STRING"));
        CdcSchema profiles =
                CdcSchema.of(
                        Column.notNull("user_id", "INT"),
                        Column.notNull("bio", "STRING"),
                        Column.nullable("n", "INT"));
        return new JoinSpec(
                new SideSpec("users", users, List.of("id"), List.of("id"), null),
                new SideSpec(
                        "profiles",
                        profiles,
                        List.of("user_id"),
                        List.of("user_id"),
                        null,
                        DebeziumFormat.defaults().withUpsert(true)),
                JoinType.INNER,
                false,
                null,
                null);
    }

    static List<Either<byte[], byte[]>> messages() {
        List<Either<byte[], byte[]>> out = new ArrayList<>();
        out.add(Either.Left(bytes("{\"op\":\"c\",\"after\":{\"id\":1,\"name\":\"Ana\"}}")));
        out.add(
                Either.Right(
                        bytes(
                                "{\"op\":\"c\",\"after\":{\"user_id\":1,\"bio\":\"long bio\",\"n\":1}}")));
        out.add(
                Either.Right(
                        bytes(
                                "{\"op\":\"u\",\"before\":null,\"after\":{\"user_id\":1,\"bio\":\""
                                        + PLACEHOLDER
                                        + "\",\"n\":2}}")));
        out.add(
                Either.Right(
                        bytes(
                                "{\"op\":\"u\",\"before\":null,\"after\":{\"user_id\":2,\"bio\":\""
                                        + PLACEHOLDER
                                        + "\",\"n\":1}}")));
        out.add(
                Either.Right(
                        bytes(
                                "{\"op\":\"d\",\"before\":{\"user_id\":1,\"bio\":null,\"n\":null}}")));
        return out;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void unavailableColumnsAreFilledOrReportedAcrossTheKeyBy() throws Exception {
        StreamExecutionEnvironment env = Support.env(2, "hashmap");
        JavaJoin join = JavaJoin.of(usersProfiles()).badRecordPolicy(BadRecordPolicy.SIDE_OUTPUT);
        SingleOutputStreamOperator<Either<Row, Row>> changes =
                join.decodeInOrder(env.fromData(messages(), Support.EITHER_BYTES));
        SingleOutputStreamOperator<Row> joined = join.joinChangesInOrder(changes);
        DataStream<BadRecord> badRecords =
                changes.getSideOutput(BadRecord.OUTPUT)
                        .union(joined.getSideOutput(BadRecord.OUTPUT));
        DataStream<String> all =
                joined.map(Object::toString)
                        .returns(Types.STRING)
                        .union(
                                badRecords
                                        .map(
                                                b ->
                                                        "BAD " + b.source + " " + b.index + " "
                                                                + b.reason)
                                        .returns(Types.STRING));
        List<String> out = new ArrayList<>();
        try (CloseableIterator<String> it = all.executeAndCollect()) {
            it.forEachRemaining(out::add);
        }
        List<String> rows =
                out.stream().filter(s -> !s.startsWith("BAD")).collect(Collectors.toList());
        List<String> bad =
                out.stream().filter(s -> s.startsWith("BAD")).collect(Collectors.toList());
        assertEquals(
                List.of(
                        "+I[1, Ana, 1, long bio, 1]",
                        "-U[1, Ana, 1, long bio, 1]",
                        "+U[1, Ana, 1, long bio, 2]",
                        "-D[1, Ana, 1, long bio, 2]"),
                rows);
        assertEquals(
                List.of(
                        "BAD profiles -1 right row +U[2, <unavailable>, 1]: column 'bio' is"
                                + " unavailable (the change does not carry the value, e.g. Debezium's"
                                + " placeholder for an unchanged TOASTed value, or a delete by key), and no"
                                + " row with primary key [2] is stored to take it from (first sight of the"
                                + " key, or expired by TTL)"),
                bad);
    }

    @Test
    void underFailTheJobFailsNamingTheChange() {
        StreamExecutionEnvironment env = Support.env(1, "hashmap");
        Support.joinInOrder(
                        JavaJoin.of(usersProfiles()),
                        env.fromData(messages(), Support.EITHER_BYTES))
                .sinkTo(new DiscardingSink<>());
        Exception e = assertThrows(Exception.class, env::execute);
        assertTrue(
                ExceptionUtils.findThrowable(e, RejectedChangeException.class)
                        .map(x -> x.getMessage().startsWith("right row +U[2, <unavailable>, 1]"))
                        .orElse(false),
                ExceptionUtils.stringifyException(e));
    }
}
