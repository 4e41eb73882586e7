package dev.cdcjoin.bench;

import org.apache.flink.core.memory.MemorySegment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.binary.BinaryStringData;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.types.Row;

/**
 * The order-independent checksum of a materialized changelog: every output row's 64-bit hash of its
 * values (not its kind) is added for {@code +I}/{@code +U} and subtracted for {@code -U}/{@code
 * -D}, and a signed count likewise. Two changelogs that materialize to the same multiset of rows
 * have equal sums, whatever their order and intermediate retractions.
 *
 * <p>Values are hashed by kind, not by Java class: every integer type as its {@code long} value,
 * strings by their UTF-16 chars, null as a constant; so an {@code Integer} from one variant and a
 * {@code Long} from another would still agree on the same number.
 */
public final class RowHash {

    private RowHash() {}

    private static final long NULL = 0x9E3779B97F4A7C15L;

    /** The hash of a row's values. */
    public static long of(Row row) {
        long h = 0x243F6A8885A308D3L;
        int n = row.getArity();
        for (int i = 0; i < n; i++) {
            h = (h ^ value(row.getField(i))) * 0x100000001B3L + i;
        }
        return fmix(h);
    }

    /** The hash of values given as an array (the generator's expected rows). */
    public static long of(Object... values) {
        long h = 0x243F6A8885A308D3L;
        for (int i = 0; i < values.length; i++) {
            h = (h ^ value(values[i])) * 0x100000001B3L + i;
        }
        return fmix(h);
    }

    /**
     * The hash of an internal row whose fields have types {@code types}: that of {@link #of(Row)}
     * for the same values, read in place (strings by the UTF-16 chars of their UTF-8 bytes, without
     * a {@code String}).
     */
    public static long of(RowData row, LogicalType[] types) {
        long h = 0x243F6A8885A308D3L;
        for (int i = 0; i < types.length; i++) {
            h = (h ^ value(row, i, types[i])) * 0x100000001B3L + i;
        }
        return fmix(h);
    }

    /**
     * Checks that {@link #of(RowData, LogicalType[])} hashes every type of {@code types} (integers
     * and strings, the bench's columns).
     *
     * @throws IllegalArgumentException if it does not
     */
    static void check(LogicalType[] types) {
        for (LogicalType t : types) {
            switch (t.getTypeRoot()) {
                case TINYINT:
                case SMALLINT:
                case INTEGER:
                case BIGINT:
                case CHAR:
                case VARCHAR:
                    break;
                default:
                    throw new IllegalArgumentException("RowHash has no hash of RowData's " + t);
            }
        }
    }

    private static long value(RowData row, int i, LogicalType type) {
        if (row.isNullAt(i)) {
            return NULL;
        }
        switch (type.getTypeRoot()) {
            case TINYINT:
                return number(row.getByte(i));
            case SMALLINT:
                return number(row.getShort(i));
            case INTEGER:
                return number(row.getInt(i));
            case BIGINT:
                return number(row.getLong(i));
            default:
                return string((BinaryStringData) row.getString(i));
        }
    }

    /**
     * A string's hash, read the cheaper way: one that holds a Java object (Flink's formats make
     * theirs with {@code StringData.fromString}) by that {@code String}'s chars, else by its bytes.
     */
    private static long string(BinaryStringData s) {
        String java = s.getJavaObject();
        return java != null ? chars(java) : utf16(s);
    }

    private static long number(long v) {
        return fmix(v + 0x632BE59BD9B4E019L);
    }

    /**
     * {@link #chars(CharSequence)} of the string the UTF-8 bytes of {@code s} decode to, read from
     * the heap array of its one segment (where a row's strings are) or else from a copy.
     */
    private static long utf16(BinaryStringData s) {
        MemorySegment[] segments = s.getSegments();
        if (segments.length == 1 && !segments[0].isOffHeap()) {
            return utf16(segments[0].getArray(), s.getOffset(), s.getSizeInBytes());
        }
        return utf16(s.toBytes(), 0, s.getSizeInBytes());
    }

    /** {@link #chars(CharSequence)} of the string the UTF-8 bytes {@code b[from, from + n)}. */
    private static long utf16(byte[] b, int from, int n) {
        long h = 0xCBF29CE484222325L;
        int chars = 0;
        for (int k = from, end = from + n; k < end; ) {
            int c = b[k] & 0xFF;
            if (c < 0x80) {
                h = (h ^ c) * 0x100000001B3L;
                chars++;
                k++;
                continue;
            }
            int length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
            int cp = c & (0x7F >> length);
            for (int j = 1; j < length; j++) {
                cp = (cp << 6) | (b[k + j] & 0x3F);
            }
            k += length;
            if (Character.isBmpCodePoint(cp)) {
                h = (h ^ cp) * 0x100000001B3L;
                chars++;
            } else {
                h = (h ^ Character.highSurrogate(cp)) * 0x100000001B3L;
                h = (h ^ Character.lowSurrogate(cp)) * 0x100000001B3L;
                chars += 2;
            }
        }
        return fmix(h ^ chars);
    }

    private static long value(Object v) {
        if (v == null) {
            return NULL;
        }
        if (v instanceof Number) {
            return number(((Number) v).longValue());
        }
        return chars(v instanceof CharSequence ? (CharSequence) v : v.toString());
    }

    /** A string's hash: FNV-1a over its UTF-16 chars, then its length. */
    private static long chars(CharSequence s) {
        long h = 0xCBF29CE484222325L;
        for (int i = 0, n = s.length(); i < n; i++) {
            h = (h ^ s.charAt(i)) * 0x100000001B3L;
        }
        return fmix(h ^ s.length());
    }

    /** MurmurHash3's 64-bit finalizer. */
    static long fmix(long k) {
        k ^= k >>> 33;
        k *= 0xFF51AFD7ED558CCDL;
        k ^= k >>> 33;
        k *= 0xC4CEB93FE53B5A13L;
        k ^= k >>> 33;
        return k;
    }
}
