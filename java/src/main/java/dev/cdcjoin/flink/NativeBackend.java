package dev.cdcjoin.flink;

import dev.cdcjoin.flink.runtime.ChangeBatch;
import dev.cdcjoin.flink.runtime.ChangeBatcher;
import dev.cdcjoin.flink.runtime.JoinOutput;
import dev.cdcjoin.flink.runtime.KeyGroupRoutes;
import dev.cdcjoin.flink.runtime.NativeJoinOperator;
import dev.cdcjoin.flink.serialization.ChangeBatchSerializer;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.core.memory.ManagedMemoryUseCase;
import org.apache.flink.streaming.api.datastream.ConnectedStreams;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.types.Row;

/**
 * The native engine's job graph for {@link CdcJoin}: native decoding ({@link DebeziumDecoder}, one
 * {@code NativeDecodeOperator} per input) into key group batches ({@link ChangeBatch}), {@code
 * keyBy} key group ({@link KeyGroupRoutes}), the native join ({@link NativeJoinOperator}) with its
 * state declared as managed memory. Changes given one by one ({@code joinChanges}) are batched per
 * key group first ({@link ChangeBatcher}), so the join has one input type.
 */
final class NativeBackend implements Backend<ChangeBatch> {

    private final CdcJoin join;
    private final JoinSpec definition;

    NativeBackend(CdcJoin join) {
        this.join = join;
        this.definition = join.spec();
    }

    @Override
    public <I> SingleOutputStreamOperator<ChangeBatch> decode(
            SideSpec side, DataStream<I> in, InputKind<I> kind) {
        return join.decoder(side).decodeBatches(in, kind);
    }

    @Override
    public DataStream<ChangeBatch> fromChanges(SideSpec side, DataStream<ChangeRecord> in) {
        SingleOutputStreamOperator<ChangeBatch> batches =
                Chaining.toInput(
                        in.transform(
                                "Key group batches: " + side.name(),
                                ChangeBatchSerializer.TYPE_INFO,
                                new ChangeBatcher(join.batchSize, join.maxFlushDelay.toMillis())));
        return in.getParallelism() > 0 ? batches.setParallelism(in.getParallelism()) : batches;
    }

    @Override
    public Joined<Row> rows(DataStream<ChangeBatch> left, DataStream<ChangeBatch> right) {
        return joined(left, right, JoinOutput.ROWS, definition.rowTypeInfo());
    }

    @Override
    public Joined<RowData> rowData(DataStream<ChangeBatch> left, DataStream<ChangeBatch> right) {
        return joined(left, right, JoinOutput.ROW_DATA, InternalTypeInfo.of(definition.rowType()));
    }

    @Override
    public Joined<byte[]> raw(DataStream<ChangeBatch> left, DataStream<ChangeBatch> right) {
        return joined(
                left,
                right,
                JoinOutput.BYTES,
                PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO);
    }

    /** The join re-keying its output in native code into {@code next}'s key group batches. */
    @Override
    public Joined<ChangeBatch> chain(
            DataStream<ChangeBatch> left, DataStream<ChangeBatch> right, SideSpec next) {
        return joined(left, right, JoinOutput.chained(next), ChangeBatchSerializer.TYPE_INFO);
    }

    /** The join operator over the keyed inputs, emitting {@code output} of {@code type}. */
    private <T> Joined<T> joined(
            DataStream<ChangeBatch> left,
            DataStream<ChangeBatch> right,
            JoinOutput<T> output,
            TypeInformation<T> type) {
        NativeJoinOperator<T> operator =
                NativeJoinOperator.of(
                        definition,
                        output,
                        join.batchSize,
                        join.maxFlushDelay.toMillis(),
                        join.policy);
        return Joined.of(
                withManagedMemory(
                        keyed(left, right)
                                .transform(operatorName() + output.nameSuffix(), type, operator)));
    }

    /**
     * Declares that a native join's state (two-table or multi-way) is Flink managed memory
     * (operator scope), so that the operator accounts it there; see {@code ManagedMemoryAccount}.
     */
    static <T> SingleOutputStreamOperator<T> withManagedMemory(SingleOutputStreamOperator<T> join) {
        join.getTransformation()
                .declareManagedMemoryUseCaseAtOperatorScope(ManagedMemoryUseCase.OPERATOR, 1);
        return join;
    }

    private static ConnectedStreams<ChangeBatch, ChangeBatch> keyed(
            DataStream<ChangeBatch> left, DataStream<ChangeBatch> right) {
        KeyGroupRoutes key = new KeyGroupRoutes();
        return left.connect(right).keyBy(key, key, Types.INT);
    }

    private String operatorName() {
        return "CdcJoin "
                + definition.joinType()
                + ": "
                + definition.left().name()
                + " ⋈ "
                + definition.right().name();
    }
}
