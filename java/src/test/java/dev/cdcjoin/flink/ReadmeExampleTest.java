package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.codec.CdcSchema;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The README's usage example, compiled and run: the code between the two marker comments in {@link
 * #readmeExampleRuns()} is what the README shows.
 */
@SuppressWarnings("try") // CloseableIterator#close may throw InterruptedException
class ReadmeExampleTest {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withSlots(2);

    static List<byte[]> bytes(String... json) {
        List<byte[]> out = new ArrayList<>();
        for (String j : json) {
            out.add(j.getBytes(StandardCharsets.UTF_8));
        }
        return out;
    }

    @Test
    void readmeShowsThisExample() throws Exception {
        String source =
                Files.readString(
                        Path.of("java/src/test/java/dev/cdcjoin/flink/ReadmeExampleTest.java"));
        String begin = "// README example: begin\n";
        int from = source.lastIndexOf(begin) + begin.length();
        String block =
                source.substring(from, source.indexOf("        // README example: end", from));
        String unindented = block.replaceAll("(?m)^        ", "");
        String readme = Files.readString(Path.of("README.md"));
        assertTrue(
                readme.contains(unindented),
                "README.md must show the example of ReadmeExampleTest as it is:\n" + unindented);
    }

    @Test
    void readmeExampleRuns() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        StreamTableEnvironment tableEnv = StreamTableEnvironment.create(env);
        // In a real job: env.fromSource(KafkaSource<byte[]>...) of each table's Debezium topic.
        DataStream<byte[]> usersTopic =
                env.fromData(
                        bytes(
                                "{\"op\":\"r\",\"after\":{\"id\":1,\"name\":\"ana\"}}",
                                "{\"op\":\"c\",\"after\":{\"id\":2,\"name\":\"bo\"}}",
                                "not json"));
        DataStream<byte[]> domainsTopic =
                env.fromData(
                        bytes(
                                "{\"op\":\"c\",\"after\":{\"id\":10,\"user_id\":1,\"domain\":\"a.com\"}}",
                                "{\"op\":\"u\",\"before\":{\"id\":10,\"user_id\":1,\"domain\":\"a.com\"},"
                                        + "\"after\":{\"id\":10,\"user_id\":2,\"domain\":\"a.com\"}}"));

        // README example: begin
        CdcJoin join =
                CdcJoin.builder()
                        .left(
                                "users",
                                CdcSchema.of(
                                        DataTypes.ROW(
                                                DataTypes.FIELD("id", DataTypes.BIGINT().notNull()),
                                                DataTypes.FIELD("name", DataTypes.STRING()))),
                                List.of("id"), // join key
                                List.of("id")) // primary key
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
                        .format(DebeziumFormat.debeziumDefaults()) // the connectors' settings
                        .select("users.id", "uid")
                        .select("name")
                        .select("domain")
                        .ttl(Duration.ofDays(7)) // state TTL, both sides
                        .badRecordPolicy(BadRecordPolicy.SIDE_OUTPUT) // or FAIL (the default)
                        .uid("users-domains") // stable operator IDs: savepoints survive job changes
                        .build();

        CdcJoin.Result result = join.joinJson(usersTopic, domainsTopic);

        // The changelog as a table (DECIMAL/TIMESTAMP types exact through dataType()) ...
        Table joined =
                tableEnv.fromChangelogStream(
                        result.rows(),
                        Schema.newBuilder().fromRowDataType(join.spec().dataType()).build());
        // ... records that could not be decoded, with the reason ...
        DataStream<String> bad = result.badRecords().map(b -> b.reason);
        // ... or result.rawRows(): the changelog as bytes, for a sink that takes bytes.
        // README example: end

        List<String> reasons = new ArrayList<>();
        try (CloseableIterator<String> it = bad.executeAndCollect()) {
            it.forEachRemaining(reasons::add);
        }
        assertEquals(1, reasons.size(), reasons.toString());
        assertEquals(
                true, reasons.get(0).startsWith("users record #2: malformed JSON"), reasons.get(0));

        List<String> changelog = new ArrayList<>();
        try (CloseableIterator<Row> it = joined.execute().collect()) {
            it.forEachRemaining(r -> changelog.add(r.toString()));
        }
        assertEquals(
                Map.of("[1, ana, null]", 1, "[2, bo, a.com]", 1),
                Changelogs.materialize(changelog));
    }
}
