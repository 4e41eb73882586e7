package dev.cdcjoin.flink;

import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.RowCodec;
import dev.cdcjoin.flink.javajoin.JavaJoin;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.types.Row;

/**
 * The Java engine's job graph for {@link CdcJoin} ({@link Engine#JAVA}): Jackson decoding and the
 * pure-Java join, laid out by {@link JavaJoin}. The only class of the public package that uses the
 * fallback's package, so the public API never depends on it.
 */
final class JavaBackend implements Backend<Row> {

    private final JoinSpec definition;
    private final JavaJoin java;

    JavaBackend(CdcJoin join) {
        this.definition = join.spec();
        this.java =
                JavaJoin.of(definition)
                        .badRecordPolicy(join.policy)
                        .deleteInsertUpdates(join.deleteInsertUpdates);
    }

    @Override
    public SingleOutputStreamOperator<Row> decodeJson(SideSpec side, DataStream<byte[]> in) {
        return isLeft(side) ? java.decodeLeft(in) : java.decodeRight(in);
    }

    @Override
    public SingleOutputStreamOperator<Row> decodeStrings(SideSpec side, DataStream<String> in) {
        return isLeft(side) ? java.decodeLeft(in) : java.decodeRight(in);
    }

    @Override
    public SingleOutputStreamOperator<Row> decodeRows(SideSpec side, DataStream<Row> in) {
        return isLeft(side) ? java.decodeLeftRows(in) : java.decodeRightRows(in);
    }

    @Override
    public SingleOutputStreamOperator<Row> decodeUpsert(
            SideSpec side, DataStream<UpsertRecord> in) {
        return isLeft(side) ? java.decodeLeft(in) : java.decodeRight(in);
    }

    /** Natively decoded changes as rows, at the input's parallelism (order kept). */
    @Override
    public DataStream<Row> fromChanges(SideSpec side, DataStream<ChangeRecord> in) {
        SingleOutputStreamOperator<Row> rows =
                in.map(new ChangeToRow(side.schema()))
                        .returns(side.schema().rowTypeInfo())
                        .name("ChangeRecord to Row: " + side.name());
        return in.getParallelism() > 0 ? rows.setParallelism(in.getParallelism()) : rows;
    }

    @Override
    public Joined<Row> rows(DataStream<Row> left, DataStream<Row> right) {
        return Joined.of(java.joinChanges(left, right));
    }

    @Override
    public Joined<byte[]> raw(DataStream<Row> left, DataStream<Row> right) {
        SingleOutputStreamOperator<Row> joined = java.joinRawRows(left, right);
        return new Joined<>(JavaJoin.rawBytes(joined), joined.getSideOutput(BadRecord.OUTPUT));
    }

    private boolean isLeft(SideSpec side) {
        return side == definition.left();
    }

    /** A change's row decoded from its compact encoding, with the change's kind. */
    static final class ChangeToRow implements MapFunction<ChangeRecord, Row> {
        private static final long serialVersionUID = 1L;
        private final RowCodec codec;

        ChangeToRow(CdcSchema schema) {
            this.codec = new RowCodec(schema);
        }

        @Override
        public Row map(ChangeRecord change) {
            Object[] values =
                    codec.decode(ByteBuffer.wrap(change.row).order(ByteOrder.LITTLE_ENDIAN), 0);
            return Row.ofKind(change.rowKind(), values);
        }
    }
}
