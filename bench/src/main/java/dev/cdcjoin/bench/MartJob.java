package dev.cdcjoin.bench;

import dev.cdcjoin.bench.Runner.Variant;
import dev.cdcjoin.flink.CdcJoin;
import dev.cdcjoin.flink.CdcMultiJoin;
import dev.cdcjoin.flink.JoinType;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.IntFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;

/**
 * The three-table mart of {@link MartWorkload} as each variant builds it: users ⋈ profiles ⋈
 * settings, all on the user id, the same join type at both steps, output {@code (id, firstname,
 * lastname, city, plan, setting_id, setting_key, setting_value)} (the setting's id keeps its
 * primary key in the query, so Flink SQL keeps the settings input keyed by it, as the chain's
 * second join is).
 *
 * <ul>
 *   <li>the {@code CdcJoin} variants (native, pure Java): a chain of two joins, the first's rows
 *       (projected to what the mart needs, keyed by the user id) the left input of the second;
 *   <li>{@code NATIVE_MULTIWAY}: the native multi-way join ({@code CdcMultiJoin}), one operator;
 *   <li>{@code SQL_HEAP}, {@code SQL_ROCKSDB}: Flink SQL's chained regular joins, one operator per
 *       join, the second holding the first's result in its state;
 *   <li>{@code SQL_MULTIJOIN_HEAP}: the same query with Flink's multi-way join ({@code
 *       table.optimizer.multi-join.enabled}, FLIP-516, Flink 2.1+), checked in the plan: the job is
 *       refused if the optimized plan has no {@code MultiJoin}.
 * </ul>
 */
final class MartJob {

    private MartJob() {}

    /** The mart query; {@code %s} is the join keyword of both steps. */
    static final String QUERY =
            "SELECT u.id, u.firstname, u.lastname, p.city, p.plan, s.id AS setting_id,"
                    + " s.setting_key, s.setting_value"
                    + " FROM users AS u %1$s profiles AS p ON u.id = p.user_id"
                    + " %1$s settings AS s ON u.id = s.user_id";

    /** Flink's switch for its multi-way join (OptimizerConfigOptions, Flink 2.1+). */
    static final String MULTI_JOIN_OPTION = "table.optimizer.multi-join.enabled";

    /**
     * The mart's changelog by a {@code CdcJoin} chain.
     *
     * @param topics the byte[] messages of a topic, by index of {@link TraceFiles#TOPICS}
     */
    static DataStream<Row> chain(
            IntFunction<DataStream<byte[]>> topics, Variant variant, JoinType join) {
        CdcJoin first =
                variant.configure(CdcJoin.builder())
                        .left("users", Workload.USERS, List.of("id"), List.of("id"))
                        .right(
                                "profiles",
                                MartWorkload.PROFILES,
                                List.of("user_id"),
                                List.of("user_id"))
                        .joinType(join)
                        .select("id")
                        .select("firstname")
                        .select("lastname")
                        .select("city")
                        .select("plan")
                        .build();
        CdcJoin.Builder second =
                variant.configure(CdcJoin.builder())
                        .left("users_profiles", first, List.of("id"), List.of("id"))
                        .right("settings", MartWorkload.SETTINGS, List.of("user_id"), List.of("id"))
                        .joinType(join);
        selectMart("users_profiles.id", second::select);
        CdcJoin mart = second.build();
        DataStream<byte[]> users = topics.apply(TraceFiles.topic("users"));
        DataStream<byte[]> profiles = topics.apply(TraceFiles.topic("profiles"));
        DataStream<byte[]> settings = topics.apply(TraceFiles.topic("settings"));
        return mart.joinJson(first.joinJson(users, profiles), settings).rows();
    }

    /**
     * Selects the mart's output columns ({@code select(column, outputName)} of a builder), the user
     * id from {@code idColumn}.
     */
    private static void selectMart(String idColumn, BiConsumer<String, String> select) {
        select.accept(idColumn, "id");
        for (String c : List.of("firstname", "lastname", "city", "plan")) {
            select.accept(c, c);
        }
        select.accept("settings.id", "setting_id");
        select.accept("setting_key", "setting_key");
        select.accept("setting_value", "setting_value");
    }

    /**
     * The mart's changelog by the native multi-way join ({@code CdcMultiJoin}): one operator, each
     * input's rows stored once under the user id, no intermediate result.
     *
     * @param topics the byte[] messages of a topic, by index of {@link TraceFiles#TOPICS}
     */
    static DataStream<Row> multiway(IntFunction<DataStream<byte[]>> topics, JoinType join) {
        CdcMultiJoin.Builder b =
                CdcMultiJoin.builder()
                        .input("users", Workload.USERS, List.of("id"), List.of("id"))
                        .input(
                                "profiles",
                                MartWorkload.PROFILES,
                                List.of("user_id"),
                                List.of("user_id"),
                                join)
                        .input(
                                "settings",
                                MartWorkload.SETTINGS,
                                List.of("user_id"),
                                List.of("id"),
                                join);
        selectMart("users.id", b::select);
        return b.build()
                .joinJson(
                        List.of(
                                topics.apply(TraceFiles.topic("users")),
                                topics.apply(TraceFiles.topic("profiles")),
                                topics.apply(TraceFiles.topic("settings"))))
                .rows();
    }

    /**
     * The mart's changelog by Flink SQL over the three tables.
     *
     * @param withOptions the {@code WITH} options of a topic's table, by index of {@link
     *     TraceFiles#TOPICS}
     */
    static DataStream<Row> sql(
            StreamTableEnvironment t,
            IntFunction<String> withOptions,
            Variant variant,
            JoinType join) {
        boolean multi = variant == Variant.SQL_MULTIJOIN_HEAP;
        t.getConfig().set(MULTI_JOIN_OPTION, "" + multi);
        t.executeSql(
                "CREATE TABLE users (id INT NOT NULL, firstname STRING, lastname STRING,"
                        + " PRIMARY KEY (id) NOT ENFORCED) WITH ("
                        + withOptions.apply(TraceFiles.topic("users"))
                        + ")");
        t.executeSql(
                "CREATE TABLE profiles (user_id INT NOT NULL, city STRING, plan STRING,"
                        + " PRIMARY KEY (user_id) NOT ENFORCED) WITH ("
                        + withOptions.apply(TraceFiles.topic("profiles"))
                        + ")");
        t.executeSql(
                "CREATE TABLE settings (id INT NOT NULL, user_id INT, setting_key STRING,"
                        + " setting_value STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ("
                        + withOptions.apply(TraceFiles.topic("settings"))
                        + ")");
        Table mart = t.sqlQuery(String.format(QUERY, join == JoinType.LEFT ? "LEFT JOIN" : "JOIN"));
        String plan = mart.explain();
        System.out.println("optimized plan (" + variant + "):\n" + plan);
        if (multi && !plan.contains("MultiJoin")) {
            throw new IllegalStateException(
                    MULTI_JOIN_OPTION + " is set but the plan has no MultiJoin:\n" + plan);
        }
        return t.toChangelogStream(mart);
    }
}
