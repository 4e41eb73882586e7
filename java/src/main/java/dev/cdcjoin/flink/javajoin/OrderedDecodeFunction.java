package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.BadRecord;
import dev.cdcjoin.flink.BadRecordPolicy;
import dev.cdcjoin.flink.codec.CdcSchema;
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

    private final String leftSource;
    private final CdcSchema leftSchema;
    private final String rightSource;
    private final CdcSchema rightSchema;
    private final boolean deleteInsertUpdates;
    private final BadRecordPolicy policy;

    private transient DebeziumJsonDecoder left;
    private transient DebeziumJsonDecoder right;
    private transient Counter tombstones;
    private transient Counter badRecords;
    private transient long leftIndex;
    private transient long rightIndex;

    OrderedDecodeFunction(
            String leftSource,
            CdcSchema leftSchema,
            String rightSource,
            CdcSchema rightSchema,
            boolean deleteInsertUpdates,
            BadRecordPolicy policy) {
        this.leftSource = leftSource;
        this.leftSchema = leftSchema;
        this.rightSource = rightSource;
        this.rightSchema = rightSchema;
        this.deleteInsertUpdates = deleteInsertUpdates;
        this.policy = policy;
    }

    @Override
    public void open(OpenContext openContext) {
        left = new DebeziumJsonDecoder(leftSource, leftSchema, deleteInsertUpdates);
        right = new DebeziumJsonDecoder(rightSource, rightSchema, deleteInsertUpdates);
        tombstones = getRuntimeContext().getMetricGroup().counter("tombstones");
        badRecords = getRuntimeContext().getMetricGroup().counter("badRecords");
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
            badRecords.inc();
            if (policy == BadRecordPolicy.FAIL) {
                throw e;
            }
            ctx.output(
                    JavaJoin.BAD_RECORDS,
                    new BadRecord(
                            isLeft ? leftSource : rightSource,
                            i,
                            DebeziumDecodeFunction.raw(m),
                            e.getMessage()));
        }
    }
}
