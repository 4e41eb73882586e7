package dev.cdcjoin.flink;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The configurations handed to the native library, written with a JSON library. This is the Java
 * half of one contract: the field names are those of the Rust {@code serde} structs named on each
 * method, and nowhere else in the Java code.
 */
final class NativeConfig {

    private static final ObjectMapper JSON = new ObjectMapper();

    private NativeConfig() {}

    /**
     * A batch decoder's configuration (Rust {@code cdcjoin_debezium::BatchDecoderConfig}, which
     * flattens {@code DecoderConfig}).
     */
    static String decoder(SideSpec side, boolean deleteInsertUpdates) {
        DebeziumFormat f = side.format();
        ObjectNode o = JSON.createObjectNode();
        o.set("schema", schema(side.schema()));
        o.set("join_key", strings(side.joinKey()));
        o.put("source", side.name());
        o.put("update_mode", deleteInsertUpdates ? "DeleteInsert" : "Retract");
        o.put("decimal_handling", lower(f.decimalHandling()));
        o.put("time_precision", lower(f.timePrecision()));
        o.put("binary_handling", lower(f.binaryHandling()));
        ObjectNode precisions = o.putObject("source_precision");
        for (Map.Entry<String, Integer> e : f.sourcePrecision().entrySet()) {
            precisions.put(e.getKey(), e.getValue());
        }
        o.put("unavailable_placeholder", f.unavailablePlaceholder());
        o.set("primary_key", side.primaryKey() == null ? null : strings(side.primaryKey()));
        o.put("upsert", f.upsert());
        return o.toString();
    }

    /** A join's declaration for key groups {@code [start, end]} (Rust {@code JoinSpec}). */
    static String joinSpec(JoinSpec def, int start, int end) {
        ObjectNode o = JSON.createObjectNode();
        o.set("left", side(def.left()));
        o.set("right", side(def.right()));
        o.put("join_type", def.joinType().name());
        o.put("absent_retraction", def.failOnAbsentRetraction() ? "FAIL" : "IGNORE");
        ObjectNode range = o.putObject("key_groups");
        range.put("start", start);
        range.put("end", end);
        return o.toString();
    }

    /** One input of the join (Rust {@code SideSpec}). */
    private static ObjectNode side(SideSpec side) {
        ObjectNode o = JSON.createObjectNode();
        o.set("schema", schema(side.schema()));
        o.set("join_key", strings(side.joinKey()));
        o.set("primary_key", side.primaryKey() == null ? null : strings(side.primaryKey()));
        Long ttl = side.ttl() == null ? null : side.ttl().toMillis();
        o.put("ttl_ms", ttl);
        return o;
    }

    /** A schema (Rust {@code cdcjoin_model::Schema}). */
    private static ObjectNode schema(CdcSchema schema) {
        ObjectNode o = JSON.createObjectNode();
        ArrayNode fields = o.putArray("fields");
        for (Column c : schema.columns()) {
            fields.addObject()
                    .put("name", c.name())
                    .put("type", c.type().toString())
                    .put("nullable", c.isNullable());
        }
        return o;
    }

    private static ArrayNode strings(List<String> items) {
        ArrayNode a = JSON.createArrayNode();
        items.forEach(a::add);
        return a;
    }

    private static String lower(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }
}
