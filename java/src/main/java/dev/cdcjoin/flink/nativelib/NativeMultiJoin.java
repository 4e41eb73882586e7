package dev.cdcjoin.flink.nativelib;

import java.util.Arrays;
import java.util.List;

/**
 * A native multi-way join (Rust {@code cdcjoin_join::multiway::MultiwayJoin}): 2 to 8 inputs
 * sharing one join key, owning a key group range.
 *
 * <p>Input batches are the two-table join's ({@link NativeJoin}) with each block behind its input's
 * index (0 to 7) instead of a side byte; the output is the two-table join's entries with one row
 * per input ({@code kind u8 | (len i32 | row)*inputs}, length -1 for a null-padded input), and
 * rejections naming the input by its index: {@code dev.cdcjoin.flink.runtime.JoinBatches} reads
 * both.
 *
 * <p>Every other call is {@link KeyGroupJoin}'s, as for the two-table join.
 */
public final class NativeMultiJoin extends KeyGroupJoin {

    /**
     * Creates a join. Loads the native library if needed.
     *
     * @param specJson the {@code MultiwaySpec} as JSON (inputs, join type per step, key groups)
     * @throws IllegalArgumentException if the declaration is invalid
     */
    public NativeMultiJoin(String specJson) {
        super("NativeMultiJoin", () -> create(specJson));
    }

    /**
     * The names of the counters {@link #stats(long[])} writes, in its order (Rust {@code
     * MULTIWAY_COUNTER_NAMES}: {@code records_in_0} to {@code records_in_7}, then the two-table
     * join's names for the same counters, such as {@code state_heap_bytes}).
     *
     * @return the names
     */
    public static List<String> counters() {
        return Names.ALL;
    }

    /**
     * Reads the counters.
     *
     * @param into an array of at least {@code counters().size()} values
     */
    public void stats(long[] into) {
        readStats(into);
    }

    /** The library's counter names, read once (loading the library). */
    private static final class Names {
        static final List<String> ALL = load();

        private static List<String> load() {
            NativeLibrary.load();
            return List.copyOf(Arrays.asList(counterNames().split(",")));
        }
    }

    static native long create(String specJson);

    static native String counterNames();
}
