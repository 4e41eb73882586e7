package dev.cdcjoin.flink.runtime;

import dev.cdcjoin.flink.BadRecord;
import dev.cdcjoin.flink.BadRecordPolicy;
import dev.cdcjoin.flink.CdcJoinMetrics;
import dev.cdcjoin.flink.ChangeRecord;
import dev.cdcjoin.flink.JoinKey;
import dev.cdcjoin.flink.nativelib.NativeDecoder;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.OutputTag;

/**
 * The native engine's decode step in the job graph (added by {@link
 * dev.cdcjoin.flink.DebeziumDecoder}): decodes one table's Debezium change records with a {@link
 * NativeDecoder}, a batch per native call, into {@link ChangeRecord}s ({@link #changes}, the public
 * per-change stream) or, for the native join, into {@link ChangeBatch}es ({@link #batches}): one
 * per key group with changes per decoded batch, partitioned in Rust by Flink's key group of each
 * change's join key for the join's max parallelism ({@link ConsumerKeyGroups}; the join checks it
 * is its own). The Java engine's counterpart is {@code javajoin.JavaDecodeFunction}.
 *
 * <p>Records are buffered in a direct buffer and decoded when the batch is full, when the max flush
 * delay has passed since its first record (processing time), before a watermark, in {@code
 * prepareSnapshotPreBarrier} and at end of input, so no record crosses a checkpoint barrier. Output
 * changes keep their input record's timestamp (a {@link ChangeBatch} carries one per change, the
 * batch record itself none). Undecodable records go to the side output {@code badRecords} or fail
 * the job, per {@link BadRecordPolicy}; tombstones are counted and dropped.
 *
 * @param <IN> the input type ({@code byte[]}, {@code String} or {@code Row} envelopes)
 * @param <OUT> {@link ChangeRecord} or {@link ChangeBatch}
 */
public final class NativeDecodeOperator<IN, OUT> extends BatchingOperator<OUT>
        implements OneInputStreamOperator<IN, OUT>, BoundedOneInput {

    private static final long serialVersionUID = 1L;
    private static final int MAX_RAW_IN_MESSAGE = 512;

    private final String configJson;
    private final String source;
    private final InputEncoder<IN> encoder;
    private final BadRecordPolicy policy;
    private final OutputTag<BadRecord> badRecords;

    /** Emit {@link ChangeBatch}es, partitioned in Rust, rather than {@link ChangeRecord}s. */
    private final boolean partitioned;

    private transient NativeDecoder decoder;

    private transient BatchBuffer batch;
    private transient Object[] inputs;
    private transient BatchTimestamps timestamps;
    private transient HeapCopy heapCopy;
    private transient Emitter emitter;
    private transient long firstIndex;
    private transient StreamRecord<OUT> reuse;
    private transient Counter recordsIn;
    private transient Counter changesOut;
    private transient Counter badOut;
    private transient Counter tombstones;
    private transient Counter batches;

    private NativeDecodeOperator(Settings<IN> settings, boolean partitioned) {
        super(settings.batchSize, settings.maxFlushDelayMs);
        this.configJson = settings.configJson;
        this.source = settings.source;
        this.encoder = settings.encoder;
        this.policy = settings.policy;
        this.badRecords = settings.badRecords;
        this.partitioned = partitioned;
    }

    /**
     * A decode operator emitting one {@link ChangeRecord} per change.
     *
     * @param settings what to decode and how
     * @param <IN> the input type
     * @return the operator
     */
    public static <IN> NativeDecodeOperator<IN, ChangeRecord> changes(Settings<IN> settings) {
        return new NativeDecodeOperator<>(settings, false);
    }

    /**
     * A decode operator emitting one {@link ChangeBatch} per key group with changes per decoded
     * batch, for the native join.
     *
     * @param settings what to decode and how
     * @param <IN> the input type
     * @return the operator
     */
    public static <IN> NativeDecodeOperator<IN, ChangeBatch> batches(Settings<IN> settings) {
        return new NativeDecodeOperator<>(settings, true);
    }

    /**
     * What a decode operator decodes and how.
     *
     * @param <IN> the input type
     */
    public static final class Settings<IN> implements Serializable {
        private static final long serialVersionUID = 1L;

        final String configJson;
        final String source;
        final InputEncoder<IN> encoder;
        final BadRecordPolicy policy;
        final OutputTag<BadRecord> badRecords;
        final int batchSize;
        final long maxFlushDelayMs;

        /**
         * Settings.
         *
         * @param configJson the native decoder configuration (schema, join key, source name, ...)
         * @param source the input's name, for bad-record reports
         * @param encoder frames input records for the native decoder
         * @param policy what to do with undecodable records
         * @param badRecords the side output for {@link BadRecordPolicy#SIDE_OUTPUT}
         * @param batchSize records per native call
         * @param maxFlushDelayMs longest time a record waits in a batch
         */
        public Settings(
                String configJson,
                String source,
                InputEncoder<IN> encoder,
                BadRecordPolicy policy,
                OutputTag<BadRecord> badRecords,
                int batchSize,
                long maxFlushDelayMs) {
            this.configJson = configJson;
            this.source = source;
            this.encoder = encoder;
            this.policy = policy;
            this.badRecords = badRecords;
            this.batchSize = batchSize;
            this.maxFlushDelayMs = maxFlushDelayMs;
        }
    }

    @Override
    protected boolean keysItsBatches() {
        return partitioned;
    }

    @Override
    public void open() throws Exception {
        super.open();
        decoder =
                partitioned
                        ? NativeDecoder.partitioned(configJson, outputKeyGroups)
                        : new NativeDecoder(configJson);
        batch = new BatchBuffer(64 * 1024);
        inputs = new Object[batchSize];
        timestamps = new BatchTimestamps(batchSize);
        heapCopy = new HeapCopy();
        emitter = new Emitter();
        reuse = new StreamRecord<>(null);
        recordsIn = getMetricGroup().counter(CdcJoinMetrics.RECORDS_IN);
        changesOut = getMetricGroup().counter(CdcJoinMetrics.CHANGES_OUT);
        badOut = getMetricGroup().counter(CdcJoinMetrics.BAD_RECORDS);
        tombstones = getMetricGroup().counter(CdcJoinMetrics.TOMBSTONES);
        batches = getMetricGroup().counter(CdcJoinMetrics.BATCHES);
    }

    @Override
    public void processElement(StreamRecord<IN> element) throws Exception {
        recordsIn.inc();
        IN value = element.getValue();
        try {
            if (!frame(element, value)) {
                flush();
                frame(element, value);
            }
        } catch (IllegalArgumentException e) {
            rejectNow(value, e.getMessage());
            return;
        }
        int i = batch.records();
        inputs[i] = value;
        timestamps.set(i, element);
        batch.recordAdded();
        afterAppend(batch.records(), batch.length());
    }

    /**
     * Frames a record behind the batch; false, leaving the batch as it was, if it could not be
     * framed there but could in a batch of its own (a record too large for what the batch holds).
     *
     * @throws IllegalArgumentException if it cannot be framed even alone
     */
    private boolean frame(StreamRecord<IN> element, IN value) {
        int at = batch.length();
        if (partitioned) {
            ChangeBlocks.putStamp(batch, element);
        }
        try {
            encoder.append(value, batch);
            return true;
        } catch (IllegalArgumentException e) {
            batch.buffer().position(at);
            if (batch.records() > 0) {
                return false;
            }
            throw e;
        }
    }

    /** Reports a record the Java side could not frame, in order with the batch before it. */
    private void rejectNow(IN value, String reason) throws Exception {
        flush();
        String named = position(firstIndex) + ": " + reason;
        bad(encoder.badRecord(source, firstIndex, value, named));
        firstIndex++;
    }

    private String position(long index) {
        return source.isEmpty() ? "record #" + index : source + " record #" + index;
    }

    /** Decodes the batch with the native call of its framing. */
    private ByteBuffer decode(ByteBuffer in, int length, long first) {
        switch (encoder.framing()) {
            case ROW_ENVELOPES:
                return decoder.decodeRows(in, length, first);
            case UPSERT_RECORDS:
                return decoder.decodeUpsert(in, length, first);
            default:
                return decoder.decodeJson(in, length, first);
        }
    }

    /**
     * Decodes the buffered batch, if any, and emits its changes and bad records.
     *
     * @throws Exception if a record is bad under {@code BadRecordPolicy.FAIL}
     */
    public void flush() throws Exception {
        int n = batch.records();
        if (n == 0) {
            return;
        }
        ByteBuffer out = decode(batch.buffer(), batch.length(), firstIndex);
        batches.inc();
        tombstones.inc(DecoderOutput.tombstones(out));
        DecoderOutput.read(heapCopy.of(out), partitioned, outputKeyGroups, emitter);
        firstIndex += n;
        batch.clear();
        Arrays.fill(inputs, 0, n, null);
    }

    /** Emits a decoded batch's entries: changes or blocks, and bad records per the policy. */
    private final class Emitter implements DecoderOutput.Visitor {
        @Override
        @SuppressWarnings("unchecked")
        public void change(int index, RowKind kind, byte[] key, byte[] row) {
            OUT change = (OUT) new ChangeRecord(kind, new JoinKey(key), row);
            output.collect(timestamps.stamp(reuse, change, index));
            changesOut.inc();
        }

        @Override
        public void error(int index, String message) {
            bad(encoder.badRecord(source, firstIndex + index, inputOf(index), message));
        }

        @Override
        @SuppressWarnings("unchecked")
        public void block(ChangeBatch block) {
            reuse.replace((OUT) block);
            output.collect(reuse);
            changesOut.inc(block.count);
        }
    }

    @SuppressWarnings("unchecked")
    private IN inputOf(int index) {
        return (IN) inputs[index];
    }

    private void bad(BadRecord record) {
        badOut.inc();
        if (policy == BadRecordPolicy.FAIL) {
            throw new BadRecordException(
                    "Bad Debezium record: " + record.reason + "; record: " + excerpt(record));
        }
        output.collect(badRecords, new StreamRecord<>(record));
    }

    private static String excerpt(BadRecord r) {
        String raw = r.rawAsString();
        return raw.length() <= MAX_RAW_IN_MESSAGE
                ? raw
                : raw.substring(0, MAX_RAW_IN_MESSAGE) + "…";
    }

    @Override
    public void endInput() throws Exception {
        flush();
    }

    @Override
    public void finish() throws Exception {
        flush();
        super.finish();
    }

    @Override
    public void close() throws Exception {
        try {
            super.close();
        } finally {
            if (decoder != null) {
                decoder.close();
                decoder = null;
            }
        }
    }

    /** Thrown, failing the job, for an undecodable record under {@link BadRecordPolicy#FAIL}. */
    public static final class BadRecordException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BadRecordException(String message) {
            super(message);
        }
    }
}
