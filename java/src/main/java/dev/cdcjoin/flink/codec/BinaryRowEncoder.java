package dev.cdcjoin.flink.codec;

import java.nio.ByteBuffer;
import org.apache.flink.core.memory.MemorySegment;
import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.data.binary.BinaryRowData;

/**
 * Writes joined rows of the compact row encoding ({@link RowCodec}) as Flink's {@link
 * BinaryRowData}, the form Flink's table runtime passes between its operators, each column copied
 * from its slot without a Java object per column (no {@code String}, {@code BigDecimal} or time
 * object is built). Rows are written one after the other into chunks of at least {@value
 * #CHUNK_BYTES} bytes, each row its own region that is never written again: the only object per row
 * is its {@link BinaryRowData}, and a row kept downstream keeps at most one chunk alive.
 *
 * <p>The target is Flink's layout, as its {@code BinaryRowWriter} writes it (Flink's classes are
 * the contract; the tests read every row back with Flink's own converters):
 *
 * <pre>
 * row      := header and null bits (BinaryRowData.calculateBitSetWidthInBytes(arity) bytes:
 *                                   byte 0 the RowKind byte, bit 8 + i set = column i null)
 *             fixed part (8 bytes per column, in the machine's byte order, as MemorySegment writes)
 *             variable part (8-byte aligned chunks, zero padded)
 * slot     := BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE: the value
 *             DATE: epoch days (int); TIME: milliseconds of the day (int)
 *             DECIMAL(p <= 18): unscaled long; TIMESTAMP(_LTZ)(p <= 3): epoch millis
 *             STRING/BYTES of at most 7 bytes: 0x80 | length in the top byte, the bytes below
 *             otherwise: offset u32 (from the row's start) << 32 | length; the bytes in the
 *               variable part (STRING as its UTF-8 bytes, BYTES as they are)
 *             DECIMAL(p > 18): offset << 32 | n; n bytes of the unscaled value, big-endian two's
 *               complement, minimal (BigInteger#toByteArray), in a 16-byte chunk
 *             TIMESTAMP(_LTZ)(p > 3): offset << 32 | nano of millisecond; epoch millis in an
 *               8-byte chunk
 * </pre>
 *
 * Every column type of the encoding has an exact Flink internal form ({@link
 * ColumnType#dataType(boolean)}): the encoding's TIME is already milliseconds, its TIMESTAMP micros
 * or nanos split exactly into millis and nano of millisecond.
 */
public final class BinaryRowEncoder {

    /** A string or bytes value this long or shorter lives in its slot. */
    private static final int MAX_INLINE = 7;

    /** Bytes of a wide DECIMAL's chunk in the variable part. */
    private static final int WIDE_DECIMAL_BYTES = 16;

    /** Bytes of a precise TIMESTAMP's chunk in the variable part. */
    private static final int WIDE_TIMESTAMP_BYTES = 8;

    /** The least size of an array rows are written into. */
    static final int CHUNK_BYTES = 32 * 1024;

    private final RowCodec[] sources;
    private final int[] source;
    private final int[] column;
    private final ColumnType[] types;
    private final int fixedLength;
    private final int nullBytes;

    /** The chunk rows are written into, as Flink's rows point at it, and its first free byte. */
    private MemorySegment[] chunk = {MemorySegmentFactory.wrap(new byte[0])};

    private int free;

    /**
     * An encoder of output rows whose column {@code i} is column {@code column[i]} of the row of
     * source {@code source[i]}.
     *
     * @param sources the codecs of the rows an output row is made of (a join's inputs)
     * @param source per output column, the index of its source
     * @param column per output column, its index in its source's row
     */
    public BinaryRowEncoder(RowCodec[] sources, int[] source, int[] column) {
        if (source.length != column.length) {
            throw new IllegalArgumentException("one source and one column per output column");
        }
        this.sources = sources.clone();
        this.source = source.clone();
        this.column = column.clone();
        this.types = new ColumnType[source.length];
        for (int i = 0; i < types.length; i++) {
            types[i] = sources[source[i]].type(column[i]);
        }
        this.nullBytes = BinaryRowData.calculateBitSetWidthInBytes(types.length);
        this.fixedLength = BinaryRowData.calculateFixPartSizeInBytes(types.length);
    }

    /**
     * Encodes one output row.
     *
     * @param kind the row's kind byte ({@code RowKind#toByteValue()})
     * @param buf a little-endian heap buffer (one with an array) holding the source rows
     * @param starts per source, the index of its row's first byte, or {@code -1} when that source
     *     is null-padded (its columns are null)
     * @return the row
     * @throws IllegalArgumentException if a column is unavailable (see {@link RowCodec})
     */
    public BinaryRowData encode(byte kind, ByteBuffer buf, int[] starts) {
        int length = fixedLength + variableLength(buf, starts);
        if (free + length > chunk[0].size()) {
            chunk =
                    new MemorySegment[] {
                        MemorySegmentFactory.wrap(new byte[Math.max(CHUNK_BYTES, length)])
                    };
            free = 0;
        }
        MemorySegment target = chunk[0];
        int at = free;
        free += length;
        target.put(at, kind);
        int cursor = fixedLength;
        for (int i = 0; i < types.length; i++) {
            int start = starts[source[i]];
            if (start < 0 || sources[source[i]].isNull(buf, start, column[i])) {
                int bit = BinaryRowData.HEADER_SIZE_IN_BITS + i;
                int b = at + (bit >>> 3);
                target.put(b, (byte) (target.get(b) | (1 << (bit & 7))));
            } else {
                cursor = write(target, at, i, buf, start, cursor);
            }
        }
        BinaryRowData out = new BinaryRowData(types.length);
        out.pointTo(chunk, at, length);
        return out;
    }

    /** Bytes of the row's variable part. */
    private int variableLength(ByteBuffer buf, int[] starts) {
        int length = 0;
        for (int i = 0; i < types.length; i++) {
            int start = starts[source[i]];
            ColumnType t = types[i];
            boolean variable = t.isVariable() || isWide(t);
            if (variable && start >= 0 && !sources[source[i]].isNull(buf, start, column[i])) {
                length += variableBytes(t, buf, start + sources[source[i]].slot(column[i]));
            }
        }
        return length;
    }

    /** Whether a non-variable type keeps its value in the variable part. */
    private static boolean isWide(ColumnType t) {
        switch (t.kind()) {
            case DECIMAL:
                return !DecimalData.isCompact(t.precision());
            case TIMESTAMP:
            case TIMESTAMP_LTZ:
                return !TimestampData.isCompact(t.precision());
            default:
                return false;
        }
    }

    /** The variable part a value of {@code t} whose slot is at {@code slot} takes. */
    private static int variableBytes(ColumnType t, ByteBuffer buf, int slot) {
        if (t.kind() == ColumnType.Kind.DECIMAL) {
            return WIDE_DECIMAL_BYTES;
        }
        if (!t.isVariable()) {
            return WIDE_TIMESTAMP_BYTES;
        }
        int n = buf.getInt(slot + 4);
        return n <= MAX_INLINE ? 0 : roundToWord(n);
    }

    private static int roundToWord(int n) {
        return (n + 7) & ~7;
    }

    /**
     * Writes non-null column {@code i} of the row at {@code row + rowAt} from the source row at
     * {@code start}.
     *
     * @param cursor the first free byte of the variable part, from the row's start
     * @return the cursor after what it wrote to the variable part
     */
    private int write(MemorySegment row, int rowAt, int i, ByteBuffer buf, int start, int cursor) {
        int field = rowAt + nullBytes + 8 * i;
        int at = start + sources[source[i]].slot(column[i]);
        ColumnType t = types[i];
        switch (t.kind()) {
            case BOOLEAN:
                row.putBoolean(field, buf.get(at) != 0);
                return cursor;
            case TINYINT:
                row.put(field, buf.get(at));
                return cursor;
            case SMALLINT:
                row.putShort(field, buf.getShort(at));
                return cursor;
            case INT:
            case DATE:
            case TIME:
                row.putInt(field, buf.getInt(at));
                return cursor;
            case BIGINT:
                row.putLong(field, buf.getLong(at));
                return cursor;
            case FLOAT:
                row.putFloat(field, buf.getFloat(at));
                return cursor;
            case DOUBLE:
                row.putDouble(field, buf.getDouble(at));
                return cursor;
            case DECIMAL:
                return decimal(row, rowAt, field, t, buf, at, cursor);
            case STRING:
            case BYTES:
                int from = start + buf.getInt(at);
                return bytes(row, rowAt, field, buf, from, buf.getInt(at + 4), cursor);
            default:
                return timestamp(row, rowAt, field, t, buf.getLong(at), cursor);
        }
    }

    private static int decimal(
            MemorySegment row,
            int rowAt,
            int field,
            ColumnType t,
            ByteBuffer buf,
            int at,
            int cursor) {
        if (DecimalData.isCompact(t.precision())) {
            row.putLong(field, buf.getLong(at));
            return cursor;
        }
        // The little-endian i128 as BigInteger#toByteArray writes it: big-endian, minimal.
        int n = WIDE_DECIMAL_BYTES;
        while (n > 1 && signExtends(buf.get(at + n - 1), buf.get(at + n - 2))) {
            n--;
        }
        for (int b = 0; b < n; b++) {
            row.put(rowAt + cursor + b, buf.get(at + n - 1 - b));
        }
        row.putLong(field, offsetAndSize(cursor, n));
        return cursor + WIDE_DECIMAL_BYTES;
    }

    /** Whether the top byte {@code top} only repeats the sign of the byte {@code next} below. */
    private static boolean signExtends(byte top, byte next) {
        return (top == 0 && next >= 0) || (top == -1 && next < 0);
    }

    private static int bytes(
            MemorySegment row, int rowAt, int field, ByteBuffer buf, int from, int n, int cursor) {
        if (n > MAX_INLINE) {
            row.put(rowAt + cursor, buf.array(), buf.arrayOffset() + from, n);
            row.putLong(field, offsetAndSize(cursor, n));
            return cursor + roundToWord(n);
        }
        long inline = 0;
        for (int b = 0; b < n; b++) {
            long v = buf.get(from + b) & 0xFFL;
            inline |= v << (8 * (BinaryRowData.LITTLE_ENDIAN ? b : MAX_INLINE - 1 - b));
        }
        row.putLong(field, ((0x80L | n) << 56) | inline);
        return cursor;
    }

    /** A TIMESTAMP(_LTZ): the encoding's micros (precision up to 6) or nanos, as Flink's. */
    private static int timestamp(
            MemorySegment row, int rowAt, int field, ColumnType t, long value, int cursor) {
        long perMilli = t.precision() <= 6 ? 1_000L : 1_000_000L;
        long millis = Math.floorDiv(value, perMilli);
        if (TimestampData.isCompact(t.precision())) {
            row.putLong(field, millis);
            return cursor;
        }
        long nanoOfMilli = Math.floorMod(value, perMilli) * (1_000_000L / perMilli);
        row.putLong(rowAt + cursor, millis);
        row.putLong(field, offsetAndSize(cursor, nanoOfMilli));
        return cursor + WIDE_TIMESTAMP_BYTES;
    }

    private static long offsetAndSize(int offset, long size) {
        return ((long) offset << 32) | size;
    }
}
