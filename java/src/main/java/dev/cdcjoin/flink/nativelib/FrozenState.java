package dev.cdcjoin.flink.nativelib;

import java.nio.ByteBuffer;
import java.util.function.LongConsumer;

/**
 * The state of a native join at the instant it was frozen ({@link NativeJoin#freeze()}, {@link
 * NativeMultiJoin#freeze()}; Rust {@code cdcjoin_join::FrozenState}), written while the join goes
 * on. Thread-safe against the join's own calls; one thread at a time writes it.
 */
public final class FrozenState implements StateChunks {

    private static final int INITIAL_OUTPUT = 256 * 1024;

    private final Calls calls;
    private long handle;
    private ByteBuffer output = DirectBuffers.allocate(INITIAL_OUTPUT);

    FrozenState(Calls calls, long handle) {
        this.calls = calls;
        this.handle = handle;
    }

    /**
     * A chunk of the frozen state, in the format and with the contract of {@link
     * NativeJoin#snapshot(int, int)}, except that each key group's section is handed out once (what
     * the frozen state held of it is released then): a chunk asking for a key group again fails
     * with {@link IllegalStateException}.
     *
     * @param fromKeyGroup the first key group to look at
     * @param maxBytes the size after which no further section is added
     * @return the chunk, valid until the next call
     */
    @Override
    public synchronized ByteBuffer snapshot(int fromKeyGroup, int maxBytes) {
        if (handle == 0) {
            throw new IllegalStateException(calls.name + " is closed");
        }
        long h = handle;
        long r = calls.snapshot.write(h, output, fromKeyGroup, maxBytes);
        output = DirectBuffers.result(r, output, out -> calls.take.take(h, out));
        return output;
    }

    /** Releases the frozen state and what only it holds; idempotent. */
    @Override
    public synchronized void close() {
        if (handle != 0) {
            long h = handle;
            handle = 0;
            calls.release.accept(h);
        }
    }

    /** Writes a chunk of a frozen state ({@code snapshotFrozen}). */
    @FunctionalInterface
    interface Chunk {
        long write(long frozen, ByteBuffer out, int fromKeyGroup, int maxBytes);
    }

    /** Copies the last chunk again into a larger buffer ({@code takeFrozenOutput}). */
    @FunctionalInterface
    interface Take {
        long take(long frozen, ByteBuffer out);
    }

    /** One join class's native calls on its frozen states. */
    static final class Calls {
        private final String name;
        private final Chunk snapshot;
        private final Take take;
        private final LongConsumer release;

        /**
         * The calls.
         *
         * @param name the states' name in errors
         * @param snapshot {@code snapshotFrozen}
         * @param take {@code takeFrozenOutput}
         * @param release {@code releaseFrozen}
         */
        Calls(String name, Chunk snapshot, Take take, LongConsumer release) {
            this.name = name;
            this.snapshot = snapshot;
            this.take = take;
            this.release = release;
        }
    }
}
