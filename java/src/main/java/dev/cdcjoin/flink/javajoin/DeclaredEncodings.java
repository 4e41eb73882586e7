package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.DebeziumFormat;
import dev.cdcjoin.flink.DebeziumFormat.BinaryHandling;
import dev.cdcjoin.flink.DebeziumFormat.TimePrecision;
import dev.cdcjoin.flink.codec.Column;
import dev.cdcjoin.flink.codec.ColumnType;
import dev.cdcjoin.flink.javajoin.ColumnReader.Encoding;
import java.util.Locale;

/**
 * The encoding of each column's values as its side's {@link DebeziumFormat} declares it: the
 * connector's {@code decimal.handling.mode}, {@code time.precision.mode} and {@code
 * binary.handling.mode}, and the source columns' precisions. It decides how a plain message's
 * values are read; a schema-wrapped message's fields name their own encoding ({@link
 * ConnectSchema}), which falls back to this one where the schema names none. Kept apart from {@link
 * ColumnReader}, which reads a value once its encoding is known.
 *
 * <p>Values, by declared type and format (a wrapped message's Connect schema names the encoding of
 * its fields: {@code org.apache.kafka.connect.data.Decimal} with its {@code scale}, {@code
 * io.debezium.data.VariableScaleDecimal}, {@code io.debezium.time.*}, Connect's {@code Date}/{@code
 * Time}/{@code Timestamp}):
 *
 * <table>
 *   <caption>encodings</caption>
 *   <tr><th>type</th><th>Java</th><th>JSON</th></tr>
 *   <tr><td>BOOLEAN</td><td>Boolean</td><td>true/false</td></tr>
 *   <tr><td>TINYINT, SMALLINT, INT, BIGINT</td><td>Byte, Short, Integer, Long</td><td>an
 *       integer in range</td></tr>
 *   <tr><td>FLOAT, DOUBLE</td><td>Float, Double</td><td>a number, {@code "NaN"},
 *       {@code "Infinity"}, {@code "-Infinity"}</td></tr>
 *   <tr><td>DECIMAL(p, s)</td><td>BigDecimal at scale s ({@code HALF_UP})</td><td>FLINK: a
 *       number or decimal text; precise: base64 of the unscaled value at scale s, or {@code
 *       {"scale", "value"}}; string: decimal text; double: a number</td></tr>
 *   <tr><td>STRING</td><td>String</td><td>a string</td></tr>
 *   <tr><td>BYTES</td><td>byte[]</td><td>bytes/base64: base64; hex: hexadecimal</td></tr>
 *   <tr><td>DATE</td><td>LocalDate</td><td>FLINK: {@code yyyy-MM-dd}; isostring: {@code
 *       yyyy-MM-ddZ}; otherwise epoch days</td></tr>
 *   <tr><td>TIME(p)</td><td>LocalTime, cut to milliseconds</td><td>FLINK: {@code
 *       HH:mm:ss[.f]}; isostring: {@code HH:mm:ss[.f]Z}; adaptive: an integer in the source precision's unit; adaptive_time_
 *       microseconds: micros; connect: millis</td></tr>
 *   <tr><td>TIMESTAMP(p)</td><td>LocalDateTime, cut to p</td><td>FLINK: {@code yyyy-MM-dd
 *       HH:mm:ss[.f]} or with {@code T}; isostring: {@code yyyy-MM-ddTHH:mm:ss[.f]Z}; adaptive modes: epoch integer in the
 *       source precision's unit (millis up to 3, micros up to 6, nanos); connect: millis</td></tr>
 *   <tr><td>TIMESTAMP_LTZ(p)</td><td>Instant, cut to p</td><td>a timestamp string ending in
 *       {@code Z} or an offset (Debezium's ZonedTimestamp)</td></tr>
 * </table>
 *
 * <p>Under isostring a DATE, TIME or TIMESTAMP text ends in an offset at UTC ({@code Z} or {@code
 * +00:00}): Debezium formats them at UTC, and another offset is a zoned value (read only into
 * TIMESTAMP_LTZ). An integer DATE or TIMESTAMP beyond the years 0000 to 9999, and {@code
 * Long.MIN_VALUE} or {@code Long.MAX_VALUE} in any unit (Postgres' {@code infinity} and {@code
 * -infinity}), is out of range ({@link Values}).
 *
 * <p>An adaptive-mode integer whose column has no declared source precision ({@link
 * DebeziumFormat#withSourcePrecision}) is a bad record: its unit cannot be known. A JSON string
 * equal to the format's unavailable-value placeholder (for BYTES read as base64, to its base64; for
 * STRING, to the JSON map {@code {"<p>":"<p>"}} of an unchanged TOASTed hstore) is {@link
 * Unavailable}, in any column (see {@link ColumnReader#read} and {@link ChangeRules}).
 */
final class DeclaredEncodings {

    private DeclaredEncodings() {}

    /** The reader of a column as the side's format declares it. */
    static ColumnReader reader(Column c, DebeziumFormat f) {
        ColumnType.Kind kind = c.type().kind();
        switch (kind) {
            case BOOLEAN:
                return ColumnReader.of(c, f, Encoding.BOOLEAN, "true or false");
            case TINYINT:
            case SMALLINT:
            case INT:
            case BIGINT:
                return ColumnReader.of(c, f, Encoding.INTEGER, "a JSON integer");
            case FLOAT:
            case DOUBLE:
                return ColumnReader.of(
                        c,
                        f,
                        Encoding.FLOATING,
                        "a JSON number or \"NaN\", \"Infinity\", \"-Infinity\"");
            case STRING:
                return ColumnReader.of(c, f, Encoding.TEXT, "a JSON string");
            case DECIMAL:
                return decimal(c, f);
            case BYTES:
                return f.binaryHandling() == BinaryHandling.HEX
                        ? ColumnReader.of(
                                c,
                                f,
                                Encoding.HEX,
                                "a hexadecimal string (binary.handling.mode=hex)")
                        : ColumnReader.of(
                                c,
                                f,
                                Encoding.BASE64,
                                "a base64 string (binary.handling.mode="
                                        + lower(f.binaryHandling())
                                        + ")");
            default:
                return temporal(c, f);
        }
    }

    private static ColumnReader decimal(Column c, DebeziumFormat f) {
        String scale = "scale " + c.type().scale();
        switch (f.decimalHandling()) {
            case PRECISE:
                return ColumnReader.of(
                        c,
                        f,
                        Encoding.DECIMAL_PRECISE,
                        "base64 of the unscaled value at "
                                + scale
                                + " or {\"scale\": .., \"value\": base64}"
                                + " (decimal.handling.mode=precise)");
            case STRING:
                return ColumnReader.of(
                        c,
                        f,
                        Encoding.DECIMAL_TEXT,
                        "decimal text in a JSON string (decimal.handling.mode=string)");
            case DOUBLE:
                return ColumnReader.of(
                        c,
                        f,
                        Encoding.DECIMAL_NUMBER,
                        "a JSON number (decimal.handling.mode=double)");
            default:
                return ColumnReader.of(
                        c,
                        f,
                        Encoding.DECIMAL_NUMBER_OR_TEXT,
                        "a JSON number or decimal text in a JSON string (as Flink's debezium-json"
                                + " reads decimals)");
        }
    }

    private static ColumnReader temporal(Column c, DebeziumFormat f) {
        ColumnType.Kind kind = c.type().kind();
        TimePrecision mode = f.timePrecision();
        String setting =
                mode == TimePrecision.FLINK
                        ? " (as Flink's debezium-json reads it)"
                        : " (time.precision.mode=" + lower(mode) + ")";
        boolean text = mode == TimePrecision.FLINK || mode == TimePrecision.ISOSTRING;
        boolean iso = mode == TimePrecision.ISOSTRING;
        // Debezium's ISO texts of a DATE, TIME or TIMESTAMP are at UTC; another offset is a zoned
        // value, whose local part and instant differ.
        String zone = iso ? "Z\" string at UTC (Z or +00:00)" : "\" string";
        switch (kind) {
            case DATE:
                return text
                        ? ColumnReader.of(
                                c, f, Encoding.DATE_TEXT, "a \"yyyy-MM-dd" + zone + setting)
                        : ColumnReader.of(
                                c, f, Encoding.EPOCH_DAYS, "an integer of epoch days" + setting);
            case TIMESTAMP_LTZ:
                return ColumnReader.of(
                        c,
                        f,
                        Encoding.ZONED_TEXT,
                        "a \"yyyy-MM-dd[T| ]HH:mm:ss[.fraction]\" string ending in Z or an offset"
                                + setting);
            default:
                break;
        }
        boolean time = kind == ColumnType.Kind.TIME;
        if (text) {
            return time
                    ? ColumnReader.of(
                            c, f, Encoding.TIME_TEXT, "a \"HH:mm:ss[.fraction]" + zone + setting)
                    : ColumnReader.of(
                            c,
                            f,
                            Encoding.TIMESTAMP_TEXT,
                            "a \"yyyy-MM-dd"
                                    + (iso ? "T" : "[T| ]")
                                    + "HH:mm:ss[.fraction]"
                                    + zone
                                    + setting);
        }
        long perSecond;
        if (mode == TimePrecision.CONNECT) {
            perSecond = 1_000L;
        } else if (time && mode == TimePrecision.ADAPTIVE_TIME_MICROSECONDS) {
            perSecond = 1_000_000L;
        } else {
            Integer p = f.sourcePrecision().get(c.name());
            if (p == null) {
                return ColumnReader.of(c, f, Encoding.UNDECLARED_UNIT, "an integer" + setting);
            }
            perSecond = p <= 3 ? 1_000L : p <= 6 ? 1_000_000L : 1_000_000_000L;
            setting = " (time.precision.mode=" + lower(mode) + ", source precision " + p + ")";
        }
        return ColumnReader.epoch(c, f, time, perSecond, setting);
    }

    private static String lower(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }
}
