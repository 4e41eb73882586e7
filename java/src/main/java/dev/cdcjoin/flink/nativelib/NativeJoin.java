package dev.cdcjoin.flink.nativelib;

/**
 * A native join engine (Rust {@code cdcjoin_join::JoinEngine}) owning a key group range: the
 * two-table join.
 *
 * <p>Input batches are direct buffers of key group blocks behind their side byte, the output is
 * joined rows and rejections, each entry stamped with the timestamp of the input change that caused
 * it: Rust {@code cdcjoin_join::batch}, mirrored by {@code dev.cdcjoin.flink.runtime.JoinBatches}.
 * Every other call is {@link KeyGroupJoin}'s.
 */
public final class NativeJoin extends KeyGroupJoin {

    /**
     * Creates an engine. Loads the native library if needed.
     *
     * @param specJson the {@code JoinSpec} as JSON (sides, join type, key group range)
     * @throws IllegalArgumentException if the declaration is invalid
     */
    public NativeJoin(String specJson) {
        super("NativeJoin", () -> create(specJson));
    }

    /**
     * Reads the counters.
     *
     * @param into where to put them
     */
    public void stats(NativeCounters into) {
        readStats(into.values);
    }

    static native long create(String specJson);

    static native String counterNames();
}
