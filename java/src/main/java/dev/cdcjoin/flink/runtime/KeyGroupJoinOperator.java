package dev.cdcjoin.flink.runtime;

import dev.cdcjoin.flink.nativelib.NativeCounters;
import dev.cdcjoin.flink.nativelib.StateChunks;
import java.nio.ByteBuffer;
import java.util.concurrent.Callable;
import java.util.function.BiConsumer;
import java.util.function.ToLongFunction;
import org.apache.flink.api.common.TaskInfo;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.OperatorSnapshotFutures;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * What the native join operators ({@link NativeJoinOperator}, {@link NativeMultiJoinOperator})
 * share: a native state owning this subtask's key groups, held as Flink raw keyed state (one
 * section per key group, written by {@link FrozenStateSnapshot}, restored by {@link
 * KeyGroupSections}), accounted as managed memory, fed from one batch buffer that is always flushed
 * before a checkpoint barrier.
 *
 * @param <OUT> the output type
 */
abstract class KeyGroupJoinOperator<OUT> extends BatchingOperator<OUT> {

    private static final long serialVersionUID = 1L;

    /** Bytes of native state a checkpoint takes from the engine at a time. */
    static final int SNAPSHOT_CHUNK_BYTES = 4 << 20;

    /** Bytes of snapshot the restore read, and its milliseconds (0 when not restored). */
    private transient long restoredBytes;

    private transient long restoreMillis;

    /** The max parallelism, for which every batch's key group must be computed. */
    transient int maxParallelism;

    /** The key groups of this subtask, those the native state holds. */
    transient KeyGroupRange keyGroups;

    /** The changes waiting for the next native call. */
    transient BatchBuffer batch;

    /** The native state's memory, as managed memory. */
    transient ManagedMemoryAccount memory;

    /** The native state, freed in {@link #close()}. */
    private transient AutoCloseable nativeState;

    KeyGroupJoinOperator(int batchSize, long maxFlushDelayMs) {
        super(batchSize, maxFlushDelayMs);
    }

    /**
     * Creates the native state for this subtask's key groups ({@link #keyGroups}, set already),
     * with the snapshot compression asked for.
     *
     * @param lz4 whether its snapshots compress their sections
     * @return the state, which {@link #close()} frees
     */
    abstract AutoCloseable openNativeState(boolean lz4);

    /**
     * Restores one section into the native state.
     *
     * @see KeyGroupSections.Restore
     */
    abstract void restoreSection(ByteBuffer in, int length, int keyGroup);

    /**
     * What a checkpoint writes, taken on the task thread: the native state frozen (in time
     * proportional to the key groups), written while the join goes on.
     *
     * @return the state's chunks
     */
    abstract StateChunks checkpointState();

    /**
     * Publishes the final native counters as job accumulators, summed over subtasks and over the
     * job's native join operators (two-table and multi-way alike): {@value
     * NativeJoinOperator#ACC_STATE_ROWS}, {@value NativeJoinOperator#ACC_STATE_HEAP_BYTES}, {@value
     * NativeJoinOperator#ACC_STATE_ROW_BYTES}, {@value NativeJoinOperator#ACC_ROWS_OUT}, {@value
     * NativeJoinOperator#ACC_ABSENT_RETRACTIONS}.
     *
     * @param counter a native counter's value by its name ({@link NativeCounters}'s names, which
     *     both joins' counters share)
     */
    void publishAccumulators(ToLongFunction<String> counter) {
        accumulate(
                NativeJoinOperator.ACC_STATE_ROWS, counter.applyAsLong(NativeCounters.STATE_ROWS));
        accumulate(
                NativeJoinOperator.ACC_STATE_HEAP_BYTES,
                counter.applyAsLong(NativeCounters.STATE_HEAP_BYTES));
        accumulate(
                NativeJoinOperator.ACC_STATE_ROW_BYTES,
                counter.applyAsLong(NativeCounters.STATE_ROW_BYTES));
        accumulate(NativeJoinOperator.ACC_ROWS_OUT, counter.applyAsLong(NativeCounters.ROWS_OUT));
        accumulate(
                NativeJoinOperator.ACC_ABSENT_RETRACTIONS,
                counter.applyAsLong(NativeCounters.ABSENT_RETRACTIONS));
    }

    private void accumulate(String name, long value) {
        try {
            getRuntimeContext().addAccumulator(name, new LongCounter(value));
        } catch (UnsupportedOperationException alreadyThere) {
            // Another join operator of this task published it.
        }
    }

    @Override
    protected boolean isUsingCustomRawKeyedState() {
        return true;
    }

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        TaskInfo task = getRuntimeContext().getTaskInfo();
        maxParallelism = task.getMaxNumberOfParallelSubtasks();
        keyGroups =
                KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex(
                        maxParallelism,
                        task.getNumberOfParallelSubtasks(),
                        task.getIndexOfThisSubtask());
        memory = ManagedMemoryAccount.of(this, getContainingTask());
        // Flink's own switch (execution.checkpointing.snapshot-compression, off by default):
        // LZ4 halves the checkpoint bytes for CPU on the join's cores, worth it on slow storage.
        nativeState = openNativeState(getExecutionConfig().isUseSnapshotCompression());
        if (context.isRestored()) {
            long start = System.nanoTime();
            restoredBytes = KeyGroupSections.restore(context, this::restoreSection);
            restoreMillis = (System.nanoTime() - start) / 1_000_000;
        }
    }

    @Override
    public void open() throws Exception {
        super.open();
        batch = new BatchBuffer(256 * 1024);
        long bytes = restoredBytes;
        long millis = restoreMillis;
        getMetricGroup().gauge(NativeJoinOperator.RESTORED_STATE_BYTES, () -> bytes);
        getMetricGroup().gauge(NativeJoinOperator.STATE_RESTORE_MILLIS, () -> millis);
    }

    /**
     * Checks that the batch of {@code table} was partitioned for this operator's max parallelism
     * and reached the subtask owning its key group ({@link KeyGroupRoutes#check}).
     */
    void checkRoute(String table, ChangeBatch changes) {
        KeyGroupRoutes.check(table, changes, maxParallelism, keyGroups, getRuntimeContext());
    }

    /**
     * Emits a chained output ({@code rejections u32 | rejection* | block*}, see {@link
     * dev.cdcjoin.flink.nativelib.NativeJoin#chain}), read with {@code entries}: hands each
     * rejection (its input's byte and message) to {@code reject}, then emits one {@link
     * ChangeBatch} per exchange block, without a timestamp (the next join's input as the decoder's
     * batches are).
     *
     * @return the changes emitted
     */
    @SuppressWarnings("unchecked") // OUT is ChangeBatch for an operator whose output is chained
    final long emitChained(
            ByteBuffer out,
            JoinBatches.Entries entries,
            StreamRecord<OUT> reuse,
            BiConsumer<Byte, String> reject) {
        JoinBatches.Entries e = entries.reset(out, JoinBatches.CHAINED_HEADER_LEN);
        for (int i = out.getInt(0); i > 0; i--) {
            e.next();
            reject.accept(e.rejectedSide(), e.message());
        }
        long changes = 0;
        for (int p = e.end(); p < out.limit(); ) {
            ChangeBatch block = ChangeBlocks.readBlock(out, p, maxParallelism);
            reuse.replace((OUT) block);
            reuse.eraseTimestamp();
            output.collect(reuse);
            changes += block.count;
            p += ChangeBlocks.BLOCK_HEADER_LEN + block.payload.length;
        }
        return changes;
    }

    /** Checks that the batch was flushed before the barrier; the state is written elsewhere. */
    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        if (batch.records() > 0) {
            throw new IllegalStateException("join batch not flushed before the checkpoint barrier");
        }
    }

    /**
     * Takes the operator's part of a checkpoint or savepoint as Flink does, except its raw keyed
     * state: the synchronous phase (this call, on the task thread) takes {@link
     * #checkpointState()}, and {@link FrozenStateSnapshot} writes it in the asynchronous phase
     * while the join goes on. The bytes and the handle are those the synchronous raw keyed state
     * stream would give, so restore and rescaling are unchanged.
     */
    @Override
    public OperatorSnapshotFutures snapshotState(
            long checkpointId,
            long timestamp,
            CheckpointOptions checkpointOptions,
            CheckpointStreamFactory factory)
            throws Exception {
        OperatorSnapshotFutures futures =
                super.snapshotState(checkpointId, timestamp, checkpointOptions, factory);
        Callable<StateChunks> state = this::checkpointState;
        return FrozenStateSnapshot.install(
                futures,
                state,
                factory,
                keyGroups,
                SNAPSHOT_CHUNK_BYTES,
                getContainingTask().getCancelables());
    }

    @Override
    public void close() throws Exception {
        try {
            super.close();
        } finally {
            if (nativeState != null) {
                nativeState.close();
                nativeState = null;
            }
            if (memory != null) {
                memory.releaseAll();
            }
        }
    }
}
