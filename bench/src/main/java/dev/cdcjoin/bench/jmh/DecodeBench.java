package dev.cdcjoin.bench.jmh;

import dev.cdcjoin.bench.Workload;
import dev.cdcjoin.flink.ChangeRecord;
import dev.cdcjoin.flink.JoinKey;
import dev.cdcjoin.flink.SideSpec;
import dev.cdcjoin.flink.javajoin.DebeziumJsonReader;
import dev.cdcjoin.flink.nativelib.NativeDecoder;
import dev.cdcjoin.flink.runtime.BatchBuffer;
import java.nio.ByteBuffer;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.formats.common.TimestampFormat;
import org.apache.flink.formats.json.debezium.DebeziumJsonDeserializationSchema;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;
import org.apache.flink.util.SimpleUserCodeClassLoader;
import org.apache.flink.util.UserCodeClassLoader;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Decoding alone: {@value #N} Debezium messages of the {@code domains} topic (sampled evenly from a
 * generated trace: the trace's mix of r/c/u/d) per invocation, reported per message. Per MB follows
 * from the sample's mean message size, printed at setup and computed by the suite.
 *
 * <ul>
 *   <li>{@code jackson}: the pure-Java join's {@link DebeziumJsonReader} (Jackson streaming) to
 *       {@link Row}s, updates split;
 *   <li>{@code flinkDebeziumJson}: Flink's {@code debezium-json} format (the SQL path) to {@link
 *       RowData};
 *   <li>{@code nativeBatch}: {@link NativeDecoder#decodeJson} on batches of 1024 messages framed in
 *       a direct buffer, output left in the native output buffer;
 *   <li>{@code nativeToRecords}: the same, framing included, plus materializing every change as the
 *       {@link ChangeRecord} the operator emits (key and row copied to byte arrays).
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class DecodeBench {

    static final int N = 8192;
    static final int BATCH = 1024;

    byte[][] messages;
    DebeziumJsonReader jackson;
    DebeziumJsonDeserializationSchema flink;
    NativeDecoder nativeDecoder;
    BatchBuffer[] batches;
    BatchBuffer scratch;

    @Setup(Level.Trial)
    public void setup() throws Exception {
        List<byte[]> sample = Samples.read(Samples.trace(), "domains", N);
        messages = sample.toArray(new byte[0][]);
        long bytes = 0;
        for (byte[] m : messages) {
            bytes += m.length;
        }
        System.out.printf(
                "%n[decode sample] %d messages, %d bytes, %.1f bytes/message%n",
                N, bytes, (double) bytes / N);
        jackson = new DebeziumJsonReader("domains", Workload.DOMAINS);
        DataType type =
                DataTypes.ROW(
                        DataTypes.FIELD("id", DataTypes.INT().notNull()),
                        DataTypes.FIELD("user_id", DataTypes.INT()),
                        DataTypes.FIELD("domain_name", DataTypes.STRING()));
        flink =
                new DebeziumJsonDeserializationSchema(
                        type,
                        Collections.emptyList(),
                        InternalTypeInfo.of((RowType) type.getLogicalType()),
                        false,
                        false,
                        TimestampFormat.ISO_8601);
        flink.open(
                new DeserializationSchema.InitializationContext() {
                    @Override
                    public MetricGroup getMetricGroup() {
                        return new UnregisteredMetricsGroup();
                    }

                    @Override
                    public UserCodeClassLoader getUserCodeClassLoader() {
                        return SimpleUserCodeClassLoader.create(DecodeBench.class.getClassLoader());
                    }
                });
        SideSpec side =
                new SideSpec("domains", Workload.DOMAINS, List.of("user_id"), List.of("id"), null);
        nativeDecoder = new NativeDecoder(side.decoderConfigJson(false));
        batches = new BatchBuffer[N / BATCH];
        for (int b = 0; b < batches.length; b++) {
            batches[b] = new BatchBuffer(1 << 20);
            for (int i = 0; i < BATCH; i++) {
                batches[b].putSized(messages[b * BATCH + i]);
                batches[b].recordAdded();
            }
        }
        scratch = new BatchBuffer(1 << 20);
    }

    @TearDown(Level.Trial)
    public void close() {
        nativeDecoder.close();
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public void jackson(Blackhole bh) {
        Collector<Row> out = new BlackholeCollector<>(bh);
        for (int i = 0; i < N; i++) {
            jackson.read(messages[i], i, out);
        }
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public void flinkDebeziumJson(Blackhole bh) throws Exception {
        Collector<RowData> out = new BlackholeCollector<>(bh);
        for (int i = 0; i < N; i++) {
            flink.deserialize(messages[i], out);
        }
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public void nativeBatch(Blackhole bh) {
        for (BatchBuffer b : batches) {
            ByteBuffer out = nativeDecoder.decodeJson(b.buffer(), b.length(), 0);
            bh.consume(out.limit());
        }
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public void nativeToRecords(Blackhole bh) {
        for (int b = 0; b < N / BATCH; b++) {
            scratch.clear();
            for (int i = 0; i < BATCH; i++) {
                scratch.putSized(messages[b * BATCH + i]);
                scratch.recordAdded();
            }
            ByteBuffer out = nativeDecoder.decodeJson(scratch.buffer(), scratch.length(), 0);
            int p = 12;
            while (p < out.limit()) {
                // change: 0 u8 | index u32 | kind u8 | keyLen u32 | key | rowLen u32 | row
                RowKind kind = RowKind.fromByteValue(out.get(p + 5));
                int keyLen = out.getInt(p + 6);
                byte[] key = new byte[keyLen];
                out.get(p + 10, key);
                int rowAt = p + 10 + keyLen;
                byte[] row = new byte[out.getInt(rowAt)];
                out.get(rowAt + 4, row);
                bh.consume(new ChangeRecord(kind, new JoinKey(key), row));
                p = rowAt + 4 + row.length;
            }
        }
    }

    static final class BlackholeCollector<T> implements Collector<T> {
        private final Blackhole bh;

        BlackholeCollector(Blackhole bh) {
            this.bh = bh;
        }

        @Override
        public void collect(T record) {
            bh.consume(record);
        }

        @Override
        public void close() {}
    }
}
