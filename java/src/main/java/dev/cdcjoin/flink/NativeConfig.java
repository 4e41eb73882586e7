package dev.cdcjoin.flink;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The configurations handed to the native library, written with a JSON library (jackson-core's
 * generator, the JAR's one dependency). This is the Java half of one contract: the field names are
 * those of the Rust {@code serde} structs named on each method, and nowhere else in the Java code.
 */
final class NativeConfig {

    private static final JsonFactory JSON = new JsonFactory();

    private NativeConfig() {}

    /** Writes one JSON document. */
    @FunctionalInterface
    private interface Body {
        void write(JsonGenerator g) throws IOException;
    }

    private static String json(Body body) {
        StringWriter out = new StringWriter();
        try (JsonGenerator g = JSON.createGenerator(out)) {
            body.write(g);
        } catch (IOException e) {
            throw new UncheckedIOException("writing a native configuration", e);
        }
        return out.toString();
    }

    /**
     * A batch decoder's configuration (Rust {@code cdcjoin_debezium::BatchDecoderConfig}, which
     * flattens {@code DecoderConfig}).
     */
    static String decoder(SideSpec side, boolean deleteInsertUpdates) {
        DebeziumFormat f = side.format();
        return json(
                g -> {
                    g.writeStartObject();
                    g.writeFieldName("schema");
                    schema(g, side.schema());
                    strings(g, "join_key", side.joinKey());
                    g.writeStringField("source", side.name());
                    g.writeStringField(
                            "update_mode", deleteInsertUpdates ? "DeleteInsert" : "Retract");
                    g.writeStringField("decimal_handling", lower(f.decimalHandling()));
                    g.writeStringField("time_precision", lower(f.timePrecision()));
                    g.writeStringField("binary_handling", lower(f.binaryHandling()));
                    g.writeObjectFieldStart("source_precision");
                    for (Map.Entry<String, Integer> e : f.sourcePrecision().entrySet()) {
                        g.writeNumberField(e.getKey(), e.getValue());
                    }
                    g.writeEndObject();
                    g.writeStringField("unavailable_placeholder", f.unavailablePlaceholder());
                    strings(g, "primary_key", side.primaryKey());
                    g.writeBooleanField("upsert", f.upsert());
                    g.writeEndObject();
                });
    }

    /** A join's declaration for key groups {@code [start, end]} (Rust {@code JoinSpec}). */
    static String joinSpec(JoinSpec spec, int start, int end) {
        return json(
                g -> {
                    g.writeStartObject();
                    g.writeFieldName("left");
                    side(g, spec.left());
                    g.writeFieldName("right");
                    side(g, spec.right());
                    g.writeStringField("join_type", spec.joinType().name());
                    absentRetractionAndKeyGroups(g, spec.failOnAbsentRetraction(), start, end);
                    g.writeEndObject();
                });
    }

    /**
     * A multi-way join's declaration for key groups {@code [start, end]} (Rust {@code
     * MultiwaySpec}).
     */
    static String multiwaySpec(MultiJoinSpec spec, int start, int end) {
        return json(
                g -> {
                    g.writeStartObject();
                    g.writeArrayFieldStart("inputs");
                    for (SideSpec input : spec.inputs()) {
                        side(g, input);
                    }
                    g.writeEndArray();
                    g.writeArrayFieldStart("steps");
                    for (JoinType step : spec.steps()) {
                        g.writeString(step.name());
                    }
                    g.writeEndArray();
                    absentRetractionAndKeyGroups(g, spec.failOnAbsentRetraction(), start, end);
                    g.writeEndObject();
                });
    }

    /** The fields of a join's policy for absent retractions and of its key groups. */
    private static void absentRetractionAndKeyGroups(
            JsonGenerator g, boolean fail, int start, int end) throws IOException {
        g.writeStringField("absent_retraction", fail ? "FAIL" : "IGNORE");
        g.writeObjectFieldStart("key_groups");
        g.writeNumberField("start", start);
        g.writeNumberField("end", end);
        g.writeEndObject();
    }

    /**
     * How a join's output feeds the side {@code next} of a next join whose max parallelism is
     * {@code maxParallelism} (Rust {@code cdcjoin_join::ChainSpec}): the join's output projection
     * (indexes into its inputs' columns in input order), and the next join key as indexes into the
     * output columns.
     */
    static String chain(int[] projection, SideSpec next, int maxParallelism) {
        return json(
                g -> {
                    g.writeStartObject();
                    projection(g, projection);
                    g.writeArrayFieldStart("key");
                    for (String column : next.joinKey()) {
                        g.writeNumber(next.schema().indexOf(column));
                    }
                    g.writeEndArray();
                    g.writeNumberField("max_parallelism", maxParallelism);
                    g.writeEndObject();
                });
    }

    /**
     * Which columns a join's output rows in Flink's {@code BinaryRowData} layout hold (Rust {@code
     * cdcjoin_join::FlinkRowsSpec}): the join's output projection, indexes into its inputs' columns
     * in input order.
     */
    static String flinkRows(int[] projection) {
        return json(
                g -> {
                    g.writeStartObject();
                    projection(g, projection);
                    g.writeEndObject();
                });
    }

    /** The {@code projection} field of a chain or Flink rows declaration. */
    private static void projection(JsonGenerator g, int[] projection) throws IOException {
        g.writeArrayFieldStart("projection");
        for (int p : projection) {
            g.writeNumber(p);
        }
        g.writeEndArray();
    }

    /** One input of the join (Rust {@code SideSpec}). */
    private static void side(JsonGenerator g, SideSpec side) throws IOException {
        g.writeStartObject();
        g.writeFieldName("schema");
        schema(g, side.schema());
        strings(g, "join_key", side.joinKey());
        strings(g, "primary_key", side.primaryKey());
        g.writeFieldName("ttl_ms");
        if (side.ttl() == null) {
            g.writeNull();
        } else {
            g.writeNumber(side.ttl().toMillis());
        }
        g.writeBooleanField("exact_retractions", side.exactRetractions());
        g.writeEndObject();
    }

    /** A schema (Rust {@code cdcjoin_model::Schema}). */
    private static void schema(JsonGenerator g, CdcSchema schema) throws IOException {
        g.writeStartObject();
        g.writeArrayFieldStart("fields");
        for (Column c : schema.columns()) {
            g.writeStartObject();
            g.writeStringField("name", c.name());
            g.writeStringField("type", c.type().toString());
            g.writeBooleanField("nullable", c.isNullable());
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    /** A field holding an array of strings, or null. */
    private static void strings(JsonGenerator g, String field, List<String> items)
            throws IOException {
        g.writeFieldName(field);
        if (items == null) {
            g.writeNull();
            return;
        }
        g.writeStartArray();
        for (String item : items) {
            g.writeString(item);
        }
        g.writeEndArray();
    }

    private static String lower(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }
}
