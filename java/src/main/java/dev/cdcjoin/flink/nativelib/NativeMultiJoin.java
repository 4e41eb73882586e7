package dev.cdcjoin.flink.nativelib;

import java.nio.ByteBuffer;
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
 * <p>Not thread-safe: one instance per operator instance. {@link #close()} frees the native state;
 * any later call throws {@link IllegalStateException}. A {@link FrozenState} taken with {@link
 * #freeze()} is the exception: it may be written on another thread while the join goes on, as the
 * two-table join's.
 */
public final class NativeMultiJoin extends NativeHandle implements KeyGroupJoin {

    private static final int INITIAL_OUTPUT = 256 * 1024;

    private static final FrozenState.Calls FROZEN =
            new FrozenState.Calls(
                    "NativeMultiJoin.Frozen",
                    NativeMultiJoin::snapshotFrozen,
                    NativeMultiJoin::takeFrozenOutput,
                    NativeMultiJoin::releaseFrozen);

    /**
     * Creates a join. Loads the native library if needed.
     *
     * @param specJson the {@code MultiwaySpec} as JSON (inputs, join type per step, key groups)
     * @throws IllegalArgumentException if the declaration is invalid
     */
    public NativeMultiJoin(String specJson) {
        super("NativeMultiJoin", INITIAL_OUTPUT, () -> create(specJson));
    }

    /**
     * Makes the output of later batches the input of a next join, as {@link NativeJoin#chain} does:
     * {@link #processBatch} returns {@code rejections u32 | rejection* | block*}, each joined row
     * projected to this join's output columns (the projection indexes the inputs' columns in input
     * order) and grouped by the key group of the next join's key.
     *
     * @param chainJson the {@code ChainSpec} as JSON (projection, next join key, max parallelism)
     * @throws IllegalArgumentException if the declaration is invalid
     */
    public void chain(String chainJson) {
        chain(open(), chainJson);
    }

    /**
     * Joins a batch.
     *
     * @param in direct buffer holding the input blocks at positions {@code [0, length)}
     * @param length bytes
     * @return the output entries (position 0, limit = length), valid until the next call
     * @throws IllegalStateException if a record is invalid or (policy FAIL) retracts an absent row
     */
    public ByteBuffer processBatch(ByteBuffer in, int length) {
        long h = open();
        return collect(h, processBatch(h, in, length, output()));
    }

    /**
     * Snapshots part of the live state, in the format and with the contract of {@link
     * NativeJoin#snapshot(int, int)}.
     *
     * @param fromKeyGroup the first key group to look at
     * @param maxBytes the size after which no further section is added
     * @return the chunk, valid until the next call
     */
    public ByteBuffer snapshot(int fromKeyGroup, int maxBytes) {
        long h = open();
        return collect(h, snapshot(h, output(), fromKeyGroup, maxBytes));
    }

    /**
     * Freezes the state as it is now, for a snapshot written while the join goes on, possibly on
     * another thread, as {@link NativeJoin#freeze()} does: in time proportional to the key groups,
     * each key the join writes to meanwhile copied first (all inputs' rows of the key), what only
     * the frozen state holds counted as {@code state_frozen_bytes} (and in {@code
     * state_heap_bytes}).
     *
     * @return the frozen state, to be closed when its snapshot is written or aborted
     */
    public FrozenState freeze() {
        return new FrozenState(FROZEN, freeze(open()));
    }

    /**
     * Chooses whether later snapshots (and states frozen later) write LZ4-compressed sections; a
     * restore reads either.
     *
     * @param lz4 whether to compress
     */
    public void setSnapshotCompression(boolean lz4) {
        setSnapshotCompression(open(), lz4);
    }

    /**
     * Restores one section (as written by {@link #snapshot(int, int)}, without the key group
     * prefix), which Flink stored under key group {@code keyGroup}: the section must hold that key
     * group, and errors found before its own is read name it.
     *
     * @param in direct buffer holding the section at positions {@code [0, length)}
     * @param length bytes, the whole section
     * @param keyGroup the key group it was stored under
     */
    public void restore(ByteBuffer in, int length, int keyGroup) {
        restore(open(), in, length, keyGroup);
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
        stats(open(), into);
    }

    private ByteBuffer collect(long h, long result) {
        return collect(result, out -> takeOutput(h, out));
    }

    @Override
    void release(long handle) {
        free(handle);
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

    static native void chain(long handle, String chainJson);

    static native long processBatch(long handle, ByteBuffer in, int length, ByteBuffer out);

    static native long takeOutput(long handle, ByteBuffer out);

    static native long snapshot(long handle, ByteBuffer out, int fromKeyGroup, int maxBytes);

    static native void restore(long handle, ByteBuffer in, int length, int keyGroup);

    static native void setSnapshotCompression(long handle, boolean lz4);

    static native long freeze(long handle);

    static native long snapshotFrozen(long frozen, ByteBuffer out, int fromKeyGroup, int maxBytes);

    static native long takeFrozenOutput(long frozen, ByteBuffer out);

    static native void releaseFrozen(long frozen);

    static native void stats(long handle, long[] into);

    static native void free(long handle);
}
