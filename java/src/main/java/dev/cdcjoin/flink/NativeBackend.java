package dev.cdcjoin.flink;

import dev.cdcjoin.flink.runtime.NativeJoinOperator;
import dev.cdcjoin.flink.serialization.JoinKeySerializer;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.core.memory.ManagedMemoryUseCase;
import org.apache.flink.streaming.api.datastream.ConnectedStreams;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.types.Row;

/**
 * The native engine's job graph for {@link CdcJoin}: native decoding ({@link DebeziumDecoder}, one
 * {@code NativeDecodeOperator} per input), {@code keyBy} join key, the native join ({@link
 * NativeJoinOperator}) with its state declared as managed memory.
 */
final class NativeBackend implements Backend<ChangeRecord> {

    private final CdcJoin join;
    private final JoinSpec definition;

    NativeBackend(CdcJoin join) {
        this.join = join;
        this.definition = join.spec();
    }

    @Override
    public <I> SingleOutputStreamOperator<ChangeRecord> decode(
            SideSpec side, DataStream<I> in, InputKind<I> kind) {
        return join.decoder(side).decode(in, kind);
    }

    @Override
    public DataStream<ChangeRecord> fromChanges(SideSpec side, DataStream<ChangeRecord> in) {
        return in;
    }

    @Override
    public Joined<Row> rows(DataStream<ChangeRecord> left, DataStream<ChangeRecord> right) {
        return Joined.of(
                withManagedMemory(
                        keyed(left, right)
                                .transform(
                                        operatorName(),
                                        definition.rowTypeInfo(),
                                        NativeJoinOperator.rows(
                                                definition,
                                                join.batchSize,
                                                join.maxFlushDelay.toMillis(),
                                                join.policy))));
    }

    @Override
    public Joined<byte[]> raw(DataStream<ChangeRecord> left, DataStream<ChangeRecord> right) {
        return Joined.of(
                withManagedMemory(
                        keyed(left, right)
                                .transform(
                                        operatorName() + " (bytes)",
                                        PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO,
                                        NativeJoinOperator.bytes(
                                                definition,
                                                join.batchSize,
                                                join.maxFlushDelay.toMillis(),
                                                join.policy))));
    }

    /**
     * Declares that the native join's state is Flink managed memory (operator scope), so that the
     * operator accounts it there; see {@code ManagedMemoryAccount}.
     */
    private static <T> SingleOutputStreamOperator<T> withManagedMemory(
            SingleOutputStreamOperator<T> join) {
        join.getTransformation()
                .declareManagedMemoryUseCaseAtOperatorScope(ManagedMemoryUseCase.OPERATOR, 1);
        return join;
    }

    private static ConnectedStreams<ChangeRecord, ChangeRecord> keyed(
            DataStream<ChangeRecord> left, DataStream<ChangeRecord> right) {
        KeySelector<ChangeRecord, JoinKey> key = new ByJoinKey();
        return left.connect(right).keyBy(key, key, JoinKeySerializer.TYPE_INFO);
    }

    private String operatorName() {
        return "CdcJoin "
                + definition.joinType()
                + ": "
                + definition.left().name()
                + " ⋈ "
                + definition.right().name();
    }

    /** Selects a change's join key. */
    static final class ByJoinKey implements KeySelector<ChangeRecord, JoinKey> {
        private static final long serialVersionUID = 1L;

        @Override
        public JoinKey getKey(ChangeRecord change) {
            return change.key;
        }
    }
}
