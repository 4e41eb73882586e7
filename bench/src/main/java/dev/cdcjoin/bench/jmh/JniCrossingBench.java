package dev.cdcjoin.bench.jmh;

import dev.cdcjoin.bench.Workload;
import dev.cdcjoin.flink.CdcJoin;
import dev.cdcjoin.flink.ChangeRecord;
import dev.cdcjoin.flink.JoinKey;
import dev.cdcjoin.flink.JoinType;
import dev.cdcjoin.flink.nativelib.NativeDecoder;
import dev.cdcjoin.flink.nativelib.NativeJoin;
import dev.cdcjoin.flink.runtime.BatchBuffer;
import dev.cdcjoin.flink.runtime.ChangeBatch;
import dev.cdcjoin.flink.runtime.JoinBatches;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.types.RowKind;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The JNI batch crossing, per call (divide by {@code batch} for per record):
 *
 * <ul>
 *   <li>{@code joinEmptyCall}: {@link NativeJoin#processBatch} on an empty batch: the fixed cost of
 *       one crossing (JNI transition, direct-buffer lookups, handle registry, output copy);
 *   <li>{@code joinTrivialBatch}: {@code batch} records, each a key group batch of one ({@link
 *       ChangeBatch}, the worst case of the batch exchange), framed exactly as {@code
 *       NativeJoinOperator.append} does (side and block header, the change copied into the direct
 *       buffer) and joined in one call; the records are retractions of absent users, so the engine
 *       does one probe per record, changes no state and emits nothing: an upper bound of the
 *       crossing cost per record (the probe is join work);
 *   <li>{@code frameOnly}: the framing of {@code joinTrivialBatch} without the native call;
 *   <li>{@code decodeTombstones}: {@link NativeDecoder#decodeJson} on {@code batch} null messages
 *       (tombstones, counted and dropped): the decoder path's crossing plus framing.
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class JniCrossingBench {

    static final int MAX_PARALLELISM = 128;

    @Param({"1", "64", "1024", "8192"})
    public int batch;

    NativeJoin join;
    NativeDecoder decoder;
    ChangeBatch[] records;
    BatchBuffer buffer;
    BatchBuffer tombstones;
    ByteBuffer empty;

    @Setup(Level.Trial)
    public void setup() {
        CdcJoin def =
                CdcJoin.builder()
                        .left("users", Workload.USERS, List.of("id"), List.of("id"))
                        .right("domains", Workload.DOMAINS, List.of("user_id"), List.of("id"))
                        .joinType(JoinType.LEFT)
                        .build();
        join = new NativeJoin(def.spec().specJson(0, MAX_PARALLELISM - 1));
        // Real ChangeRecords: -D of users that were never inserted, decoded natively.
        decoder = new NativeDecoder(def.spec().left().decoderConfigJson(false));
        BatchBuffer json = new BatchBuffer(1 << 20);
        for (int i = 0; i < batch; i++) {
            String m =
                    "{\"before\":{\"id\":"
                            + (1_000_000 + i)
                            + ",\"firstname\":\"Ana\","
                            + "\"lastname\":\"Kim\"},\"after\":null,\"op\":\"d\"}";
            json.putSized(m.getBytes(StandardCharsets.UTF_8));
            json.recordAdded();
        }
        ByteBuffer out = decoder.decodeJson(json.buffer(), json.length(), 0);
        records = new ChangeBatch[batch];
        int p = 12;
        for (int i = 0; i < batch; i++) {
            RowKind kind = RowKind.fromByteValue(out.get(p + 5));
            byte[] key = new byte[out.getInt(p + 6)];
            out.get(p + 10, key);
            int rowAt = p + 10 + key.length;
            byte[] row = new byte[out.getInt(rowAt)];
            out.get(rowAt + 4, row);
            ChangeRecord change = new ChangeRecord(kind, new JoinKey(key), row);
            records[i] = ChangeBatch.of(MAX_PARALLELISM, new StreamRecord<>(change));
            p = rowAt + 4 + row.length;
        }
        buffer = new BatchBuffer(1 << 20);
        tombstones = new BatchBuffer(1 << 16);
        for (int i = 0; i < batch; i++) {
            tombstones.putSized(null);
            tombstones.recordAdded();
        }
        empty = ByteBuffer.allocateDirect(16);
        // Sanity: the trivial batch changes nothing and emits nothing.
        if (joinTrivialBatch() != 0) {
            throw new IllegalStateException("the trivial batch emitted rows");
        }
    }

    @TearDown(Level.Trial)
    public void close() {
        join.close();
        decoder.close();
    }

    @Benchmark
    public int joinEmptyCall() {
        return join.processBatch(empty, 0, 0L).limit();
    }

    @Benchmark
    public int joinTrivialBatch() {
        frame();
        return join.processBatch(buffer.buffer(), buffer.length(), 0L).limit();
    }

    /** The Java half of {@code joinTrivialBatch}: framing only, no native call. */
    @Benchmark
    public int frameOnly() {
        frame();
        return buffer.length();
    }

    /** Frames the records into {@code buffer} as the join operator does. */
    private void frame() {
        buffer.clear();
        for (ChangeBatch c : records) {
            JoinBatches.frame(buffer, JoinBatches.SIDE_LEFT, c);
        }
    }

    @Benchmark
    public int decodeTombstones() {
        return decoder.decodeJson(tombstones.buffer(), tombstones.length(), 0).limit();
    }
}
