package dev.cdcjoin.flink.e2e;

import dev.cdcjoin.flink.KafkaMessage;
import dev.cdcjoin.flink.KafkaMessageDeserializer;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.ChainingStrategy;
import org.apache.flink.streaming.api.transformations.PhysicalTransformation;

/**
 * What the e2e jobs share: their {@code --key value} arguments, their Kafka sources of Debezium
 * topics (records with their coordinates; earliest offsets on a fresh start, checkpointed ones on
 * recovery), their connections to the mart's PostgreSQL and how their sinks chain.
 */
final class E2eJobs {

    /**
     * Chains the operator of {@code out} to its input on every Flink line: 1.20 starts a new chain
     * at an operator given to {@code transform} (its own strategy, {@code HEAD}), 2.x chains it;
     * set on the transformation, which hands it to the operator's factory on both.
     *
     * @param out the stream a {@code transform} returned
     * @param <T> its type
     * @return {@code out}
     */
    static <T> SingleOutputStreamOperator<T> chained(SingleOutputStreamOperator<T> out) {
        ((PhysicalTransformation<T>) out.getTransformation())
                .setChainingStrategy(ChainingStrategy.ALWAYS);
        return out;
    }

    /**
     * The stream of one topic's records with their coordinates (so a bad record names its offset),
     * uid {@code source-<what>}.
     *
     * @param env the job's environment
     * @param bootstrap the brokers
     * @param topic the topic
     * @param group the consumer group (one per job)
     * @param what a name for the client id and the uid
     * @return the stream
     */
    static DataStream<KafkaMessage> source(
            StreamExecutionEnvironment env,
            String bootstrap,
            String topic,
            String group,
            String what) {
        return env.fromSource(
                        kafka(bootstrap, topic, group, what),
                        WatermarkStrategy.noWatermarks(),
                        "kafka " + topic)
                .uid("source-" + what);
    }

    /**
     * A source of one topic's records ({@link KafkaMessageDeserializer}: tombstones kept, for the
     * decoder to count).
     *
     * @param bootstrap the brokers
     * @param topic the topic
     * @param group the consumer group (one per job)
     * @param what a name for the client id
     * @return the source
     */
    private static KafkaSource<KafkaMessage> kafka(
            String bootstrap, String topic, String group, String what) {
        return KafkaSource.<KafkaMessage>builder()
                .setBootstrapServers(bootstrap)
                .setTopics(topic)
                .setGroupId(group)
                .setClientIdPrefix(group + "-" + what)
                .setStartingOffsets(OffsetsInitializer.earliest())
                .setDeserializer(new KafkaMessageDeserializer())
                .build();
    }

    /**
     * The value of a required argument.
     *
     * @throws IllegalArgumentException when it is missing or empty
     */
    static String required(Map<String, String> a, String key) {
        String v = a.get(key);
        if (v == null || v.isEmpty()) {
            throw new IllegalArgumentException("--" + key + " is required");
        }
        return v;
    }

    /**
     * {@code --key value} pairs as a map.
     *
     * @throws IllegalArgumentException for anything else
     */
    static Map<String, String> parse(String[] args) {
        Map<String, String> m = new HashMap<>();
        if (args.length % 2 != 0) {
            throw new IllegalArgumentException("expected --key value pairs");
        }
        for (int i = 0; i < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --key value pairs, got " + args[i]);
            }
            m.put(args[i].substring(2), args[i + 1]);
        }
        return m;
    }

    /**
     * A connection to PostgreSQL through the driver in the job's class loader (not DriverManager,
     * which would not see it).
     *
     * @param password empty for none
     * @param applicationName shown in pg_stat_activity
     */
    static Connection connect(String url, String user, String password, String applicationName)
            throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", user);
        if (!password.isEmpty()) {
            p.setProperty("password", password);
        }
        p.setProperty("ApplicationName", applicationName);
        Connection c = new org.postgresql.Driver().connect(url, p);
        if (c == null) {
            throw new SQLException("not a PostgreSQL JDBC URL: " + url);
        }
        return c;
    }

    private E2eJobs() {}
}
