package dev.cdcjoin.flink.javajoin;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import dev.cdcjoin.flink.codec.ColumnType;
import dev.cdcjoin.flink.codec.Json;
import java.io.IOException;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;

/**
 * Decodes the Debezium JSON messages of one table into changelog {@link Row}s, in one pass of
 * Jackson's streaming parser (no tree, no data binding).
 *
 * <p>The op rules are those of Flink's {@code debezium-json} format and of the native decoder:
 *
 * <table>
 *   <caption>op rules</caption>
 *   <tr><th>op</th><th>emits</th></tr>
 *   <tr><td>{@code c}, {@code r}</td><td>{@code +I(after)}</td></tr>
 *   <tr><td>{@code u}</td><td>{@code -U(before)}, {@code +U(after)} (or {@code -D}, {@code +I}
 *       with {@code deleteInsertUpdates})</td></tr>
 *   <tr><td>{@code d}</td><td>{@code -D(before)}</td></tr>
 * </table>
 *
 * <p>Splitting an update into a retraction of {@code before} and an insertion of {@code after} is
 * what lets a join clean the old key when a join key or primary key changes. Messages may be plain
 * envelopes or wrapped as {@code {"schema": ..., "payload": ...}}. Tombstones (a null or blank
 * message, JSON {@code null}, or a wrapper with a null payload) decode to nothing.
 *
 * <p>Columns are looked up by name in {@code before}/{@code after} (extra columns are skipped,
 * missing nullable columns are null) and typed as declared: {@code BOOLEAN} → {@code Boolean},
 * {@code INT} → {@code Integer}, {@code BIGINT} → {@code Long}, {@code FLOAT}/{@code DOUBLE} (a
 * number, or {@code "NaN"}, {@code "Infinity"}, {@code "-Infinity"}), {@code DECIMAL(p, s)} →
 * {@code BigDecimal} at scale {@code s} (base64 of the unscaled value, a number, a decimal string,
 * or {@code {"scale", "value"}}; rounded {@code HALF_UP}), {@code STRING}, {@code BYTES} → {@code
 * byte[]} (base64), {@code DATE} → {@code LocalDate} (epoch days or {@code YYYY-MM-DD}), {@code
 * TIMESTAMP(p)} → {@code LocalDateTime} (epoch millis for p ≤ 3, micros for p ≤ 6, nanos above, or
 * ISO text; sub-microsecond digits are dropped for p ≤ 6).
 *
 * <p>A record that cannot be decoded raises a {@link DebeziumDecodeException} naming the record
 * and the reason: malformed JSON, a missing or unknown {@code op}, an update or delete whose {@code
 * before} is null (Postgres without {@code REPLICA IDENTITY FULL}), a missing {@code after}, a NOT
 * NULL column that is missing or null, or a value that does not fit its column. Nothing is emitted
 * for a failing record. An image the op does not need (the {@code before} of a {@code c}) is never
 * a reason to fail.
 *
 * <p>One instance per thread: it keeps per-record scratch state. Not serializable; build it in
 * {@code open()}.
 */
public final class DebeziumJsonDecoder {

    /** Longest JSON excerpt quoted in an error message. */
    private static final int MAX_FOUND = 64;

    private static final JsonFactory FACTORY = new JsonFactory();

    private final String source;
    private final CdcSchema schema;
    private final boolean deleteInsertUpdates;
    private final int arity;
    private final String[] names;
    private final ColumnType[] types;
    private final ColumnType.Kind[] kinds;
    private final boolean[] nullable;
    private final Map<String, Integer> byName;
    private final Envelope outer;
    private final Envelope inner;

    /**
     * A decoder emitting updates as {@code -U}/{@code +U}.
     *
     * @param source the table's name, used in error messages
     * @param schema the declared columns; rows are written in this order
     */
    public DebeziumJsonDecoder(String source, CdcSchema schema) {
        this(source, schema, false);
    }

    /**
     * A decoder.
     *
     * @param source the table's name, used in error messages
     * @param schema the declared columns; rows are written in this order
     * @param deleteInsertUpdates emit updates as {@code -D(before)}, {@code +I(after)} instead of
     *     {@code -U}/{@code +U}
     */
    public DebeziumJsonDecoder(String source, CdcSchema schema, boolean deleteInsertUpdates) {
        this.source = Objects.requireNonNull(source, "source");
        this.schema = Objects.requireNonNull(schema, "schema");
        this.deleteInsertUpdates = deleteInsertUpdates;
        List<Column> columns = schema.columns();
        this.arity = columns.size();
        this.names = new String[arity];
        this.types = new ColumnType[arity];
        this.kinds = new ColumnType.Kind[arity];
        this.nullable = new boolean[arity];
        this.byName = new HashMap<>();
        for (int i = 0; i < arity; i++) {
            Column c = columns.get(i);
            names[i] = c.name();
            types[i] = c.type();
            kinds[i] = c.type().kind();
            nullable[i] = c.isNullable();
            byName.put(c.name(), i);
        }
        this.outer = new Envelope();
        this.inner = new Envelope();
    }

    /**
     * The row type of the decoded rows: the schema's columns, by name.
     *
     * @param schema the columns
     * @return the row type information
     */
    public static RowTypeInfo rowTypeInfo(CdcSchema schema) {
        List<Column> columns = schema.columns();
        TypeInformation<?>[] t = new TypeInformation<?>[columns.size()];
        String[] n = new String[columns.size()];
        for (int i = 0; i < t.length; i++) {
            t[i] = columns.get(i).type().typeInformation();
            n[i] = columns.get(i).name();
        }
        return new RowTypeInfo(t, n);
    }

    /**
     * The row type of the rows this decoder emits.
     *
     * @return the row type information
     */
    public RowTypeInfo rowTypeInfo() {
        return rowTypeInfo(schema);
    }

    /**
     * The table's name.
     *
     * @return the source name used in error messages
     */
    public String source() {
        return source;
    }

    /**
     * Decodes one message given as bytes (UTF-8 JSON, e.g. a Kafka record value).
     *
     * @param message the message; {@code null} or blank is a tombstone
     * @param index the record's number, for error messages
     * @param out receives the one or two changes, in order
     * @return the number of rows emitted (0 for a tombstone)
     * @throws DebeziumDecodeException if the record cannot be decoded (nothing was emitted)
     */
    public int decode(byte[] message, long index, Collector<Row> out) {
        if (message == null || message.length == 0) {
            return 0;
        }
        try (JsonParser p = FACTORY.createParser(message)) {
            return decode(p, index, out);
        } catch (IOException e) {
            throw malformed(index, e);
        }
    }

    /**
     * Decodes one message given as a string.
     *
     * @param message the message; {@code null} or blank is a tombstone
     * @param index the record's number, for error messages
     * @param out receives the one or two changes, in order
     * @return the number of rows emitted (0 for a tombstone)
     * @throws DebeziumDecodeException if the record cannot be decoded (nothing was emitted)
     */
    public int decode(String message, long index, Collector<Row> out) {
        if (message == null || message.isEmpty()) {
            return 0;
        }
        try (JsonParser p = FACTORY.createParser(message)) {
            return decode(p, index, out);
        } catch (IOException e) {
            throw malformed(index, e);
        }
    }

    /**
     * Decodes one message into a list (convenience for tests and tools).
     *
     * @param message the message; {@code null} or blank is a tombstone
     * @param index the record's number, for error messages
     * @return the changes, in order (empty for a tombstone)
     * @throws DebeziumDecodeException if the record cannot be decoded
     */
    public List<Row> decodeToList(byte[] message, long index) {
        List<Row> rows = new ArrayList<>(2);
        decode(message, index, new ListCollector(rows));
        return rows;
    }

    /** Collects into a list. */
    private static final class ListCollector implements Collector<Row> {
        private final List<Row> rows;

        ListCollector(List<Row> rows) {
            this.rows = rows;
        }

        @Override
        public void collect(Row record) {
            rows.add(record);
        }

        @Override
        public void close() {}
    }

    // ---------------------------------------------------------------------------------------
    // The envelope

    /** What a {@code before}/{@code after} key held. */
    private static final int MISSING = 0;

    private static final int NULL = 1;
    private static final int OBJECT = 2;

    /** One row image being decoded: its values and the first reason it cannot be used. */
    private static final class Image {
        int state;
        Row row;
        /** Per-column reasons, allocated on the first error. */
        String[] errors;

        void reset() {
            state = MISSING;
            row = null;
            errors = null;
        }
    }

    /** What one envelope object says at its own level. */
    private static final class Envelope {
        final Image before = new Image();
        final Image after = new Image();
        /** The op's text when it was a one-character string, else 0. */
        char op;
        /** Whether an {@code op} key with a non-null value was seen. */
        boolean hasOp;
        /** The op's JSON when it is not a one-character string. */
        String badOp;
        /** A structural error (an image that is neither an object nor null). */
        String structural;
        boolean hasSchema;
        int payload;

        void reset() {
            before.reset();
            after.reset();
            op = 0;
            hasOp = false;
            badOp = null;
            structural = null;
            hasSchema = false;
            payload = MISSING;
        }
    }

    private int decode(JsonParser p, long index, Collector<Row> out) throws IOException {
        JsonToken t = p.nextToken();
        if (t == null) {
            return 0; // blank
        }
        if (t == JsonToken.VALUE_NULL) {
            expectEnd(p);
            return 0;
        }
        if (t != JsonToken.START_OBJECT) {
            String found = found(p, t);
            throw new DebeziumDecodeException(
                    source,
                    index,
                    "malformed JSON: invalid type: "
                            + found
                            + ", expected a Debezium change envelope (a JSON object)");
        }
        outer.reset();
        inner.reset();
        parseEnvelope(p, outer, true);
        expectEnd(p);
        Envelope env = outer;
        if (outer.hasSchema && outer.payload == OBJECT) {
            env = inner;
        } else if (outer.hasSchema && outer.payload == NULL) {
            return 0;
        }
        if (env.structural != null) {
            throw new DebeziumDecodeException(
                    source,
                    index,
                    "malformed JSON: " + (env == inner ? "in \"payload\": " : "") + env.structural);
        }
        return emit(env, index, out);
    }

    private static void expectEnd(JsonParser p) throws IOException {
        JsonToken t = p.nextToken();
        if (t != null) {
            JsonLocation at = p.currentTokenLocation();
            throw new JsonTrailing(
                    "trailing characters at line " + at.getLineNr() + " column " + at.getColumnNr());
        }
    }

    /** Trailing content after the envelope. */
    private static final class JsonTrailing extends IOException {
        private static final long serialVersionUID = 1L;

        JsonTrailing(String message) {
            super(message);
        }
    }

    private DebeziumDecodeException malformed(long index, IOException e) {
        String detail;
        if (e instanceof JsonProcessingException) {
            JsonProcessingException j = (JsonProcessingException) e;
            JsonLocation at = j.getLocation();
            detail = j.getOriginalMessage().replace('\n', ' ');
            if (at != null) {
                detail += " at line " + at.getLineNr() + " column " + at.getColumnNr();
            }
        } else {
            detail = e.getMessage();
        }
        return new DebeziumDecodeException(source, index, "malformed JSON: " + detail);
    }

    private void parseEnvelope(JsonParser p, Envelope env, boolean top) throws IOException {
        String key;
        while ((key = p.nextFieldName()) != null) {
            JsonToken t = p.nextToken();
            switch (key) {
                case "op":
                    readOp(p, t, env);
                    break;
                case "before":
                    parseImage(p, t, env, env.before, "before");
                    break;
                case "after":
                    parseImage(p, t, env, env.after, "after");
                    break;
                case "schema":
                    if (top) {
                        env.hasSchema = true;
                    }
                    p.skipChildren();
                    break;
                case "payload":
                    if (!top) {
                        p.skipChildren();
                    } else if (t == JsonToken.START_OBJECT) {
                        inner.reset();
                        parseEnvelope(p, inner, false);
                        env.payload = OBJECT;
                    } else if (t == JsonToken.VALUE_NULL) {
                        env.payload = NULL;
                    } else {
                        env.payload = MISSING;
                        p.skipChildren();
                    }
                    break;
                default:
                    p.skipChildren();
            }
        }
    }

    private static void readOp(JsonParser p, JsonToken t, Envelope env) throws IOException {
        env.op = 0;
        env.badOp = null;
        if (t == JsonToken.VALUE_NULL) {
            env.hasOp = false;
            return;
        }
        env.hasOp = true;
        if (t == JsonToken.VALUE_STRING) {
            String s = p.getText();
            if (s.length() == 1 && s.charAt(0) < 0x80) {
                env.op = s.charAt(0);
                return;
            }
        }
        env.badOp = found(p, t);
    }

    private void parseImage(JsonParser p, JsonToken t, Envelope env, Image img, String side)
            throws IOException {
        img.reset();
        if (t == JsonToken.VALUE_NULL) {
            img.state = NULL;
            return;
        }
        if (t != JsonToken.START_OBJECT) {
            String found = found(p, t);
            if (env.structural == null) {
                env.structural =
                        "invalid type: "
                                + found
                                + ", expected a row image (a JSON object) or null, in \""
                                + side
                                + "\"";
            }
            return;
        }
        img.state = OBJECT;
        Row row = Row.withPositions(arity);
        img.row = row;
        int hint = 0;
        String name;
        while ((name = p.nextFieldName()) != null) {
            JsonToken vt = p.nextToken();
            int col = column(name, hint);
            if (col < 0) {
                p.skipChildren();
                continue;
            }
            hint = col + 1;
            if (img.errors != null) {
                img.errors[col] = null;
            }
            if (vt == JsonToken.VALUE_NULL) {
                row.setField(col, null);
            } else {
                row.setField(col, readValue(p, vt, col, img, side));
            }
        }
    }

    /** Position of a declared column, trying {@code hint} (the one after the last hit) first. */
    private int column(String name, int hint) {
        if (hint < arity && names[hint].equals(name)) {
            return hint;
        }
        Integer i = byName.get(name);
        return i == null ? -1 : i;
    }

    /**
     * The changes of a parsed envelope, after checking the op and the images it needs; nothing is
     * emitted on error.
     */
    private int emit(Envelope env, long index, Collector<Row> out) {
        if (!env.hasOp) {
            throw new DebeziumDecodeException(source, index, "missing \"op\" field");
        }
        String opName;
        boolean retract;
        boolean accumulate;
        switch (env.badOp != null ? 0 : env.op) {
            case 'c':
                opName = "INSERT";
                retract = false;
                accumulate = true;
                break;
            case 'r':
                opName = "READ";
                retract = false;
                accumulate = true;
                break;
            case 'u':
                opName = "UPDATE";
                retract = true;
                accumulate = true;
                break;
            case 'd':
                opName = "DELETE";
                retract = true;
                accumulate = false;
                break;
            default:
                String text =
                        env.badOp != null
                                ? env.badOp
                                : env.op > 0x20 && env.op < 0x7f
                                        ? "\"" + env.op + "\""
                                        : String.format("byte 0x%02x", (int) env.op);
                throw new DebeziumDecodeException(
                        source,
                        index,
                        "unknown \"op\" value " + text + " (expected \"c\", \"r\", \"u\" or \"d\")");
        }
        if (retract && env.before.state != OBJECT) {
            throw new DebeziumDecodeException(
                    source,
                    index,
                    "The \"before\" field of "
                            + opName
                            + " message is null, if you are using Debezium Postgres Connector,"
                            + " please check the Postgres table has been set REPLICA IDENTITY to"
                            + " FULL level.");
        }
        if (accumulate && env.after.state != OBJECT) {
            throw new DebeziumDecodeException(
                    source, index, "The \"after\" field of " + opName + " message is null.");
        }
        if (retract) {
            check(env.before, "before", index);
        }
        if (accumulate) {
            check(env.after, "after", index);
        }
        int n = 0;
        if (retract) {
            Row before = env.before.row;
            before.setKind(
                    accumulate && !deleteInsertUpdates ? RowKind.UPDATE_BEFORE : RowKind.DELETE);
            out.collect(before);
            n++;
        }
        if (accumulate) {
            Row after = env.after.row;
            after.setKind(retract && !deleteInsertUpdates ? RowKind.UPDATE_AFTER : RowKind.INSERT);
            out.collect(after);
            n++;
        }
        env.before.row = null;
        env.after.row = null;
        return n;
    }

    /** Fails with the first problem of the image, in column order. */
    private void check(Image img, String side, long index) {
        Row row = img.row;
        for (int i = 0; i < arity; i++) {
            if (img.errors != null && img.errors[i] != null) {
                throw new DebeziumDecodeException(source, index, img.errors[i]);
            }
            if (!nullable[i] && row.getField(i) == null) {
                throw new DebeziumDecodeException(
                        source,
                        index,
                        "column \""
                                + names[i]
                                + "\" of the \""
                                + side
                                + "\" row is declared NOT NULL but is missing or null");
            }
        }
    }

    // ---------------------------------------------------------------------------------------
    // Values

    private static final Object FAILED = null;

    private Object mistyped(JsonParser p, JsonToken t, int col, Image img, String side)
            throws IOException {
        fail(
                img,
                col,
                column(col, side) + ": expected " + expected(kinds[col]) + ", found " + found(p, t));
        return FAILED;
    }

    private Object outOfRange(JsonParser p, JsonToken t, int col, Image img, String side)
            throws IOException {
        fail(img, col, column(col, side) + ": value " + found(p, t) + " is out of range");
        return FAILED;
    }

    private String column(int col, String side) {
        return "column \"" + names[col] + "\" (" + types[col] + ") of the \"" + side + "\" row";
    }

    private void fail(Image img, int col, String reason) {
        if (img.errors == null) {
            img.errors = new String[arity];
        }
        img.errors[col] = reason;
    }

    /** What a column of this kind accepts, for error messages (the native decoder's words). */
    static String expected(ColumnType.Kind kind) {
        switch (kind) {
            case BOOLEAN:
                return "true or false";
            case INT:
            case BIGINT:
                return "a JSON integer";
            case FLOAT:
            case DOUBLE:
                return "a JSON number or \"NaN\", \"Infinity\", \"-Infinity\"";
            case DECIMAL:
                return "a JSON number, a decimal string, base64 of the unscaled value or"
                        + " {\"scale\": .., \"value\": base64}";
            case STRING:
                return "a JSON string";
            case BYTES:
                return "a base64 string";
            case DATE:
                return "an integer of epoch days or a \"YYYY-MM-DD\" string";
            default:
                return "an integer epoch timestamp or a \"YYYY-MM-DDTHH:MM:SS[.fraction]\" string";
        }
    }

    /** Reads the non-null value at the current token as column {@code col}. */
    private Object readValue(JsonParser p, JsonToken t, int col, Image img, String side)
            throws IOException {
        switch (kinds[col]) {
            case BOOLEAN:
                if (t == JsonToken.VALUE_TRUE) {
                    return Boolean.TRUE;
                }
                if (t == JsonToken.VALUE_FALSE) {
                    return Boolean.FALSE;
                }
                return mistyped(p, t, col, img, side);
            case INT:
                if (t != JsonToken.VALUE_NUMBER_INT) {
                    return mistyped(p, t, col, img, side);
                }
                if (p.getNumberType() != JsonParser.NumberType.INT) {
                    return outOfRange(p, t, col, img, side);
                }
                return p.getIntValue();
            case BIGINT:
                if (t != JsonToken.VALUE_NUMBER_INT) {
                    return mistyped(p, t, col, img, side);
                }
                if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
                    return outOfRange(p, t, col, img, side);
                }
                return p.getLongValue();
            case FLOAT:
                if (t == JsonToken.VALUE_STRING) {
                    Double special = specialFloat(p.getText());
                    return special == null
                            ? mistyped(p, t, col, img, side)
                            : (Object) special.floatValue();
                }
                if (!t.isNumeric()) {
                    return mistyped(p, t, col, img, side);
                }
                float f = Float.parseFloat(p.getText());
                return Float.isInfinite(f) ? outOfRange(p, t, col, img, side) : (Object) f;
            case DOUBLE:
                if (t == JsonToken.VALUE_STRING) {
                    Double special = specialFloat(p.getText());
                    return special == null ? mistyped(p, t, col, img, side) : (Object) special;
                }
                if (!t.isNumeric()) {
                    return mistyped(p, t, col, img, side);
                }
                double d = p.getDoubleValue();
                return Double.isInfinite(d) ? outOfRange(p, t, col, img, side) : (Object) d;
            case DECIMAL:
                return readDecimal(p, t, col, img, side);
            case STRING:
                return t == JsonToken.VALUE_STRING ? p.getText() : mistyped(p, t, col, img, side);
            case BYTES:
                if (t != JsonToken.VALUE_STRING) {
                    return mistyped(p, t, col, img, side);
                }
                try {
                    return Base64.getDecoder().decode(p.getText());
                } catch (IllegalArgumentException e) {
                    return mistyped(p, t, col, img, side);
                }
            case DATE:
                return readDate(p, t, col, img, side);
            default:
                return readTimestamp(p, t, col, img, side);
        }
    }

    /** {@code "NaN"}, {@code "Infinity"}, {@code "-Infinity"} as written by Debezium; else null. */
    private static Double specialFloat(String s) {
        switch (s) {
            case "NaN":
                return Double.NaN;
            case "Infinity":
                return Double.POSITIVE_INFINITY;
            case "-Infinity":
                return Double.NEGATIVE_INFINITY;
            default:
                return null;
        }
    }

    /** Why a decimal could not be read. */
    private static final int SYNTAX = 1;

    private static final int RANGE = 2;

    private Object readDecimal(JsonParser p, JsonToken t, int col, Image img, String side)
            throws IOException {
        int precision = types[col].precision();
        int scale = types[col].scale();
        BigDecimal value;
        int error = 0;
        String objectText = null;
        if (t == JsonToken.VALUE_NUMBER_INT || t == JsonToken.VALUE_NUMBER_FLOAT) {
            value = p.getDecimalValue();
        } else if (t == JsonToken.VALUE_STRING) {
            String s = p.getText();
            if (looksLikeBase64(s)) {
                BigInteger unscaled = unscaledFromBase64(s);
                value = unscaled == null ? null : new BigDecimal(unscaled, scale);
                error = unscaled == null ? SYNTAX : 0;
            } else {
                value = decimalText(s);
                error = value == null ? SYNTAX : 0;
            }
        } else if (t == JsonToken.START_OBJECT) {
            // Debezium's VariableScaleDecimal: {"scale": 2, "value": "<base64 unscaled>"}.
            StringWriter text = new StringWriter();
            Long objScale = null;
            String objValue = null;
            boolean bad = false;
            try (JsonGenerator g = FACTORY.createGenerator(text)) {
                g.writeStartObject();
                String name;
                while ((name = p.nextFieldName()) != null) {
                    JsonToken vt = p.nextToken();
                    g.writeFieldName(name);
                    if ("scale".equals(name)) {
                        if (vt == JsonToken.VALUE_NUMBER_INT
                                && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
                            objScale = p.getLongValue();
                        } else {
                            bad = true;
                        }
                    } else if ("value".equals(name)) {
                        if (vt == JsonToken.VALUE_STRING) {
                            objValue = p.getText();
                        } else {
                            bad = true;
                        }
                    }
                    g.copyCurrentStructure(p);
                }
                g.writeEndObject();
            }
            objectText = text.toString();
            value = null;
            error = SYNTAX;
            if (!bad && objScale != null && objValue != null) {
                BigInteger unscaled = unscaledFromBase64(objValue);
                if (unscaled != null) {
                    long s = objScale;
                    if (s > 1_000_000 || s < -1_000_000) {
                        error = RANGE;
                    } else {
                        value = new BigDecimal(unscaled, (int) s);
                        error = 0;
                    }
                }
            }
        } else {
            return mistyped(p, t, col, img, side);
        }
        if (error == 0) {
            value = fit(value, precision, scale);
            error = value == null ? RANGE : 0;
        }
        if (error == 0) {
            return value;
        }
        String found = objectText != null ? excerpt(objectText) : found(p, t);
        fail(
                img,
                col,
                error == RANGE
                        ? column(col, side) + ": value " + found + " is out of range"
                        : column(col, side)
                                + ": expected "
                                + expected(ColumnType.Kind.DECIMAL)
                                + ", found "
                                + found);
        return FAILED;
    }

    /** {@code v} at {@code scale} (rounded {@code HALF_UP}) if it has at most {@code precision} digits. */
    static BigDecimal fit(BigDecimal v, int precision, int scale) {
        if (v.signum() != 0 && (long) v.precision() - v.scale() > precision - scale) {
            return null; // more integer digits than the type holds, before any rounding
        }
        BigDecimal r = v.setScale(scale, RoundingMode.HALF_UP);
        return r.unscaledValue().abs().compareTo(BigInteger.TEN.pow(precision)) < 0 ? r : null;
    }

    /** A decimal literal {@code [+-]digits[.digits][e[+-]digits]}, or null. */
    static BigDecimal decimalText(String s) {
        int i = 0;
        int n = s.length();
        if (i < n && (s.charAt(i) == '-' || s.charAt(i) == '+')) {
            i++;
        }
        int digits = 0;
        while (i < n && isDigit(s.charAt(i))) {
            i++;
            digits++;
        }
        if (i < n && s.charAt(i) == '.') {
            i++;
            while (i < n && isDigit(s.charAt(i))) {
                i++;
                digits++;
            }
        }
        if (digits == 0) {
            return null;
        }
        if (i < n && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
            i++;
            if (i < n && (s.charAt(i) == '-' || s.charAt(i) == '+')) {
                i++;
            }
            int exp = 0;
            while (i < n && isDigit(s.charAt(i))) {
                i++;
                exp++;
            }
            if (exp == 0) {
                return null;
            }
        }
        if (i != n) {
            return null;
        }
        try {
            return new BigDecimal(s);
        } catch (NumberFormatException e) {
            return null; // an exponent beyond int
        }
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    /**
     * Looks like base64 as Debezium writes it: non-empty, a multiple of 4 long, only base64
     * characters, {@code =} only as padding at the end. (An all-digit string whose length is a
     * multiple of 4, like {@code "1000"}, therefore reads as base64, as in the native decoder.)
     */
    static boolean looksLikeBase64(String s) {
        int n = s.length();
        if (n == 0 || n % 4 != 0) {
            return false;
        }
        int end = n;
        if (s.charAt(end - 1) == '=') {
            end--;
            if (s.charAt(end - 1) == '=') {
                end--;
            }
        }
        for (int i = 0; i < end; i++) {
            char c = s.charAt(i);
            boolean ok =
                    (c >= 'A' && c <= 'Z')
                            || (c >= 'a' && c <= 'z')
                            || (c >= '0' && c <= '9')
                            || c == '+'
                            || c == '/';
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    /** The big-endian two's-complement integer in {@code b64}, or null if it is not base64. */
    static BigInteger unscaledFromBase64(String b64) {
        byte[] bytes;
        try {
            bytes = Base64.getDecoder().decode(b64);
        } catch (IllegalArgumentException e) {
            return null;
        }
        return bytes.length == 0 ? null : new BigInteger(bytes);
    }

    private Object readDate(JsonParser p, JsonToken t, int col, Image img, String side)
            throws IOException {
        if (t == JsonToken.VALUE_NUMBER_INT) {
            if (p.getNumberType() != JsonParser.NumberType.INT) {
                return outOfRange(p, t, col, img, side);
            }
            return LocalDate.ofEpochDay(p.getIntValue());
        }
        if (t != JsonToken.VALUE_STRING) {
            return mistyped(p, t, col, img, side);
        }
        String s = p.getText();
        long days = parseDate(s);
        if (days == NO_DATE || s.length() != 10) {
            return mistyped(p, t, col, img, side);
        }
        if (days < Integer.MIN_VALUE || days > Integer.MAX_VALUE) {
            return outOfRange(p, t, col, img, side);
        }
        return LocalDate.ofEpochDay(days);
    }

    private static final long NO_DATE = Long.MIN_VALUE;

    /** Epoch days of the {@code YYYY-MM-DD} at the start of {@code s}, or {@link #NO_DATE}. */
    static long parseDate(String s) {
        if (s.length() < 10 || s.charAt(4) != '-' || s.charAt(7) != '-') {
            return NO_DATE;
        }
        int y = digits(s, 0, 4);
        int m = digits(s, 5, 2);
        int d = digits(s, 8, 2);
        if (y < 0 || m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m)) {
            return NO_DATE;
        }
        return LocalDate.of(y, m, d).toEpochDay();
    }

    private static int daysInMonth(int y, int m) {
        boolean leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
        switch (m) {
            case 2:
                return leap ? 29 : 28;
            case 4:
            case 6:
            case 9:
            case 11:
                return 30;
            default:
                return 31;
        }
    }

    /** Exactly {@code n} ASCII digits at {@code at}, or -1. */
    private static int digits(String s, int at, int n) {
        if (at + n > s.length()) {
            return -1;
        }
        int v = 0;
        for (int i = at; i < at + n; i++) {
            char c = s.charAt(i);
            if (!isDigit(c)) {
                return -1;
            }
            v = v * 10 + (c - '0');
        }
        return v;
    }

    private Object readTimestamp(JsonParser p, JsonToken t, int col, Image img, String side)
            throws IOException {
        int precision = types[col].precision();
        boolean nanos = precision > 6;
        long stored; // micros for p <= 6, nanos above (the native encoding's storage)
        if (t == JsonToken.VALUE_NUMBER_INT) {
            if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
                return outOfRange(p, t, col, img, side);
            }
            long v = p.getLongValue();
            if (precision <= 3) {
                try {
                    stored = Math.multiplyExact(v, 1000L); // millis -> micros
                } catch (ArithmeticException e) {
                    return outOfRange(p, t, col, img, side);
                }
            } else {
                stored = v; // micros (p <= 6) or nanos (p > 6): already the storage unit
            }
        } else if (t == JsonToken.VALUE_STRING) {
            long[] r = isoTimestamp(p.getText(), nanos);
            if (r == null) {
                return mistyped(p, t, col, img, side);
            }
            if (r.length == 0) {
                return outOfRange(p, t, col, img, side);
            }
            stored = r[0];
        } else {
            return mistyped(p, t, col, img, side);
        }
        long perSecond = nanos ? 1_000_000_000L : 1_000_000L;
        long seconds = Math.floorDiv(stored, perSecond);
        int nano = (int) (Math.floorMod(stored, perSecond) * (nanos ? 1 : 1000));
        return LocalDateTime.ofEpochSecond(seconds, nano, ZoneOffset.UTC);
    }

    /**
     * {@code YYYY-MM-DD[T| ]HH:MM[:SS[.fraction]][Z]} in storage units: {@code {value}}, an empty
     * array when out of range, or null when not of that form.
     */
    static long[] isoTimestamp(String s, boolean nanos) {
        long days = parseDate(s);
        if (days == NO_DATE || s.length() < 11) {
            return null;
        }
        char sep = s.charAt(10);
        if (sep != 'T' && sep != 't' && sep != ' ') {
            return null;
        }
        int at = 11;
        int h = digits(s, at, 2);
        if (h < 0 || at + 2 >= s.length() || s.charAt(at + 2) != ':') {
            return null;
        }
        int mi = digits(s, at + 3, 2);
        if (mi < 0) {
            return null;
        }
        at += 5;
        int sec = 0;
        long fraction = 0;
        if (at < s.length() && s.charAt(at) == ':') {
            sec = digits(s, at + 1, 2);
            if (sec < 0) {
                return null;
            }
            at += 3;
            if (at < s.length() && s.charAt(at) == '.') {
                int start = ++at;
                while (at < s.length() && isDigit(s.charAt(at))) {
                    at++;
                }
                int n = at - start;
                if (n == 0 || n > 9) {
                    return null;
                }
                fraction = digits(s, start, n);
                for (int i = n; i < 9; i++) {
                    fraction *= 10;
                }
            }
        }
        if (at < s.length() && s.charAt(at) == 'Z') {
            at++;
        }
        if (at != s.length() || h > 23 || mi > 59 || sec > 59) {
            return null;
        }
        long perSecond = nanos ? 1_000_000_000L : 1_000_000L;
        try {
            long seconds = Math.addExact(Math.multiplyExact(days, 86_400L), h * 3600L + mi * 60L + sec);
            long v =
                    Math.addExact(
                            Math.multiplyExact(seconds, perSecond),
                            fraction / (1_000_000_000L / perSecond));
            return new long[] {v};
        } catch (ArithmeticException e) {
            return new long[0];
        }
    }

    // ---------------------------------------------------------------------------------------
    // Messages

    /** The JSON of the current value (consuming it if it is an object or array), shortened. */
    private static String found(JsonParser p, JsonToken t) throws IOException {
        switch (t) {
            case VALUE_STRING:
                return excerpt(Json.quote(p.getText()));
            case START_OBJECT:
            case START_ARRAY:
                StringWriter w = new StringWriter();
                try (JsonGenerator g = FACTORY.createGenerator(w)) {
                    g.copyCurrentStructure(p);
                }
                return excerpt(w.toString());
            default:
                return excerpt(p.getText());
        }
    }

    /** {@code text} cut at {@value #MAX_FOUND} characters with an ellipsis. */
    private static String excerpt(String text) {
        if (text.codePointCount(0, text.length()) <= MAX_FOUND) {
            return text;
        }
        return text.substring(0, text.offsetByCodePoints(0, MAX_FOUND)) + "…";
    }
}
