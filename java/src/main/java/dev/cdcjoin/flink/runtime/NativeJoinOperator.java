package dev.cdcjoin.flink.runtime;

import dev.cdcjoin.flink.BadRecord;
import dev.cdcjoin.flink.BadRecordPolicy;
import dev.cdcjoin.flink.CdcJoinMetrics;
import dev.cdcjoin.flink.JoinSpec;
import dev.cdcjoin.flink.nativelib.KeyGroupJoin;
import dev.cdcjoin.flink.nativelib.NativeCounters;
import dev.cdcjoin.flink.nativelib.NativeJoin;
import java.util.Set;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.streaming.api.operators.BoundedMultiInput;
import org.apache.flink.streaming.api.operators.TwoInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

/**
 * The keyed two-input join operator: its state lives in the native engine ({@link NativeJoin}).
 *
 * <p>Its inputs are {@link ChangeBatch}es, each one key group's changes, keyed by {@link
 * KeyGroupRoutes} so that a batch reaches the subtask owning its key group; a batch computed for
 * another max parallelism than the join's, or of a key group this subtask does not own, fails the
 * job (it would be joined against the wrong state). Each batch is appended in arrival order to one
 * direct buffer behind its side and block header, in one copy ({@link JoinBatches#frame}), and the
 * buffer is joined in one native call when it holds a batch's worth of changes, after the max flush
 * delay (processing time), before a watermark, in {@code prepareSnapshotPreBarrier} and at end of
 * input. The output of a batch is emitted in one of these forms, chosen when the operator is
 * created ({@link JoinOutput}):
 *
 * <ul>
 *   <li>{@link JoinOutput#ROWS}: decoded once into {@link Row}s carrying their {@link RowKind},
 *       projected to the definition's output columns;
 *   <li>{@link JoinOutput#BYTES}: each output row copied as it is, one {@code byte[]} per row in
 *       the native wire format ({@code kind u8 | leftLen i32 | left | rightLen i32 | right}, see
 *       {@link dev.cdcjoin.flink.RawJoinOutput}); no Java object is built per column;
 *   <li>{@link JoinOutput#ROW_DATA}: Flink's {@link BinaryRowData} with its {@link RowKind},
 *       projected to the definition's output columns, written in Flink's layout by the native join
 *       ({@code cdcjoin_join::flink_rows}), so Java only points each row at its bytes;
 *   <li>{@link JoinOutput#chained}: the input of a next join, re-keyed in native code ({@code
 *       cdcjoin_join::chain}): each output row projected to the output columns and grouped by the
 *       key group of the next join's key, one {@link ChangeBatch} per key group, routed by {@link
 *       KeyGroupRoutes} exactly as the decoder's batches are; no Java object is built per row.
 * </ul>
 *
 * <p>Every output row carries the timestamp of the input record that caused it, as in Flink's own
 * join operator.
 *
 * <p>A change the engine rejects (one whose unavailable columns, such as Debezium's placeholder for
 * an unchanged TOASTed value, it cannot fill from its state) is not applied; under {@link
 * BadRecordPolicy#FAIL} it fails the job with the engine's message, under {@link
 * BadRecordPolicy#SIDE_OUTPUT} it goes to {@link BadRecord#OUTPUT} as a {@link BadRecord}.
 *
 * <p>The native state is Flink raw keyed state: one self-delimiting section per key group with
 * state, so checkpoints, savepoints and rescaling work. A checkpoint freezes the state in its
 * synchronous phase and writes it in its asynchronous phase, while the join goes on (see {@link
 * KeyGroupJoinOperator#snapshotState(long, long,
 * org.apache.flink.runtime.checkpoint.CheckpointOptions,
 * org.apache.flink.runtime.state.CheckpointStreamFactory)}). The native memory is freed in {@link
 * #close()}.
 */
public final class NativeJoinOperator<OUT> extends KeyGroupJoinOperator<OUT>
        implements TwoInputStreamOperator<ChangeBatch, ChangeBatch, OUT>, BoundedMultiInput {

    private static final long serialVersionUID = 1L;

    /** Job accumulator: rows in native state at end of input, all subtasks. */
    public static final String ACC_STATE_ROWS = "cdcjoin.state.rows";

    /** Job accumulator: heap bytes of native state at end of input, all subtasks. */
    public static final String ACC_STATE_HEAP_BYTES = "cdcjoin.state.heapBytes";

    /** Job accumulator: encoded row bytes in native state at end of input, all subtasks. */
    public static final String ACC_STATE_ROW_BYTES = "cdcjoin.state.rowBytes";

    /** Job accumulator: rows emitted, all subtasks. */
    public static final String ACC_ROWS_OUT = "cdcjoin.rows.out";

    /** Job accumulator: retractions of rows that were not in state, all subtasks. */
    public static final String ACC_ABSENT_RETRACTIONS = "cdcjoin.absentRetractions";

    /** Bytes of native state a checkpoint takes from the engine at a time. */
    public static final int SNAPSHOT_CHUNK_BYTES = KeyGroupJoinOperator.SNAPSHOT_CHUNK_BYTES;

    private transient NativeJoin join;
    private transient JoinMetrics metrics;

    private NativeJoinOperator(
            JoinSpec definition,
            JoinOutput<OUT> output,
            int batchSize,
            long maxFlushDelayMs,
            BadRecordPolicy policy) {
        super(definition, batchSize, maxFlushDelayMs, policy, output);
    }

    /**
     * A join operator emitting {@code output}: {@link JoinOutput#ROWS} (of {@link
     * JoinSpec#rowTypeInfo()}), {@link JoinOutput#ROW_DATA} (of {@link JoinSpec#rowType()}), {@link
     * JoinOutput#BYTES}, or {@link JoinOutput#chained} (a next join's side, whose schema is {@link
     * JoinSpec#outputSchema()}).
     *
     * @param definition the join
     * @param output what it emits
     * @param batchSize input records per native call
     * @param maxFlushDelayMs longest time a record waits in a batch
     * @param policy where changes the engine rejects go
     * @param <OUT> the output records' type
     * @return the operator
     */
    public static <OUT> NativeJoinOperator<OUT> of(
            JoinSpec definition,
            JoinOutput<OUT> output,
            int batchSize,
            long maxFlushDelayMs,
            BadRecordPolicy policy) {
        return new NativeJoinOperator<>(definition, output, batchSize, maxFlushDelayMs, policy);
    }

    @Override
    KeyGroupJoin createJoin(int firstKeyGroup, int lastKeyGroup) {
        join = new NativeJoin(definition.specJson(firstKeyGroup, lastKeyGroup));
        return join;
    }

    @Override
    public void open() throws Exception {
        metrics = new JoinMetrics(getMetricGroup());
        Set<String> countedHere =
                Set.of(
                        NativeCounters.RECORDS_IN_LEFT,
                        NativeCounters.RECORDS_IN_RIGHT,
                        NativeCounters.ROWS_OUT);
        registerGauges(NativeCounters.names(), countedHere::contains);
        super.open();
    }

    @Override
    public void processElement1(StreamRecord<ChangeBatch> element) throws Exception {
        metrics.recordsLeft.inc(element.getValue().count);
        append(JoinBatches.SIDE_LEFT, element.getValue());
    }

    @Override
    public void processElement2(StreamRecord<ChangeBatch> element) throws Exception {
        metrics.recordsRight.inc(element.getValue().count);
        append(JoinBatches.SIDE_RIGHT, element.getValue());
    }

    /**
     * No key context for input 1: the operator keeps no Flink keyed state and no keyed timers (its
     * state is native, written as raw keyed state per key group, and each record's key group is
     * framed with it), so Flink may skip the key selector and {@code setCurrentKey} per record
     * ({@code RecordProcessorUtils} omits them when this is false).
     */
    @Override
    public boolean hasKeyContext1() {
        return false;
    }

    /** No key context for input 2 either: see {@link #hasKeyContext1()}. */
    @Override
    public boolean hasKeyContext2() {
        return false;
    }

    /** Copies the native counters and accounts the state's memory as managed memory. */
    @Override
    void updateStats(int records) {
        if (records > 0) {
            metrics.batch(records);
        }
        join.stats(metrics.stats);
        memory.track(metrics.stats.get(NativeCounters.STATE_HEAP_BYTES));
    }

    @Override
    long counter(String name) {
        return metrics.stats.get(name);
    }

    @Override
    public void endInput(int inputId) throws Exception {
        flush();
    }

    /**
     * The operator's own metrics, and the native counters copied after each batch (which the gauges
     * of {@link #registerGauges} read).
     */
    static final class JoinMetrics {
        final NativeCounters stats = new NativeCounters();
        final Counter recordsLeft;
        final Counter recordsRight;
        final Counter batches;
        private volatile long lastBatchSize;

        JoinMetrics(MetricGroup group) {
            recordsLeft = group.counter(CdcJoinMetrics.RECORDS_IN_LEFT);
            recordsRight = group.counter(CdcJoinMetrics.RECORDS_IN_RIGHT);
            batches = group.counter(CdcJoinMetrics.BATCHES);
            group.gauge(CdcJoinMetrics.LAST_BATCH_SIZE, () -> lastBatchSize);
        }

        void batch(int size) {
            batches.inc();
            lastBatchSize = size;
        }
    }

    /**
     * The native counters after the last batch, for tests and summaries.
     *
     * @return a copy
     */
    public NativeCounters nativeStats() {
        return metrics == null ? new NativeCounters() : metrics.stats.copy();
    }
}
