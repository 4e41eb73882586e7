package dev.cdcjoin.flink.e2e;

import dev.cdcjoin.flink.BadRecordPolicy;
import dev.cdcjoin.flink.CdcJoin;
import dev.cdcjoin.flink.DebeziumFormat;
import dev.cdcjoin.flink.DebeziumFormat.BinaryHandling;
import dev.cdcjoin.flink.DebeziumFormat.DecimalHandling;
import dev.cdcjoin.flink.DebeziumFormat.TimePrecision;
import dev.cdcjoin.flink.JoinType;
import dev.cdcjoin.flink.KafkaMessage;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The e2e fidelity job (e2e/fidelity.sh): {@code fid_items} (every common Postgres type, {@code
 * REPLICA IDENTITY FULL}) LEFT JOIN {@code fid_accounts} ({@code REPLICA IDENTITY DEFAULT}, read in
 * upsert mode; two TOASTed columns) ON {@code fid_accounts.id = fid_items.account_id}, read from
 * the topics of one of two Debezium connectors configured differently, each declared with the
 * {@link DebeziumFormat} that matches it:
 *
 * <ul>
 *   <li>{@code --config a}: {@code decimal.handling.mode=precise}, {@code
 *       time.precision.mode=adaptive}, {@code binary.handling.mode=bytes} (Debezium's defaults),
 *       with each temporal column's source precision;
 *   <li>{@code --config b}: {@code string}, {@code connect}, {@code hex}.
 * </ul>
 *
 * <pre>
 * --bootstrap 127.0.0.1:19092 --config a|b --topic-prefix fa|fb --group e2e-fid-a
 * --jdbc-url jdbc:postgresql://127.0.0.1:15432/e2e --jdbc-user postgres [--jdbc-password ...]
 * --mart-table mart.fid_a --checkpoint-ms 2000 [--max-flush-ms 50]
 * </pre>
 *
 * <p>The changelog goes to the mart through {@link MartSinkOperator} (exactly once, forward and
 * chained, as in {@link UsersDomainsMartJob}); records the product rejects go to {@link
 * BadRecordSinkOperator}, so that the run names them.
 */
public final class FidelityMartJob {

    /** fid_items as the jobs declare it: each Postgres type as the Flink type it maps to. */
    static final CdcSchema ITEMS =
            CdcSchema.of(
                    Column.notNull("id", "BIGINT"),
                    Column.notNull("account_id", "INT"),
                    Column.nullable("n_money", "DECIMAL(12, 2)"),
                    Column.nullable("n_free", "DECIMAL(38, 10)"),
                    Column.nullable("ts3", "TIMESTAMP(3)"),
                    Column.nullable("ts6", "TIMESTAMP(6)"),
                    Column.nullable("tstz", "TIMESTAMP_LTZ(6)"),
                    Column.nullable("d", "DATE"),
                    Column.nullable("t", "TIME(3)"),
                    Column.nullable("flag", "BOOLEAN"),
                    Column.nullable("bin", "BYTES"),
                    Column.nullable("uid", "STRING"),
                    Column.nullable("doc", "STRING"),
                    Column.nullable("txt", "STRING"),
                    Column.nullable("small", "SMALLINT"),
                    Column.nullable("big", "BIGINT"),
                    Column.nullable("r", "FLOAT"),
                    Column.nullable("dp", "DOUBLE"));

    /** fid_accounts: note and profile are the TOASTed columns. */
    static final CdcSchema ACCOUNTS =
            CdcSchema.of(
                    Column.notNull("id", "INT"),
                    Column.nullable("name", "STRING"),
                    Column.nullable("balance", "DECIMAL(12, 2)"),
                    Column.nullable("visits", "INT"),
                    Column.nullable("seen", "TIMESTAMP(6)"),
                    Column.nullable("note", "STRING"),
                    Column.nullable("profile", "STRING"));

    /** The mart's columns (e2e/sql/fidelity.sql), in the join's output order. */
    static final List<String> MART_COLUMNS =
            List.of(
                    "item_id",
                    "account_id",
                    "n_money",
                    "n_free",
                    "ts3",
                    "ts6",
                    "tstz",
                    "d",
                    "t",
                    "flag",
                    "bin",
                    "uid",
                    "doc",
                    "txt",
                    "small",
                    "big",
                    "r",
                    "dp",
                    "acc_id",
                    "acc_name",
                    "acc_balance",
                    "acc_visits",
                    "acc_seen",
                    "acc_note",
                    "acc_profile");

    /** The mart's key: the item, and the join key (so one row's changes come from one subtask). */
    static final List<String> MART_KEY = List.of("item_id", "account_id");

    public static void main(String[] args) throws Exception {
        Map<String, String> a = E2eJobs.parse(args);
        String bootstrap = E2eJobs.required(a, "bootstrap");
        String config = E2eJobs.required(a, "config");
        String prefix = E2eJobs.required(a, "topic-prefix");
        String group = E2eJobs.required(a, "group");
        String jdbcUrl = E2eJobs.required(a, "jdbc-url");
        String jdbcUser = a.getOrDefault("jdbc-user", "postgres");
        String jdbcPassword = a.getOrDefault("jdbc-password", "");
        String table = E2eJobs.required(a, "mart-table");
        long checkpointMs = Long.parseLong(a.getOrDefault("checkpoint-ms", "2000"));
        long maxFlushMs = Long.parseLong(a.getOrDefault("max-flush-ms", "50"));

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.enableCheckpointing(checkpointMs); // exactly once (aligned barriers)
        DataStream<KafkaMessage> items =
                E2eJobs.source(env, bootstrap, prefix + ".public.fid_items", group, "items");
        DataStream<KafkaMessage> accounts =
                E2eJobs.source(env, bootstrap, prefix + ".public.fid_accounts", group, "accounts");

        CdcJoin join =
                CdcJoin.builder()
                        .left("fid_items", ITEMS, List.of("account_id"), List.of("id"))
                        .right("fid_accounts", ACCOUNTS, List.of("id"), List.of("id"))
                        .joinType(JoinType.LEFT)
                        .format(itemsFormat(config), accountsFormat(config))
                        .badRecordPolicy(BadRecordPolicy.SIDE_OUTPUT)
                        .maxFlushDelay(Duration.ofMillis(maxFlushMs))
                        .build();
        CdcJoin.Result result = join.joinKafka(items, accounts);
        MartSinkOperator.sink(
                result.rows().uid("join-fid"),
                jdbcUrl,
                jdbcUser,
                jdbcPassword,
                table,
                MART_COLUMNS,
                MART_KEY);
        result.badRecords()
                .transform(
                        "bad records " + table,
                        Types.VOID,
                        new BadRecordSinkOperator(jdbcUrl, jdbcUser, jdbcPassword, table))
                .uid("bad-record-sink");

        env.execute("e2e fidelity config " + config + " (" + prefix + ") -> " + table);
    }

    /** The value encodings of connector configuration a or b. */
    static DebeziumFormat connectorFormat(String config) {
        switch (config) {
            case "a":
                return DebeziumFormat.debeziumDefaults().withBinaryHandling(BinaryHandling.BYTES);
            case "b":
                return DebeziumFormat.defaults()
                        .withDecimalHandling(DecimalHandling.STRING)
                        .withTimePrecision(TimePrecision.CONNECT)
                        .withBinaryHandling(BinaryHandling.HEX);
            default:
                throw new IllegalArgumentException("--config must be a or b, not " + config);
        }
    }

    /**
     * fid_items' format. In the adaptive mode every TIME and TIMESTAMP column sent as an epoch
     * integer needs its source precision (its unit depends on it): timestamp(3), timestamp(6),
     * time.
     */
    static DebeziumFormat itemsFormat(String config) {
        DebeziumFormat f = connectorFormat(config);
        return adaptive(f)
                ? f.withSourcePrecision("ts3", 3)
                        .withSourcePrecision("ts6", 6)
                        .withSourcePrecision("t", 6)
                : f;
    }

    /** fid_accounts' format: upsert mode (REPLICA IDENTITY DEFAULT); seen is a timestamp(6). */
    static DebeziumFormat accountsFormat(String config) {
        DebeziumFormat f = connectorFormat(config).withUpsert(true);
        return adaptive(f) ? f.withSourcePrecision("seen", 6) : f;
    }

    private static boolean adaptive(DebeziumFormat f) {
        return f.timePrecision() == TimePrecision.ADAPTIVE;
    }

    private FidelityMartJob() {}
}
