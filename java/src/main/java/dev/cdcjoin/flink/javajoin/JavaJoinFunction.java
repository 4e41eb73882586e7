package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.BadRecord;
import dev.cdcjoin.flink.JoinSpec;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.types.Row;
import org.apache.flink.util.Collector;

/**
 * The Java changelog join as a {@link KeyedCoProcessFunction}: input 1 is the left table's changes,
 * input 2 the right table's, both keyed by their join key (a {@link Row} of the key columns, see
 * {@link JavaJoin#leftKeySelector()}); the output is the joined changelog, left columns then right
 * columns (or the definition's projection), with Flink SQL's regular-join emission rules as the
 * native join implements them (see {@link JavaJoin}).
 *
 * <p>State per side follows its keys ({@link StateLayout}); TTL, if the definition sets one, is
 * Flink's {@code StateTtlConfig} with {@code OnCreateAndWrite} and {@code NeverReturnExpired}.
 * Retractions of rows that are not in state are counted in the {@link
 * dev.cdcjoin.flink.CdcJoinMetrics#ABSENT_RETRACTIONS} metric, or fail with {@link
 * AbsentRetractionException} if the definition asks to. Records in per side are counted in {@code
 * cdcjoinRecordsInLeft} and {@code cdcjoinRecordsInRight}, as in the native operator. Changes it
 * cannot apply (see {@link JoinCore}) fail the job with a {@link RejectedChangeException} or go to
 * {@link BadRecord#OUTPUT}, by the plan's bad-record policy, counted in {@link
 * dev.cdcjoin.flink.CdcJoinMetrics#REJECTED}.
 *
 * <p>Usually built by {@link JavaJoin#joinChanges}.
 */
public class JavaJoinFunction extends KeyedCoProcessFunction<Row, Row, Row, Row>
        implements CheckpointedFunction {

    private static final long serialVersionUID = 1L;

    /** The emission rules and state. */
    private final JoinCore core;

    /**
     * A join function for a definition.
     *
     * @param definition the join
     */
    public JavaJoinFunction(JoinSpec definition) {
        this(ResolvedJoin.of(definition));
    }

    JavaJoinFunction(ResolvedJoin plan) {
        this.core = new JoinCore(plan);
    }

    @Override
    public void open(OpenContext openContext) throws Exception {
        core.open(getRuntimeContext());
    }

    @Override
    public void processElement1(Row change, Context ctx, Collector<Row> out) throws Exception {
        core.process(true, change, out, r -> ctx.output(BadRecord.OUTPUT, r));
    }

    @Override
    public void processElement2(Row change, Context ctx, Collector<Row> out) throws Exception {
        core.process(false, change, out, r -> ctx.output(BadRecord.OUTPUT, r));
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        core.initializeState(context);
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
        core.snapshotState(context);
    }
}
