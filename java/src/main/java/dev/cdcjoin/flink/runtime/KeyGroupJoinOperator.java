package dev.cdcjoin.flink.runtime;

import dev.cdcjoin.flink.BadRecord;
import dev.cdcjoin.flink.BadRecordPolicy;
import dev.cdcjoin.flink.CdcJoinMetrics;
import dev.cdcjoin.flink.JoinDefinition;
import dev.cdcjoin.flink.codec.RowCodec;
import dev.cdcjoin.flink.nativelib.KeyGroupJoin;
import dev.cdcjoin.flink.nativelib.NativeCounters;
import dev.cdcjoin.flink.nativelib.StateChunks;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;
import org.apache.flink.api.common.TaskInfo;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.OperatorSnapshotFutures;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.tasks.mailbox.TaskMailbox;

/**
 * What the native join operators ({@link NativeJoinOperator}, {@link NativeMultiJoinOperator})
 * share, so that the join rules of the operator live in one place: a native join ({@link
 * KeyGroupJoin}) owning this subtask's key groups, its state held as Flink raw keyed state (one
 * section per key group, written by {@link FrozenStateSnapshot}, restored by {@link
 * KeyGroupSections}) and accounted as managed memory, fed from one batch buffer that is always
 * flushed before a checkpoint barrier; each flush joins the buffer in one native call and emits its
 * output in the operator's form ({@link JoinedRows}) or, chained, as the next join's batches, each
 * rejected change handed to the bad-record policy. A subclass says what differs: how its inputs
 * arrive, its native join, its metrics.
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

    /** The join: its inputs, output columns and native declarations. */
    final JoinDefinition definition;

    /** What the operator emits: its rows' form, or the next join's side it feeds. */
    private final JoinOutput<OUT> emits;

    /** Where rejected changes go. */
    private final BadRecordPolicy policy;

    /** The native join, freed in {@link #close()}. */
    private transient KeyGroupJoin join;

    private transient JoinedRows joined;
    private transient HeapCopy heapCopy;
    private transient JoinBatches.Entries entries;
    private transient StreamRecord<OUT> reuse;
    private transient Counter rowsOut;

    /** The task thread's mailbox, where a snapshot's writer asks for {@link #settle()}. */
    private transient MailboxExecutor taskThread;

    KeyGroupJoinOperator(
            JoinDefinition definition,
            int batchSize,
            long maxFlushDelayMs,
            BadRecordPolicy policy,
            JoinOutput<OUT> output) {
        super(batchSize, maxFlushDelayMs);
        this.definition = Objects.requireNonNull(definition, "definition");
        this.policy = Objects.requireNonNull(policy, "policy");
        this.emits = Objects.requireNonNull(output, "output");
    }

    /**
     * Creates the native join for key groups {@code [firstKeyGroup, lastKeyGroup]}.
     *
     * @return the join, which {@link #close()} frees
     */
    abstract KeyGroupJoin createJoin(int firstKeyGroup, int lastKeyGroup);

    /** The output rows in {@code form}, decoded with each input's codec and projected. */
    private JoinedRows outputRows(JoinedRows.Form form) {
        RowCodec[] codecs =
                definition.inputs().stream()
                        .map(s -> new RowCodec(s.schema()))
                        .toArray(RowCodec[]::new);
        int columns = definition.outputNames().length;
        int[] projectedInput = new int[columns];
        int[] projectedColumn = new int[columns];
        for (int i = 0; i < columns; i++) {
            projectedInput[i] = definition.inputOf(i);
            projectedColumn[i] = definition.columnOf(i);
        }
        return new JoinedRows(form, codecs, projectedInput, projectedColumn);
    }

    /** The name of input {@code input} (its table), for errors and bad records. */
    private String inputName(byte input) {
        return definition.inputs().get(input).name();
    }

    /** Copies the native counters after a batch of {@code records} input changes. */
    abstract void updateStats(int records);

    /** A native counter by its name ({@link NativeCounters}'s names, which both joins share). */
    abstract long counter(String name);

    /**
     * Registers a gauge ({@link CdcJoinMetrics#ofNativeCounter}) per native counter of {@code
     * names} but those {@code countedHere} (which the operator counts itself, or which do not
     * apply), each reading {@link #counter} as copied after the last batch.
     */
    void registerGauges(List<String> names, Predicate<String> countedHere) {
        for (String name : names) {
            if (!countedHere.test(name)) {
                getMetricGroup().gauge(CdcJoinMetrics.ofNativeCounter(name), () -> counter(name));
            }
        }
    }

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

    /** A join feeding a next join keys its output for the next join's key groups. */
    @Override
    protected final boolean keysItsBatches() {
        return emits.next != null;
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
        join = createJoin(keyGroups.getStartKeyGroup(), keyGroups.getEndKeyGroup());
        if (emits.next != null) {
            join.chain(definition.chainJson(emits.next, outputKeyGroups));
        } else if (emits.form == JoinedRows.Form.ROW_DATA) {
            join.flinkRows(definition.flinkRowsJson());
        }
        // Flink's own switch (execution.checkpointing.snapshot-compression, off by default):
        // LZ4 halves the checkpoint bytes for CPU on the join's cores, worth it on slow storage.
        join.setSnapshotCompression(getExecutionConfig().isUseSnapshotCompression());
        if (context.isRestored()) {
            long start = System.nanoTime();
            restoredBytes = KeyGroupSections.restore(context, join::restore);
            restoreMillis = (System.nanoTime() - start) / 1_000_000;
        }
    }

    @Override
    public void open() throws Exception {
        super.open();
        batch = new BatchBuffer(256 * 1024);
        long bytes = restoredBytes;
        long millis = restoreMillis;
        getMetricGroup().gauge(CdcJoinMetrics.RESTORED_STATE_BYTES, () -> bytes);
        getMetricGroup().gauge(CdcJoinMetrics.STATE_RESTORE_MILLIS, () -> millis);
        joined = outputRows(emits.form);
        heapCopy = new HeapCopy();
        entries = new JoinBatches.Entries(joined.rowsPerEntry());
        reuse = new StreamRecord<>(null);
        rowsOut = getMetricGroup().counter(CdcJoinMetrics.ROWS_OUT);
        taskThread =
                getContainingTask()
                        .getMailboxExecutorFactory()
                        .createExecutor(TaskMailbox.MIN_PRIORITY);
        updateStats(0);
    }

    /** Appends input {@code input}'s batch, checked to belong here, and joins when it is due. */
    final void append(byte input, ChangeBatch changes) throws Exception {
        KeyGroupRoutes.check(
                inputName(input), changes, maxParallelism, keyGroups, getRuntimeContext());
        JoinBatches.frame(batch, input, changes);
        afterAppend(batch.records(), batch.length());
    }

    /**
     * Joins the buffered batch, if any, and emits its output, in as many native calls as its output
     * bound asks for ({@link dev.cdcjoin.flink.nativelib.KeyGroupJoin#hasPending()}).
     */
    @Override
    public final void flush() {
        int records = batch.records();
        if (records == 0) {
            return;
        }
        long now = getProcessingTimeService().getCurrentProcessingTime();
        emit(join.processBatch(batch.buffer(), batch.length(), now));
        batch.clear();
        while (join.hasPending()) {
            emit(join.continueBatch());
        }
        updateStats(records);
    }

    /** Emits one native call's output. */
    private void emit(ByteBuffer output) {
        ByteBuffer out = heapCopy.of(output);
        rowsOut.inc(emits.next == null ? emitRows(out) : emitChained(out));
    }

    /**
     * Emits the rows of a batch's output ({@link JoinBatches.Entries}), each with the timestamp in
     * its stamp (that of the input record that caused it), and hands rejected changes to the
     * bad-record policy.
     *
     * @return the rows emitted
     */
    @SuppressWarnings("unchecked") // OUT is the type of the operator's form
    private long emitRows(ByteBuffer out) {
        long rows = 0;
        JoinBatches.Entries e = entries.reset(out, 0);
        joined.newOutput();
        while (e.next()) {
            if (e.isRejection()) {
                reject(e.rejectedSide(), e.message());
                continue;
            }
            OUT row = (OUT) joined.of(out, e);
            output.collect(ChangeBlocks.stamped(out, e.stampAt(), reuse, row));
            rows++;
        }
        return rows;
    }

    /**
     * Emits a chained output ({@code rejections u32 | rejection* | block*}, see {@link
     * dev.cdcjoin.flink.nativelib.KeyGroupJoin#chain}): hands each rejection to the bad-record
     * policy, then emits one {@link ChangeBatch} per exchange block, without a timestamp (the next
     * join's input as the decoder's batches are).
     *
     * @return the changes emitted
     */
    @SuppressWarnings("unchecked") // OUT is ChangeBatch for an operator whose output is chained
    private long emitChained(ByteBuffer out) {
        JoinBatches.Entries e = entries.reset(out, JoinBatches.CHAINED_HEADER_LEN);
        for (int i = out.getInt(0); i > 0; i--) {
            e.next();
            reject(e.rejectedSide(), e.message());
        }
        long changes = 0;
        for (int p = e.end(); p < out.limit(); ) {
            ChangeBatch block = ChangeBlocks.readBlock(out, p, outputKeyGroups);
            reuse.replace((OUT) block);
            reuse.eraseTimestamp();
            output.collect(reuse);
            changes += block.count;
            p += ChangeBlocks.BLOCK_HEADER_LEN + block.payload.length;
        }
        return changes;
    }

    /**
     * Applies the bad-record policy to a change of input {@code input} the native join rejected for
     * {@code message}: fails the job, or sends a {@link BadRecord} to {@link BadRecord#OUTPUT}.
     */
    private void reject(byte input, String message) {
        String table = inputName(input);
        String reason = table + ": change rejected by the join: " + message;
        if (policy == BadRecordPolicy.FAIL) {
            throw new IllegalStateException(
                    reason + " (bad-record policy FAIL; SIDE_OUTPUT sends it to the bad records)");
        }
        output.collect(
                BadRecord.OUTPUT, new StreamRecord<>(new BadRecord(table, -1, null, reason)));
    }

    /** Joins what is buffered and publishes the final counters as job accumulators. */
    @Override
    public void finish() throws Exception {
        flush();
        publishAccumulators(this::counter);
        super.finish();
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
     * state: the synchronous phase (this call, on the task thread) freezes the native state (in
     * time proportional to the key groups, {@link KeyGroupJoin#freeze()}), and {@link
     * FrozenStateSnapshot} writes it in the asynchronous phase while the join goes on. The bytes
     * and the handle are those the synchronous raw keyed state stream would give, so restore and
     * rescaling are unchanged.
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
        Callable<StateChunks> state = join::freeze;
        return FrozenStateSnapshot.install(
                futures,
                state,
                this::settleOnTaskThread,
                factory,
                keyGroups,
                SNAPSHOT_CHUNK_BYTES,
                getContainingTask().getCancelables());
    }

    /**
     * Asks the task thread, from the thread that released a snapshot's frozen state, to {@link
     * #settle()}: each batch settles the join, but when none comes before the next checkpoint (an
     * idle input, or the end of one), the merge would fall into that checkpoint's synchronous
     * phase.
     */
    private void settleOnTaskThread() {
        try {
            taskThread.execute(this::settle, "settle the native join after a snapshot");
        } catch (RejectedExecutionException ending) {
            // The task's mailbox is closed: it freezes no more state.
        }
    }

    /** Merges the keys copied for released snapshots back into the join, and recounts its state. */
    private void settle() {
        if (join != null) {
            join.settle();
            updateStats(0);
        }
    }

    @Override
    public void close() throws Exception {
        try {
            super.close();
        } finally {
            if (join != null) {
                join.close();
                join = null;
            }
            if (memory != null) {
                memory.releaseAll();
            }
        }
    }
}
