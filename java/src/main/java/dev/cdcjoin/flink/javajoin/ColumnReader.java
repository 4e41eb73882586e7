package dev.cdcjoin.flink.javajoin;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.cdcjoin.flink.DebeziumFormat;
import dev.cdcjoin.flink.DebeziumFormat.TimePrecision;
import dev.cdcjoin.flink.codec.Column;
import dev.cdcjoin.flink.codec.ColumnType;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * How one column's JSON values are read: the column's type and the one encoding its topic uses,
 * resolved once from the side's {@link DebeziumFormat} ({@link DeclaredEncodings}) or, in a
 * schema-wrapped message, from the field's Connect schema ({@link ConnectSchema#reader}). Nothing
 * is guessed: a value that does not fit the encoding is a {@link BadValue} saying what was
 * expected, never another reading of it.
 *
 * <p>The value conversions themselves ({@link Values}) know nothing of formats; this class only
 * picks which one applies and words the expectation.
 */
final class ColumnReader {

    /** The JSON encodings a column's values can have. */
    enum Encoding {
        BOOLEAN,
        INTEGER,
        FLOATING,
        TEXT,
        /** A JSON number or decimal text (Flink's debezium-json). */
        DECIMAL_NUMBER_OR_TEXT,
        /** {@code precise}: base64 of the unscaled value at the declared scale, or an object. */
        DECIMAL_PRECISE,
        /** Connect's {@code Decimal}: base64 of the unscaled value at the schema's scale. */
        DECIMAL_BASE64,
        /** Debezium's {@code VariableScaleDecimal}: {@code {"scale", "value"}}. */
        DECIMAL_VARIABLE,
        DECIMAL_TEXT,
        DECIMAL_NUMBER,
        BASE64,
        HEX,
        DATE_TEXT,
        EPOCH_DAYS,
        TIME_TEXT,
        /** An integer of the time of day in {@link #perSecond} units. */
        TIME_EPOCH,
        TIMESTAMP_TEXT,
        /** An integer since the epoch in {@link #perSecond} units. */
        TIMESTAMP_EPOCH,
        /** An ISO-8601 timestamp with {@code Z} or an offset (Debezium's ZonedTimestamp). */
        ZONED_TEXT,
        /** An adaptive-mode TIME/TIMESTAMP whose source precision is not declared. */
        UNDECLARED_UNIT,
        /** A wrapped message's schema names an encoding the column's type cannot hold. */
        SCHEMA_MISMATCH,
        /**
         * A column a wrapped message's schema does not list: its encoding is unknown, so any value
         * is an error (nulls and absent values are fine).
         */
        UNLISTED
    }

    final String name;
    final ColumnType type;
    final Encoding encoding;

    /** Units per second of an epoch encoding. */
    final long perSecond;

    /** The scale of {@link Encoding#DECIMAL_BASE64}, -1 when the schema gives none. */
    final int scale;

    /**
     * Whether temporal text is Debezium's ISO text (isostring mode, the Iso* types), which ends in
     * an offset at UTC ({@code Z} or {@code +00:00}).
     */
    final boolean iso;

    /** What the encoding accepts, for messages. */
    final String expected;

    /** Debezium's placeholder for a value it does not have. */
    private final String placeholder;

    /** The placeholder's UTF-8 bytes in base64: what a BYTES column in bytes mode carries. */
    private final String placeholderBase64;

    /**
     * The JSON text of the map from the placeholder to itself: what an unchanged TOASTed {@code
     * hstore} column carries in {@code hstore.handling.mode=json} (a STRING column).
     */
    private final String placeholderHstore;

    private ColumnReader(
            Column column,
            DebeziumFormat format,
            Encoding encoding,
            long perSecond,
            int scale,
            String expected) {
        this(
                column,
                format,
                encoding,
                perSecond,
                scale,
                format.timePrecision() == TimePrecision.ISOSTRING,
                expected);
    }

    private ColumnReader(
            Column column,
            DebeziumFormat format,
            Encoding encoding,
            long perSecond,
            int scale,
            boolean iso,
            String expected) {
        this.name = column.name();
        this.type = column.type();
        this.encoding = encoding;
        this.perSecond = perSecond;
        this.scale = scale;
        this.iso = iso;
        this.expected = expected;
        this.placeholder = format.unavailablePlaceholder();
        this.placeholderBase64 =
                Base64.getEncoder().encodeToString(placeholder.getBytes(StandardCharsets.UTF_8));
        this.placeholderHstore = type.kind() == ColumnType.Kind.STRING ? hstore(placeholder) : null;
    }

    /**
     * {@code {"<p>":"<p>"}}, {@code p} escaped as Jackson writes a map (Debezium's {@code
     * UnchangedToastedPlaceholder} of an {@code hstore}).
     */
    private static String hstore(String placeholder) {
        StringWriter w = new StringWriter();
        try (JsonGenerator g = JsonExcerpt.FACTORY.createGenerator(w)) {
            g.writeStartObject();
            g.writeStringField(placeholder, placeholder);
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return w.toString();
    }

    /** A value that does not fit the column: the reason, without the column. */
    static final class BadValue extends Exception {
        private static final long serialVersionUID = 1L;

        BadValue(String reason) {
            super(reason, null, false, false);
        }
    }

    // ---------------------------------------------------------------------------------------
    // Readers of an encoding (DeclaredEncodings and ConnectSchema pick which)

    /** A reader of epoch integers in {@code perSecond} units (of the day for a TIME). */
    static ColumnReader epoch(
            Column c, DebeziumFormat f, boolean time, long perSecond, String setting) {
        String unit =
                perSecond == 1_000L
                        ? "milliseconds"
                        : perSecond == 1_000_000L ? "microseconds" : "nanoseconds";
        return new ColumnReader(
                c,
                f,
                time ? Encoding.TIME_EPOCH : Encoding.TIMESTAMP_EPOCH,
                perSecond,
                0,
                "an integer of " + unit + (time ? " of the day" : " since the epoch") + setting);
    }

    /** A reader of an encoding without parameters. */
    static ColumnReader of(Column c, DebeziumFormat f, Encoding e, String expected) {
        return new ColumnReader(c, f, e, 0, 0, expected);
    }

    /**
     * A reader of Debezium's ISO-8601 temporal text, which ends in an offset at UTC (the Iso*
     * types).
     */
    static ColumnReader iso(Column c, DebeziumFormat f, Encoding e, String expected) {
        return new ColumnReader(c, f, e, 0, 0, true, expected);
    }

    /** A reader of Connect's {@code Decimal}: base64 of the unscaled value at {@code scale}. */
    static ColumnReader decimalAt(Column c, DebeziumFormat f, Integer scale, String schema) {
        int s = scale == null ? -1 : scale;
        return new ColumnReader(
                c,
                f,
                Encoding.DECIMAL_BASE64,
                0,
                s,
                "base64 of the unscaled value at scale " + s + schema);
    }

    /** A reader of a column whose schema names an encoding its type cannot hold. */
    static ColumnReader mismatch(Column c, DebeziumFormat f, String said) {
        return new ColumnReader(
                c,
                f,
                Encoding.SCHEMA_MISMATCH,
                0,
                0,
                "the message's schema says " + said + ", which is not an encoding of " + c.type());
    }

    /**
     * A reader of a column a wrapped message's schema does not list: only null or absent. (Kafka
     * Connect's JsonConverter lists every field it writes in the schema.)
     */
    static ColumnReader unlisted(Column c, DebeziumFormat f) {
        return new ColumnReader(
                c,
                f,
                Encoding.UNLISTED,
                0,
                0,
                "null or nothing: the message's Connect schema does not list this column, so its"
                        + " encoding is unknown");
    }

    // ---------------------------------------------------------------------------------------
    // Reading

    /**
     * Reads the non-null value at the current token: the column's Java value, or {@link
     * Unavailable#VALUE} for Debezium's placeholder.
     *
     * <p>Debezium's Postgres connector writes the placeholder text in place of an unchanged TOASTed
     * value of a text-like column (text, varchar, json, jsonb, ...) and of a {@code bytea} in
     * {@code binary.handling.mode=hex}; in {@code bytes} mode the placeholder's UTF-8 bytes, which
     * JSON carries as their base64; for an {@code hstore} in the default {@code
     * hstore.handling.mode=json} a map from the placeholder to itself, as JSON text ({@code
     * {"<p>":"<p>"}}). No column of another type carries it in a form its encoding could read, so
     * any JSON string equal to the placeholder (or, for BYTES read as base64, to its base64; for
     * STRING, to the hstore map) is unavailable. (This is the native decoder's rule too.)
     *
     * @throws BadValue if the value does not fit the column's encoding
     */
    Object read(JsonParser p, JsonToken t) throws IOException, BadValue {
        if (t == JsonToken.VALUE_STRING && isPlaceholder(p.getText())) {
            return Unavailable.VALUE;
        }
        try {
            Object v = value(p, t);
            if (v == null) {
                throw mistyped(p, t);
            }
            return v;
        } catch (Values.OutOfRange e) {
            throw new BadValue("value " + JsonExcerpt.of(p, t) + " is out of range");
        }
    }

    /** The value, or null when it does not fit the encoding. */
    private Object value(JsonParser p, JsonToken t)
            throws IOException, BadValue, Values.OutOfRange {
        switch (encoding) {
            case BOOLEAN:
                return t == JsonToken.VALUE_TRUE
                        ? Boolean.TRUE
                        : t == JsonToken.VALUE_FALSE ? Boolean.FALSE : null;
            case INTEGER:
                return t == JsonToken.VALUE_NUMBER_INT ? Values.integer(p, type.kind()) : null;
            case FLOATING:
                return Values.floating(p, t, type.kind());
            case TEXT:
                return t == JsonToken.VALUE_STRING ? p.getText() : null;
            case BASE64:
            case HEX:
                return bytes(p, t);
            case UNDECLARED_UNIT:
                if (t == JsonToken.VALUE_NUMBER_INT) {
                    throw new BadValue(undeclared(p, t));
                }
                return null;
            case SCHEMA_MISMATCH:
                throw new BadValue("found " + JsonExcerpt.of(p, t) + ": " + expected);
            case UNLISTED:
                return null;
            case DECIMAL_NUMBER_OR_TEXT:
            case DECIMAL_PRECISE:
            case DECIMAL_BASE64:
            case DECIMAL_VARIABLE:
            case DECIMAL_TEXT:
            case DECIMAL_NUMBER:
                return decimal(p, t);
            default:
                return temporal(p, t);
        }
    }

    private Object bytes(JsonParser p, JsonToken t) throws IOException {
        if (t != JsonToken.VALUE_STRING) {
            return null;
        }
        return encoding == Encoding.HEX ? Values.hex(p.getText()) : Values.base64(p.getText());
    }

    private boolean isPlaceholder(String s) {
        return s.equals(placeholder)
                || (encoding == Encoding.BASE64 && s.equals(placeholderBase64))
                || (placeholderHstore != null && s.equals(placeholderHstore));
    }

    private Object decimal(JsonParser p, JsonToken t)
            throws IOException, BadValue, Values.OutOfRange {
        BigDecimal v;
        boolean number = t == JsonToken.VALUE_NUMBER_INT || t == JsonToken.VALUE_NUMBER_FLOAT;
        boolean string = t == JsonToken.VALUE_STRING;
        boolean object = t == JsonToken.START_OBJECT;
        switch (encoding) {
            case DECIMAL_NUMBER_OR_TEXT:
                v = number ? p.getDecimalValue() : string ? Values.decimalText(p.getText()) : null;
                break;
            case DECIMAL_TEXT:
                v = string ? Values.decimalText(p.getText()) : null;
                break;
            case DECIMAL_NUMBER:
                v = number ? p.getDecimalValue() : null;
                break;
            case DECIMAL_BASE64:
                if (scale < 0 && string) {
                    throw new BadValue(
                            "found "
                                    + JsonExcerpt.of(p, t)
                                    + " but the schema's"
                                    + " org.apache.kafka.connect.data.Decimal has no \"scale\" parameter");
                }
                v = string ? Values.unscaled(p.getText(), scale) : null;
                break;
            case DECIMAL_PRECISE:
                v =
                        string
                                ? Values.unscaled(p.getText(), type.scale())
                                : object ? variable(p) : null;
                break;
            default: // DECIMAL_VARIABLE
                v = object ? variable(p) : null;
        }
        return v == null ? null : Values.fit(v, type.precision(), type.scale());
    }

    /** A VariableScaleDecimal object; a malformed one is a {@link BadValue} quoting it. */
    private BigDecimal variable(JsonParser p) throws IOException, BadValue {
        Values.Variable v = Values.variable(p);
        if (v.value == null) {
            throw new BadValue("expected " + expected + ", found " + JsonExcerpt.shorten(v.json));
        }
        if (v.outOfRange) {
            throw new BadValue("value " + JsonExcerpt.shorten(v.json) + " is out of range");
        }
        try {
            return Values.fit(v.value, type.precision(), type.scale());
        } catch (Values.OutOfRange e) {
            throw new BadValue("value " + JsonExcerpt.shorten(v.json) + " is out of range");
        }
    }

    private Object temporal(JsonParser p, JsonToken t) throws IOException, Values.OutOfRange {
        boolean integer = t == JsonToken.VALUE_NUMBER_INT;
        boolean string = t == JsonToken.VALUE_STRING;
        int precision = type.precision();
        switch (encoding) {
            case DATE_TEXT:
                return string ? Values.dateText(p.getText(), iso) : null;
            case EPOCH_DAYS:
                return integer ? Values.epochDays(p) : null;
            case TIME_TEXT:
                return string ? Values.timeText(p.getText(), iso, precision) : null;
            case TIME_EPOCH:
                return integer ? Values.timeOfDay(p, perSecond, precision) : null;
            case TIMESTAMP_TEXT:
                return string ? Values.timestampText(p.getText(), iso, precision) : null;
            case TIMESTAMP_EPOCH:
                return integer ? Values.epochTimestamp(p, perSecond, type) : null;
            default: // ZONED_TEXT
                return string ? Values.zonedText(p.getText(), precision) : null;
        }
    }

    private String undeclared(JsonParser p, JsonToken t) throws IOException {
        return "found "
                + JsonExcerpt.of(p, t)
                + ", an epoch integer whose unit (milliseconds,"
                + " microseconds or nanoseconds) follows the source column's precision, which the"
                + " message does not carry: declare it with DebeziumFormat.withSourcePrecision(\""
                + name
                + "\", p)";
    }

    private BadValue mistyped(JsonParser p, JsonToken t) throws IOException {
        return new BadValue("expected " + expected + ", found " + JsonExcerpt.of(p, t));
    }
}
