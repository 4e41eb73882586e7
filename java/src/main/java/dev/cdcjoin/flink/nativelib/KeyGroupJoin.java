package dev.cdcjoin.flink.nativelib;

import java.nio.ByteBuffer;

/**
 * What the two-table join ({@link NativeJoin}) and the multi-way join ({@link NativeMultiJoin})
 * share: a native join owning a key group range, fed key group batches, its state written and
 * restored one section per key group, its output optionally the input of a next join. The operators
 * that hold either ({@code dev.cdcjoin.flink.runtime.KeyGroupJoinOperator}) make these calls the
 * same way.
 */
public interface KeyGroupJoin extends AutoCloseable {

    /**
     * Makes the output of later batches the input of a next join (see {@link
     * NativeJoin#chain(String)}).
     *
     * @param chainJson the {@code ChainSpec} as JSON (projection, next join key, max parallelism)
     * @throws IllegalArgumentException if the declaration is invalid
     */
    void chain(String chainJson);

    /**
     * Chooses whether later snapshots (and states frozen later) write LZ4-compressed sections; a
     * restore reads either.
     *
     * @param lz4 whether to compress
     */
    void setSnapshotCompression(boolean lz4);

    /**
     * Restores one section, which Flink stored under key group {@code keyGroup} (see {@link
     * NativeJoin#restore(ByteBuffer, int, int)}).
     *
     * @param in direct buffer holding the section at positions {@code [0, length)}
     * @param length bytes, the whole section
     * @param keyGroup the key group it was stored under
     */
    void restore(ByteBuffer in, int length, int keyGroup);

    /**
     * Freezes the state as it is now, for a snapshot written while the join goes on (see {@link
     * NativeJoin#freeze()}).
     *
     * @return the frozen state, to be closed when its snapshot is written or aborted
     */
    FrozenState freeze();

    /** Frees the native state; any later call throws {@link IllegalStateException}. */
    @Override
    void close();
}
