package dev.cdcjoin.flink;

import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.RowCodec;
import dev.cdcjoin.flink.javajoin.JavaJoin;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.RowType;
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
    public <I> SingleOutputStreamOperator<Row> decode(
            SideSpec side, DataStream<I> in, InputKind<I> kind) {
        boolean left = side == definition.left();
        switch (kind.javaReading) {
            case ROW_ENVELOPES:
                @SuppressWarnings("unchecked") // ROW_ENVELOPES is the InputKind<Row>
                DataStream<Row> envelopes = (DataStream<Row>) in;
                return left ? java.decodeLeftRows(envelopes) : java.decodeRightRows(envelopes);
            case KAFKA_UPSERT:
                @SuppressWarnings("unchecked") // KAFKA_UPSERT is an InputKind<KafkaMessage>
                DataStream<KafkaMessage> records = (DataStream<KafkaMessage>) in;
                return left
                        ? java.decodeLeftKafkaUpsert(records)
                        : java.decodeRightKafkaUpsert(records);
            default:
                return left ? java.decodeLeft(in) : java.decodeRight(in);
        }
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

    /**
     * The joined rows converted by Flink's converter ({@link RowToRowData}), from a join of their
     * own, named apart from {@link #rows}'s (as the native engine names its joins by output).
     */
    @Override
    public Joined<RowData> rowData(DataStream<Row> left, DataStream<Row> right) {
        Joined<Row> rows = rows(left, right);
        rows.output.name(rows.output.getName() + " (RowData)");
        return rowData(rows, definition.dataType(), definition.rowType());
    }

    /** {@code rows} of {@code type} as Flink's internal rows of {@code rowType}. */
    static Joined<RowData> rowData(Joined<Row> rows, DataType type, RowType rowType) {
        SingleOutputStreamOperator<RowData> converted =
                rows.output
                        .map(new RowToRowData(type))
                        .returns(InternalTypeInfo.of(rowType))
                        .name("Row to RowData");
        int parallelism = rows.output.getParallelism();
        // The join's parallelism, so that the rows are forwarded in order, never redistributed.
        return new Joined<>(
                parallelism > 0 ? converted.setParallelism(parallelism) : converted, rows.rejected);
    }

    /** The Java engine's changes are rows with their kind: the joined rows feed the next join. */
    @Override
    public Joined<Row> chain(DataStream<Row> left, DataStream<Row> right, SideSpec next) {
        return rows(left, right);
    }

    @Override
    public Joined<byte[]> raw(DataStream<Row> left, DataStream<Row> right) {
        SingleOutputStreamOperator<Row> joined = java.joinRawRows(left, right);
        return new Joined<>(JavaJoin.rawBytes(joined), joined.getSideOutput(BadRecord.OUTPUT));
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
