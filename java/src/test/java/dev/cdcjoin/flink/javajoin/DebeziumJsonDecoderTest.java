package dev.cdcjoin.flink.javajoin;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;

/** The Jackson decoder: op rules, wrappers, tombstones, every column type, every error. */
class DebeziumJsonDecoderTest {

    private static final CdcSchema USERS =
            CdcSchema.of(
                    Column.notNull("id", "INT"),
                    Column.nullable("name", "STRING"),
                    Column.nullable("score", "DECIMAL(10, 2)"));

    private static final DebeziumJsonDecoder DECODER = new DebeziumJsonDecoder("users", USERS);

    private static List<Row> decode(DebeziumJsonDecoder d, String json) {
        List<Row> out = new ArrayList<>();
        d.decode(json == null ? null : json.getBytes(StandardCharsets.UTF_8), 7, collector(out));
        // The String entry point agrees with the byte[] one.
        List<Row> viaString = new ArrayList<>();
        d.decode(json, 7, collector(viaString));
        assertEquals(out.toString(), viaString.toString());
        return out;
    }

    private static List<Row> decode(String json) {
        return decode(DECODER, json);
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
    private static String error(DebeziumJsonDecoder d, String json) {
        List<Row> out = new ArrayList<>();
        DebeziumDecodeException e =
                assertThrows(
                        DebeziumDecodeException.class,
                        () -> d.decode(json.getBytes(StandardCharsets.UTF_8), 7, collector(out)));
        assertTrue(out.isEmpty(), "nothing emitted on error");
        assertEquals(7, e.index());
        assertEquals(d.source(), e.source());
        assertEquals(d.source() + " record #7: " + e.reason(), e.getMessage());
        return e.reason();
    }

    private static String error(String json) {
        return error(DECODER, json);
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
                strings(decode("{\"before\":null,\"after\":{\"id\":1,\"name\":\"Ana\",\"score\":\"BOI=\"},\"op\":\"c\"}")));
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
                strings(decode("{\"before\":{\"id\":1,\"name\":\"Ana\"},\"after\":null,\"op\":\"d\"}")));
        DebeziumJsonDecoder di = new DebeziumJsonDecoder("users", USERS, true);
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
                strings(decode("{\"schema\":1,\"payload\":\"p\",\"op\":\"c\",\"after\":{\"id\":6}}")));
    }

    @Test
    void tombstonesDecodeToNothing() {
        assertTrue(decode((String) null).isEmpty());
        assertTrue(decode("").isEmpty());
        assertTrue(decode("  \n").isEmpty());
        assertTrue(decode(" null ").isEmpty());
        assertTrue(decode("{\"schema\":{},\"payload\":null}").isEmpty());
        assertEquals(0, DECODER.decode(new byte[0], 0, collector(new ArrayList<>())));
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

    // ------------------------------------------------------------------------------ types

    private static Object value(String type, String json) {
        DebeziumJsonDecoder d =
                new DebeziumJsonDecoder("t", CdcSchema.of(Column.nullable("c", type)));
        List<Row> rows = decode(d, "{\"op\":\"c\",\"after\":{\"c\":" + json + "}}");
        return rows.get(0).getField(0);
    }

    private static String valueError(String type, String json) {
        DebeziumJsonDecoder d =
                new DebeziumJsonDecoder("t", CdcSchema.of(Column.nullable("c", type)));
        return error(d, "{\"op\":\"c\",\"after\":{\"c\":" + json + "}}");
    }

    private static void mistyped(String type, String json) {
        String e = valueError(type, json);
        assertTrue(e.contains(": expected "), type + " " + json + ": " + e);
    }

    private static void outOfRange(String type, String json) {
        String e = valueError(type, json);
        assertTrue(e.endsWith(" is out of range"), type + " " + json + ": " + e);
    }

    @Test
    void booleansAndIntegers() {
        assertEquals(true, value("BOOLEAN", "true"));
        assertEquals(false, value("BOOLEAN", "false"));
        mistyped("BOOLEAN", "1");
        assertEquals(Integer.MIN_VALUE, value("INT", "-2147483648"));
        outOfRange("INT", "2147483648");
        mistyped("INT", "1.5");
        mistyped("INT", "\"1\"");
        assertEquals(-9007199254740993L, value("BIGINT", "-9007199254740993"));
        outOfRange("BIGINT", "18446744073709551616");
        assertNull(value("INT", "null"));
        assertEquals(
                "column \"c\" (INT) of the \"after\" row: expected a JSON integer, found \"1\"",
                valueError("INT", "\"1\""));
        assertEquals(
                "column \"c\" (INT) of the \"after\" row: value 2147483648 is out of range",
                valueError("INT", "2147483648"));
    }

    @Test
    void floats() {
        assertEquals(0.0025, value("DOUBLE", "2.5e-3"));
        assertEquals(0.1f, value("FLOAT", "0.1"));
        assertEquals(7.0, value("DOUBLE", "7"));
        assertTrue(Double.isNaN((Double) value("DOUBLE", "\"NaN\"")));
        assertEquals(Float.NEGATIVE_INFINITY, value("FLOAT", "\"-Infinity\""));
        assertEquals(Double.POSITIVE_INFINITY, value("DOUBLE", "\"Infinity\""));
        outOfRange("FLOAT", "1e40");
        outOfRange("DOUBLE", "1e400");
        mistyped("DOUBLE", "\"1.5\"");
        mistyped("FLOAT", "true");
    }

    @Test
    void decimalsInEveryDebeziumMode() {
        String t = "DECIMAL(10, 2)";
        // precise: base64 of the unscaled value (1234 = 0x04d2, -1234 = 0xfb2e)
        assertEquals(new BigDecimal("12.34"), value(t, "\"BNI=\""));
        assertEquals(new BigDecimal("-12.34"), value(t, "\"+y4=\""));
        assertEquals(new BigDecimal("12.34"), value(t, "\"BN\\u0049=\""));
        // double: a JSON number, rounded HALF_UP from its text
        assertEquals(new BigDecimal("12.34"), value(t, "12.34"));
        assertEquals(new BigDecimal("12.35"), value(t, "12.345"));
        assertEquals(new BigDecimal("-0.10"), value(t, "-0.1"));
        assertEquals(new BigDecimal("3.00"), value(t, "3"));
        assertEquals(new BigDecimal("-12.35"), value(t, "-12.345"));
        // string
        assertEquals(new BigDecimal("12.34"), value(t, "\"12.34\""));
        assertEquals(new BigDecimal("-5.00"), value(t, "\"-5\""));
        assertEquals(new BigDecimal("120.00"), value(t, "\"1.2e2\""));
        // VariableScaleDecimal: 12345 at scale 3 -> 12.35 (0x3039)
        assertEquals(new BigDecimal("12.35"), value(t, "{\"scale\":3,\"value\":\"MDk=\"}"));
        assertEquals(
                new BigDecimal("1234.50"), value(t, "{\"value\":\"MDk=\",\"scale\":1,\"extra\":0}"));
        // precision
        outOfRange(t, "123456789.01");
        outOfRange(t, "99999999.995"); // rounds up to 11 digits
        outOfRange("DECIMAL(3, 0)", "\"A+g=\""); // 1000
        outOfRange(t, "{\"scale\":0,\"value\":\"AQAAAAAAAAAAAAAAAAAAAAAA\"}");
        outOfRange(t, "1e400");
        assertEquals(new BigDecimal("0.00"), value(t, "1e-400"));
        // not decimals
        for (String bad :
                new String[] {
                    "\"12,5\"", "true", "\"\"", "{\"scale\":\"x\",\"value\":\"AQ==\"}", "{\"scale\":1}",
                    "[1]", "\"1e\"", "\"--1\""
                }) {
            mistyped(t, bad);
        }
        assertTrue(
                valueError(t, "{\"scale\":1}").endsWith("found {\"scale\":1}"),
                valueError(t, "{\"scale\":1}"));
        // An all-digit string whose length is a multiple of 4 reads as base64, as natively.
        assertEquals(new BigDecimal("-26672.12"), value(t, "\"1000\""));
        assertEquals(
                new BigDecimal("1234567890123456789012345678901234.5678"),
                value("DECIMAL(38, 4)", "\"1234567890123456789012345678901234.5678\""));
    }

    @Test
    void stringsAndBytes() {
        assertEquals("héllo", value("STRING", "\"héllo\""));
        assertEquals("a\"b\né", value("STRING", "\"a\\\"b\\n\\u00e9\""));
        assertEquals("", value("STRING", "\"\""));
        mistyped("STRING", "42");
        assertArrayEquals(new byte[] {1, 2, (byte) 255}, (byte[]) value("BYTES", "\"AQL/\""));
        assertArrayEquals(new byte[] {1, 2, (byte) 255}, (byte[]) value("BYTES", "\"AQL\\/\""));
        assertArrayEquals(new byte[0], (byte[]) value("BYTES", "\"\""));
        mistyped("BYTES", "\"!!\"");
        mistyped("BYTES", "[1]");
    }

    @Test
    void datesAndTimestamps() {
        assertEquals(LocalDate.of(2024, 1, 31), value("DATE", "19753"));
        assertEquals(LocalDate.of(2024, 1, 31), value("DATE", "\"2024-01-31\""));
        assertEquals(LocalDate.of(1969, 12, 31), value("DATE", "-1"));
        assertEquals(LocalDate.of(2024, 2, 29), value("DATE", "\"2024-02-29\""));
        outOfRange("DATE", "99999999999");
        for (String bad :
                new String[] {
                    "\"2023-02-29\"", "\"2024-13-01\"", "\"2024-01-00\"", "\"2024-1-31\"",
                    "\"2024-01-31T00:00\"", "1.5", "true", "\"31/01/2024\""
                }) {
            mistyped("DATE", bad);
        }
        LocalDateTime ms = LocalDateTime.of(2024, 1, 31, 10, 15, 30, 123_000_000);
        assertEquals(ms, value("TIMESTAMP(3)", "1706696130123"));
        assertEquals(
                LocalDateTime.of(2024, 1, 31, 10, 15, 30, 123_456_000),
                value("TIMESTAMP(6)", "1706696130123456"));
        assertEquals(
                LocalDateTime.of(2024, 1, 31, 10, 15, 30, 123_456_789),
                value("TIMESTAMP(9)", "1706696130123456789"));
        assertEquals(
                LocalDateTime.of(2024, 1, 31, 10, 15, 30, 123_456_000),
                value("TIMESTAMP(6)", "\"2024-01-31T10:15:30.123456\""));
        assertEquals(
                LocalDateTime.of(2024, 1, 31, 10, 15, 30, 123_456_000),
                value("TIMESTAMP(6)", "\"2024-01-31 10:15:30.123456789Z\""),
                "sub-microsecond digits dropped for p <= 6");
        assertEquals(
                LocalDateTime.of(2024, 1, 31, 10, 15), value("TIMESTAMP(3)", "\"2024-01-31T10:15\""));
        assertEquals(
                LocalDateTime.of(1969, 12, 31, 23, 59, 59, 999_000_000),
                value("TIMESTAMP(3)", "-1"));
        assertEquals(
                LocalDateTime.of(2262, 4, 11, 23, 47, 16, 854_775_807),
                value("TIMESTAMP(9)", "9223372036854775807"));
        outOfRange("TIMESTAMP(3)", "9223372036854775807");
        outOfRange("TIMESTAMP(9)", "\"9999-01-01T00:00:00\"");
        mistyped("TIMESTAMP(3)", "true");
        mistyped("TIMESTAMP(3)", "\"2024-01-31T25:00\"");
        mistyped("TIMESTAMP(3)", "\"2024-01-31T10:15:30.1234567890\"");
        // What the shared vector prints.
        assertEquals(
                "+I[2024-02-01T08:00]",
                decode(
                                new DebeziumJsonDecoder(
                                        "t", CdcSchema.of(Column.nullable("c", "TIMESTAMP(3)"))),
                                "{\"op\":\"c\",\"after\":{\"c\":1706774400000}}")
                        .get(0)
                        .toString());
    }

    // ------------------------------------------------------------------------------ errors

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
        // A duplicate column: the last value counts.
        assertEquals(
                List.of("+I[2, null, null]"),
                strings(decode("{\"op\":\"c\",\"after\":{\"id\":\"x\",\"id\":2}}")));
        // Long values are shortened in messages.
        String longString = "\"" + "x".repeat(100) + "\"";
        String e = error("{\"op\":\"c\",\"after\":{\"id\":" + longString + "}}");
        assertTrue(e.endsWith("found \"" + "x".repeat(63) + "…"), e);
    }

    @Test
    void wholeWorkloadShapedEnvelope() {
        // A Postgres envelope with a large source block, wrapped.
        String json =
                "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"struct\",\"fields\":[],"
                        + "\"optional\":true,\"field\":\"before\"}],\"optional\":false,\"name\":\"e\"},"
                        + "\"payload\":{\"before\":{\"id\":1,\"name\":\"a\",\"score\":\"AMg=\"},"
                        + "\"after\":{\"id\":1,\"name\":\"b\",\"score\":2.5},"
                        + "\"source\":{\"version\":\"2.7.3.Final\",\"connector\":\"postgresql\","
                        + "\"name\":\"demo\",\"ts_ms\":1706696130000,\"snapshot\":\"false\",\"db\":\"d\","
                        + "\"sequence\":\"[null,\\\"123\\\"]\",\"schema\":\"public\",\"table\":\"users\","
                        + "\"txId\":1,\"lsn\":2,\"xmin\":null},\"op\":\"u\",\"ts_ms\":1706696130123,"
                        + "\"transaction\":null}}";
        assertEquals(List.of("-U[1, a, 2.00]", "+U[1, b, 2.50]"), strings(decode(json)));
    }
}
