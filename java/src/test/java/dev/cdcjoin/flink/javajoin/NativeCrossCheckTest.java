package dev.cdcjoin.flink.javajoin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cdcjoin.flink.JoinSpec;
import dev.cdcjoin.flink.JoinType;
import dev.cdcjoin.flink.SideSpec;
import dev.cdcjoin.flink.codec.Column;
import dev.cdcjoin.flink.javajoin.JavaJoinFunctionTest.Join;
import dev.cdcjoin.flink.javajoin.Support.Event;
import dev.cdcjoin.flink.javajoin.Traces.Keys;
import dev.cdcjoin.flink.javajoin.Traces.Trace;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The Java join's changelog, row for row and in order, against the native engine's on random
 * traces: each trace is written as a test vector and replayed by the native CLI ({@code
 * cdcjoin-replay vector}), the same messages go through {@link JavaJoinFunction} in the operator
 * harness. Skipped when the CLI has not been built ({@code cargo build --release -p
 * cdcjoin-replay}; another binary with {@code -Dcdcjoin.replay=/path}).
 */
class NativeCrossCheckTest {

    static Path replayBinary() {
        String explicit = System.getProperty("cdcjoin.replay");
        if (explicit != null) {
            return Paths.get(explicit);
        }
        String base = System.getProperty("cdcjoin.project.basedir", ".");
        return Paths.get(base, "target", "release", "cdcjoin-replay");
    }

    @ParameterizedTest(name = "{0} seed {1}")
    @CsvSource({
        "PRIMARY_KEYS, 11",
        "PRIMARY_KEYS, 12",
        "NO_PRIMARY_KEYS, 13",
        "NO_PRIMARY_KEYS, 14"
    })
    void sameChangelogAsTheNativeJoin(Keys keys, long seed, @TempDir Path dir) throws Exception {
        Path cli = replayBinary();
        assumeTrue(Files.isExecutable(cli), "native replay CLI not built: " + cli);
        // Few keys, so keys have several matches and their order matters.
        Trace trace = Traces.generate(seed, 1500, 12, 60, 100);
        Path vector = dir.resolve("trace.json");
        writeVector(trace, Traces.definition(keys, JoinType.INNER), vector);
        for (JoinType type : JoinType.values()) {
            List<String> java = new ArrayList<>();
            try (Join j = new Join(Traces.definition(keys, type))) {
                for (Event e : trace.events) {
                    j.message(e);
                }
                java.addAll(j.take());
            }
            List<String> rust = replay(cli, vector, type);
            assertTrue(!rust.isEmpty(), "no rows parsed from the native replay");
            assertEquals(rust.size(), java.size(), keys + " " + type + ": number of rows");
            for (int i = 0; i < rust.size(); i++) {
                assertEquals(rust.get(i), java.get(i), keys + " " + type + ": row #" + i);
            }
            assertEquals(trace.expected(keys, type), Support.materialize(java));
        }
    }

    static void writeVector(Trace trace, JoinSpec def, Path file) throws IOException {
        ObjectNode v = Support.JSON.createObjectNode();
        v.put("description", "random users/domains trace");
        v.set("left", table(def.left()));
        v.set("right", table(def.right()));
        ArrayNode events = v.putArray("events");
        for (Event e : trace.events) {
            ObjectNode n = events.addObject();
            n.put("side", e.left ? "left" : "right");
            if (e.json.length == 0) {
                n.putNull("value");
            } else {
                n.set("value", Support.JSON.readTree(e.json));
            }
        }
        v.putObject("expected");
        Support.JSON.writeValue(file.toFile(), v);
    }

    static ObjectNode table(SideSpec side) throws IOException {
        ObjectNode t = Support.JSON.createObjectNode();
        // The side's Debezium format, as the native decoder configuration spells it.
        JsonNode decoder = Support.JSON.readTree(side.decoderConfigJson(false));
        for (String key :
                List.of(
                        "decimal_handling",
                        "time_precision",
                        "binary_handling",
                        "source_precision",
                        "unavailable_placeholder",
                        "upsert")) {
            t.set(key, decoder.get(key));
        }
        t.put("name", side.name());
        ArrayNode fields = t.putObject("schema").putArray("fields");
        for (Column c : side.schema().columns()) {
            fields.addObject()
                    .put("name", c.name())
                    .put("type", c.type().toString())
                    .put("nullable", c.isNullable());
        }
        side.joinKey().forEach(t.putArray("join_key")::add);
        if (side.primaryKey() == null) {
            t.putNull("primary_key");
        } else {
            side.primaryKey().forEach(t.putArray("primary_key")::add);
        }
        return t;
    }

    static List<String> replay(Path cli, Path vector, JoinType type) throws Exception {
        File out = vector.resolveSibling("out-" + type + ".txt").toFile();
        Process p =
                new ProcessBuilder(
                                cli.toString(), "vector", vector.toString(), "--join", type.name())
                        .redirectErrorStream(true)
                        .redirectOutput(out)
                        .start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("cdcjoin-replay timed out");
        }
        List<String> lines = Files.readAllLines(out.toPath(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), "cdcjoin-replay failed: " + lines);
        List<String> rows = new ArrayList<>();
        for (String line : lines) {
            if (line.matches("^[+-][IUD]\\[.*")) {
                rows.add(line);
            }
        }
        return rows;
    }
}
