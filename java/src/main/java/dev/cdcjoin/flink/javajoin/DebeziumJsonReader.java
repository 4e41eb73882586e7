package dev.cdcjoin.flink.javajoin;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import dev.cdcjoin.flink.DebeziumFormat;
import dev.cdcjoin.flink.SideSpec;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.io.IOException;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.types.Row;
import org.apache.flink.util.Collector;

/**
 * Reads the Debezium JSON messages of one table into changelog {@link Row}s, in one pass of
 * Jackson's streaming parser (no tree, no data binding): the Java engine's parser of Flink's {@code
 * debezium-json} messages (the native engine's is Rust's, behind {@code NativeDecoder}). This class
 * parses the envelope; {@link ColumnReader} reads each value in the encoding the side's {@link
 * DebeziumFormat} declares (or a schema-wrapped message's Connect schema says), and {@link
 * ChangeRules} turns the op and images into changes.
 *
 * <p>Messages may be plain envelopes or wrapped as {@code {"schema": ..., "payload": ...}}, the
 * schema before or after the payload. Tombstones (a null or blank message, JSON {@code null}, or a
 * wrapper with a null payload) decode to nothing. Columns are looked up by name in {@code
 * before}/{@code after} (extra columns are skipped, missing nullable columns are null).
 *
 * <p>Values are read in the encodings the side's format declares ({@link DeclaredEncodings}, with
 * the table of them), or a wrapped message's Connect schema names ({@link ConnectSchema}).
 *
 * <p>A record that cannot be decoded raises a {@link DebeziumDecodeException} naming the record and
 * the reason (for a value: the column, an excerpt of the value and the encoding expected). Nothing
 * is emitted for a failing record. An image the op does not need (the {@code before} of a {@code
 * c}) is never a reason to fail.
 *
 * <p>One instance per thread: it keeps per-record scratch state. Not serializable; build it in
 * {@code open()}.
 */
public final class DebeziumJsonReader {

    private final String source;
    private final CdcSchema schema;
    private final DebeziumFormat format;
    private final String[] names;
    private final Map<String, Integer> byName;

    /** The readers the declared format gives. */
    private final ColumnReader[] declared;

    /** The readers of the message being decoded. */
    private ColumnReader[] readers;

    private final ChangeRules rules;
    private final Envelope outer = new Envelope();
    private final Envelope inner = new Envelope();

    /** The payload's JSON when it came before the schema. */
    private String deferredPayload;

    /** Per declared column, whether the row image being read gave it already. */
    private final boolean[] given;

    /**
     * A reader of a table with the default format, emitting updates as {@code -U}/{@code +U}.
     *
     * @param source the table's name, used in error messages
     * @param schema the declared columns; rows are written in this order
     */
    public DebeziumJsonReader(String source, CdcSchema schema) {
        this(source, schema, false);
    }

    /**
     * A reader of a table with the default format and no primary key.
     *
     * @param source the table's name, used in error messages
     * @param schema the declared columns; rows are written in this order
     * @param deleteInsertUpdates emit updates as {@code -D(before)}, {@code +I(after)} instead of
     *     {@code -U}/{@code +U}
     */
    public DebeziumJsonReader(String source, CdcSchema schema, boolean deleteInsertUpdates) {
        this(
                new SideSpec(source, schema, List.of(schema.columns().get(0).name()), null, null),
                deleteInsertUpdates);
    }

    /**
     * A reader of one join input: its name, schema, primary key and Debezium format.
     *
     * @param side the input
     * @param deleteInsertUpdates emit updates as {@code -D(before)}, {@code +I(after)} instead of
     *     {@code -U}/{@code +U}
     */
    public DebeziumJsonReader(SideSpec side, boolean deleteInsertUpdates) {
        this.source = side.name();
        this.schema = side.schema();
        this.format = side.format();
        List<Column> columns = schema.columns();
        this.names = new String[columns.size()];
        this.byName = new HashMap<>();
        this.declared = new ColumnReader[columns.size()];
        this.given = new boolean[columns.size()];
        for (int i = 0; i < names.length; i++) {
            names[i] = columns.get(i).name();
            byName.put(names[i], i);
            declared[i] = DeclaredEncodings.reader(columns.get(i), format);
        }
        this.rules = new ChangeRules(side, deleteInsertUpdates);
    }

    /**
     * The type of the changes this reader emits: the schema's rows, whose columns may be {@link
     * Unavailable} (it serializes those).
     *
     * @return the row type information
     */
    public RowTypeInfo rowTypeInfo() {
        return new ChangeRowTypeInfo(schema.rowTypeInfo());
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
     * Reads one message given as bytes (UTF-8 JSON, e.g. a Kafka record value).
     *
     * @param message the message; {@code null} or blank is a tombstone
     * @param index the record's number, for error messages
     * @param out receives the one or two changes, in order
     * @return the number of rows emitted (0 for a tombstone)
     * @throws DebeziumDecodeException if the record cannot be decoded (nothing was emitted)
     */
    public int read(byte[] message, long index, Collector<Row> out) {
        if (message == null || message.length == 0) {
            return 0;
        }
        try (JsonParser p = JsonExcerpt.FACTORY.createParser(message)) {
            return read(p, index, out);
        } catch (IOException e) {
            throw malformed(index, e);
        }
    }

    /**
     * Reads one message given as a string.
     *
     * @param message the message; {@code null} or blank is a tombstone
     * @param index the record's number, for error messages
     * @param out receives the one or two changes, in order
     * @return the number of rows emitted (0 for a tombstone)
     * @throws DebeziumDecodeException if the record cannot be decoded (nothing was emitted)
     */
    public int read(String message, long index, Collector<Row> out) {
        if (message == null || message.isEmpty()) {
            return 0;
        }
        try (JsonParser p = JsonExcerpt.FACTORY.createParser(message)) {
            return read(p, index, out);
        } catch (IOException e) {
            throw malformed(index, e);
        }
    }

    /**
     * Reads one upsert-kafka record (the shape Flink's {@code upsert-kafka} connector reads): the
     * record key is a JSON object holding the primary key columns, the value a flat JSON row, or
     * null (or JSON {@code null}) for a delete. A value is {@code +I(value)}: the join replaces the
     * row stored under its primary key; a value whose primary key column is missing or null (a
     * value Kafka Connect wrapped as {@code {"schema", "payload"}} among them) is a bad record. A
     * delete is {@code -D} of a row whose primary key columns are read from the key and every other
     * column is {@link Unavailable}: the join retracts the stored row. Needs upsert mode ({@link
     * DebeziumFormat#withUpsert}).
     *
     * @param key the record key
     * @param value the record value; {@code null}, empty or JSON {@code null} for a delete
     * @param index the record's number, for error messages
     * @param out receives the change
     * @return the number of rows emitted (1)
     * @throws DebeziumDecodeException if the record cannot be decoded (nothing was emitted)
     */
    public int readUpsert(byte[] key, byte[] value, long index, Collector<Row> out) {
        if (!format.upsert()) {
            throw new DebeziumDecodeException(
                    source,
                    index,
                    "upsert-kafka records need upsert"
                            + " mode (DebeziumFormat.withUpsert(true) and a primary key)");
        }
        outer.reset();
        readers = declared;
        try {
            boolean delete = !readRow(value, outer.after, "after");
            if (delete && !readRow(key, outer.before, "before")) {
                throw new DebeziumDecodeException(
                        source,
                        index,
                        "an upsert-kafka delete (a null"
                                + " value) needs the record key, which holds the primary key");
            }
            return rules.emitUpsert(outer, delete, index, out);
        } catch (IOException e) {
            throw malformed(index, e);
        }
    }

    /** Parses a flat JSON row into {@code img}; false when the JSON is absent, blank or null. */
    private boolean readRow(byte[] json, RowImage img, String side) throws IOException {
        if (json == null || json.length == 0) {
            return false;
        }
        try (JsonParser p = JsonExcerpt.FACTORY.createParser(json)) {
            JsonToken t = p.nextToken();
            if (t == null || t == JsonToken.VALUE_NULL) {
                expectEnd(p);
                return false;
            }
            parseImage(p, t, outer, img, side);
            expectEnd(p);
            if (outer.structural != null) {
                throw new JsonTrailing(outer.structural);
            }
            return true;
        }
    }

    /**
     * Reads one message into a list (convenience for tests and tools).
     *
     * @param message the message; {@code null} or blank is a tombstone
     * @param index the record's number, for error messages
     * @return the changes, in order (empty for a tombstone)
     * @throws DebeziumDecodeException if the record cannot be decoded
     */
    public List<Row> readToList(byte[] message, long index) {
        List<Row> rows = new ArrayList<>(2);
        read(
                message,
                index,
                new Collector<Row>() {
                    @Override
                    public void collect(Row record) {
                        rows.add(record);
                    }

                    @Override
                    public void close() {}
                });
        return rows;
    }

    // ---------------------------------------------------------------------------------------
    // The envelope

    private int read(JsonParser p, long index, Collector<Row> out) throws IOException {
        JsonToken t = p.nextToken();
        if (t == null) {
            return 0; // blank
        }
        if (t == JsonToken.VALUE_NULL) {
            expectEnd(p);
            return 0;
        }
        if (t != JsonToken.START_OBJECT) {
            throw new DebeziumDecodeException(
                    source,
                    index,
                    "malformed JSON: invalid type: "
                            + JsonExcerpt.of(p, t)
                            + ", expected a Debezium change envelope (a JSON object)");
        }
        outer.reset();
        inner.reset();
        readers = declared;
        deferredPayload = null;
        parseEnvelope(p, outer, true);
        expectEnd(p);
        if (deferredPayload != null) {
            try (JsonParser q = JsonExcerpt.FACTORY.createParser(deferredPayload)) {
                q.nextToken();
                parseEnvelope(q, inner, false);
            }
        }
        Envelope env = outer;
        if (outer.hasSchema && outer.payload == RowImage.OBJECT) {
            env = inner;
        } else if (outer.hasSchema && outer.payload == RowImage.NULL) {
            return 0;
        }
        if (env.structural != null) {
            throw new DebeziumDecodeException(
                    source,
                    index,
                    "malformed JSON: " + (env == inner ? "in \"payload\": " : "") + env.structural);
        }
        return rules.emit(env, index, out);
    }

    private static void expectEnd(JsonParser p) throws IOException {
        if (p.nextToken() != null) {
            JsonLocation at = p.currentTokenLocation();
            throw new JsonTrailing(
                    "trailing characters at line "
                            + at.getLineNr()
                            + " column "
                            + at.getColumnNr());
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
        int read = 0;
        String key;
        while ((key = p.nextFieldName()) != null) {
            int bit = readBit(key, top);
            if ((read & bit) != 0) {
                // Either value could be meant (Jackson would keep the last): refused, as natively.
                throw new JsonParseException(p, "duplicate key \"" + key + "\" in the envelope");
            }
            read |= bit;
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
                        readSchema(p, t);
                    } else {
                        p.skipChildren();
                    }
                    break;
                case "payload":
                    if (top) {
                        readPayload(p, t, env);
                    } else {
                        p.skipChildren();
                    }
                    break;
                default:
                    p.skipChildren();
            }
        }
    }

    /**
     * A bit of its own for each envelope key whose value is read ({@code top}: at the top level,
     * where {@code schema} and {@code payload} are read too), 0 for the others.
     */
    private static int readBit(String key, boolean top) {
        switch (key) {
            case "op":
                return 1;
            case "before":
                return 2;
            case "after":
                return 4;
            case "schema":
                return top ? 8 : 0;
            case "payload":
                return top ? 16 : 0;
            default:
                return 0;
        }
    }

    /**
     * A wrapper's schema: its fields' Connect types decide how values are read; a column its row
     * images do not list may only be null or absent.
     */
    private void readSchema(JsonParser p, JsonToken t) throws IOException {
        if (t != JsonToken.START_OBJECT) {
            p.skipChildren();
            return;
        }
        Map<String, ConnectSchema.Field> fields = ConnectSchema.columns(p);
        if (fields == null) {
            return; // no row image described: the declared readers
        }
        ColumnReader[] wrapped = new ColumnReader[names.length];
        for (int i = 0; i < names.length; i++) {
            Column column = schema.columns().get(i);
            wrapped[i] = ConnectSchema.reader(column, format, fields.get(names[i]));
        }
        readers = wrapped;
    }

    private void readPayload(JsonParser p, JsonToken t, Envelope env) throws IOException {
        if (t == JsonToken.START_OBJECT) {
            inner.reset();
            if (env.hasSchema) {
                parseEnvelope(p, inner, false);
            } else {
                // The schema may still come: read the payload once it is known.
                StringWriter w = new StringWriter();
                try (JsonGenerator g = JsonExcerpt.FACTORY.createGenerator(w)) {
                    g.copyCurrentStructure(p);
                }
                deferredPayload = w.toString();
            }
            env.payload = RowImage.OBJECT;
        } else {
            env.payload = t == JsonToken.VALUE_NULL ? RowImage.NULL : RowImage.MISSING;
            deferredPayload = null;
            p.skipChildren();
        }
    }

    private static void readOp(JsonParser p, JsonToken t, Envelope env) throws IOException {
        env.op = 0;
        env.badOp = null;
        env.hasOp = t != JsonToken.VALUE_NULL;
        if (!env.hasOp) {
            return;
        }
        if (t == JsonToken.VALUE_STRING) {
            String s = p.getText();
            if (s.length() == 1 && s.charAt(0) < 0x80) {
                env.op = s.charAt(0);
                return;
            }
        }
        env.badOp = JsonExcerpt.of(p, t);
    }

    private void parseImage(JsonParser p, JsonToken t, Envelope env, RowImage img, String side)
            throws IOException {
        img.reset();
        if (t == JsonToken.VALUE_NULL) {
            img.state = RowImage.NULL;
            return;
        }
        if (t != JsonToken.START_OBJECT) {
            String found = JsonExcerpt.of(p, t);
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
        img.start(names.length);
        Arrays.fill(given, false);
        int hint = 0;
        String name;
        while ((name = p.nextFieldName()) != null) {
            int col = column(name, hint);
            if (col >= 0 && given[col]) {
                throw new JsonParseException(p, "duplicate column \"" + name + "\" in a row image");
            }
            JsonToken vt = p.nextToken();
            if (col < 0) {
                p.skipChildren();
                continue;
            }
            given[col] = true;
            hint = col + 1;
            if (vt == JsonToken.VALUE_NULL) {
                img.set(col, null);
                continue;
            }
            try {
                img.set(col, readers[col].read(p, vt));
            } catch (ColumnReader.BadValue e) {
                img.fail(
                        col,
                        ChangeRules.column(names[col], readers[col].type, side)
                                + ": "
                                + e.getMessage());
            }
        }
    }

    /** Position of a declared column, trying {@code hint} (the one after the last hit) first. */
    private int column(String name, int hint) {
        if (hint < names.length && names[hint].equals(name)) {
            return hint;
        }
        Integer i = byName.get(name);
        return i == null ? -1 : i;
    }

    @Override
    public String toString() {
        return "DebeziumJsonReader(" + Objects.toString(source) + ", " + format + ")";
    }
}
