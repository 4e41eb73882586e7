package dev.cdcjoin.flink.e2e;

import dev.cdcjoin.flink.BadRecordPolicy;
import dev.cdcjoin.flink.CdcJoin;
import dev.cdcjoin.flink.ChangeRecord;
import dev.cdcjoin.flink.JoinType;
import dev.cdcjoin.flink.KafkaMessage;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.types.Row;

/**
 * The e2e data-mart job: Debezium topics of {@code users} and {@code domains} → the product's
 * native decode and join ({@code users.id = domains.user_id}, INNER or LEFT) → the Postgres mart,
 * applied as a changelog by {@link MartSinkOperator} (exactly once: a batch per checkpoint,
 * committed when the checkpoint completes).
 *
 * <pre>
 * --bootstrap 127.0.0.1:19092 --users-topic e2e.public.users --domains-topic e2e.public.domains
 * --group e2e-join-inner --join inner|left
 * --jdbc-url jdbc:postgresql://127.0.0.1:15432/e2e --jdbc-user postgres [--jdbc-password ...]
 * --mart-table mart.users_domains --checkpoint-ms 2000 [--max-flush-ms 50]
 * </pre>
 *
 * <p>Topology, parallelism as submitted (2 in the e2e): two Kafka sources (raw value bytes,
 * tombstones dropped; earliest offsets on a fresh start, checkpointed offsets on recovery) → native
 * decoders (chained to the sources) → {@code keyBy} join key → native join → (forward, chained)
 * mart sink. The sink is chained to the join so that all changes of one mart row, whose key
 * contains the join key, come from one ordered stream.
 */
public final class UsersDomainsMartJob {

    /** users(id PK, firstname, lastname), as Debezium's JSON converter writes it. */
    static final CdcSchema USERS =
            CdcSchema.of(
                    Column.notNull("id", "INT"),
                    Column.nullable("firstname", "STRING"),
                    Column.nullable("lastname", "STRING"));

    /** domains(id PK, user_id, domain_name). */
    static final CdcSchema DOMAINS =
            CdcSchema.of(
                    Column.notNull("id", "INT"),
                    Column.nullable("user_id", "INT"),
                    Column.nullable("domain_name", "STRING"));

    /** The mart's columns, in the join's output order (users columns, then domains columns). */
    static final List<String> MART_COLUMNS =
            List.of("id", "firstname", "lastname", "domain_id", "user_id", "domain_name");

    /** The mart's key: users.id (= the join key) and domains.id (NULL in a null-padded row). */
    static final List<String> MART_KEY = List.of("id", "domain_id");

    public static void main(String[] args) throws Exception {
        Map<String, String> a = E2eJobs.parse(args);
        String bootstrap = E2eJobs.required(a, "bootstrap");
        String usersTopic = a.getOrDefault("users-topic", "e2e.public.users");
        String domainsTopic = a.getOrDefault("domains-topic", "e2e.public.domains");
        String group = a.getOrDefault("group", "e2e-join");
        JoinType joinType =
                JoinType.valueOf(a.getOrDefault("join", "inner").toUpperCase(Locale.ROOT));
        if (joinType != JoinType.INNER && joinType != JoinType.LEFT) {
            throw new IllegalArgumentException("--join must be inner or left, not " + joinType);
        }
        String jdbcUrl = E2eJobs.required(a, "jdbc-url");
        String jdbcUser = a.getOrDefault("jdbc-user", "postgres");
        String jdbcPassword = a.getOrDefault("jdbc-password", "");
        String table = E2eJobs.required(a, "mart-table");
        long checkpointMs = Long.parseLong(a.getOrDefault("checkpoint-ms", "2000"));
        long maxFlushMs = Long.parseLong(a.getOrDefault("max-flush-ms", "50"));
        if (checkpointMs <= 0) {
            throw new IllegalArgumentException(
                    "--checkpoint-ms must be > 0: the mart sink commits on checkpoints");
        }

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.enableCheckpointing(checkpointMs); // exactly once (aligned barriers)

        DataStream<KafkaMessage> users = E2eJobs.source(env, bootstrap, usersTopic, group, "users");
        DataStream<KafkaMessage> domains =
                E2eJobs.source(env, bootstrap, domainsTopic, group, "domains");

        CdcJoin join =
                CdcJoin.builder()
                        .left("users", USERS, List.of("id"), List.of("id"))
                        .right("domains", DOMAINS, List.of("user_id"), List.of("id"))
                        .joinType(joinType)
                        .badRecordPolicy(BadRecordPolicy.FAIL)
                        .maxFlushDelay(Duration.ofMillis(maxFlushMs))
                        .build();
        SingleOutputStreamOperator<ChangeRecord> usersChanges =
                join.leftDecoder().decodeKafka(users).uid("decode-users");
        SingleOutputStreamOperator<ChangeRecord> domainsChanges =
                join.rightDecoder().decodeKafka(domains).uid("decode-domains");
        CdcJoin.Result result = join.join(usersChanges, domainsChanges);
        SingleOutputStreamOperator<Row> rows =
                result.rows().uid("join-" + joinType.name().toLowerCase(Locale.ROOT));
        if (rows.getType().getArity() != MART_COLUMNS.size()) {
            throw new IllegalStateException(
                    "join output has "
                            + rows.getType().getArity()
                            + " columns, the mart "
                            + MART_COLUMNS.size());
        }

        MartSinkOperator.sink(rows, jdbcUrl, jdbcUser, jdbcPassword, table, MART_COLUMNS, MART_KEY);

        env.execute("e2e users-domains " + joinType + " join -> " + table);
    }

    private UsersDomainsMartJob() {}
}
