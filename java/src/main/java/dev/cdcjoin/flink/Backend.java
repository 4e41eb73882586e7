package dev.cdcjoin.flink;

import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.Row;

/**
 * What an engine does for {@link CdcJoin}: decode each kind of input into its changes ({@code D}),
 * and join two change streams into rows, Flink's internal rows or bytes. {@link CdcJoin} chooses
 * one, in one place, and builds every job through it; the engines' job graphs live in {@link
 * NativeBackend} and {@link JavaBackend}, so the public API stays apart from either engine's
 * classes.
 *
 * @param <D> the engine's decoded change
 */
interface Backend<D> {

    /** Decodes one side's records of {@code kind} into this engine's changes. */
    <I> SingleOutputStreamOperator<D> decode(SideSpec side, DataStream<I> in, InputKind<I> kind);

    /** Natively decoded changes as this engine's changes. */
    DataStream<D> fromChanges(SideSpec side, DataStream<ChangeRecord> in);

    /** Keys and joins two change streams into rows. */
    Joined<Row> rows(DataStream<D> left, DataStream<D> right);

    /** Keys and joins two change streams into Flink's internal rows ({@code RowData}). */
    Joined<RowData> rowData(DataStream<D> left, DataStream<D> right);

    /** Keys and joins two change streams into the native wire format's bytes. */
    Joined<byte[]> raw(DataStream<D> left, DataStream<D> right);

    /**
     * Keys and joins two change streams into this engine's changes of side {@code next} of a next
     * join (a chained join: {@code next}'s schema is this join's output schema).
     */
    Joined<D> chain(DataStream<D> left, DataStream<D> right, SideSpec next);

    /**
     * A join's output and the changes it rejected.
     *
     * @param <T> the output type
     */
    final class Joined<T> {
        final SingleOutputStreamOperator<T> output;
        final DataStream<BadRecord> rejected;

        Joined(SingleOutputStreamOperator<T> output, DataStream<BadRecord> rejected) {
            this.output = output;
            this.rejected = rejected;
        }

        /** An operator's output with its own side output of rejections. */
        static <T> Joined<T> of(SingleOutputStreamOperator<T> operator) {
            return new Joined<>(operator, operator.getSideOutput(BadRecord.OUTPUT));
        }
    }
}
