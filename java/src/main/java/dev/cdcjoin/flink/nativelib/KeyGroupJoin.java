package dev.cdcjoin.flink.nativelib;

import java.nio.ByteBuffer;
import java.util.function.LongSupplier;

/**
 * What the two-table join ({@link NativeJoin}) and the multi-way join ({@link NativeMultiJoin})
 * share, with one set of native entry points for both (Rust {@code cdcjoin_jni::join}): a native
 * join owning a key group range, fed batches of key group blocks in direct buffers, its output the
 * joined rows (one row per input, or Flink rows) or, chained, the next join's input blocks, its
 * state written and restored one section per key group, live or frozen at an instant.
 *
 * <p>Not thread-safe: one instance per operator instance. {@link #close()} frees the native state;
 * any later call throws {@link IllegalStateException}. A {@link FrozenState} taken with {@link
 * #freeze()} is the exception: it may be written on another thread while the join goes on.
 */
public abstract class KeyGroupJoin extends NativeHandle {

    private static final int INITIAL_OUTPUT = 256 * 1024;

    KeyGroupJoin(String kind, LongSupplier create) {
        super(kind, INITIAL_OUTPUT, create);
    }

    /**
     * Makes the output of later batches the input of a next join: instead of joined rows, {@link
     * #processBatch} returns {@code rejections u32 | rejection* | block*}, the rejection entries of
     * the rows' format then the next join's input blocks ({@code keyGroup u16 | count u32 | len u32
     * | changes}, one per key group of the next join key), each joined row projected to this join's
     * output columns (Rust {@code cdcjoin_join::chain}; a multi-way join's projection indexes its
     * inputs' columns in input order).
     *
     * @param chainJson the {@code ChainSpec} as JSON (projection, next join key, max parallelism)
     * @throws IllegalArgumentException if the declaration is invalid
     */
    public final void chain(String chainJson) {
        chain(open(), chainJson);
    }

    /**
     * Makes each joined row of later batches a row in Flink's {@code BinaryRowData} layout: instead
     * of one row per input, a joined row's body is {@code len u32 | row}, the output row projected
     * to this join's output columns with its kind in its header byte (Rust {@code
     * cdcjoin_join::flink_rows}); rejections are as before.
     *
     * @param specJson the {@code FlinkRowsSpec} as JSON (projection)
     * @throws IllegalArgumentException if the declaration is invalid
     */
    public final void flinkRows(String specJson) {
        flinkRows(open(), specJson);
    }

    /**
     * Joins a batch: key group blocks, each behind its side byte (two-table join) or its input's
     * index (multi-way join).
     *
     * @param in direct buffer holding the blocks at positions {@code [0, length)}
     * @param length bytes
     * @param nowMs current time in milliseconds (for state TTL)
     * @return the output entries (position 0, limit = length), valid until the next call
     * @throws IllegalStateException if a record is invalid or (policy FAIL) retracts an absent row
     */
    public final ByteBuffer processBatch(ByteBuffer in, int length, long nowMs) {
        long h = open();
        return collect(h, processBatch(h, in, length, nowMs, output()));
    }

    /**
     * Whether the last {@link #processBatch} or {@link #continueBatch} stopped with changes left: a
     * call stops after the change, or within a change after the joined row, at which its output
     * reaches the bound (32 MiB, Rust {@code batch::DEFAULT_OUTPUT_BOUND}), so that changes on a
     * key joined with many rows are emitted in pieces instead of as one output of all their rows. A
     * batch is refused until the changes left are joined.
     *
     * @return whether {@link #continueBatch} has changes to join
     */
    public final boolean hasPending() {
        return hasPending(open());
    }

    /**
     * Joins what the last call left at its output bound, as {@link #processBatch} joins a batch and
     * at that batch's time (stopping again at the bound).
     *
     * @return the output entries (position 0, limit = length), valid until the next call
     */
    public final ByteBuffer continueBatch() {
        long h = open();
        return collect(h, continueBatch(h, output()));
    }

    /**
     * Snapshots part of the state: {@code (keyGroup u32 | len u32 | payload)*}, one section ({@code
     * len u32 | payload}) per key group holding state, from {@code fromKeyGroup} on in key group
     * order, stopping after the section that brings the output to {@code maxBytes} or more. Taken
     * chunk by chunk, a snapshot holds about {@code maxBytes} plus one key group's section outside
     * the native state, however large the state is.
     *
     * @param fromKeyGroup the first key group to look at
     * @param maxBytes the size after which no further section is added
     * @return the chunk (position 0, limit = length; empty when no key group from {@code
     *     fromKeyGroup} on holds state), valid until the next call
     */
    public final ByteBuffer snapshot(int fromKeyGroup, int maxBytes) {
        long h = open();
        return collect(h, snapshot(h, output(), fromKeyGroup, maxBytes));
    }

    /**
     * Chooses how later snapshots (and states frozen later) write their sections: LZ4-compressed
     * (format 3) or plain (format 2). A restore reads either, whatever the setting.
     *
     * @param lz4 whether to compress
     */
    public final void setSnapshotCompression(boolean lz4) {
        setSnapshotCompression(open(), lz4);
    }

    /**
     * Freezes the state as it is now, for a snapshot written while the join goes on, possibly on
     * another thread: takes time proportional to the key groups, not to the state. While a frozen
     * state shares a key group, the join copies each key of it before its first write to it (all
     * inputs' rows of the key); {@link FrozenState#close()} frees what only the frozen state holds
     * (counted meanwhile as {@link NativeCounters#STATE_FROZEN_BYTES}).
     *
     * @return the frozen state, to be closed when its snapshot is written or aborted
     */
    public final FrozenState freeze() {
        return new FrozenState(freeze(open()));
    }

    /**
     * Merges the keys copied while frozen states held their key groups back into the state, for the
     * key groups the frozen states have released, and frees the copies. Each {@link #processBatch}
     * ends with this; call it once a frozen state is closed when no batch may come soon, or the
     * merge falls into the next {@link #freeze()}, a checkpoint's synchronous phase.
     */
    public final void settle() {
        settle(open());
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
    public final void restore(ByteBuffer in, int length, int keyGroup) {
        restore(open(), in, length, keyGroup);
    }

    /**
     * Reads the counters, in the order of the join's counter names.
     *
     * @param into an array of at least as many values as the join has counters
     */
    final void readStats(long[] into) {
        stats(open(), into);
    }

    private ByteBuffer collect(long h, long result) {
        return collect(result, out -> takeOutput(h, out));
    }

    @Override
    final void release(long handle) {
        free(handle);
    }

    static native void chain(long handle, String chainJson);

    static native void flinkRows(long handle, String specJson);

    static native long processBatch(
            long handle, ByteBuffer in, int length, long nowMs, ByteBuffer out);

    static native long continueBatch(long handle, ByteBuffer out);

    static native boolean hasPending(long handle);

    static native long takeOutput(long handle, ByteBuffer out);

    static native long snapshot(long handle, ByteBuffer out, int fromKeyGroup, int maxBytes);

    static native void restore(long handle, ByteBuffer in, int length, int keyGroup);

    static native void setSnapshotCompression(long handle, boolean lz4);

    static native long freeze(long handle);

    static native void settle(long handle);

    static native long snapshotFrozen(long frozen, ByteBuffer out, int fromKeyGroup, int maxBytes);

    static native long takeFrozenOutput(long frozen, ByteBuffer out);

    static native void releaseFrozen(long frozen);

    static native void stats(long handle, long[] into);

    static native void free(long handle);
}
