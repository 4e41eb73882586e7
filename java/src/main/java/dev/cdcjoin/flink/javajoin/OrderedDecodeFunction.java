package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.BadRecord;
import dev.cdcjoin.flink.BadRecordPolicy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.types.Either;
import org.apache.flink.types.Row;
import org.apache.flink.util.Collector;

/**
 * Decodes one stream carrying both tables' messages ({@link Either#Left} for the left table) into
 * one stream of both tables' changes, in order. See {@link DebeziumDecodeFunction}.
 *
 * @param <T> {@code byte[]} or {@code String}
 */
class OrderedDecodeFunction<T> extends ProcessFunction<Either<T, T>, Either<Row, Row>> {

    private static final long serialVersionUID = 1L;

    private final TableInput leftInput;
    private final TableInput rightInput;
    private final BadRecords badRecords;

    private transient DebeziumJsonDecoder left;
    private transient DebeziumJsonDecoder right;
    private transient Counter tombstones;
    private transient long leftIndex;
    private transient long rightIndex;

    OrderedDecodeFunction(TableInput leftInput, TableInput rightInput, BadRecordPolicy policy) {
        this.leftInput = leftInput;
        this.rightInput = rightInput;
        this.badRecords = new BadRecords(policy);
    }

    @Override
    public void open(OpenContext openContext) {
        left = leftInput.jsonDecoder();
        right = rightInput.jsonDecoder();
        tombstones = getRuntimeContext().getMetricGroup().counter("tombstones");
        badRecords.open(getRuntimeContext());
    }

    @Override
    public void processElement(Either<T, T> message, Context ctx, Collector<Either<Row, Row>> out) {
        boolean isLeft = message.isLeft();
        Object m = isLeft ? message.left() : message.right();
        long i = isLeft ? leftIndex++ : rightIndex++;
        Collector<Row> wrap =
                new Collector<Row>() {
                    @Override
                    public void collect(Row row) {
                        out.collect(isLeft ? Either.Left(row) : Either.Right(row));
                    }

                    @Override
                    public void close() {}
                };
        try {
            if (DebeziumDecodeFunction.decodeOne(isLeft ? left : right, m, i, wrap) == 0) {
                tombstones.inc();
            }
        } catch (DebeziumDecodeException e) {
            String source = (isLeft ? leftInput : rightInput).source;
            badRecords.reject(
                    e,
                    r -> ctx.output(BadRecord.OUTPUT, r),
                    () -> new BadRecord(source, i, DebeziumDecodeFunction.raw(m), e.getMessage()));
        }
    }
}
