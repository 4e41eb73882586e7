package dev.cdcjoin.flink.javajoin;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.DebeziumFormat;
import dev.cdcjoin.flink.SideSpec;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;

/**
 * {@link DebeziumJsonReader}, the Jackson reader: op rules, wrappers, tombstones, every column
 * type, every error.
 */
class DebeziumJsonReaderTest {

    private static final CdcSchema USERS =
            CdcSchema.of(
                    Column.notNull("id", "INT"),
                    Column.nullable("name", "STRING"),
                    Column.nullable("score", "DECIMAL(10, 2)"));

    private static final DebeziumJsonReader READER = new DebeziumJsonReader("users", USERS);

    private static List<Row> decode(DebeziumJsonReader d, String json) {
        List<Row> out = new ArrayList<>();
        d.read(json == null ? null : json.getBytes(StandardCharsets.UTF_8), 7, collector(out));
        // The String entry point agrees with the byte[] one.
        List<Row> viaString = new ArrayList<>();
        d.read(json, 7, collector(viaString));
        assertEquals(out.toString(), viaString.toString());
        return out;
    }

    private static List<Row> decode(String json) {
        return decode(READER, json);
    }

    private static Collector<Row> collector(List<Row> out) {
        return new Collector<>() {
            @Override
            public void collect(Row record) {
                out.add(record);
            }

            @Override
            public void close() {}
        };
    }

    /** The error message for {@code json}; checks that nothing was emitted. */
    private static String error(DebeziumJsonReader d, String json) {
        List<Row> out = new ArrayList<>();
        DebeziumDecodeException e =
                assertThrows(
                        DebeziumDecodeException.class,
                        () -> d.read(json.getBytes(StandardCharsets.UTF_8), 7, collector(out)));
        assertTrue(out.isEmpty(), "nothing emitted on error");
        assertEquals(7, e.index());
        assertEquals(d.source(), e.source());
        assertEquals(d.source() + " record #7: " + e.reason(), e.getMessage());
        return e.reason();
    }

    private static String error(String json) {
        return error(READER, json);
    }

    private static List<String> strings(List<Row> rows) {
        List<String> out = new ArrayList<>();
        rows.forEach(r -> out.add(r.toString()));
        return out;
    }

    // ------------------------------------------------------------------------------ op rules

    @Test
    void everyOp() {
        assertEquals(
                List.of("+I[1, Ana, 12.50]"),
                strings(
                        decode(
                                "{\"before\":null,\"after\":{\"id\":1,\"name\":\"Ana\",\"score\":\"12.50\"},\"op\":\"c\"}")));
        assertEquals(
                List.of("+I[1, Ana, null]"),
                strings(decode("{\"op\":\"r\",\"after\":{\"id\":1,\"name\":\"Ana\"}}")));
        assertEquals(
                List.of("-U[1, Ana, null]", "+U[1, Bo, null]"),
                strings(
                        decode(
                                "{\"before\":{\"id\":1,\"name\":\"Ana\"},\"after\":{\"id\":1,\"name\":\"Bo\"},"
                                        + "\"source\":{\"db\":\"x\",\"n\":[1,{\"a\":2}]},\"op\":\"u\",\"ts_ms\":1}")));
        assertEquals(
                List.of("-D[1, Ana, null]"),
                strings(
                        decode(
                                "{\"before\":{\"id\":1,\"name\":\"Ana\"},\"after\":null,\"op\":\"d\"}")));
        DebeziumJsonReader di = new DebeziumJsonReader("users", USERS, true);
        assertEquals(
                List.of("-D[1, Ana, null]", "+I[1, Bo, null]"),
                strings(
                        decode(
                                di,
                                "{\"op\":\"u\",\"before\":{\"id\":1,\"name\":\"Ana\"},\"after\":{\"id\":1,\"name\":\"Bo\"}}")));
        // The op may come first or last; kinds are set on fresh rows.
        List<Row> rows = decode("{\"op\":\"u\",\"before\":{\"id\":1},\"after\":{\"id\":2}}");
        assertEquals(RowKind.UPDATE_BEFORE, rows.get(0).getKind());
        assertEquals(RowKind.UPDATE_AFTER, rows.get(1).getKind());
    }

    @Test
    void columnsByNameInAnyOrderExtraColumnsSkipped() {
        assertEquals(
                List.of("+I[7, a\"b, null]"),
                strings(
                        decode(
                                "{\"after\":{\"name\":\"a\\\"b\",\"extra\":[1,{\"x\":null}],\"id\":7},\"op\":\"c\",\"before\":null}")));
    }

    @Test
    void schemaWrappedMessages() {
        String wrapped =
                "{\"schema\":{\"type\":\"struct\",\"fields\":[]},\"payload\":{\"op\":\"d\",\"before\":{\"id\":3}}}";
        assertEquals(List.of("-D[3, null, null]"), strings(decode(wrapped)));
        String payloadFirst = "{\"payload\":{\"op\":\"r\",\"after\":{\"id\":4}},\"schema\":null}";
        assertEquals(List.of("+I[4, null, null]"), strings(decode(payloadFirst)));
        // Without "schema", "payload" is just another field.
        String plain = "{\"payload\":{\"op\":\"x\"},\"op\":\"c\",\"after\":{\"id\":5}}";
        assertEquals(List.of("+I[5, null, null]"), strings(decode(plain)));
        // A payload that is not an object does not make a wrapper.
        assertEquals(
                List.of("+I[6, null, null]"),
                strings(
                        decode(
                                "{\"schema\":1,\"payload\":\"p\",\"op\":\"c\",\"after\":{\"id\":6}}")));
    }

    @Test
    void tombstonesDecodeToNothing() {
        assertTrue(decode((String) null).isEmpty());
        assertTrue(decode("").isEmpty());
        assertTrue(decode("  \n").isEmpty());
        assertTrue(decode(" null ").isEmpty());
        assertTrue(decode("{\"schema\":{},\"payload\":null}").isEmpty());
        assertEquals(0, READER.read(new byte[0], 0, collector(new ArrayList<>())));
    }

    @Test
    void theImageAnOpDoesNotNeedIsNeverAReasonToFail() {
        // "before" of a create has a mistyped NOT NULL column: ignored.
        assertEquals(
                List.of("+I[1, null, null]"),
                strings(decode("{\"op\":\"c\",\"before\":{\"id\":\"x\"},\"after\":{\"id\":1}}")));
        assertEquals(
                List.of("-D[1, null, null]"),
                strings(decode("{\"op\":\"d\",\"before\":{\"id\":1},\"after\":{\"id\":true}}")));
    }

    // ------------------------------------------------------------------------------ errors

    /**
     * A key whose value is read, given twice, could be meant either way (Jackson alone would keep
     * the last): refused, naming the key, as the native decoder refuses it. Other keys may repeat.
     */
    @Test
    void aKeyReadTwiceIsRefused() {
        String e = error("{\"op\":\"c\",\"op\":\"d\",\"after\":{\"id\":1},\"before\":{\"id\":1}}");
        assertTrue(
                e.startsWith("malformed JSON: duplicate key \"op\" in the envelope at line 1"), e);
        e = error("{\"op\":\"c\",\"after\":{\"id\":1},\"after\":{\"id\":2}}");
        assertTrue(e.startsWith("malformed JSON: duplicate key \"after\" in the envelope"), e);
        e = error("{\"op\":\"d\",\"before\":null,\"before\":{\"id\":2}}");
        assertTrue(e.startsWith("malformed JSON: duplicate key \"before\" in the envelope"), e);
        e = error("{\"op\":\"c\",\"after\":{\"id\":1,\"name\":\"a\",\"name\":\"b\"}}");
        assertTrue(e.startsWith("malformed JSON: duplicate column \"name\" in a row image"), e);
        e = error("{\"schema\":{},\"payload\":{\"op\":\"c\",\"after\":{\"id\":1},\"op\":\"r\"}}");
        assertTrue(e.contains("duplicate key \"op\" in the envelope"), e);
        assertEquals(
                List.of("+I[1, null, null]"),
                strings(
                        decode(
                                "{\"op\":\"c\",\"after\":{\"id\":1,\"x\":1,\"x\":2},\"ts_ms\":1,"
                                        + "\"ts_ms\":2}")));
    }

    @Test
    void malformedJson() {
        String e = error("{\"op\":\"c\",");
        assertTrue(e.startsWith("malformed JSON: "), e);
        assertTrue(e.contains("line 1 column"), e);
        e = error("{\"op\":\"c\"} x");
        assertTrue(e.startsWith("malformed JSON: "), e);
        e = error("{\"op\":\"c\",\"after\":{\"id\":1}} {}");
        assertEquals("malformed JSON: trailing characters at line 1 column 29", e);
        assertEquals(
                "malformed JSON: invalid type: [1], expected a Debezium change envelope (a JSON"
                        + " object)",
                error("[1]"));
        e = error("{\"op\":\"c\",\"after\":5}");
        assertTrue(e.startsWith("malformed JSON: invalid type: 5, expected a row image"), e);
        e = error("{\"schema\":{},\"payload\":{\"after\":[]}}");
        assertTrue(e.startsWith("malformed JSON: in \"payload\": invalid type: []"), e);
        e = error("not json");
        assertTrue(e.startsWith("malformed JSON: "), e);
    }

    @Test
    void opErrors() {
        assertEquals("missing \"op\" field", error("{\"after\":{\"id\":1}}"));
        assertEquals("missing \"op\" field", error("{\"op\":null,\"after\":{\"id\":1}}"));
        assertEquals(
                "unknown \"op\" value \"t\" (expected \"c\", \"r\", \"u\" or \"d\")",
                error("{\"op\":\"t\",\"after\":{\"id\":1}}"));
        assertEquals(
                "unknown \"op\" value \"cc\" (expected \"c\", \"r\", \"u\" or \"d\")",
                error("{\"op\":\"cc\",\"after\":{\"id\":1}}"));
        assertEquals(
                "unknown \"op\" value 5 (expected \"c\", \"r\", \"u\" or \"d\")",
                error("{\"op\":5,\"after\":{\"id\":1}}"));
    }

    @Test
    void missingImages() {
        String replica =
                " message is null, if you are using Debezium Postgres Connector, please check the"
                        + " Postgres table has been set REPLICA IDENTITY to FULL level.";
        assertEquals(
                "The \"before\" field of UPDATE" + replica,
                error("{\"op\":\"u\",\"before\":null,\"after\":{\"id\":1}}"));
        assertEquals("The \"before\" field of DELETE" + replica, error("{\"op\":\"d\"}"));
        assertEquals(
                "The \"after\" field of UPDATE message is null.",
                error("{\"op\":\"u\",\"before\":{\"id\":1}}"));
        assertEquals("The \"after\" field of INSERT message is null.", error("{\"op\":\"c\"}"));
        assertEquals(
                "The \"after\" field of READ message is null.",
                error("{\"op\":\"r\",\"after\":null}"));
    }

    @Test
    void columnErrorsNameTheColumnAndImage() {
        assertEquals(
                "column \"id\" of the \"after\" row is declared NOT NULL but is missing or null",
                error("{\"op\":\"c\",\"after\":{\"name\":\"x\"}}"));
        assertEquals(
                "column \"id\" of the \"before\" row is declared NOT NULL but is missing or null",
                error("{\"op\":\"d\",\"before\":{\"id\":null}}"));
        assertEquals(
                "column \"name\" (STRING) of the \"before\" row: expected a JSON string, found 42",
                error("{\"op\":\"u\",\"before\":{\"id\":1,\"name\":42},\"after\":{\"id\":1}}"));
        // The first failing column in schema order, whatever the JSON order.
        assertEquals(
                "column \"id\" (INT) of the \"after\" row: expected a JSON integer, found {\"a\":[1]}",
                error("{\"op\":\"c\",\"after\":{\"score\":true,\"id\":{\"a\":[1]}}}"));
        // A duplicate column: either value could be meant (see aKeyReadTwiceIsRefused).
        assertTrue(
                error("{\"op\":\"c\",\"after\":{\"id\":\"x\",\"id\":2}}")
                        .startsWith("malformed JSON: duplicate column \"id\" in a row image"));
        // Long values are shortened in messages.
        String longString = "\"" + "x".repeat(100) + "\"";
        String e = error("{\"op\":\"c\",\"after\":{\"id\":" + longString + "}}");
        assertTrue(e.endsWith("found \"" + "x".repeat(63) + "…"), e);
    }

    @Test
    void wholeWorkloadShapedEnvelope() {
        // A Postgres envelope with a large source block, wrapped (its row struct lists the
        // columns: an unlisted one could only be null).
        String json =
                "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"struct\",\"fields\":["
                        + "{\"type\":\"int32\",\"field\":\"id\"},{\"type\":\"string\",\"field\":\"name\"},"
                        + "{\"type\":\"double\",\"field\":\"score\"}],"
                        + "\"optional\":true,\"field\":\"before\"}],\"optional\":false,\"name\":\"e\"},"
                        + "\"payload\":{\"before\":{\"id\":1,\"name\":\"a\",\"score\":2.0},"
                        + "\"after\":{\"id\":1,\"name\":\"b\",\"score\":2.5},"
                        + "\"source\":{\"version\":\"2.7.3.Final\",\"connector\":\"postgresql\","
                        + "\"name\":\"demo\",\"ts_ms\":1706696130000,\"snapshot\":\"false\",\"db\":\"d\","
                        + "\"sequence\":\"[null,\\\"123\\\"]\",\"schema\":\"public\",\"table\":\"users\","
                        + "\"txId\":1,\"lsn\":2,\"xmin\":null},\"op\":\"u\",\"ts_ms\":1706696130123,"
                        + "\"transaction\":null}}";
        assertEquals(List.of("-U[1, a, 2.00]", "+U[1, b, 2.50]"), strings(decode(json)));
    }

    // ------------------------------------------------------------------------------ formats

    private static final CdcSchema DOCS =
            CdcSchema.of(
                    Column.notNull("id", "INT"),
                    Column.notNull("body", "STRING"),
                    Column.nullable("blob", "BYTES"),
                    Column.nullable("n", "INT"));

    private static DebeziumJsonReader docs(DebeziumFormat f) {
        return new DebeziumJsonReader(
                new SideSpec("docs", DOCS, List.of("id"), List.of("id"), null, f), false);
    }

    private static final String PLACEHOLDER_B64 = "X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ==";

    @Test
    void placeholdersAreUnavailableNeverTheValue() {
        DebeziumJsonReader d = docs(DebeziumFormat.defaults());
        // Postgres at REPLICA IDENTITY DEFAULT: an update that leaves the TOASTed columns alone.
        List<Row> rows =
                decode(
                        d,
                        "{\"op\":\"c\",\"after\":{\"id\":7,"
                                + "\"body\":\"__debezium_unavailable_value\",\"blob\":\""
                                + PLACEHOLDER_B64
                                + "\",\"n\":1}}");
        assertEquals(List.of("+I[7, <unavailable>, <unavailable>, 1]"), strings(rows));
        assertTrue(Unavailable.is(rows.get(0).getField(1)));
        // REPLICA IDENTITY FULL: the same message's before carries the values.
        rows =
                decode(
                        d,
                        "{\"op\":\"u\",\"before\":{\"id\":7,\"body\":\"long\",\"blob\":\"AQI=\",\"n\":1},"
                                + "\"after\":{\"id\":7,\"body\":\"__debezium_unavailable_value\",\"blob\":\""
                                + PLACEHOLDER_B64
                                + "\",\"n\":2}}");
        assertEquals("long", rows.get(1).getField(1));
        assertArrayEquals(new byte[] {1, 2}, (byte[]) rows.get(1).getField(2));
        // A null in before does not stand in (Postgres TOASTs only values that are not null).
        rows =
                decode(
                        d,
                        "{\"op\":\"u\",\"before\":{\"id\":7,\"body\":\"x\",\"blob\":null},"
                                + "\"after\":{\"id\":7,\"body\":\"y\",\"blob\":\""
                                + PLACEHOLDER_B64
                                + "\"}}");
        // The update keeps its keys: it is the replacement of the stored row, which the join
        // fills the value from, its retraction left out.
        assertEquals(List.of("+U[7, y, <unavailable>, null]"), strings(rows));
        assertTrue(Unavailable.is(rows.get(0).getField(2)));
        // In hex mode a bytea carries the placeholder text; a custom placeholder replaces the
        // default.
        DebeziumJsonReader hex =
                docs(
                        DebeziumFormat.defaults()
                                .withBinaryHandling(DebeziumFormat.BinaryHandling.HEX)
                                .withUnavailablePlaceholder("??"));
        rows = decode(hex, "{\"op\":\"r\",\"after\":{\"id\":1,\"body\":\"??\",\"blob\":\"??\"}}");
        assertEquals(List.of("+I[1, <unavailable>, <unavailable>, null]"), strings(rows));
        assertArrayEquals(
                new byte[] {0x3f, 0x3f},
                (byte[])
                        decode(
                                        hex,
                                        "{\"op\":\"r\",\"after\":{\"id\":1,\"body\":\"x\",\"blob\":\"3f3F\"}}")
                                .get(0)
                                .getField(2),
                "the placeholder's bytes in hex are a value");
        // Any column read from a JSON string: a decimal in string mode, a timestamp string.
        CdcSchema other =
                CdcSchema.of(
                        Column.notNull("id", "INT"),
                        Column.nullable("price", "DECIMAL(10, 2)"),
                        Column.nullable("at", "TIMESTAMP(3)"));
        DebeziumJsonReader any =
                new DebeziumJsonReader(
                        new SideSpec(
                                "o",
                                other,
                                List.of("id"),
                                List.of("id"),
                                null,
                                DebeziumFormat.defaults()
                                        .withDecimalHandling(
                                                DebeziumFormat.DecimalHandling.STRING)),
                        false);
        assertEquals(
                List.of("+I[1, <unavailable>, <unavailable>]"),
                strings(
                        decode(
                                any,
                                "{\"op\":\"c\",\"after\":{\"id\":1,"
                                        + "\"price\":\"__debezium_unavailable_value\",\"at\":\"__debezium_unavailable_value\"}}")));
        rows =
                decode(
                        hex,
                        "{\"op\":\"r\",\"after\":{\"id\":1,\"body\":\"__debezium_unavailable_value\"}}");
        assertEquals(List.of("+I[1, __debezium_unavailable_value, null, null]"), strings(rows));
    }

    @Test
    void upsertModeTakesUpdatesWithoutBeforeAndDeletesByKey() {
        DebeziumJsonReader strict = docs(DebeziumFormat.defaults());
        String update =
                "{\"op\":\"u\",\"before\":null,\"after\":{\"id\":7,\"body\":\"b\",\"n\":2}}";
        String delete =
                "{\"op\":\"d\",\"before\":{\"id\":7,\"body\":null,\"blob\":null,\"n\":null}}";
        assertTrue(
                error(strict, update).startsWith("The \"before\" field of UPDATE message is null"));
        assertTrue(
                error(strict, delete)
                        .contains("\"body\" of the \"before\" row is declared NOT NULL"));
        DebeziumFormat upsert = DebeziumFormat.defaults().withUpsert(true);
        assertEquals(List.of("+U[7, b, null, 2]"), strings(decode(docs(upsert), update)));
        DebeziumJsonReader di =
                new DebeziumJsonReader(
                        new SideSpec("docs", DOCS, List.of("id"), List.of("id"), null, upsert),
                        true);
        assertEquals(List.of("+I[7, b, null, 2]"), strings(decode(di, update)));
        assertEquals(
                List.of("-D[7, <unavailable>, <unavailable>, <unavailable>]"),
                strings(decode(docs(upsert), delete)));
        // An update of the primary key sends the old key only.
        assertEquals(
                List.of("-U[7, <unavailable>, <unavailable>, <unavailable>]", "+U[8, b, null, 2]"),
                strings(
                        decode(
                                docs(upsert),
                                "{\"op\":\"u\",\"before\":{\"id\":7},"
                                        + "\"after\":{\"id\":8,\"body\":\"b\",\"n\":2}}")));
        // A whole before (REPLICA IDENTITY FULL) is still the row; a delete needs its key.
        assertEquals(
                List.of("-D[7, a, null, null]"),
                strings(
                        decode(
                                docs(upsert),
                                "{\"op\":\"d\",\"before\":{\"id\":7,\"body\":\"a\"}}")));
        assertTrue(
                error(docs(upsert), "{\"op\":\"d\",\"before\":null}")
                        .startsWith("The \"before\" field of DELETE"));
    }

    @Test
    void aWrappedMessagesSchemaDecidesTheEncoding() {
        CdcSchema schema =
                CdcSchema.of(
                        Column.notNull("id", "INT"),
                        Column.nullable("price", "DECIMAL(12, 2)"),
                        Column.nullable("ts", "TIMESTAMP(3)"),
                        Column.nullable("amount", "DECIMAL(12, 2)"),
                        Column.nullable("day", "DATE"));
        DebeziumJsonReader d =
                new DebeziumJsonReader(new SideSpec("t", schema, List.of("id"), null, null), false);
        String fields =
                "[{\"type\":\"int32\",\"field\":\"id\"},"
                        + "{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\","
                        + "\"parameters\":{\"scale\":\"3\",\"connect.decimal.precision\":\"12\"},\"field\":\"price\"},"
                        + "{\"type\":\"int64\",\"name\":\"io.debezium.time.MicroTimestamp\",\"field\":\"ts\"},"
                        + "{\"type\":\"struct\",\"name\":\"io.debezium.data.VariableScaleDecimal\",\"field\":\"amount\"},"
                        + "{\"type\":\"int32\",\"name\":\"io.debezium.time.Date\",\"field\":\"day\"}]";
        String schemaJson =
                "{\"type\":\"struct\",\"fields\":[{\"type\":\"struct\",\"fields\":"
                        + fields
                        + ",\"field\":\"before\"},{\"type\":\"struct\",\"fields\":"
                        + fields
                        + ",\"field\":\"after\"}]}";
        String payload =
                "{\"op\":\"c\",\"after\":{\"id\":1,\"price\":\"MDk=\",\"ts\":1706696130123456,"
                        + "\"amount\":{\"scale\":1,\"value\":\"MDk=\"},\"day\":19753}}";
        String expected = "[+I[1, 12.35, 2024-01-31T10:15:30.123, 1234.50, 2024-01-31]]";
        assertEquals(
                expected,
                strings(decode(d, "{\"schema\":" + schemaJson + ",\"payload\":" + payload + "}"))
                        .toString());
        assertEquals(
                expected,
                strings(decode(d, "{\"payload\":" + payload + ",\"schema\":" + schemaJson + "}"))
                        .toString());
        // The same payload unwrapped is read as the (default) format declares: a named error.
        String e = error(d, payload);
        assertTrue(
                e.startsWith(
                        "column \"price\" (DECIMAL(12, 2)) of the \"after\" row: expected a JSON number or decimal text"),
                e);
    }

    @Test
    void aWrappedMessagesSchemaNamesTimeZonesStringsAndBytes() {
        CdcSchema schema =
                CdcSchema.of(
                        Column.notNull("id", "INT"),
                        Column.nullable("t", "TIME(3)"),
                        Column.nullable("at", "TIMESTAMP_LTZ(3)"),
                        Column.nullable("price", "DECIMAL(10, 2)"),
                        Column.nullable("blob", "BYTES"),
                        Column.nullable("big", "DECIMAL(10, 2)"));
        DebeziumFormat hex =
                DebeziumFormat.defaults().withBinaryHandling(DebeziumFormat.BinaryHandling.HEX);
        DebeziumJsonReader d =
                new DebeziumJsonReader(
                        new SideSpec("t", schema, List.of("id"), null, null, hex), false);
        String fields =
                "[{\"type\":\"int32\",\"field\":\"id\"},"
                        + "{\"type\":\"int64\",\"name\":\"io.debezium.time.MicroTime\",\"field\":\"t\"},"
                        + "{\"type\":\"string\",\"name\":\"io.debezium.time.ZonedTimestamp\",\"field\":\"at\"},"
                        + "{\"type\":\"string\",\"field\":\"price\"},"
                        + "{\"type\":\"bytes\",\"field\":\"blob\"},"
                        + "{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"field\":\"big\"}]";
        String wrapper =
                "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"struct\",\"fields\":"
                        + fields
                        + ",\"field\":\"after\"}]},\"payload\":";
        String payload =
                "{\"op\":\"r\",\"after\":{\"id\":1,\"t\":37800123456,"
                        + "\"at\":\"2024-01-31T10:15:30.123456Z\",\"price\":\"1000\",\"blob\":\"AQI=\"}}";
        Row row = decode(d, wrapper + payload + "}").get(0);
        assertEquals(
                "+I[1, 10:30:00.123, 2024-01-31T10:15:30.123Z, 1000.00, [1, 2], null]",
                row.toString());
        // A logical type the declared type cannot hold is an error, not a reading in another unit.
        String date =
                "[{\"type\":\"int32\",\"field\":\"id\"},"
                        + "{\"type\":\"int64\",\"name\":\"io.debezium.time.MicroTimestamp\",\"field\":\"t\"}]";
        String w =
                "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"struct\",\"fields\":"
                        + date
                        + ",\"field\":\"after\"}]},\"payload\":{\"op\":\"r\",\"after\":{\"id\":1,\"t\":5}}}";
        assertEquals(
                "column \"t\" (TIME(3)) of the \"after\" row: found 5: the message's schema says"
                        + " io.debezium.time.MicroTimestamp, which is not an encoding of TIME(3)",
                error(d, w));
        // A Decimal without its scale parameter cannot be read: never a guessed scale.
        String e = error(d, wrapper + "{\"op\":\"r\",\"after\":{\"id\":1,\"big\":\"BNI=\"}}}");
        assertTrue(e.endsWith("has no \"scale\" parameter"), e);
    }

    private static List<String> upsert(DebeziumJsonReader d, String key, String value) {
        List<Row> out = new ArrayList<>();
        d.readUpsert(
                key == null ? null : key.getBytes(StandardCharsets.UTF_8),
                value == null ? null : value.getBytes(StandardCharsets.UTF_8),
                7,
                collector(out));
        return strings(out);
    }

    private static String upsertError(DebeziumJsonReader d, String key, String value) {
        return assertThrows(DebeziumDecodeException.class, () -> upsert(d, key, value)).reason();
    }

    @Test
    void upsertKafkaRecords() {
        DebeziumJsonReader d = docs(DebeziumFormat.defaults().withUpsert(true));
        assertEquals(
                List.of("+I[7, b, null, 2]"),
                upsert(d, "{\"id\":7}", "{\"id\":7,\"body\":\"b\",\"n\":2}"));
        assertEquals(
                List.of("-D[7, <unavailable>, <unavailable>, <unavailable>]"),
                upsert(d, "{\"id\":7}", null));
        assertEquals(
                List.of("-D[8, <unavailable>, <unavailable>, <unavailable>]"),
                upsert(d, "{\"id\":8}", " null "));
        assertEquals(
                "the \"before\" row holds only key columns (upsert mode: a delete by key) but its"
                        + " primary key column \"id\" is missing or null",
                upsertError(d, "{\"other\":1}", null));
        assertTrue(
                upsertError(d, null, null)
                        .startsWith("an upsert-kafka delete (a null value) needs"));
        assertTrue(upsertError(d, null, "[1]").startsWith("malformed JSON: invalid type: [1]"));
        assertEquals(
                "column \"body\" of the \"after\" row is declared NOT NULL but is missing or null",
                upsertError(d, null, "{\"id\":7}"));
        assertTrue(
                upsertError(docs(DebeziumFormat.defaults()), "{\"id\":7}", null)
                        .startsWith("upsert-kafka records need upsert mode"));
    }

    // ------------------------------------------------------------------- review of the decoder

    /**
     * An unchanged TOASTed {@code hstore} in Debezium's default {@code hstore.handling.mode=json}
     * is a map from the placeholder to itself, as JSON text ({@code UnchangedToastedPlaceholder};
     * Debezium's {@code PostgresDefaultValueConverterIT} asserts this very string): unavailable,
     * never the value.
     */
    @Test
    void aToastedHstoreIsUnavailableNeverAValue() {
        DebeziumJsonReader d = docs(DebeziumFormat.defaults());
        String toasted =
                "\"{\\\"__debezium_unavailable_value\\\":\\\"__debezium_unavailable_value\\\"}\"";
        assertEquals(
                List.of("-U[1, {\"k\":\"v\"}, null, null]", "+U[1, {\"k\":\"v\"}, null, null]"),
                strings(
                        decode(
                                d,
                                "{\"op\":\"u\",\"before\":{\"id\":1,\"body\":\"{\\\"k\\\":\\\"v\\\"}\"},"
                                        + "\"after\":{\"id\":1,\"body\":"
                                        + toasted
                                        + "}}")));
        assertEquals(
                List.of("+I[1, <unavailable>, null, null]"),
                strings(decode(d, "{\"op\":\"c\",\"after\":{\"id\":1,\"body\":" + toasted + "}}")));
        // A placeholder that JSON escapes: escaped in the map as Jackson writes it.
        DebeziumJsonReader custom =
                docs(DebeziumFormat.defaults().withUnavailablePlaceholder("<\"toast\">"));
        assertEquals(
                List.of("+I[1, <unavailable>, null, null]"),
                strings(
                        decode(
                                custom,
                                "{\"op\":\"c\",\"after\":{\"id\":1,"
                                        + "\"body\":\"{\\\"<\\\\\\\"toast\\\\\\\">\\\":\\\"<\\\\\\\"toast\\\\\\\">\\\"}\"}}")));
        // A map of anything else is a value; so is the map in a BYTES column (hex mode).
        assertEquals(
                List.of("+I[1, {\"__debezium_unavailable_value\":\"x\"}, null, null]"),
                strings(
                        decode(
                                d,
                                "{\"op\":\"c\",\"after\":{\"id\":1,"
                                        + "\"body\":\"{\\\"__debezium_unavailable_value\\\":\\\"x\\\"}\"}}")));
        DebeziumJsonReader hex =
                docs(
                        DebeziumFormat.defaults()
                                .withBinaryHandling(DebeziumFormat.BinaryHandling.HEX));
        assertTrue(
                error(
                                hex,
                                "{\"op\":\"c\",\"after\":{\"id\":1,\"body\":\"b\",\"blob\":"
                                        + toasted
                                        + "}}")
                        .startsWith(
                                "column \"blob\" (BYTES) of the \"after\" row: expected a hexadecimal"));
    }

    /** A MySQL-shaped schema-wrapped create: the row struct has {@code columns}. */
    private static String wrappedCreate(String columns, String after) {
        return "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"struct\",\"fields\":["
                + columns
                + "],\"optional\":true,\"name\":\"my.shop.t.Value\",\"field\":\"before\"},"
                + "{\"type\":\"struct\",\"fields\":["
                + columns
                + "],\"optional\":true,\"name\":\"my.shop.t.Value\",\"field\":\"after\"},"
                + "{\"type\":\"string\",\"optional\":false,\"field\":\"op\"}],"
                + "\"optional\":false,\"name\":\"my.shop.t.Envelope\",\"version\":2},"
                + "\"payload\":{\"before\":null,\"after\":"
                + after
                + ",\"source\":{\"connector\":\"mysql\"},\"op\":\"c\",\"ts_ms\":1706696130456}}";
    }

    private static final String ID_INT32 =
            "{\"type\":\"int32\",\"optional\":false,\"field\":\"id\"}";

    private static DebeziumJsonReader idAnd(String declared, DebeziumFormat f) {
        CdcSchema schema =
                CdcSchema.of(Column.notNull("id", "INT"), Column.nullable("c", declared));
        return new DebeziumJsonReader(
                new SideSpec("t", schema, List.of("id"), null, null, f), false);
    }

    /** A wrapped create of {@code id} and {@code c} (its Connect schema {@code node}). */
    private static String wrappedColumn(String node, String value) {
        return wrappedCreate(
                ID_INT32 + ",{" + node + ",\"optional\":true,\"field\":\"c\"}",
                "{\"id\":1,\"c\":" + value + "}");
    }

    /**
     * The Connect type must be a form of the declared one, whatever its name: a {@code Decimal}'s
     * or {@code Bits}' bytes are not text, a {@code string} is not a DOUBLE.
     */
    @Test
    void aConnectTypeTheDeclaredTypeCannotHoldIsRefused() {
        String decimal =
                "\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"parameters\":{\"scale\":\"2\"}";
        String bits =
                "\"type\":\"bytes\",\"name\":\"io.debezium.data.Bits\",\"parameters\":{\"length\":\"16\"}";
        String[][] refused = {
            {"STRING", decimal, "\"BNI=\"", "org.apache.kafka.connect.data.Decimal"},
            {"STRING", bits, "\"AQI=\"", "io.debezium.data.Bits"},
            {"STRING", "\"type\":\"int32\"", "7", "int32"},
            {"DOUBLE", "\"type\":\"string\"", "\"Infinity\"", "string"},
            {"BIGINT", "\"type\":\"string\"", "\"7\"", "string"},
            {"BOOLEAN", "\"type\":\"int16\"", "1", "int16"},
            {"BYTES", decimal, "\"BNI=\"", "org.apache.kafka.connect.data.Decimal"},
        };
        for (String[] c : refused) {
            String e = error(idAnd(c[0], DebeziumFormat.defaults()), wrappedColumn(c[1], c[2]));
            assertEquals(
                    "column \"c\" ("
                            + c[0]
                            + ") of the \"after\" row: found "
                            + c[2]
                            + ": the message's schema says "
                            + c[3]
                            + ", which is not an encoding of "
                            + c[0],
                    e);
        }
        String[][] read = {
            {
                "STRING",
                "\"type\":\"string\",\"name\":\"io.debezium.data.Json\"",
                "\"{}\"",
                "+I[1, {}]"
            },
            {
                "STRING",
                "\"type\":\"string\",\"name\":\"io.debezium.data.Uuid\"",
                "\"u\"",
                "+I[1, u]"
            },
            {"INT", "\"type\":\"int32\",\"name\":\"io.debezium.time.Year\"", "2024", "+I[1, 2024]"},
            {
                "BIGINT",
                "\"type\":\"int64\",\"name\":\"io.debezium.time.MicroDuration\"",
                "7",
                "+I[1, 7]"
            },
            {"DOUBLE", "\"type\":\"int64\"", "7", "+I[1, 7.0]"},
            {"DOUBLE", "\"type\":\"double\"", "\"NaN\"", "+I[1, NaN]"},
            {"BOOLEAN", "\"type\":\"boolean\"", "true", "+I[1, true]"},
        };
        for (String[] c : read) {
            assertEquals(
                    List.of(c[3]),
                    strings(
                            decode(
                                    idAnd(c[0], DebeziumFormat.defaults()),
                                    wrappedColumn(c[1], c[2]))),
                    c[0] + " from " + c[1]);
        }
    }

    /**
     * MySQL's {@code BIT(n > 1)} is Connect bytes named {@code io.debezium.data.Bits} in every
     * {@code binary.handling.mode}, which Debezium applies to binary columns only.
     */
    @Test
    void bitsAreBase64WhateverTheBinaryHandling() {
        String bits =
                "\"type\":\"bytes\",\"name\":\"io.debezium.data.Bits\",\"parameters\":{\"length\":\"24\"}";
        for (DebeziumFormat.BinaryHandling mode : DebeziumFormat.BinaryHandling.values()) {
            List<Row> rows =
                    decode(
                            idAnd("BYTES", DebeziumFormat.defaults().withBinaryHandling(mode)),
                            wrappedColumn(bits, "\"ABCD\""));
            assertArrayEquals(
                    new byte[] {0, 16, (byte) 0x83}, (byte[]) rows.get(0).getField(1), mode.name());
        }
    }

    /**
     * Kafka Connect's JsonConverter lists every payload field in the schema: a column it does not
     * list has no known encoding ({@code "1000"} is 1000.00 as text, 141100.04 as precise base64),
     * so it may only be null or absent. A schema of no row image says nothing of the columns.
     */
    @Test
    void aColumnTheConnectSchemaDoesNotListIsOnlyNullOrAbsent() {
        DebeziumJsonReader d = idAnd("DECIMAL(10, 2)", DebeziumFormat.defaults());
        assertEquals(
                "column \"c\" (DECIMAL(10, 2)) of the \"after\" row: expected null or nothing: the"
                        + " message's Connect schema does not list this column, so its encoding is"
                        + " unknown, found \"1000\"",
                error(d, wrappedCreate(ID_INT32, "{\"id\":1,\"c\":\"1000\"}")));
        for (String after : new String[] {"{\"id\":1,\"c\":null}", "{\"id\":1}"}) {
            assertEquals(
                    List.of("+I[1, null]"), strings(decode(d, wrappedCreate(ID_INT32, after))));
        }
        // The placeholder is still unavailable, not a value.
        assertEquals(
                List.of("+I[1, <unavailable>]"),
                strings(
                        decode(
                                d,
                                wrappedCreate(
                                        ID_INT32,
                                        "{\"id\":1,\"c\":\"__debezium_unavailable_value\"}"))));
        // No before/after field: the declared settings decide.
        String bare = "{\"op\":\"c\",\"after\":{\"id\":1,\"c\":\"1000\"}}";
        for (String schema :
                new String[] {
                    "{\"type\":\"struct\"}",
                    "{\"type\":\"struct\",\"fields\":[{\"type\":\"string\",\"field\":\"op\"}]}"
                }) {
            assertEquals(
                    List.of("+I[1, 1000.00]"),
                    strings(decode(d, "{\"schema\":" + schema + ",\"payload\":" + bare + "}")));
        }
    }

    /** Postgres' infinity in nanoseconds mode, into a TIMESTAMP_LTZ from a NanoTimestamp. */
    @Test
    void anInfiniteNanoTimestampIsOutOfRangeAsAnInstantToo() {
        DebeziumJsonReader d = idAnd("TIMESTAMP_LTZ(9)", DebeziumFormat.defaults());
        String nano = "\"type\":\"int64\",\"name\":\"io.debezium.time.NanoTimestamp\"";
        assertEquals(
                List.of("+I[1, 2024-01-31T10:15:30.123456789Z]"),
                strings(decode(d, wrappedColumn(nano, "1706696130123456789"))));
        for (long v : new long[] {Long.MAX_VALUE, Long.MIN_VALUE}) {
            assertEquals(
                    "column \"c\" (TIMESTAMP_LTZ(9)) of the \"after\" row: value "
                            + v
                            + " is out of range",
                    error(d, wrappedColumn(nano, Long.toString(v))));
        }
    }

    /**
     * An upsert value without its primary key has no identity; a value Kafka Connect wrapped as
     * {@code {"schema", "payload"}} (JsonConverter's default {@code schemas.enable=true}) read as a
     * flat row would be a row of nulls.
     */
    @Test
    void anUpsertValueWithoutItsPrimaryKeyIsRefused() {
        CdcSchema schema =
                CdcSchema.of(Column.nullable("id", "INT"), Column.nullable("name", "STRING"));
        DebeziumJsonReader d =
                new DebeziumJsonReader(
                        new SideSpec(
                                "t",
                                schema,
                                List.of("id"),
                                List.of("id"),
                                null,
                                DebeziumFormat.defaults().withUpsert(true)),
                        false);
        String wrapped =
                "{\"schema\":{\"type\":\"struct\",\"fields\":["
                        + ID_INT32
                        + "],\"name\":\"my.shop.t.Value\"},\"payload\":{\"id\":5,\"name\":\"x\"}}";
        for (String value :
                new String[] {wrapped, "{\"id\":null,\"name\":\"x\"}", "{\"name\":\"x\"}"}) {
            assertEquals(
                    "the value's primary key column \"id\" is missing or null (a value wrapped by"
                            + " Kafka Connect's JsonConverter needs schemas.enable=false; values"
                            + " written with value.fields-include=EXCEPT_KEY are not read)",
                    upsertError(d, "{\"id\":5}", value),
                    value);
        }
        assertEquals(List.of("+I[5, x]"), upsert(d, null, "{\"id\":5,\"name\":\"x\"}"));
        // A NOT NULL key column: the same words.
        assertTrue(
                upsertError(
                                docs(DebeziumFormat.defaults().withUpsert(true)),
                                null,
                                "{\"body\":\"b\"}")
                        .startsWith("the value's primary key column \"id\" is missing or null"));
    }
}
