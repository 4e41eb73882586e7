package dev.cdcjoin.flink.javajoin;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/**
 * The Kafka Connect schema of a schema-wrapped message ({@code {"schema": .., "payload": ..}}),
 * reduced to what decoding needs: per column of the row images, its Connect type, its logical
 * type's name ({@code io.debezium.time.MicroTimestamp}, {@code
 * org.apache.kafka.connect.data.Decimal}, ...) and a decimal's {@code scale} parameter.
 *
 * <p>A wrapped message says how each value is encoded, so it decides over the declared {@link
 * dev.cdcjoin.flink.DebeziumFormat}: that is how a TIMESTAMP's unit is known without a declared
 * source precision, and a DECIMAL's scale without trusting the declared one.
 */
final class ConnectSchema {

    /** One Connect field. */
    static final class Field {
        /** Connect type: {@code int64}, {@code string}, {@code bytes}, {@code struct}, ... */
        String type;
        /** The logical type's name, or null. */
        String name;
        /** The field's name in its struct. */
        String field;
        /** A decimal's {@code parameters.scale}, or null. */
        Integer scale;
        /** A struct's fields by name, or null. */
        Map<String, Field> fields;
    }

    private ConnectSchema() {}

    /**
     * The columns of the envelope schema at the parser's current {@code START_OBJECT}: the fields
     * of its {@code before} and {@code after} structs, by name (empty if it has none).
     */
    static Map<String, Field> columns(JsonParser p) throws IOException {
        Field envelope = field(p);
        Map<String, Field> out = new HashMap<>();
        if (envelope.fields != null) {
            for (String image : new String[] {"before", "after"}) {
                Field f = envelope.fields.get(image);
                if (f != null && f.fields != null) {
                    out.putAll(f.fields);
                }
            }
        }
        return out;
    }

    /** A field descriptor at the current {@code START_OBJECT} (anything else is skipped). */
    private static Field field(JsonParser p) throws IOException {
        Field f = new Field();
        if (p.currentToken() != JsonToken.START_OBJECT) {
            p.skipChildren();
            return f;
        }
        String key;
        while ((key = p.nextFieldName()) != null) {
            JsonToken t = p.nextToken();
            switch (key) {
                case "type":
                    f.type = t == JsonToken.VALUE_STRING ? p.getText() : null;
                    break;
                case "name":
                    f.name = t == JsonToken.VALUE_STRING ? p.getText() : null;
                    break;
                case "field":
                    f.field = t == JsonToken.VALUE_STRING ? p.getText() : null;
                    break;
                case "parameters":
                    f.scale = scale(p, t);
                    break;
                case "fields":
                    f.fields = fields(p, t);
                    break;
                default:
                    p.skipChildren();
            }
        }
        return f;
    }

    private static Map<String, Field> fields(JsonParser p, JsonToken t) throws IOException {
        if (t != JsonToken.START_ARRAY) {
            p.skipChildren();
            return null;
        }
        Map<String, Field> out = new HashMap<>();
        while (p.nextToken() != JsonToken.END_ARRAY) {
            Field f = field(p);
            if (f.field != null) {
                out.put(f.field, f);
            }
        }
        return out;
    }

    /** {@code parameters.scale} (Connect writes it as a string), or null. */
    private static Integer scale(JsonParser p, JsonToken t) throws IOException {
        if (t != JsonToken.START_OBJECT) {
            p.skipChildren();
            return null;
        }
        Integer scale = null;
        String key;
        while ((key = p.nextFieldName()) != null) {
            JsonToken v = p.nextToken();
            boolean text = v == JsonToken.VALUE_STRING || v == JsonToken.VALUE_NUMBER_INT;
            if (key.equals("scale") && text) {
                try {
                    scale = Integer.parseInt(p.getText().trim());
                } catch (NumberFormatException e) {
                    scale = null;
                }
            } else {
                p.skipChildren();
            }
        }
        return scale;
    }
}
