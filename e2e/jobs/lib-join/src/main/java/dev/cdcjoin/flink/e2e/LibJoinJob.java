package dev.cdcjoin.flink.e2e;

import dev.cdcjoin.flink.CdcJoin;
import dev.cdcjoin.flink.Engine;
import dev.cdcjoin.flink.JoinType;
import dev.cdcjoin.flink.codec.CdcSchema;
import java.util.List;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.types.Row;

/**
 * A user job whose JAR does not contain the product: {@code cdcjoin-flink} comes from the cluster's
 * {@code lib/} (e2e/lib/libjar.sh puts it there), so every product class, its shaded Jackson and
 * its native library are loaded by Flink's own class loader, not the job's. It LEFT-joins a fixed
 * list of Debezium users and domains with the engine given as its one argument ({@code --engine
 * NATIVE|JAVA}) and prints the changelog to the TaskManager's stdout, one line per row prefixed
 * {@code libjar-<ENGINE>> }; the script checks what it materializes to.
 *
 * <p>Final rows expected: {@code [1, anna, 11, 1, b.com]} (user 1 renamed, domain 11 moved to it,
 * domain 10 deleted) and {@code [2, bo, null, null, null]} (user 2 left without domains); user 3 is
 * deleted and domain 12's user never exists.
 */
public final class LibJoinJob {

    static final List<String> USERS =
            List.of(
                    "{\"op\":\"c\",\"after\":{\"id\":1,\"name\":\"ana\"}}",
                    "{\"op\":\"c\",\"after\":{\"id\":2,\"name\":\"bo\"}}",
                    "{\"op\":\"c\",\"after\":{\"id\":3,\"name\":\"cy\"}}",
                    "{\"op\":\"u\",\"before\":{\"id\":1,\"name\":\"ana\"},"
                            + "\"after\":{\"id\":1,\"name\":\"anna\"}}",
                    "{\"op\":\"d\",\"before\":{\"id\":3,\"name\":\"cy\"}}");

    static final List<String> DOMAINS =
            List.of(
                    "{\"op\":\"c\",\"after\":{\"id\":10,\"user_id\":1,\"domain\":\"a.com\"}}",
                    "{\"op\":\"c\",\"after\":{\"id\":11,\"user_id\":2,\"domain\":\"b.com\"}}",
                    "{\"op\":\"c\",\"after\":{\"id\":12,\"user_id\":9,\"domain\":\"orphan.com\"}}",
                    "{\"op\":\"u\",\"before\":{\"id\":11,\"user_id\":2,\"domain\":\"b.com\"},"
                            + "\"after\":{\"id\":11,\"user_id\":1,\"domain\":\"b.com\"}}",
                    "{\"op\":\"d\",\"before\":{\"id\":10,\"user_id\":1,\"domain\":\"a.com\"}}");

    private LibJoinJob() {}

    /**
     * Runs the join.
     *
     * @param args {@code --engine NATIVE} or {@code --engine JAVA}
     * @throws Exception if the job fails
     */
    public static void main(String[] args) throws Exception {
        if (args.length != 2 || !args[0].equals("--engine")) {
            throw new IllegalArgumentException("usage: --engine NATIVE|JAVA");
        }
        Engine engine = Engine.valueOf(args[1]);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        CdcJoin join =
                CdcJoin.builder()
                        .left(
                                "users",
                                CdcSchema.of(
                                        DataTypes.ROW(
                                                DataTypes.FIELD("id", DataTypes.BIGINT().notNull()),
                                                DataTypes.FIELD("name", DataTypes.STRING()))),
                                List.of("id"),
                                List.of("id"))
                        .right(
                                "domains",
                                CdcSchema.of(
                                        DataTypes.ROW(
                                                DataTypes.FIELD("id", DataTypes.BIGINT().notNull()),
                                                DataTypes.FIELD("user_id", DataTypes.BIGINT()),
                                                DataTypes.FIELD("domain", DataTypes.STRING()))),
                                List.of("user_id"),
                                List.of("id"))
                        .joinType(JoinType.LEFT)
                        .engine(engine)
                        .build();
        join.joinStrings(
                        env.fromData(USERS).setParallelism(1),
                        env.fromData(DOMAINS).setParallelism(1))
                .rows()
                .map(Row::toString)
                .print("libjar-" + engine)
                .setParallelism(1);
        env.execute("cdcjoin from lib/, engine " + engine);
    }
}
