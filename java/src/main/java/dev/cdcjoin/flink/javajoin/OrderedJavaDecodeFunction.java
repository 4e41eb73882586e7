package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.BadRecord;
import dev.cdcjoin.flink.BadRecordPolicy;
import dev.cdcjoin.flink.CdcJoinMetrics;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.types.Either;
import org.apache.flink.types.Row;
import org.apache.flink.util.Collector;

/**
 * The decode step of the ordered Java join ({@link OrderedJavaJoinFunction}): one stream carrying
 * both tables' records ({@link Either#Left} for the left table's) decoded into one stream of both
 * tables' changes, in the stream's order. Each table's records are numbered, decoded and rejected
 * as {@link JavaDecodeFunction} does (see {@link TableInput}).
 *
 * @param <T> {@code byte[]} or {@code String}
 */
final class OrderedJavaDecodeFunction<T> extends ProcessFunction<Either<T, T>, Either<Row, Row>> {

    private static final long serialVersionUID = 1L;

    private final TableInput left;
    private final TableInput right;
    private final BadRecords badRecords;

    private transient Counter tombstones;

    OrderedJavaDecodeFunction(TableInput left, TableInput right, BadRecordPolicy policy) {
        this.left = left;
        this.right = right;
        this.badRecords = new BadRecords(policy, CdcJoinMetrics.BAD_RECORDS);
    }

    @Override
    public void open(OpenContext openContext) {
        left.open();
        right.open();
        tombstones = getRuntimeContext().getMetricGroup().counter(CdcJoinMetrics.TOMBSTONES);
        badRecords.open(getRuntimeContext());
    }

    @Override
    public void processElement(Either<T, T> record, Context ctx, Collector<Either<Row, Row>> out) {
        boolean isLeft = record.isLeft();
        Collector<Row> tagged =
                new Collector<Row>() {
                    @Override
                    public void collect(Row row) {
                        out.collect(isLeft ? Either.Left(row) : Either.Right(row));
                    }

                    @Override
                    public void close() {}
                };
        TableInput table = isLeft ? left : right;
        Object message = isLeft ? record.left() : record.right();
        if (table.decode(message, tagged, badRecords, r -> ctx.output(BadRecord.OUTPUT, r))) {
            tombstones.inc();
        }
    }
}
