package dev.cdcjoin.flink.javajoin;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.cdcjoin.flink.codec.ColumnType;
import java.io.IOException;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Base64;
import java.util.regex.Pattern;

/**
 * The conversions from one JSON encoding to a column's Java value, each strict: a method returns
 * {@code null} when its input is not of its encoding (the caller words the expectation) and throws
 * {@link OutOfRange} when it is, but the value does not fit the column.
 *
 * <p>Values are cut as Flink cuts them, so that keys equal in Flink are equal here: DECIMAL rounded
 * {@code HALF_UP} to the declared scale; TIMESTAMP and TIMESTAMP_LTZ truncated (floor) to the
 * declared precision; TIME to milliseconds (Flink's runtime holds no finer TIME) or a coarser
 * precision. The ranges are those of the native row encoding (timestamps as 64-bit micros up to
 * precision 6, nanos above), so both engines reject the same values; an integer DATE or TIMESTAMP
 * must lie in the years 0000 to 9999 (Flink's range, and what a text's four-digit year gives), and
 * {@link Long#MIN_VALUE} and {@link Long#MAX_VALUE} are out of range in every unit: Debezium sends
 * Postgres' {@code infinity} and {@code -infinity} as such integers (pgjdbc's {@code
 * DATE_POSITIVE_INFINITY}, 9223372036825200000, in micros or millis; in nanoseconds mode {@code
 * Long.MAX_VALUE} and {@code Long.MIN_VALUE}), never a date-time.
 */
final class Values {

    private Values() {}

    /** The epoch day of 0000-01-01: the first of Flink's DATE and TIMESTAMP range. */
    static final long FIRST_DAY = -719_528L;

    /** The epoch day of 9999-12-31: the last of Flink's DATE and TIMESTAMP range. */
    static final long LAST_DAY = 2_932_896L;

    private static final long SECONDS_PER_DAY = 86_400L;

    /** A value of the right encoding that the column cannot hold. */
    static final class OutOfRange extends Exception {
        private static final long serialVersionUID = 1L;

        OutOfRange() {
            super(null, null, false, false);
        }
    }

    // ---------------------------------------------------------------------------------------
    // Numbers

    /** The JSON integer at the parser as a TINYINT, SMALLINT, INT or BIGINT value. */
    static Object integer(JsonParser p, ColumnType.Kind kind) throws IOException, OutOfRange {
        if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
            throw new OutOfRange();
        }
        long v = p.getLongValue();
        switch (kind) {
            case TINYINT:
                return (byte) within(v, Byte.MIN_VALUE, Byte.MAX_VALUE);
            case SMALLINT:
                return (short) within(v, Short.MIN_VALUE, Short.MAX_VALUE);
            case INT:
                return (int) within(v, Integer.MIN_VALUE, Integer.MAX_VALUE);
            default:
                return v;
        }
    }

    private static long within(long v, long min, long max) throws OutOfRange {
        if (v < min || v > max) {
            throw new OutOfRange();
        }
        return v;
    }

    /**
     * A FLOAT or DOUBLE: a JSON number, or {@code "NaN"}, {@code "Infinity"}, {@code "-Infinity"}.
     */
    static Object floating(JsonParser p, JsonToken t, ColumnType.Kind kind)
            throws IOException, OutOfRange {
        boolean isFloat = kind == ColumnType.Kind.FLOAT;
        if (t == JsonToken.VALUE_STRING) {
            Double special = specialFloat(p.getText());
            if (special == null) {
                return null;
            }
            return isFloat ? (Object) special.floatValue() : special;
        }
        if (!t.isNumeric()) {
            return null;
        }
        if (isFloat) {
            float f = Float.parseFloat(p.getText());
            if (Float.isInfinite(f)) {
                throw new OutOfRange();
            }
            return f;
        }
        double d = p.getDoubleValue();
        if (Double.isInfinite(d)) {
            throw new OutOfRange();
        }
        return d;
    }

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

    // ---------------------------------------------------------------------------------------
    // Decimals

    /**
     * {@code v} at {@code scale} (rounded {@code HALF_UP}), if it has at most {@code precision}
     * digits.
     */
    static BigDecimal fit(BigDecimal v, int precision, int scale) throws OutOfRange {
        if (v.signum() != 0 && (long) v.precision() - v.scale() > precision - scale) {
            throw new OutOfRange(); // more integer digits than the type holds, before rounding
        }
        BigDecimal r = v.setScale(scale, RoundingMode.HALF_UP);
        if (r.unscaledValue().abs().compareTo(BigInteger.TEN.pow(precision)) >= 0) {
            throw new OutOfRange();
        }
        return r;
    }

    private static final Pattern DECIMAL_TEXT =
            Pattern.compile("[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][+-]?[0-9]+)?");

    /** A decimal literal {@code [+-]digits[.digits][e[+-]digits]}, or null. */
    static BigDecimal decimalText(String s) {
        if (!DECIMAL_TEXT.matcher(s).matches()) {
            return null;
        }
        try {
            return new BigDecimal(s);
        } catch (NumberFormatException e) {
            return null; // an exponent beyond int
        }
    }

    /** Base64 of a big-endian two's-complement unscaled value, at {@code scale}; or null. */
    static BigDecimal unscaled(String b64, int scale) {
        byte[] bytes = base64(b64);
        if (bytes == null || bytes.length == 0) {
            return null;
        }
        return new BigDecimal(new BigInteger(bytes), scale);
    }

    /** What a VariableScaleDecimal object held. */
    static final class Variable {
        /** The object's JSON, for messages. */
        String json;

        /** The value, or null if the object is not {@code {"scale": int, "value": base64}}. */
        BigDecimal value;

        /** Whether the scale is beyond what a decimal can have. */
        boolean outOfRange;
    }

    /** Reads Debezium's {@code {"scale": 2, "value": "<base64 unscaled>"}} at its start. */
    static Variable variable(JsonParser p) throws IOException {
        Variable out = new Variable();
        StringWriter text = new StringWriter();
        Long scale = null;
        String value = null;
        boolean bad = false;
        try (JsonGenerator g = JsonExcerpt.FACTORY.createGenerator(text)) {
            g.writeStartObject();
            String name;
            while ((name = p.nextFieldName()) != null) {
                JsonToken vt = p.nextToken();
                g.writeFieldName(name);
                if ("scale".equals(name)) {
                    boolean ok =
                            vt == JsonToken.VALUE_NUMBER_INT
                                    && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER;
                    scale = ok ? p.getLongValue() : null;
                    bad |= !ok;
                } else if ("value".equals(name)) {
                    value = vt == JsonToken.VALUE_STRING ? p.getText() : null;
                    bad |= vt != JsonToken.VALUE_STRING;
                }
                g.copyCurrentStructure(p);
            }
            g.writeEndObject();
        }
        out.json = text.toString();
        if (bad || scale == null || value == null) {
            return out;
        }
        if (scale > 1_000_000 || scale < -1_000_000) {
            out.outOfRange = true;
            out.value = BigDecimal.ZERO;
            return out;
        }
        out.value = unscaled(value, (int) (long) scale);
        return out;
    }

    // ---------------------------------------------------------------------------------------
    // Bytes

    /** Standard base64 (padding optional), or null. */
    static byte[] base64(String s) {
        try {
            return Base64.getDecoder().decode(s);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** An even number of hexadecimal digits (either case), or null. */
    static byte[] hex(String s) {
        if (s.length() % 2 != 0) {
            return null;
        }
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) {
            int hi = Character.digit(s.charAt(2 * i), 16);
            int lo = Character.digit(s.charAt(2 * i + 1), 16);
            if (hi < 0 || lo < 0) {
                return null;
            }
            out[i] = (byte) (hi << 4 | lo);
        }
        return out;
    }

    // ---------------------------------------------------------------------------------------
    // Dates and times

    /**
     * {@code yyyy-MM-dd}; when {@code iso} (Debezium's ISO text) followed by an offset at UTC
     * ({@code Z}, {@code +00:00}); or null.
     */
    static LocalDate dateText(String s, boolean iso) throws OutOfRange {
        String local = withoutUtcOffset(s, iso);
        if (local == null) {
            return null;
        }
        try {
            LocalDate d = LocalDate.parse(local, DateTimeFormatter.ISO_LOCAL_DATE);
            return date(d.toEpochDay());
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    /** A JSON integer of epoch days, within the years 0000 to 9999. */
    static LocalDate epochDays(JsonParser p) throws IOException, OutOfRange {
        if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
            throw new OutOfRange();
        }
        long days = p.getLongValue();
        if (days < FIRST_DAY || days > LAST_DAY) {
            throw new OutOfRange();
        }
        return LocalDate.ofEpochDay(days);
    }

    private static LocalDate date(long days) throws OutOfRange {
        if (days < Integer.MIN_VALUE || days > Integer.MAX_VALUE) {
            throw new OutOfRange();
        }
        return LocalDate.ofEpochDay(days);
    }

    /** {@code HH:mm[:ss[.fraction]]} (when {@code iso}, followed by an offset at UTC), or null. */
    static LocalTime timeText(String s, boolean iso, int precision) {
        String local = withoutUtcOffset(s, iso);
        if (local == null) {
            return null;
        }
        try {
            LocalTime t = LocalTime.parse(local, DateTimeFormatter.ISO_LOCAL_TIME);
            return t.withNano(truncate(t.getNano(), Math.min(precision, 3)));
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    /** A JSON integer of the time of day in {@code perSecond} units. */
    static LocalTime timeOfDay(JsonParser p, long perSecond, int precision)
            throws IOException, OutOfRange {
        if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
            throw new OutOfRange();
        }
        long v = p.getLongValue();
        if (v == Long.MIN_VALUE || v == Long.MAX_VALUE || v < 0 || v >= 86_400L * perSecond) {
            throw new OutOfRange();
        }
        long nanos = v * (1_000_000_000L / perSecond);
        int fraction = truncate((int) (nanos % 1_000_000_000L), Math.min(precision, 3));
        return LocalTime.ofNanoOfDay(nanos - nanos % 1_000_000_000L + fraction);
    }

    /**
     * {@code yyyy-MM-dd[T| ]HH:mm[:ss[.fraction]]}; when {@code iso} (Debezium's ISO text) {@code
     * yyyy-MM-ddTHH:mm[:ss[.fraction]]} followed by an offset at UTC; or null.
     */
    static LocalDateTime timestampText(String s, boolean iso, int precision) throws OutOfRange {
        String local = withoutUtcOffset(s, iso);
        if (local == null) {
            return null;
        }
        LocalDateTime t;
        try {
            String text = iso ? local : isoSeparator(local);
            t = LocalDateTime.parse(text, DateTimeFormatter.ISO_LOCAL_DATE_TIME);
        } catch (DateTimeParseException e) {
            return null;
        }
        return local(t.toEpochSecond(ZoneOffset.UTC), t.getNano(), precision);
    }

    /** An ISO-8601 timestamp with {@code Z} or an offset ({@code T} or a space before the time). */
    static Instant zonedText(String s, int precision) throws OutOfRange {
        OffsetDateTime t;
        try {
            t = OffsetDateTime.parse(isoSeparator(s), DateTimeFormatter.ISO_OFFSET_DATE_TIME);
        } catch (DateTimeParseException e) {
            return null;
        }
        return instant(t.toEpochSecond(), t.getNano(), precision);
    }

    /**
     * A JSON integer since the epoch in {@code perSecond} units, as the column's type: within the
     * years 0000 to 9999, and never {@link Long#MIN_VALUE} or {@link Long#MAX_VALUE}. Computed as
     * the native row stores it (64-bit micros up to precision 6, nanos above, floored to the
     * precision), so that a value beyond that storage is out of range in both engines.
     */
    static Object epochTimestamp(JsonParser p, long perSecond, ColumnType type)
            throws IOException, OutOfRange {
        if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
            throw new OutOfRange();
        }
        long v = p.getLongValue();
        if (v == Long.MIN_VALUE || v == Long.MAX_VALUE) {
            throw new OutOfRange();
        }
        int precision = type.precision();
        long storage = precision <= 6 ? 1_000_000L : 1_000_000_000L;
        long stored;
        try {
            stored =
                    storage >= perSecond
                            ? Math.multiplyExact(v, storage / perSecond)
                            : Math.floorDiv(v, perSecond / storage);
            long step = tenTo((storage == 1_000_000L ? 6 : 9) - precision);
            stored = Math.subtractExact(stored, Math.floorMod(stored, step));
        } catch (ArithmeticException e) {
            throw new OutOfRange();
        }
        long seconds = Math.floorDiv(stored, storage);
        long days = Math.floorDiv(seconds, SECONDS_PER_DAY);
        if (days < FIRST_DAY || days > LAST_DAY) {
            throw new OutOfRange();
        }
        int nanos = (int) (Math.floorMod(stored, storage) * (1_000_000_000L / storage));
        return type.kind() == ColumnType.Kind.TIMESTAMP_LTZ
                ? Instant.ofEpochSecond(seconds, nanos)
                : LocalDateTime.ofEpochSecond(seconds, nanos, ZoneOffset.UTC);
    }

    private static LocalDateTime local(long seconds, int nanos, int precision) throws OutOfRange {
        Instant i = instant(seconds, nanos, precision);
        return LocalDateTime.ofEpochSecond(i.getEpochSecond(), i.getNano(), ZoneOffset.UTC);
    }

    /** The instant truncated to {@code precision}, if the native encoding can store it. */
    private static Instant instant(long seconds, int nanos, int precision) throws OutOfRange {
        int kept = truncate(nanos, precision);
        boolean micros = precision <= 6;
        try {
            Math.addExact(
                    Math.multiplyExact(seconds, micros ? 1_000_000L : 1_000_000_000L),
                    micros ? kept / 1000 : kept);
        } catch (ArithmeticException e) {
            throw new OutOfRange();
        }
        return Instant.ofEpochSecond(seconds, kept);
    }

    /** {@code nanos} (of a second) cut to {@code precision} fractional digits. */
    static int truncate(int nanos, int precision) {
        return nanos - nanos % (int) tenTo(9 - precision);
    }

    /** 10 to the power {@code n}, 1 for {@code n <= 0}. */
    private static long tenTo(int n) {
        long v = 1;
        for (int i = 0; i < n; i++) {
            v *= 10;
        }
        return v;
    }

    /**
     * {@code s} itself, or when {@code iso} (Debezium's ISO text of a type without a zone) {@code
     * s} without the offset that must end it, at UTC: {@code Z}, or {@code +00:00} / {@code -00:00}
     * (optionally with {@code :00} seconds). Debezium formats those texts at UTC; another offset is
     * a zoned value, whose local part and instant differ: null, as without an offset.
     */
    private static String withoutUtcOffset(String s, boolean iso) {
        if (!iso) {
            return s;
        }
        if (s.endsWith("Z")) {
            return s.substring(0, s.length() - 1);
        }
        for (String utc : UTC_OFFSETS) {
            if (s.endsWith(utc)) {
                return s.substring(0, s.length() - utc.length());
            }
        }
        return null;
    }

    private static final String[] UTC_OFFSETS = {"+00:00:00", "-00:00:00", "+00:00", "-00:00"};

    /** {@code s} with a space between date and time replaced by ISO's {@code T}. */
    private static String isoSeparator(String s) {
        boolean space = s.length() > 10 && s.charAt(10) == ' ';
        return space ? s.substring(0, 10) + 'T' + s.substring(11) : s;
    }
}
