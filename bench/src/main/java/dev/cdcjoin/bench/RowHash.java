package dev.cdcjoin.bench;

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

    private static long value(Object v) {
        if (v == null) {
            return NULL;
        }
        if (v instanceof Number) {
            return fmix(((Number) v).longValue() + 0x632BE59BD9B4E019L);
        }
        CharSequence s = v instanceof CharSequence ? (CharSequence) v : v.toString();
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
