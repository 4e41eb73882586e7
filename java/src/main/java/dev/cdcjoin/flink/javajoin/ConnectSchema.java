package dev.cdcjoin.flink.javajoin;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.cdcjoin.flink.DebeziumFormat;
import dev.cdcjoin.flink.codec.Column;
import dev.cdcjoin.flink.codec.ColumnType;
import dev.cdcjoin.flink.javajoin.ColumnReader.Encoding;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * The Kafka Connect schema of a schema-wrapped message ({@code {"schema": .., "payload": ..}}),
 * reduced to what decoding needs: per column of the row images, its Connect type, its logical
 * type's name ({@code io.debezium.time.MicroTimestamp}, {@code
 * org.apache.kafka.connect.data.Decimal}, ...) and a decimal's {@code scale} parameter.
 *
 * <p>A wrapped message says how each value is encoded, so it decides over the declared {@link
 * dev.cdcjoin.flink.DebeziumFormat}: that is how a TIMESTAMP's unit is known without a declared
 * source precision, and a DECIMAL's scale without trusting the declared one. A Connect type that is
 * not a form of the declared type (a {@code Decimal}'s or {@code Bits}' bytes in a STRING column, a
 * Connect {@code string} in a DOUBLE) is an error for every value. A column the row image's schema
 * does not list has no known encoding: it may only be null or absent (JsonConverter lists every
 * field of the payload in its schema). A schema that describes no row image (no {@code before} or
 * {@code after} field) says nothing of the columns: the declared settings decide.
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

    /** The logical types that name an encoding; one the column's type cannot hold is an error. */
    private static final Set<String> LOGICAL =
            Set.of(
                    "org.apache.kafka.connect.data.Decimal",
                    "io.debezium.data.VariableScaleDecimal",
                    "org.apache.kafka.connect.data.Date",
                    "org.apache.kafka.connect.data.Time",
                    "org.apache.kafka.connect.data.Timestamp",
                    "io.debezium.time.Date",
                    "io.debezium.time.Time",
                    "io.debezium.time.MicroTime",
                    "io.debezium.time.NanoTime",
                    "io.debezium.time.Timestamp",
                    "io.debezium.time.MicroTimestamp",
                    "io.debezium.time.NanoTimestamp",
                    "io.debezium.time.ZonedTimestamp",
                    "io.debezium.time.ZonedTime",
                    "io.debezium.time.IsoDate",
                    "io.debezium.time.IsoTime",
                    "io.debezium.time.IsoTimestamp");

    private ConnectSchema() {}

    /** The Connect name of MySQL's {@code BIT(n > 1)} columns: bytes in every binary mode. */
    static final String BITS = "io.debezium.data.Bits";

    /**
     * The reader of column {@code c} in a wrapped message whose schema gives it {@code field}: the
     * encoding the schema names; the declared one when the schema names none (a plain Connect type
     * that several encodings share); an error for every value when the Connect type is not a form
     * of the column's type (a logical type a DECIMAL or temporal column cannot hold; for the other
     * types, see {@link #fits}); only null or absent when the schema, describing the row images,
     * does not list the column ({@code field} null).
     */
    static ColumnReader reader(Column c, DebeziumFormat f, Field field) {
        if (field == null) {
            return ColumnReader.unlisted(c, f);
        }
        String logical = field.name == null ? "" : field.name;
        String said = field.name != null ? field.name : String.valueOf(field.type);
        ColumnReader r = named(c, f, field, logical, " (schema " + said + ")");
        if (r != null) {
            return r;
        }
        ColumnType.Kind kind = c.type().kind();
        if (readsLogical(kind)) {
            return LOGICAL.contains(logical)
                    ? ColumnReader.mismatch(c, f, said)
                    : DeclaredEncodings.reader(c, f);
        }
        if (kind == ColumnType.Kind.BYTES) {
            // An unnamed string: base64 or hex, as the declared binary.handling.mode says.
            return logical.isEmpty() && "string".equals(field.type)
                    ? DeclaredEncodings.reader(c, f)
                    : ColumnReader.mismatch(c, f, said);
        }
        return fits(field.type, kind)
                ? DeclaredEncodings.reader(c, f)
                : ColumnReader.mismatch(c, f, said);
    }

    /**
     * Whether the Connect type {@code type} is a form of a BOOLEAN, integer, floating point or
     * STRING column, whatever its logical name ({@code Json}, {@code Uuid}, {@code Enum} are
     * strings, {@code Year} an int32, {@code MicroDuration} an int64): another type's value would
     * be read as what it is not (the base64 of a {@code Decimal}'s or {@code Bits}' bytes as text,
     * a {@code string} as a DOUBLE).
     */
    private static boolean fits(String type, ColumnType.Kind kind) {
        String t = type == null ? "" : type;
        boolean integer =
                t.equals("int8") || t.equals("int16") || t.equals("int32") || t.equals("int64");
        switch (kind) {
            case BOOLEAN:
                return t.equals("boolean");
            case TINYINT:
            case SMALLINT:
            case INT:
            case BIGINT:
                return integer;
            case FLOAT:
            case DOUBLE:
                return integer || t.equals("float") || t.equals("double");
            case STRING:
                return t.equals("string");
            default:
                return false;
        }
    }

    /**
     * Whether a column of this kind is read through a logical type (DECIMAL and temporal kinds);
     * other kinds read the plain Connect value (a STRING may hold a ZonedTimestamp's text, a BIGINT
     * a MicroTimestamp's micros).
     */
    private static boolean readsLogical(ColumnType.Kind kind) {
        switch (kind) {
            case DECIMAL:
            case DATE:
            case TIME:
            case TIMESTAMP:
            case TIMESTAMP_LTZ:
                return true;
            default:
                return false;
        }
    }

    /** The reader the schema names for a column of this type, or null. */
    private static ColumnReader named(
            Column c, DebeziumFormat f, Field field, String logical, String schema) {
        ColumnType.Kind kind = c.type().kind();
        switch (kind) {
            case DECIMAL:
                return decimal(c, f, field, logical, schema);
            case BYTES:
                // MySQL's BIT(n > 1) is Connect bytes in every binary.handling.mode, which
                // Debezium applies to binary columns only (JdbcValueConverters).
                boolean bytes = logical.isEmpty() || logical.equals(BITS);
                return "bytes".equals(field.type) && bytes
                        ? ColumnReader.of(c, f, Encoding.BASE64, "a base64 string" + schema)
                        : null;
            case DATE:
                if (logical.equals("io.debezium.time.Date")
                        || logical.equals("org.apache.kafka.connect.data.Date")) {
                    return ColumnReader.of(
                            c, f, Encoding.EPOCH_DAYS, "an integer of epoch days" + schema);
                }
                return logical.equals("io.debezium.time.IsoDate")
                        ? ColumnReader.iso(
                                c,
                                f,
                                Encoding.DATE_TEXT,
                                "a \"yyyy-MM-ddZ\" string at UTC (Z or +00:00)" + schema)
                        : null;
            case TIME:
                long timeUnit = timeUnit(logical);
                if (timeUnit > 0) {
                    return ColumnReader.epoch(c, f, true, timeUnit, schema);
                }
                return logical.equals("io.debezium.time.IsoTime")
                                || logical.equals("io.debezium.time.ZonedTime")
                        ? ColumnReader.iso(
                                c,
                                f,
                                Encoding.TIME_TEXT,
                                "a \"HH:mm:ss[.fraction]Z\" string at UTC (Z or +00:00)" + schema)
                        : null;
            case TIMESTAMP:
            case TIMESTAMP_LTZ:
                return timestamp(c, f, logical, schema);
            default:
                return null;
        }
    }

    private static ColumnReader decimal(
            Column c, DebeziumFormat f, Field field, String logical, String schema) {
        if (logical.equals("org.apache.kafka.connect.data.Decimal")) {
            return ColumnReader.decimalAt(c, f, field.scale, schema);
        }
        if (logical.equals("io.debezium.data.VariableScaleDecimal")) {
            return ColumnReader.of(
                    c, f, Encoding.DECIMAL_VARIABLE, "{\"scale\": .., \"value\": base64}" + schema);
        }
        if (!logical.isEmpty()) {
            return null;
        }
        if ("string".equals(field.type)) {
            return ColumnReader.of(
                    c, f, Encoding.DECIMAL_TEXT, "decimal text in a JSON string" + schema);
        }
        boolean number = "double".equals(field.type) || "float".equals(field.type);
        return number
                ? ColumnReader.of(c, f, Encoding.DECIMAL_NUMBER, "a JSON number" + schema)
                : null;
    }

    private static ColumnReader timestamp(
            Column c, DebeziumFormat f, String logical, String schema) {
        long unit = timestampUnit(logical);
        if (unit > 0) {
            return ColumnReader.epoch(c, f, false, unit, schema);
        }
        boolean ltz = c.type().kind() == ColumnType.Kind.TIMESTAMP_LTZ;
        if (ltz && logical.equals("io.debezium.time.ZonedTimestamp")) {
            return ColumnReader.of(
                    c,
                    f,
                    Encoding.ZONED_TEXT,
                    "an ISO-8601 timestamp ending in Z or an offset" + schema);
        }
        return !ltz && logical.equals("io.debezium.time.IsoTimestamp")
                ? ColumnReader.iso(
                        c,
                        f,
                        Encoding.TIMESTAMP_TEXT,
                        "a \"yyyy-MM-ddTHH:mm:ss[.fraction]Z\" string at UTC (Z or +00:00)"
                                + schema)
                : null;
    }

    /** Units per second of a Connect TIME logical type, or 0. */
    private static long timeUnit(String logical) {
        switch (logical) {
            case "io.debezium.time.Time":
            case "org.apache.kafka.connect.data.Time":
                return 1_000L;
            case "io.debezium.time.MicroTime":
                return 1_000_000L;
            case "io.debezium.time.NanoTime":
                return 1_000_000_000L;
            default:
                return 0;
        }
    }

    /** Units per second of a Connect TIMESTAMP logical type, or 0. */
    private static long timestampUnit(String logical) {
        switch (logical) {
            case "io.debezium.time.Timestamp":
            case "org.apache.kafka.connect.data.Timestamp":
                return 1_000L;
            case "io.debezium.time.MicroTimestamp":
                return 1_000_000L;
            case "io.debezium.time.NanoTimestamp":
                return 1_000_000_000L;
            default:
                return 0;
        }
    }

    /**
     * The columns of the envelope schema at the parser's current {@code START_OBJECT}: the fields
     * of its {@code before} and {@code after} structs, by name; null when it has neither field (a
     * schema that describes no row image says nothing of the columns: the declared settings decide,
     * as for a bare message).
     */
    static Map<String, Field> columns(JsonParser p) throws IOException {
        Field envelope = field(p);
        if (envelope.fields == null
                || !(envelope.fields.containsKey("before")
                        || envelope.fields.containsKey("after"))) {
            return null;
        }
        Map<String, Field> out = new HashMap<>();
        for (String image : new String[] {"before", "after"}) {
            Field f = envelope.fields.get(image);
            if (f != null && f.fields != null) {
                out.putAll(f.fields);
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
