package dev.cdcjoin.flink.codec;

import java.io.Serializable;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.Set;
import org.apache.flink.types.Row;

/**
 * The compact row encoding of the native library (Rust {@code cdcjoin_model::row}), both ways.
 *
 * <pre>
 * row := null bitmap (ceil(n/8) bytes, bit i set = column i null, bits from n on zero)
 *        fixed slots (one per column, little-endian, zero when null)
 *        variable tail (STRING/BYTES data in column order; their slot is offset u32, length u32,
 *                       the offset counted from the row's start)
 * </pre>
 *
 * TINYINT and SMALLINT are one and two bytes; DECIMAL is its unscaled value (i64 up to precision
 * 18, else i128); TIMESTAMP and TIMESTAMP_LTZ are micros since the epoch for precision up to 6,
 * else nanos, truncated to the precision; TIME is milliseconds of the day (Flink's runtime keeps no
 * finer TIME), truncated to the precision; DATE is epoch days; FLOAT/DOUBLE have NaN canonical. The
 * encoding is canonical, so equal values give equal bytes (keys compare as bytes).
 *
 * <p>A null column whose slot's first byte is {@link #UNAVAILABLE} is <em>unavailable</em>: the
 * change did not carry its value (Debezium's placeholder for an unchanged TOASTed column). Such
 * rows only travel from the decoder to the join, which fills or rejects them; reading such a column
 * here is an error, never a null.
 */
public final class RowCodec implements Serializable {

    private static final long serialVersionUID = 1L;

    /** First slot byte of an unavailable column (whose null bit is set). */
    public static final byte UNAVAILABLE = 1;

    private final CdcSchema schema;
    private final ColumnType[] types;
    private final int[] offsets;
    private final int fixedLength;

    /**
     * A codec for rows of {@code schema}.
     *
     * @param schema the columns
     */
    public RowCodec(CdcSchema schema) {
        this.schema = schema;
        int n = schema.size();
        types = new ColumnType[n];
        offsets = new int[n];
        int at = (n + 7) / 8;
        for (int i = 0; i < n; i++) {
            types[i] = schema.columns().get(i).type();
            offsets[i] = at;
            at += types[i].slotWidth();
        }
        fixedLength = at;
    }

    /**
     * The schema.
     *
     * @return the schema
     */
    public CdcSchema schema() {
        return schema;
    }

    /**
     * Number of columns.
     *
     * @return the arity
     */
    public int arity() {
        return types.length;
    }

    /**
     * Encodes a row given by position, or by name when the row has field names.
     *
     * @param row the row (its kind is ignored)
     * @return the encoded bytes
     * @throws IllegalArgumentException if the arity or a value does not fit the schema
     */
    public byte[] encode(Row row) {
        Set<String> names = row.getFieldNames(false);
        Object[] values = new Object[types.length];
        if (names != null) {
            for (int i = 0; i < types.length; i++) {
                String name = schema.columns().get(i).name();
                values[i] = names.contains(name) ? row.getField(name) : null;
            }
        } else {
            if (row.getArity() != types.length) {
                throw new IllegalArgumentException(
                        "row has " + row.getArity() + " fields, the schema " + types.length);
            }
            for (int i = 0; i < types.length; i++) {
                values[i] = row.getField(i);
            }
        }
        return encode(values);
    }

    /**
     * Encodes a row.
     *
     * @param values one value per column, of the type's default conversion class
     * @return the encoded bytes
     * @throws IllegalArgumentException if the arity or a value does not fit the schema
     */
    public byte[] encode(Object[] values) {
        if (values.length != types.length) {
            throw new IllegalArgumentException(
                    "row has " + values.length + " fields, the schema " + types.length);
        }
        byte[][] variable = new byte[types.length][];
        int length = fixedLength;
        for (int i = 0; i < types.length; i++) {
            checkNull(i, values[i]);
            if (values[i] != null && types[i].isVariable()) {
                variable[i] = variableBytes(i, values[i]);
                length += variable[i].length;
            }
        }
        ByteBuffer buf = ByteBuffer.wrap(new byte[length]).order(ByteOrder.LITTLE_ENDIAN);
        int tail = fixedLength;
        for (int i = 0; i < types.length; i++) {
            if (values[i] == null) {
                buf.put(i / 8, (byte) (buf.get(i / 8) | (1 << (i % 8))));
            } else if (variable[i] != null) {
                buf.putInt(offsets[i], tail).putInt(offsets[i] + 4, variable[i].length);
                buf.position(tail);
                buf.put(variable[i]);
                tail += variable[i].length;
            } else {
                writeFixed(buf, i, values[i]);
            }
        }
        return buf.array();
    }

    private void checkNull(int i, Object value) {
        if (value == null && !schema.columns().get(i).isNullable()) {
            throw new IllegalArgumentException(
                    "column '" + name(i) + "' is declared NOT NULL but is null");
        }
    }

    private String name(int i) {
        return schema.columns().get(i).name();
    }

    private byte[] variableBytes(int i, Object value) {
        if (types[i].kind() == ColumnType.Kind.STRING) {
            if (!(value instanceof String)) {
                throw mistyped(i, value, "String");
            }
            return ((String) value).getBytes(StandardCharsets.UTF_8);
        }
        if (!(value instanceof byte[])) {
            throw mistyped(i, value, "byte[]");
        }
        return (byte[]) value;
    }

    private void writeFixed(ByteBuffer buf, int i, Object v) {
        int at = offsets[i];
        switch (types[i].kind()) {
            case BOOLEAN:
                buf.put(at, (byte) (as(Boolean.class, i, v) ? 1 : 0));
                break;
            case TINYINT:
                buf.put(at, as(Byte.class, i, v));
                break;
            case SMALLINT:
                buf.putShort(at, as(Short.class, i, v));
                break;
            case INT:
                buf.putInt(at, Math.toIntExact(integral(i, v)));
                break;
            case BIGINT:
                buf.putLong(at, integral(i, v));
                break;
            case FLOAT:
                buf.putFloat(at, canonical(as(Number.class, i, v).floatValue()));
                break;
            case DOUBLE:
                buf.putDouble(at, canonical(as(Number.class, i, v).doubleValue()));
                break;
            case DECIMAL:
                writeDecimal(buf, i, as(BigDecimal.class, i, v));
                break;
            case DATE:
                buf.putInt(at, Math.toIntExact(as(LocalDate.class, i, v).toEpochDay()));
                break;
            case TIME:
                buf.putInt(at, timeMillis(i, as(LocalTime.class, i, v)));
                break;
            case TIMESTAMP_LTZ:
                Instant instant = as(Instant.class, i, v);
                buf.putLong(at, epochValue(i, instant.getEpochSecond(), instant.getNano()));
                break;
            default:
                LocalDateTime t = as(LocalDateTime.class, i, v);
                buf.putLong(at, epochValue(i, t.toEpochSecond(ZoneOffset.UTC), t.getNano()));
        }
    }

    private static float canonical(float f) {
        return Float.isNaN(f) ? Float.NaN : f;
    }

    private static double canonical(double d) {
        return Double.isNaN(d) ? Double.NaN : d;
    }

    private long integral(int i, Object v) {
        if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return ((Number) v).longValue();
        }
        throw mistyped(i, v, types[i].kind() == ColumnType.Kind.INT ? "Integer" : "Long");
    }

    private void writeDecimal(ByteBuffer buf, int i, BigDecimal d) {
        ColumnType t = types[i];
        BigInteger unscaled = d.setScale(t.scale(), RoundingMode.HALF_UP).unscaledValue();
        if (unscaled.abs().compareTo(BigInteger.TEN.pow(t.precision())) >= 0) {
            throw new IllegalArgumentException(
                    "column '" + name(i) + "' (" + t + "): value " + d + " is out of range");
        }
        if (t.precision() <= 18) {
            buf.putLong(offsets[i], unscaled.longValueExact());
            return;
        }
        byte[] be = unscaled.toByteArray();
        byte fill = (byte) (unscaled.signum() < 0 ? -1 : 0);
        for (int b = 0; b < 16; b++) {
            int from = be.length - 1 - b;
            buf.put(offsets[i] + b, from >= 0 ? be[from] : fill);
        }
    }

    /** Nanoseconds kept by a fraction of {@code precision} digits: the truncation unit. */
    private static int nanosUnit(int precision) {
        int unit = 1;
        for (int p = precision; p < 9; p++) {
            unit *= 10;
        }
        return unit;
    }

    /**
     * The stored value of a TIMESTAMP(_LTZ) column: micros or nanos, truncated to the precision.
     */
    private long epochValue(int i, long seconds, int nanos) {
        int precision = types[i].precision();
        int kept = nanos - nanos % nanosUnit(precision);
        try {
            if (precision <= 6) {
                return Math.addExact(Math.multiplyExact(seconds, 1_000_000L), kept / 1000);
            }
            return Math.addExact(Math.multiplyExact(seconds, 1_000_000_000L), kept);
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(
                    "column '" + name(i) + "' (" + types[i] + "): " + seconds + "s is out of range",
                    e);
        }
    }

    /** A TIME column's milliseconds of the day, truncated to its precision. */
    private int timeMillis(int i, LocalTime t) {
        int unit = nanosUnit(Math.min(types[i].precision(), 3));
        int nanos = t.getNano() - t.getNano() % unit;
        return t.toSecondOfDay() * 1000 + nanos / 1_000_000;
    }

    private <T> T as(Class<T> cls, int i, Object v) {
        if (!cls.isInstance(v)) {
            throw mistyped(i, v, cls.getSimpleName());
        }
        return cls.cast(v);
    }

    private IllegalArgumentException mistyped(int i, Object v, String expected) {
        return new IllegalArgumentException(
                "column '"
                        + name(i)
                        + "' ("
                        + types[i]
                        + "): expected "
                        + expected
                        + ", found "
                        + v.getClass().getSimpleName()
                        + " "
                        + v);
    }

    /**
     * Decodes a row.
     *
     * @param buf a little-endian buffer holding the row
     * @param start the row's first byte (absolute index)
     * @return one value per column
     */
    public Object[] decode(ByteBuffer buf, int start) {
        Object[] out = new Object[types.length];
        decodeInto(buf, start, out, 0);
        return out;
    }

    /**
     * Decodes a row into {@code into[at..at+arity)}.
     *
     * @param buf a little-endian buffer holding the row
     * @param start the row's first byte (absolute index)
     * @param into target array
     * @param at first target index
     */
    public void decodeInto(ByteBuffer buf, int start, Object[] into, int at) {
        for (int i = 0; i < types.length; i++) {
            into[at + i] = read(buf, start, i);
        }
    }

    /**
     * Decodes one column.
     *
     * @param buf a little-endian buffer holding the row
     * @param start the row's first byte (absolute index)
     * @param i the column
     * @return its value, or {@code null}
     */
    public Object read(ByteBuffer buf, int start, int i) {
        if (isNull(buf, start, i)) {
            return null;
        }
        int at = start + offsets[i];
        switch (types[i].kind()) {
            case BOOLEAN:
                return buf.get(at) != 0;
            case TINYINT:
                return buf.get(at);
            case SMALLINT:
                return buf.getShort(at);
            case INT:
                return buf.getInt(at);
            case BIGINT:
                return buf.getLong(at);
            case FLOAT:
                return buf.getFloat(at);
            case DOUBLE:
                return buf.getDouble(at);
            case DECIMAL:
                return readDecimal(buf, at, types[i]);
            case STRING:
                return string(buf, start, at);
            case BYTES:
                return variable(buf, start, at);
            case DATE:
                return LocalDate.ofEpochDay(buf.getInt(at));
            case TIME:
                return LocalTime.ofNanoOfDay(buf.getInt(at) * 1_000_000L);
            case TIMESTAMP_LTZ:
                return readInstant(buf.getLong(at), types[i].precision());
            default:
                return readInstant(buf.getLong(at), types[i].precision())
                        .atOffset(ZoneOffset.UTC)
                        .toLocalDateTime();
        }
    }

    /**
     * Whether column {@code i} of the row at {@code start} is null.
     *
     * @throws IllegalArgumentException if it is unavailable
     */
    boolean isNull(ByteBuffer buf, int start, int i) {
        if ((buf.get(start + i / 8) & (1 << (i % 8))) == 0) {
            return false;
        }
        if (buf.get(start + offsets[i]) == UNAVAILABLE) {
            throw new IllegalArgumentException(
                    "column '" + name(i) + "' is unavailable (the change did not carry its value)");
        }
        return true;
    }

    /** Where column {@code i}'s fixed slot is, from the row's first byte. */
    int slot(int i) {
        return offsets[i];
    }

    /** The type of column {@code i}. */
    ColumnType type(int i) {
        return types[i];
    }

    /** A string column, decoded in place from a heap buffer's array. */
    private static String string(ByteBuffer buf, int start, int slot) {
        if (!buf.hasArray()) {
            return new String(variable(buf, start, slot), StandardCharsets.UTF_8);
        }
        int from = buf.arrayOffset() + start + buf.getInt(slot);
        return new String(buf.array(), from, buf.getInt(slot + 4), StandardCharsets.UTF_8);
    }

    private static byte[] variable(ByteBuffer buf, int start, int slot) {
        int offset = buf.getInt(slot);
        byte[] bytes = new byte[buf.getInt(slot + 4)];
        ByteBuffers.read(buf, start + offset, bytes, 0, bytes.length);
        return bytes;
    }

    private static BigDecimal readDecimal(ByteBuffer buf, int at, ColumnType t) {
        if (t.precision() <= 18) {
            return BigDecimal.valueOf(buf.getLong(at), t.scale());
        }
        byte[] be = new byte[16];
        for (int b = 0; b < 16; b++) {
            be[15 - b] = buf.get(at + b);
        }
        return new BigDecimal(new BigInteger(be), t.scale());
    }

    private static Instant readInstant(long v, int precision) {
        long perSecond = precision <= 6 ? 1_000_000L : 1_000_000_000L;
        long seconds = Math.floorDiv(v, perSecond);
        long fraction = Math.floorMod(v, perSecond);
        return Instant.ofEpochSecond(seconds, precision <= 6 ? fraction * 1000 : fraction);
    }
}
