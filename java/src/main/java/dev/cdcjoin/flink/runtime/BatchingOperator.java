package dev.cdcjoin.flink.runtime;

import org.apache.flink.streaming.api.graph.StreamConfig;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.Output;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.tasks.StreamTask;

/**
 * An operator that buffers records into a batch handed to native code in one call, and flushes it
 * when it is full, after the max flush delay (a processing-time timer, so latency stays bounded),
 * on watermarks, and before every checkpoint barrier (so no record waits across a barrier).
 * Subclasses also flush at the end of input.
 *
 * @param <OUT> the output type
 */
public abstract class BatchingOperator<OUT> extends AbstractStreamOperator<OUT> {

    private static final long serialVersionUID = 1L;

    /**
     * Bytes a batch may reach before it is flushed, whatever its records: a batch is one buffer,
     * which Java caps below 2 GiB, and Debezium messages of many MB would fill it long before
     * {@link #batchSize} records; the bound also caps what each subtask's buffers hold. A record
     * larger than this makes a batch of its own.
     */
    public static final int MAX_BATCH_BYTES = 32 << 20;

    /** Records per native call. */
    protected final int batchSize;

    private final long maxFlushDelayMs;
    private transient boolean timerPending;

    /**
     * For an operator that {@link #keysItsBatches()}: the number of key groups to key them for,
     * that of the {@code keyBy} its output reaches ({@link ConsumerKeyGroups}).
     */
    protected transient int outputKeyGroups;

    /**
     * A batching operator.
     *
     * @param batchSize records per native call, at least 1
     * @param maxFlushDelayMs longest time a record waits in a batch, at least 0
     */
    protected BatchingOperator(int batchSize, long maxFlushDelayMs) {
        if (batchSize < 1 || maxFlushDelayMs < 0) {
            throw new IllegalArgumentException("batchSize must be >= 1 and maxFlushDelay >= 0");
        }
        this.batchSize = batchSize;
        this.maxFlushDelayMs = maxFlushDelayMs;
    }

    /**
     * Whether this operator emits {@link ChangeBatch}es keyed for its consumer: then {@link #setup}
     * sets {@link #outputKeyGroups}.
     *
     * @return true if it keys its output
     */
    protected abstract boolean keysItsBatches();

    /**
     * Sets {@link #outputKeyGroups} up, while the task's configuration still holds the chained
     * operators' (Flink clears it before {@code open}). Public on Flink 1.20, protected on 2.x.
     */
    @Override
    public void setup(
            StreamTask<?, ?> containingTask,
            StreamConfig config,
            Output<StreamRecord<OUT>> output) {
        super.setup(containingTask, config, output);
        if (keysItsBatches()) {
            outputKeyGroups = ConsumerKeyGroups.of(this);
        }
    }

    /**
     * Hands the buffered batch, if any, to native code and emits what comes back.
     *
     * @throws Exception if the batch fails
     */
    public abstract void flush() throws Exception;

    /**
     * Tells the operator that its batch now holds {@code records} in {@code bytes}: flushes a full
     * batch ({@link #batchSize} records or {@link #MAX_BATCH_BYTES}), or makes sure a timer will
     * flush a partial one.
     *
     * @param records records in the batch
     * @param bytes the batch's bytes
     * @throws Exception if a flush fails
     */
    protected final void afterAppend(int records, long bytes) throws Exception {
        if (records >= batchSize || bytes >= MAX_BATCH_BYTES) {
            flush();
        } else if (!timerPending) {
            timerPending = true;
            long now = getProcessingTimeService().getCurrentProcessingTime();
            getProcessingTimeService()
                    .registerTimer(
                            now + maxFlushDelayMs,
                            time -> {
                                timerPending = false;
                                flush();
                            });
        }
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        flush();
        super.processWatermark(mark);
    }

    @Override
    public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
        flush();
        super.prepareSnapshotPreBarrier(checkpointId);
    }
}
