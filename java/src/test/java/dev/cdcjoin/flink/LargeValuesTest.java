package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Values of many megabytes (a document or a blob in a text column, as Postgres stores up to 1 GB in
 * one): decoded, kept in the join's state, joined and emitted whole, on both engines. A message, a
 * batch, a row in state and an output row are each larger than Flink's network buffers and than the
 * batches' first buffers, which must grow.
 */
@SuppressWarnings("try") // CloseableIterator#close may throw InterruptedException
class LargeValuesTest {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.create(4, managedMemory());

    /**
     * Managed memory for the state of a few large rows in two joins (rows() and rowData() are a
     * join each): by default a subtask of these test clusters may use 10 MiB, and the join fails
     * saying so.
     */
    private static Configuration managedMemory() {
        Configuration c = MiniClusters.configuration();
        c.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.ofMebiBytes(512));
        return c;
    }

    /** Characters of a large name: 6 MiB of text, 12 MiB in UTF-8. */
    static final int LARGE = 6 << 20;

    /** A name of {@code length} characters, two bytes each in UTF-8, distinct per {@code seed}. */
    static String name(int seed, int length) {
        StringBuilder b = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            b.append((char) ('À' + (i * 7 + seed) % 60));
        }
        return b.toString();
    }

    /** The users: user 1 large, then renamed to another large name; user 2 small. */
    static String user(long i) {
        if (i == 0) {
            return CdcJoinJobTest.user("c", 1, name(1, LARGE));
        }
        if (i == 1) {
            return CdcJoinJobTest.user("c", 2, "small");
        }
        String before = "{\"id\":1,\"name\":\"" + name(1, LARGE) + "\"}";
        String after = "{\"id\":1,\"name\":\"" + name(2, LARGE + 1) + "\"}";
        return "{\"op\":\"u\",\"before\":" + before + ",\"after\":" + after + "}";
    }

    /** What the test keeps of a row: its kind, its ids and the length and hash of its name. */
    static String digest(Row row) {
        String n = (String) row.getField(1);
        return row.getKind().shortString()
                + "["
                + row.getField(0)
                + ", "
                + (n == null ? "null" : n.length() + "/" + n.hashCode())
                + ", "
                + row.getField(2)
                + "]";
    }

    /** {@link #digest(Row)} of a {@link RowData} row of the same columns. */
    static String digest(RowData row) {
        Row r = Row.ofKind(row.getRowKind(), row.getLong(0), null, row.getLong(2));
        r.setField(1, row.isNullAt(1) ? null : row.getString(1).toString());
        return digest(r);
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void megabyteValuesAreJoinedWhole(Engine engine) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        CdcJoin join = CdcJoinJobTest.usersDomains().joinType(JoinType.LEFT).engine(engine).build();
        // Generated in the job: large messages in the job graph would have to cross its RPC.
        DataStream<String> users =
                env.fromSequence(0, 2)
                        .setParallelism(1)
                        .map(LargeValuesTest::user)
                        .setParallelism(1);
        DataStream<String> domains =
                env.fromSequence(0, 3)
                        .setParallelism(1)
                        .map(i -> CdcJoinJobTest.domain(100 + i, i < 3 ? 1 : 2, "d" + i))
                        .setParallelism(1);
        CdcJoin.Result result = join.joinStrings(users, domains);
        DataStream<String> digests =
                result.rows()
                        .map(r -> "rows|" + digest(r))
                        .union(result.rowData().map(r -> "rowData|" + digest(r)));
        Map<String, List<String>> changelogs = new TreeMap<>();
        try (CloseableIterator<String> it = digests.executeAndCollect("large values")) {
            it.forEachRemaining(
                    s -> {
                        int bar = s.indexOf('|');
                        changelogs
                                .computeIfAbsent(s.substring(0, bar), k -> new ArrayList<>())
                                .add(s.substring(bar + 1));
                    });
        }
        Map<String, Integer> expected = new TreeMap<>();
        String renamed = name(2, LARGE + 1);
        for (long d = 100; d < 103; d++) {
            expected.put("[1, " + renamed.length() + "/" + renamed.hashCode() + ", " + d + "]", 1);
        }
        expected.put("[2, 5/" + "small".hashCode() + ", 103]", 1);
        for (String form : List.of("rows", "rowData")) {
            List<String> changelog = changelogs.getOrDefault(form, List.of());
            assertEquals(expected, Changelogs.materialize(changelog), form + ": " + changelog);
        }
    }
}
