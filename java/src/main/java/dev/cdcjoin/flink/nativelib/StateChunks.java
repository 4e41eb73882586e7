package dev.cdcjoin.flink.nativelib;

import java.nio.ByteBuffer;

/**
 * A native state that a checkpoint takes in chunks: {@code (keyGroup u32 | len u32 | payload)*},
 * one section per key group holding state, in key group order (see {@link
 * KeyGroupJoin#snapshot(int, int)} for the contract): a {@link FrozenState}.
 */
public interface StateChunks extends AutoCloseable {

    /**
     * The sections from {@code fromKeyGroup} on, stopping after the one that brings the chunk to
     * {@code maxBytes} or more.
     *
     * @param fromKeyGroup the first key group to look at
     * @param maxBytes the size after which no further section is added
     * @return the chunk (position 0, limit = length; empty when nothing is left), valid until the
     *     next call
     */
    ByteBuffer snapshot(int fromKeyGroup, int maxBytes);

    /** Releases what only this state holds. */
    @Override
    void close();
}
