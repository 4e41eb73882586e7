package dev.cdcjoin.flink.e2e;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

/**
 * The values a mart row can hold, as {@link MartSinkOperator} keeps them in its operator state (one
 * tag byte, then the value) and binds them to SQL parameters. These are the Java classes of every
 * Flink type the product's {@code Row}s carry: BOOLEAN {@link Boolean}, TINYINT {@link Byte},
 * SMALLINT {@link Short}, INT {@link Integer}, BIGINT {@link Long}, FLOAT {@link Float}, DOUBLE
 * {@link Double}, DECIMAL {@link BigDecimal}, STRING {@link String}, BYTES {@code byte[]}, DATE
 * {@link LocalDate}, TIME {@link LocalTime}, TIMESTAMP {@link LocalDateTime}, TIMESTAMP_LTZ {@link
 * Instant}. Each is encoded exactly (a decimal with its scale, times to the nanosecond), so what is
 * applied to the table is what the join emitted.
 */
final class MartValues {

    private static final byte NULL = 0;
    private static final byte INT = 1;
    private static final byte LONG = 2;
    private static final byte STRING = 3;
    private static final byte BOOLEAN = 4;
    private static final byte BYTE = 5;
    private static final byte SHORT = 6;
    private static final byte FLOAT = 7;
    private static final byte DOUBLE = 8;
    private static final byte DECIMAL = 9;
    private static final byte BYTES = 10;
    private static final byte DATE = 11;
    private static final byte TIME = 12;
    private static final byte TIMESTAMP = 13;
    private static final byte INSTANT = 14;

    /**
     * Writes a value with its tag.
     *
     * @throws IllegalArgumentException for a class that is not one of the above
     */
    static void write(DataOutputStream out, Object v) throws IOException {
        if (v == null) {
            out.writeByte(NULL);
        } else if (v instanceof Integer) {
            out.writeByte(INT);
            out.writeInt((Integer) v);
        } else if (v instanceof Long) {
            out.writeByte(LONG);
            out.writeLong((Long) v);
        } else if (v instanceof String) {
            out.writeByte(STRING);
            writeBytes(out, ((String) v).getBytes(StandardCharsets.UTF_8));
        } else if (v instanceof byte[]) {
            out.writeByte(BYTES);
            writeBytes(out, (byte[]) v);
        } else {
            writeOther(out, v);
        }
    }

    private static void writeOther(DataOutputStream out, Object v) throws IOException {
        if (v instanceof Boolean) {
            out.writeByte(BOOLEAN);
            out.writeBoolean((Boolean) v);
        } else if (v instanceof Byte) {
            out.writeByte(BYTE);
            out.writeByte((Byte) v);
        } else if (v instanceof Short) {
            out.writeByte(SHORT);
            out.writeShort((Short) v);
        } else if (v instanceof Float) {
            out.writeByte(FLOAT);
            out.writeFloat((Float) v);
        } else if (v instanceof Double) {
            out.writeByte(DOUBLE);
            out.writeDouble((Double) v);
        } else if (v instanceof BigDecimal) {
            out.writeByte(DECIMAL);
            out.writeInt(((BigDecimal) v).scale());
            writeBytes(out, ((BigDecimal) v).unscaledValue().toByteArray());
        } else {
            writeTemporal(out, v);
        }
    }

    private static void writeTemporal(DataOutputStream out, Object v) throws IOException {
        if (v instanceof LocalDate) {
            out.writeByte(DATE);
            out.writeLong(((LocalDate) v).toEpochDay());
        } else if (v instanceof LocalTime) {
            out.writeByte(TIME);
            out.writeLong(((LocalTime) v).toNanoOfDay());
        } else if (v instanceof LocalDateTime) {
            out.writeByte(TIMESTAMP);
            writeInstant(out, ((LocalDateTime) v).toInstant(ZoneOffset.UTC));
        } else if (v instanceof Instant) {
            out.writeByte(INSTANT);
            writeInstant(out, (Instant) v);
        } else {
            throw new IllegalArgumentException(
                    "mart sink: unsupported value type " + v.getClass().getName());
        }
    }

    /**
     * Reads a value written by {@link #write}.
     *
     * @throws IOException for an unknown tag
     */
    static Object read(DataInputStream in) throws IOException {
        byte tag = in.readByte();
        switch (tag) {
            case NULL:
                return null;
            case INT:
                return in.readInt();
            case LONG:
                return in.readLong();
            case STRING:
                return new String(readBytes(in), StandardCharsets.UTF_8);
            case BYTES:
                return readBytes(in);
            case BOOLEAN:
                return in.readBoolean();
            case BYTE:
                return in.readByte();
            case SHORT:
                return in.readShort();
            case FLOAT:
                return in.readFloat();
            case DOUBLE:
                return in.readDouble();
            default:
                return readOther(in, tag);
        }
    }

    private static Object readOther(DataInputStream in, byte tag) throws IOException {
        switch (tag) {
            case DECIMAL:
                int scale = in.readInt();
                return new BigDecimal(new BigInteger(readBytes(in)), scale);
            case DATE:
                return LocalDate.ofEpochDay(in.readLong());
            case TIME:
                return LocalTime.ofNanoOfDay(in.readLong());
            case TIMESTAMP:
                return LocalDateTime.ofInstant(readInstant(in), ZoneOffset.UTC);
            case INSTANT:
                return readInstant(in);
            default:
                throw new IOException("mart sink: bad value tag " + tag);
        }
    }

    /**
     * The value as a JDBC parameter: itself, except an {@link Instant}, which the PostgreSQL driver
     * takes as an {@link OffsetDateTime} (for a {@code timestamptz} column).
     */
    static Object jdbc(Object v) {
        return v instanceof Instant ? OffsetDateTime.ofInstant((Instant) v, ZoneOffset.UTC) : v;
    }

    private static void writeBytes(DataOutputStream out, byte[] b) throws IOException {
        out.writeInt(b.length);
        out.write(b);
    }

    private static byte[] readBytes(DataInputStream in) throws IOException {
        byte[] b = new byte[in.readInt()];
        in.readFully(b);
        return b;
    }

    private static void writeInstant(DataOutputStream out, Instant t) throws IOException {
        out.writeLong(t.getEpochSecond());
        out.writeInt(t.getNano());
    }

    private static Instant readInstant(DataInputStream in) throws IOException {
        return Instant.ofEpochSecond(in.readLong(), in.readInt());
    }

    private MartValues() {}
}
