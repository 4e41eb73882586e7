package dev.cdcjoin.flink.javajoin;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.cdcjoin.flink.JoinDefinition;
import dev.cdcjoin.flink.JoinSide;
import dev.cdcjoin.flink.JoinType;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import dev.cdcjoin.flink.codec.ColumnType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.api.common.functions.FilterFunction;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.java.typeutils.EitherTypeInfo;
import org.apache.flink.types.Either;
import org.apache.flink.types.Row;

/** Shared test helpers: the shared vectors, join definitions, changelog materialization. */
final class Support {

    static final ObjectMapper JSON = new ObjectMapper();

    static final TypeInformation<byte[]> BYTES =
            PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO;

    static final TypeInformation<Either<byte[], byte[]>> EITHER_BYTES =
            new EitherTypeInfo<>(BYTES, BYTES);

    private Support() {}

    /** One message of a trace: which table, and its bytes (empty for a tombstone). */
    static final class Event {
        final boolean left;
        final byte[] json;

        Event(boolean left, byte[] json) {
            this.left = left;
            this.json = json;
        }

        Either<byte[], byte[]> either() {
            return left ? Either.Left(json) : Either.Right(json);
        }
    }

    /** A shared test vector (tests/vectors/*.json). */
    static final class Vector {
        final String file;
        final String description;
        final JoinSide left;
        final JoinSide right;
        final List<Event> events = new ArrayList<>();
        final Map<JoinType, List<String>> expected = new EnumMap<>(JoinType.class);

        Vector(Path path) throws IOException {
            JsonNode v = JSON.readTree(path.toFile());
            this.file = path.getFileName().toString();
            this.description = v.path("description").asText();
            this.left = side(v.get("left"), null);
            this.right = side(v.get("right"), null);
            for (JsonNode e : v.get("events")) {
                JsonNode value = e.get("value");
                byte[] json =
                        value == null || value.isNull() ? new byte[0] : JSON.writeValueAsBytes(value);
                events.add(new Event("left".equals(e.get("side").asText()), json));
            }
            v.get("expected")
                    .fields()
                    .forEachRemaining(
                            f ->
                                    expected.put(
                                            JoinType.valueOf(f.getKey()),
                                            strings(f.getValue())));
        }

        JoinDefinition definition(JoinType type) {
            return new JoinDefinition(left, right, type, false, null, null);
        }

        List<Either<byte[], byte[]>> messages() {
            return events.stream().map(Event::either).collect(Collectors.toList());
        }

        @Override
        public String toString() {
            return file;
        }
    }

    static JoinSide side(JsonNode side, Duration ttl) {
        List<Column> columns = new ArrayList<>();
        for (JsonNode f : side.get("schema").get("fields")) {
            columns.add(
                    new Column(
                            f.get("name").asText(),
                            ColumnType.parse(f.get("type").asText()),
                            f.path("nullable").asBoolean(true)));
        }
        JsonNode pk = side.get("primary_key");
        return new JoinSide(
                side.get("name").asText(),
                CdcSchema.of(columns),
                strings(side.get("join_key")),
                pk == null || pk.isNull() ? null : strings(pk),
                ttl);
    }

    static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    static Path vectorDirectory() {
        String base = System.getProperty("cdcjoin.project.basedir", ".");
        return Paths.get(base, "tests", "vectors");
    }

    static List<Vector> vectors() throws IOException {
        List<Vector> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(vectorDirectory())) {
            for (Path p : files.filter(f -> f.toString().endsWith(".json")).sorted().toList()) {
                out.add(new Vector(p));
            }
        }
        assertTrue(!out.isEmpty(), "no vectors in " + vectorDirectory());
        return out;
    }

    /**
     * Applies a changelog ({@code +I}/{@code +U} add one, {@code -U}/{@code -D} remove one) and
     * returns the resulting multiset of rows; fails if a row would go negative.
     */
    static Map<String, Integer> materialize(List<String> changelog) {
        Map<String, Integer> rows = new TreeMap<>();
        for (String change : changelog) {
            String kind = change.substring(0, 2);
            String row = change.substring(2);
            int delta = kind.equals("+I") || kind.equals("+U") ? 1 : -1;
            int n = rows.getOrDefault(row, 0) + delta;
            if (n < 0) {
                throw new AssertionError("retraction of a row not in the result: " + change);
            }
            if (n == 0) {
                rows.remove(row);
            } else {
                rows.put(row, n);
            }
        }
        return rows;
    }

    /** A multiset of row strings ({@code [..]}, no kind) from rows. */
    static Map<String, Integer> multiset(List<Row> rows) {
        Map<String, Integer> out = new TreeMap<>();
        for (Row r : rows) {
            out.merge(r.toString().substring(2), 1, Integer::sum);
        }
        return out;
    }

    /** Keeps one side's messages of a mixed stream. */
    static final class PickSide implements FilterFunction<Either<byte[], byte[]>> {
        private static final long serialVersionUID = 1L;
        private final boolean left;

        PickSide(boolean left) {
            this.left = left;
        }

        @Override
        public boolean filter(Either<byte[], byte[]> e) {
            return e.isLeft() == left;
        }
    }

    /** Unwraps a message of a mixed stream. */
    static final class Unwrap implements MapFunction<Either<byte[], byte[]>, byte[]> {
        private static final long serialVersionUID = 1L;

        @Override
        public byte[] map(Either<byte[], byte[]> e) {
            return e.isLeft() ? e.left() : e.right();
        }
    }

    /** Tags a joined row with its join type, to run several joins in one job. */
    static final class Tag implements MapFunction<Row, String> {
        private static final long serialVersionUID = 1L;
        private final JoinType type;

        Tag(JoinType type) {
            this.type = type;
        }

        @Override
        public String map(Row row) {
            return type + "|" + row;
        }
    }

    /** Splits tagged output back into one changelog per join type. */
    static Map<JoinType, List<String>> untag(Iterable<String> tagged) {
        Map<JoinType, List<String>> out = new EnumMap<>(JoinType.class);
        for (JoinType t : JoinType.values()) {
            out.put(t, new ArrayList<>());
        }
        for (String s : tagged) {
            int bar = s.indexOf('|');
            out.get(JoinType.valueOf(s.substring(0, bar))).add(s.substring(bar + 1));
        }
        return out;
    }
}
