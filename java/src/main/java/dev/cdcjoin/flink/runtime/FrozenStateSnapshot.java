package dev.cdcjoin.flink.runtime;

import dev.cdcjoin.flink.codec.ByteBuffers;
import dev.cdcjoin.flink.nativelib.FrozenState;
import dev.cdcjoin.flink.nativelib.StateChunks;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.RunnableFuture;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.runtime.state.AsyncSnapshotCallable;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeOffsets;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedStateCheckpointOutputStream;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.streaming.api.operators.OperatorSnapshotFutures;

/**
 * The asynchronous phase of a native join's checkpoint (two-table or multi-way): writes a {@link
 * FrozenState} as Flink raw keyed state, one section per key group with state, while the join goes
 * on.
 *
 * <p>Why not {@code StateSnapshotContext#getRawKeyedOperatorStateOutput()}: Flink completes that
 * stream in the synchronous phase (the operator writes it on the task thread, and the future only
 * closes it), so the whole state would be copied while the task is stopped. This callable writes
 * the same bytes to the same kind of stream ({@link CheckpointedStateScope#EXCLUSIVE}, opened from
 * the checkpoint's {@link CheckpointStreamFactory}) with the same key group offsets a {@link
 * KeyedStateCheckpointOutputStream} records, and returns the same {@link KeyGroupsStateHandle}
 * (none when no key group has state), so restore and rescaling read it as before. It keeps its own
 * offsets because {@code KeyedStateCheckpointOutputStream#closeAndGetHandle} is not public.
 *
 * <p>As a Flink {@link AsyncSnapshotCallable}, its stream is closed when the checkpoint is
 * cancelled (the task's cancelables cancel its future), and the frozen state is released exactly
 * once whether the write succeeds, fails, or never starts.
 */
final class FrozenStateSnapshot extends AsyncSnapshotCallable<SnapshotResult<KeyedStateHandle>> {

    private final StateChunks frozen;
    private final Runnable released;
    private final CheckpointStreamFactory streams;
    private final KeyGroupRange keyGroups;
    private final int chunkBytes;

    /**
     * A snapshot of {@code frozen}, to be run once.
     *
     * @param frozen the state to write; closed when this ends
     * @param released run once {@code frozen} is closed, on the thread that closed it
     * @param streams where the checkpoint's streams are opened
     * @param keyGroups the operator's key groups, those of {@code frozen}
     * @param chunkBytes bytes of state taken from the engine at a time
     */
    FrozenStateSnapshot(
            StateChunks frozen,
            Runnable released,
            CheckpointStreamFactory streams,
            KeyGroupRange keyGroups,
            int chunkBytes) {
        this.frozen = Objects.requireNonNull(frozen, "frozen");
        this.released = Objects.requireNonNull(released, "released");
        this.streams = Objects.requireNonNull(streams, "streams");
        this.keyGroups = Objects.requireNonNull(keyGroups, "keyGroups");
        this.chunkBytes = chunkBytes;
    }

    /**
     * Replaces the raw keyed state future of an operator's checkpoint {@code futures} by one that
     * writes the frozen native state {@code state} gives, asynchronously, while the operator goes
     * on. On failure the checkpoint's futures are cancelled and the state closed.
     *
     * @param futures the futures {@code AbstractStreamOperator#snapshotState} returned
     * @param state takes the state to write (freezes it)
     * @param released run once the frozen state is closed (written, failed or cancelled), on the
     *     thread that closed it
     * @param streams the checkpoint's stream factory
     * @param keyGroups the operator's key groups
     * @param chunkBytes bytes of state taken from the engine at a time
     * @param cancelables the task's cancelables, which cancel the write with the checkpoint
     * @return {@code futures}
     * @throws Exception if the state cannot be taken
     */
    static OperatorSnapshotFutures install(
            OperatorSnapshotFutures futures,
            Callable<StateChunks> state,
            Runnable released,
            CheckpointStreamFactory streams,
            KeyGroupRange keyGroups,
            int chunkBytes,
            CloseableRegistry cancelables)
            throws Exception {
        RunnableFuture<SnapshotResult<KeyedStateHandle>> unopened =
                futures.getKeyedStateRawFuture();
        StateChunks chunks = null;
        try {
            chunks = state.call();
            RunnableFuture<SnapshotResult<KeyedStateHandle>> write =
                    new FrozenStateSnapshot(chunks, released, streams, keyGroups, chunkBytes)
                            .toAsyncSnapshotFutureTask(cancelables);
            futures.setKeyedStateRawFuture(write);
        } catch (Throwable t) {
            if (chunks != null) {
                chunks.close();
            }
            cancelQuietly(futures, t);
            throw t;
        }
        // Flink's raw keyed state stream was never opened (the operator writes none in
        // snapshotState(context), and Flink refuses legacy raw timers for an operator with custom
        // raw keyed state): its future only unregisters itself from the task.
        unopened.cancel(true);
        return futures;
    }

    /** Cancels a checkpoint's futures after {@code cause}, to which a failure to do so is added. */
    private static void cancelQuietly(OperatorSnapshotFutures futures, Throwable cause) {
        try {
            futures.cancel();
        } catch (Exception e) {
            cause.addSuppressed(e);
        }
    }

    @Override
    protected SnapshotResult<KeyedStateHandle> callInternal() throws Exception {
        KeyGroupsOutput out = null;
        byte[] copy = new byte[64 * 1024];
        int from = keyGroups.getStartKeyGroup();
        for (ByteBuffer chunk = frozen.snapshot(from, chunkBytes);
                chunk.limit() > 0;
                chunk = frozen.snapshot(from, chunkBytes)) {
            if (out == null) {
                out = new KeyGroupsOutput(open(), keyGroups);
            }
            from = out.writeSections(chunk, copy) + 1;
        }
        if (out == null) {
            return SnapshotResult.of(null);
        }
        if (!snapshotCloseableRegistry.unregisterCloseable(out.stream)) {
            throw new IOException("join state snapshot: the stream was closed (cancelled)");
        }
        return SnapshotResult.of(out.closeAndGetHandle());
    }

    /** Opens the checkpoint's stream, registered so that cancelling the snapshot closes it. */
    private CheckpointStateOutputStream open() throws IOException {
        CheckpointStateOutputStream stream =
                streams.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE);
        snapshotCloseableRegistry.registerCloseable(stream);
        return stream;
    }

    @Override
    protected void cleanupProvidedResources() {
        frozen.close();
        released.run();
    }

    /** A checkpoint stream of key group sections and the offset where each starts. */
    private static final class KeyGroupsOutput {
        private final CheckpointStateOutputStream stream;
        private final KeyGroupRangeOffsets offsets;

        KeyGroupsOutput(CheckpointStateOutputStream stream, KeyGroupRange keyGroups) {
            this.stream = stream;
            long[] none = new long[keyGroups.getNumberOfKeyGroups()];
            Arrays.fill(none, KeyedStateCheckpointOutputStream.NO_OFFSET_SET);
            this.offsets = new KeyGroupRangeOffsets(keyGroups, none);
        }

        /**
         * Writes a chunk's sections ({@code keyGroup u32 | len u32 | payload}), each as {@code len
         * | payload} at its key group's offset; returns the last key group written.
         */
        int writeSections(ByteBuffer chunk, byte[] copy) throws IOException {
            int p = 0;
            int keyGroup = -1;
            while (p < chunk.limit()) {
                keyGroup = chunk.getInt(p);
                int length = 4 + chunk.getInt(p + 4);
                startKeyGroup(keyGroup);
                for (int done = 0; done < length; ) {
                    int n = Math.min(copy.length, length - done);
                    ByteBuffers.read(chunk, p + 4 + done, copy, 0, n);
                    stream.write(copy, 0, n);
                    done += n;
                }
                p += 4 + length;
            }
            return keyGroup;
        }

        private void startKeyGroup(int keyGroup) throws IOException {
            if (!offsets.getKeyGroupRange().contains(keyGroup)) {
                throw new IllegalStateException(
                        "join state snapshot: key group "
                                + keyGroup
                                + " is not in "
                                + offsets.getKeyGroupRange());
            }
            if (offsets.getKeyGroupOffset(keyGroup)
                    != KeyedStateCheckpointOutputStream.NO_OFFSET_SET) {
                throw new IllegalStateException(
                        "join state snapshot: key group " + keyGroup + " written twice");
            }
            offsets.setKeyGroupOffset(keyGroup, stream.getPos());
        }

        /** Closes the stream; its handle with the key group offsets, or null if it has none. */
        KeyGroupsStateHandle closeAndGetHandle() throws IOException {
            StreamStateHandle handle = stream.closeAndGetHandle();
            return handle == null ? null : new KeyGroupsStateHandle(offsets, handle);
        }
    }
}
