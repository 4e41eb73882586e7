package dev.cdcjoin.flink.nativelib;

import java.nio.ByteBuffer;

/**
 * The state of a native join at the instant it was frozen ({@link KeyGroupJoin#freeze()}; Rust
 * {@code cdcjoin_join::FrozenState}), written while the join goes on. Thread-safe against the
 * join's own calls; one thread at a time writes it.
 */
public final class FrozenState implements StateChunks {

    private static final int INITIAL_OUTPUT = 256 * 1024;

    private long handle;
    private ByteBuffer output = DirectBuffers.allocate(INITIAL_OUTPUT);

    FrozenState(long handle) {
        this.handle = handle;
    }

    /**
     * A chunk of the frozen state, in the format and with the contract of {@link
     * KeyGroupJoin#snapshot(int, int)}, except that each key group's section is handed out once
     * (what the frozen state held of it is released then): a chunk asking for a key group again
     * fails with {@link IllegalStateException}.
     *
     * @param fromKeyGroup the first key group to look at
     * @param maxBytes the size after which no further section is added
     * @return the chunk, valid until the next call
     */
    @Override
    public synchronized ByteBuffer snapshot(int fromKeyGroup, int maxBytes) {
        if (handle == 0) {
            throw new IllegalStateException("FrozenState is closed");
        }
        long h = handle;
        long r = KeyGroupJoin.snapshotFrozen(h, output, fromKeyGroup, maxBytes);
        output = DirectBuffers.result(r, output, out -> KeyGroupJoin.takeFrozenOutput(h, out));
        return output;
    }

    /** Releases the frozen state and what only it holds; idempotent. */
    @Override
    public synchronized void close() {
        if (handle != 0) {
            long h = handle;
            handle = 0;
            KeyGroupJoin.releaseFrozen(h);
        }
    }
}
