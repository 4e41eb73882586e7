package dev.cdcjoin.flink.javajoin;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.DebeziumFormat;
import dev.cdcjoin.flink.DebeziumFormat.BinaryHandling;
import dev.cdcjoin.flink.DebeziumFormat.DecimalHandling;
import dev.cdcjoin.flink.DebeziumFormat.TimePrecision;
import dev.cdcjoin.flink.SideSpec;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.util.List;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;

/**
 * Every column type in every encoding a {@link DebeziumFormat} declares: the right value, or a
 * named error saying what the encoding expects; never another reading of the value (issue: "1000"
 * read as base64, micros read as millis, extra fractional digits kept).
 */
class ValueEncodingsTest {

    private static final DebeziumFormat FLINK = DebeziumFormat.defaults();

    private static DebeziumJsonReader reader(String type, DebeziumFormat f) {
        CdcSchema schema = CdcSchema.of(Column.notNull("id", "INT"), Column.nullable("c", type));
        return new DebeziumJsonReader(
                new SideSpec("t", schema, List.of("id"), null, null, f), false);
    }

    private static Object value(String type, DebeziumFormat f, String json) {
        List<Row> rows = reader(type, f).readToList(message(json), 3);
        return rows.get(0).getField(1);
    }

    private static byte[] message(String json) {
        return ("{\"op\":\"c\",\"after\":{\"id\":1,\"c\":" + json + "}}")
                .getBytes(StandardCharsets.UTF_8);
    }

    private static String error(String type, DebeziumFormat f, String json) {
        return assertThrows(
                        DebeziumDecodeException.class,
                        () -> reader(type, f).readToList(message(json), 3))
                .reason();
    }

    private static void mistyped(String type, DebeziumFormat f, String json, String expected) {
        String e = error(type, f, json);
        assertTrue(e.startsWith("column \"c\" (" + type + ") of the \"after\" row: expected "), e);
        assertTrue(e.contains(expected), e);
    }

    private static void outOfRange(String type, DebeziumFormat f, String json) {
        String e = error(type, f, json);
        assertTrue(e.endsWith(" is out of range"), type + " " + json + ": " + e);
    }

    @Test
    void booleansAndIntegers() {
        assertEquals(true, value("BOOLEAN", FLINK, "true"));
        mistyped("BOOLEAN", FLINK, "1", "true or false");
        assertEquals((byte) -128, value("TINYINT", FLINK, "-128"));
        outOfRange("TINYINT", FLINK, "128");
        assertEquals((short) 32767, value("SMALLINT", FLINK, "32767"));
        outOfRange("SMALLINT", FLINK, "-32769");
        assertEquals(Integer.MIN_VALUE, value("INT", FLINK, "-2147483648"));
        outOfRange("INT", FLINK, "2147483648");
        mistyped("INT", FLINK, "1.5", "a JSON integer");
        mistyped("SMALLINT", FLINK, "\"1\"", "a JSON integer");
        assertEquals(-9007199254740993L, value("BIGINT", FLINK, "-9007199254740993"));
        outOfRange("BIGINT", FLINK, "18446744073709551616");
        assertNull(value("INT", FLINK, "null"));
        assertEquals(
                "column \"c\" (INT) of the \"after\" row: value 2147483648 is out of range",
                error("INT", FLINK, "2147483648"));
    }

    @Test
    void floats() {
        assertEquals(0.0025, value("DOUBLE", FLINK, "2.5e-3"));
        assertEquals(0.1f, value("FLOAT", FLINK, "0.1"));
        assertTrue(Double.isNaN((Double) value("DOUBLE", FLINK, "\"NaN\"")));
        assertEquals(Float.NEGATIVE_INFINITY, value("FLOAT", FLINK, "\"-Infinity\""));
        outOfRange("FLOAT", FLINK, "1e40");
        outOfRange("DOUBLE", FLINK, "1e400");
        mistyped("DOUBLE", FLINK, "\"1.5\"", "a JSON number");
    }

    @Test
    void decimalsAsFlinkReadsThem() {
        String t = "DECIMAL(10, 2)";
        assertEquals(new BigDecimal("12.35"), value(t, FLINK, "12.345"));
        assertEquals(new BigDecimal("-12.35"), value(t, FLINK, "-12.345"));
        assertEquals(new BigDecimal("120.00"), value(t, FLINK, "\"1.2e2\""));
        // The misread: "1000" is a thousand, never base64.
        assertEquals(new BigDecimal("1000.00"), value(t, FLINK, "\"1000\""));
        mistyped(t, FLINK, "\"BNI=\"", "a JSON number or decimal text");
        mistyped(t, FLINK, "{\"scale\":3,\"value\":\"MDk=\"}", "a JSON number or decimal text");
        outOfRange(t, FLINK, "123456789.01");
        outOfRange(t, FLINK, "99999999.995");
        assertEquals(new BigDecimal("0.00"), value(t, FLINK, "1e-400"));
        for (String bad : new String[] {"\"12,5\"", "true", "\"\"", "[1]", "\"1e\"", "\"--1\""}) {
            mistyped(t, FLINK, bad, "decimal text");
        }
    }

    @Test
    void decimalsInEachDecimalHandlingMode() {
        String t = "DECIMAL(10, 2)";
        DebeziumFormat precise = FLINK.withDecimalHandling(DecimalHandling.PRECISE);
        assertEquals(new BigDecimal("12.34"), value(t, precise, "\"BNI=\"")); // 1234 = 0x04d2
        assertEquals(new BigDecimal("-12.34"), value(t, precise, "\"+y4=\""));
        assertEquals(new BigDecimal("10.00"), value(t, precise, "\"A+g=\"")); // 1000 at scale 2
        assertEquals(
                new BigDecimal("12.35"), value(t, precise, "{\"scale\":3,\"value\":\"MDk=\"}"));
        outOfRange("DECIMAL(3, 0)", precise, "{\"scale\":0,\"value\":\"A+g=\"}");
        mistyped(t, precise, "12.34", "decimal.handling.mode=precise");
        mistyped(t, precise, "\"!!\"", "base64 of the unscaled value at scale 2");
        mistyped(t, precise, "{\"scale\":1}", "decimal.handling.mode=precise");

        DebeziumFormat string = FLINK.withDecimalHandling(DecimalHandling.STRING);
        assertEquals(new BigDecimal("1000.00"), value(t, string, "\"1000\""));
        assertEquals(new BigDecimal("-5.00"), value(t, string, "\"-5\""));
        assertEquals(
                "column \"c\" (DECIMAL(10, 2)) of the \"after\" row: expected decimal text in a JSON"
                        + " string (decimal.handling.mode=string), found 12.5",
                error(t, string, "12.5"));

        DebeziumFormat dbl = FLINK.withDecimalHandling(DecimalHandling.DOUBLE);
        assertEquals(new BigDecimal("12.35"), value(t, dbl, "12.345"));
        mistyped(t, dbl, "\"12.5\"", "a JSON number (decimal.handling.mode=double)");
    }

    @Test
    void bytesInEachBinaryHandlingMode() {
        assertArrayEquals(
                new byte[] {1, 2, (byte) 255}, (byte[]) value("BYTES", FLINK, "\"AQL/\""));
        assertArrayEquals(new byte[0], (byte[]) value("BYTES", FLINK, "\"\""));
        mistyped("BYTES", FLINK, "\"!!\"", "a base64 string (binary.handling.mode=bytes)");
        DebeziumFormat base64 = FLINK.withBinaryHandling(BinaryHandling.BASE64);
        assertArrayEquals(new byte[] {1, 2}, (byte[]) value("BYTES", base64, "\"AQI=\""));
        DebeziumFormat hex = FLINK.withBinaryHandling(BinaryHandling.HEX);
        assertArrayEquals(
                new byte[] {1, 2, (byte) 255}, (byte[]) value("BYTES", hex, "\"0102fF\""));
        mistyped("BYTES", hex, "\"AQL/\"", "a hexadecimal string (binary.handling.mode=hex)");
        mistyped("BYTES", hex, "\"012\"", "hexadecimal");
        assertEquals("héllo", value("STRING", FLINK, "\"héllo\""));
        mistyped("STRING", FLINK, "42", "a JSON string");
    }

    @Test
    void temporalStringsAsFlinkReadsThem() {
        assertEquals(LocalDate.of(2024, 2, 29), value("DATE", FLINK, "\"2024-02-29\""));
        for (String bad :
                new String[] {"\"2023-02-29\"", "\"2024-1-31\"", "19753", "\"2024-01-31Z\""}) {
            mistyped("DATE", FLINK, bad, "\"yyyy-MM-dd\" string");
        }
        assertEquals(
                LocalTime.of(10, 15, 30, 123_000_000),
                value("TIME(3)", FLINK, "\"10:15:30.123456\""));
        assertEquals(LocalTime.of(10, 15, 30), value("TIME", FLINK, "\"10:15:30.9\""));
        mistyped("TIME(3)", FLINK, "37800000", "\"HH:mm:ss[.fraction]\" string");
        LocalDateTime micros = LocalDateTime.of(2024, 1, 31, 10, 15, 30, 123_456_000);
        assertEquals(micros, value("TIMESTAMP(6)", FLINK, "\"2024-01-31 10:15:30.123456\""));
        assertEquals(micros, value("TIMESTAMP(6)", FLINK, "\"2024-01-31T10:15:30.123456789\""));
        // The misread: a TIMESTAMP(3) keeps 3 digits, as Flink does.
        assertEquals(
                LocalDateTime.of(2024, 1, 31, 10, 15, 30, 123_000_000),
                value("TIMESTAMP(3)", FLINK, "\"2024-01-31 10:15:30.123999\""));
        mistyped("TIMESTAMP(3)", FLINK, "1706696130123", "(as Flink's debezium-json reads it)");
        mistyped("TIMESTAMP(3)", FLINK, "\"2024-01-31T25:00\"", "string");
        mistyped("TIMESTAMP(3)", FLINK, "\"2024-01-31T10:15:30Z\"", "string");
        outOfRange("TIMESTAMP(9)", FLINK, "\"9999-01-01T00:00:00\"");
        assertEquals(
                Instant.parse("2024-01-31T09:15:30.123Z"),
                value("TIMESTAMP_LTZ(3)", FLINK, "\"2024-01-31 10:15:30.123456+01:00\""));
        assertEquals(
                Instant.parse("2024-01-31T10:15:30Z"),
                value("TIMESTAMP_LTZ(0)", FLINK, "\"2024-01-31T10:15:30.9Z\""));
        mistyped("TIMESTAMP_LTZ(3)", FLINK, "\"2024-01-31 10:15:30\"", "ending in Z or an offset");
    }

    @Test
    void adaptiveIntegersNeedTheSourcePrecision() {
        DebeziumFormat adaptive = FLINK.withTimePrecision(TimePrecision.ADAPTIVE);
        assertEquals(LocalDate.of(2024, 1, 31), value("DATE", adaptive, "19753"));
        assertEquals(LocalDate.of(1969, 12, 31), value("DATE", adaptive, "-1"));
        outOfRange("DATE", adaptive, "99999999999");
        mistyped(
                "DATE",
                adaptive,
                "\"2024-01-31\"",
                "an integer of epoch days (time.precision.mode=adaptive)");
        // The misread: a Postgres timestamp(6) (MicroTimestamp) declared TIMESTAMP(3).
        String e = error("TIMESTAMP(3)", adaptive, "1706696130123456");
        assertTrue(
                e.startsWith(
                        "column \"c\" (TIMESTAMP(3)) of the \"after\" row: found"
                                + " 1706696130123456, an epoch integer whose unit"),
                e);
        assertTrue(e.endsWith("declare it with DebeziumFormat.withSourcePrecision(\"c\", p)"), e);
        DebeziumFormat micros = adaptive.withSourcePrecision("c", 6);
        assertEquals(
                LocalDateTime.of(2024, 1, 31, 10, 15, 30, 123_000_000),
                value("TIMESTAMP(3)", micros, "1706696130123456"));
        assertEquals(
                LocalDateTime.of(1969, 12, 31, 23, 59, 59, 999_000_000),
                value("TIMESTAMP(3)", micros, "-1"));
        assertEquals(
                LocalDateTime.of(2024, 1, 31, 10, 15, 30, 123_000_000),
                value("TIMESTAMP(3)", adaptive.withSourcePrecision("c", 3), "1706696130123"));
        assertEquals(
                LocalDateTime.of(2262, 4, 11, 23, 47, 16, 854_775_806),
                value("TIMESTAMP(9)", adaptive.withSourcePrecision("c", 9), "9223372036854775806"));
        // Postgres' infinity in nanoseconds mode.
        outOfRange("TIMESTAMP(9)", adaptive.withSourcePrecision("c", 9), "9223372036854775807");
        outOfRange("TIMESTAMP(3)", adaptive.withSourcePrecision("c", 3), "9223372036854775807");
        mistyped("TIMESTAMP(3)", micros, "\"2024-01-31 10:15:30\"", "microseconds since the epoch");
        // TIME: micros of the day for a Postgres time(6); TIME keeps milliseconds.
        assertEquals(LocalTime.of(10, 30, 0, 123_000_000), value("TIME(6)", micros, "37800123456"));
        outOfRange("TIME(3)", micros, "86400000000");
        assertTrue(error("TIME(3)", adaptive, "37800123").contains("withSourcePrecision"));
        DebeziumFormat timeMicros =
                FLINK.withTimePrecision(TimePrecision.ADAPTIVE_TIME_MICROSECONDS);
        assertEquals(
                LocalTime.of(10, 30, 0, 123_000_000), value("TIME(3)", timeMicros, "37800123456"));
        // ZonedTimestamp in every mode.
        assertEquals(
                Instant.parse("2024-01-31T10:15:30.123456Z"),
                value("TIMESTAMP_LTZ(6)", adaptive, "\"2024-01-31T10:15:30.123456Z\""));
    }

    /**
     * Flink's DATE and TIMESTAMP hold the years 0000 to 9999; Debezium sends Postgres' {@code
     * infinity}/{@code -infinity} as integers beyond them (pgjdbc's {@code DATE_POSITIVE_INFINITY}
     * and {@code DATE_NEGATIVE_INFINITY}, in micros or millis) or, in nanoseconds mode, as {@code
     * Long.MAX_VALUE} and {@code Long.MIN_VALUE}: out of range, never a date-time (as natively).
     */
    @Test
    void integersBeyondTheYears0000To9999AndTheInfinitiesAreOutOfRange() {
        DebeziumFormat adaptive = FLINK.withTimePrecision(TimePrecision.ADAPTIVE);
        long firstDay = LocalDate.of(0, 1, 1).toEpochDay();
        long lastDay = LocalDate.of(9999, 12, 31).toEpochDay();
        assertEquals(-719_528L, firstDay);
        assertEquals(LocalDate.of(0, 1, 1), value("DATE", adaptive, Long.toString(firstDay)));
        assertEquals(LocalDate.of(9999, 12, 31), value("DATE", adaptive, Long.toString(lastDay)));
        for (long days :
                new long[] {firstDay - 1, lastDay + 1, Integer.MIN_VALUE, Integer.MAX_VALUE}) {
            outOfRange("DATE", adaptive, Long.toString(days));
        }
        DebeziumFormat millis = adaptive.withSourcePrecision("c", 3);
        long first = firstDay * 86_400L * 1000;
        long end = (lastDay + 1) * 86_400L * 1000;
        assertEquals(
                LocalDateTime.of(0, 1, 1, 0, 0),
                value("TIMESTAMP(3)", millis, Long.toString(first)));
        assertEquals(
                LocalDateTime.of(9999, 12, 31, 23, 59, 59, 999_000_000),
                value("TIMESTAMP(3)", millis, Long.toString(end - 1)));
        outOfRange("TIMESTAMP(3)", millis, Long.toString(first - 1));
        outOfRange("TIMESTAMP(3)", millis, Long.toString(end));
        String infinity = "9223372036825200000";
        String minusInfinity = "-9223372036832400000";
        for (String type : new String[] {"TIMESTAMP(6)", "TIMESTAMP(9)", "TIMESTAMP(3)"}) {
            DebeziumFormat micros = adaptive.withSourcePrecision("c", 6);
            outOfRange(type, micros, infinity);
            outOfRange(type, micros, minusInfinity);
            outOfRange(type, millis, "9223372036825200");
        }
        DebeziumFormat nanos = adaptive.withSourcePrecision("c", 9);
        for (int p = 0; p <= 9; p++) {
            for (String type : new String[] {"TIMESTAMP(" + p + ")", "TIME(" + p + ")"}) {
                outOfRange(type, nanos, Long.toString(Long.MAX_VALUE));
                outOfRange(type, nanos, Long.toString(Long.MIN_VALUE));
            }
        }
        // Flooring to the declared precision below Long.MIN_VALUE is out of range, never a wrap;
        // just above, the value (in 1677, within the years) is kept.
        for (String type : new String[] {"TIMESTAMP(7)", "TIMESTAMP(8)"}) {
            outOfRange(type, nanos, "-9223372036854775807");
            assertEquals(
                    LocalDateTime.of(1677, 9, 21, 0, 12, 43, 145_224_300),
                    value(type, nanos, "-9223372036854775700"));
        }
        String e = error("TIMESTAMP(6)", adaptive.withSourcePrecision("c", 6), infinity);
        assertEquals(
                "column \"c\" (TIMESTAMP(6)) of the \"after\" row: value "
                        + infinity
                        + " is out of range",
                e);
    }

    /**
     * Under isostring a DATE, TIME or TIMESTAMP text is at UTC ({@code Z} or {@code +00:00}), as
     * Debezium's IsoDate/IsoTime/IsoTimestamp format it: another offset is a zoned value (Oracle's
     * {@code TIMESTAMP WITH TIME ZONE}, SQL Server's {@code datetimeoffset}), whose local part and
     * instant differ, read only into TIMESTAMP_LTZ.
     */
    @Test
    void isostringTextsOfTypesWithoutAZoneAreAtUtc() {
        DebeziumFormat iso = FLINK.withTimePrecision(TimePrecision.ISOSTRING);
        assertEquals(
                LocalDateTime.of(2024, 1, 31, 10, 15, 30),
                value("TIMESTAMP(6)", iso, "\"2024-01-31T10:15:30+00:00\""));
        assertEquals(LocalTime.of(10, 15, 30), value("TIME(3)", iso, "\"10:15:30-00:00\""));
        assertEquals(LocalDate.of(2024, 1, 31), value("DATE", iso, "\"2024-01-31+00:00\""));
        for (String type : new String[] {"TIMESTAMP(6)", "TIME(3)", "DATE"}) {
            for (String text :
                    new String[] {
                        "\"2018-03-27T01:34:56.007891-11:00\"",
                        "\"01:34:56.007891+01:00\"",
                        "\"2018-03-27+01:00\""
                    }) {
                mistyped(type, iso, text, "at UTC (Z or +00:00) (time.precision.mode=isostring)");
            }
        }
        assertEquals(
                Instant.parse("2018-03-27T12:34:56.007891Z"),
                value("TIMESTAMP_LTZ(6)", iso, "\"2018-03-27T01:34:56.007891-11:00\""));
    }

    @Test
    void connectAndIsostringModes() {
        DebeziumFormat connect = FLINK.withTimePrecision(TimePrecision.CONNECT);
        assertEquals(LocalDate.of(2024, 1, 31), value("DATE", connect, "19753"));
        assertEquals(LocalTime.of(10, 30, 0, 123_000_000), value("TIME(3)", connect, "37800123"));
        assertEquals(
                LocalDateTime.of(2024, 1, 31, 10, 15, 30, 123_000_000),
                value("TIMESTAMP(6)", connect, "1706696130123"));
        DebeziumFormat iso = FLINK.withTimePrecision(TimePrecision.ISOSTRING);
        assertEquals(LocalDate.of(2024, 1, 31), value("DATE", iso, "\"2024-01-31Z\""));
        assertEquals(LocalTime.of(10, 30), value("TIME", iso, "\"10:30:00Z\""));
        assertEquals(
                LocalDateTime.of(2024, 1, 31, 10, 15, 30, 120_000_000),
                value("TIMESTAMP(2)", iso, "\"2024-01-31T10:15:30.129Z\""));
        mistyped("TIMESTAMP(3)", iso, "1706696130123", "(time.precision.mode=isostring)");
    }
}
