package dev.cdcjoin.flink.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.ChangeRecord;
import dev.cdcjoin.flink.JoinKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.StringUtils;
import org.junit.jupiter.api.Test;

/**
 * The batch exchange's Java half: key groups as the Rust decoder computes them (the shared vector
 * file) and the routes that put a batch in its key group; the block bytes are {@link
 * WireFormatsTest}'s.
 */
class KeyGroupExchangeTest {

    private static final Path VECTORS =
            Path.of(
                    System.getProperty("cdcjoin.project.basedir", "."),
                    "tests",
                    "vectors",
                    "key_groups",
                    "flink.tsv");

    /** Each line: Flink's key group of {@code new JoinKey(bytes)}, the value Rust is held to. */
    @Test
    void theSharedVectorsAreFlinksKeyGroupsOfJoinKeys() throws Exception {
        List<String> lines = Files.readAllLines(VECTORS);
        int checked = 0;
        for (String line : lines) {
            if (line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\t", -1);
            JoinKey key = new JoinKey(StringUtils.hexStringToByte(f[0]));
            int maxParallelism = Integer.parseInt(f[1]);
            assertEquals(
                    Integer.parseInt(f[2]),
                    KeyGroupRangeAssignment.assignToKeyGroup(key, maxParallelism),
                    line);
            checked++;
        }
        assertTrue(checked >= 100, "only " + checked + " vectors");
    }

    /** Every key group has a route, the smallest non-negative int Flink puts in it. */
    @Test
    void routesLandInTheirKeyGroup() {
        for (int maxParallelism : new int[] {1, 2, 3, 128, 1000, 32768}) {
            int[] routes = KeyGroupRoutes.routes(maxParallelism);
            for (int group = 0; group < maxParallelism; group++) {
                int route = routes[group];
                assertEquals(
                        group, KeyGroupRangeAssignment.assignToKeyGroup(route, maxParallelism));
                for (int smaller = 0; smaller < route && maxParallelism <= 128; smaller++) {
                    assertTrue(
                            KeyGroupRangeAssignment.assignToKeyGroup(smaller, maxParallelism)
                                    != group);
                }
            }
        }
        KeyGroupRoutes selector = new KeyGroupRoutes();
        ChangeBatch batch = new ChangeBatch(77, 128, 1, new byte[0]);
        assertEquals(77, KeyGroupRangeAssignment.assignToKeyGroup(selector.getKey(batch), 128));
    }

    /** A change handed to the join alone is a batch of one in its join key's key group. */
    @Test
    void oneChangeIsABatchOfItsKeyGroup() {
        ChangeBatch one =
                ChangeBatch.of(
                        128,
                        new StreamRecord<>(
                                new ChangeRecord(
                                        RowKind.INSERT, new JoinKey(new byte[] {7}), new byte[1])));
        assertEquals(
                KeyGroupRangeAssignment.assignToKeyGroup(new JoinKey(new byte[] {7}), 128),
                one.keyGroup);
        assertEquals(1, one.count);
    }
}
