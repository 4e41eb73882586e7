package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import dev.cdcjoin.flink.codec.ColumnType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** The shared test vectors of {@code tests/vectors/*.json}, for the tests of both engines. */
public final class TestVectors {

    static final ObjectMapper JSON = new ObjectMapper();

    /** One vector file. */
    public static final class Vector {
        /** The file's name. */
        public final String file;

        /** The left table. */
        public final SideSpec left;

        /** The right table. */
        public final SideSpec right;

        /**
         * Events as {@code "L|json"} or {@code "R|json"} ({@code json} = {@code null} for a
         * tombstone).
         */
        public final List<String> events;

        /** The exact changelog of each join type. */
        public final Map<JoinType, List<String>> expected;

        Vector(String file, JsonNode root) {
            this.file = file;
            this.left = side(root.get("left"));
            this.right = side(root.get("right"));
            this.events = new ArrayList<>();
            for (JsonNode e : root.get("events")) {
                String side = e.get("side").asText().equals("left") ? "L" : "R";
                events.add(side + "|" + e.get("value").toString());
            }
            this.expected = new EnumMap<>(JoinType.class);
            root.get("expected")
                    .properties()
                    .forEach(
                            f -> {
                                List<String> rows = new ArrayList<>();
                                f.getValue().forEach(r -> rows.add(r.asText()));
                                expected.put(JoinType.valueOf(f.getKey()), rows);
                            });
        }

        @Override
        public String toString() {
            return file;
        }
    }

    private static SideSpec side(JsonNode side) {
        List<Column> columns = new ArrayList<>();
        for (JsonNode f : side.get("schema").get("fields")) {
            boolean nullable = !f.has("nullable") || f.get("nullable").asBoolean();
            columns.add(
                    new Column(
                            f.get("name").asText(),
                            ColumnType.parse(f.get("type").asText()),
                            nullable));
        }
        JsonNode pk = side.get("primary_key");
        return new SideSpec(
                side.get("name").asText(),
                CdcSchema.of(columns),
                strings(side.get("join_key")),
                pk == null || pk.isNull() ? null : strings(pk),
                null,
                format(side));
    }

    /** The side's Debezium format, in the native decoder configuration's field names. */
    private static DebeziumFormat format(JsonNode side) {
        DebeziumFormat f = DebeziumFormat.defaults();
        if (side.has("decimal_handling")) {
            f =
                    f.withDecimalHandling(
                            DebeziumFormat.DecimalHandling.valueOf(
                                    upper(side, "decimal_handling")));
        }
        if (side.has("time_precision")) {
            f =
                    f.withTimePrecision(
                            DebeziumFormat.TimePrecision.valueOf(upper(side, "time_precision")));
        }
        if (side.has("binary_handling")) {
            f =
                    f.withBinaryHandling(
                            DebeziumFormat.BinaryHandling.valueOf(upper(side, "binary_handling")));
        }
        if (side.has("source_precision")) {
            for (var e : side.get("source_precision").properties()) {
                f = f.withSourcePrecision(e.getKey(), e.getValue().asInt());
            }
        }
        if (side.has("unavailable_placeholder")) {
            f = f.withUnavailablePlaceholder(side.get("unavailable_placeholder").asText());
        }
        return side.has("upsert") ? f.withUpsert(side.get("upsert").asBoolean()) : f;
    }

    private static String upper(JsonNode side, String field) {
        return side.get(field).asText().toUpperCase(java.util.Locale.ROOT);
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    private static Path directory() {
        String base = System.getProperty("cdcjoin.project.basedir", ".");
        return Paths.get(base, "tests", "vectors");
    }

    /**
     * Every vector, by file name.
     *
     * @return the vectors (at least one)
     * @throws IOException if a file cannot be read
     */
    public static List<Vector> all() throws IOException {
        try (Stream<Path> files = Files.list(directory())) {
            List<Path> paths =
                    files.filter(p -> p.toString().endsWith(".json"))
                            .sorted()
                            .collect(Collectors.toList());
            List<Vector> out = new ArrayList<>();
            for (Path p : paths) {
                out.add(new Vector(p.getFileName().toString(), JSON.readTree(p.toFile())));
            }
            assertFalse(out.isEmpty(), "no vectors in " + directory());
            return out;
        }
    }

    private TestVectors() {}
}
