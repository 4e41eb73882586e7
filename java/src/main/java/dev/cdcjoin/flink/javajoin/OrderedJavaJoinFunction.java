package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.BadRecord;
import dev.cdcjoin.flink.JoinSpec;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.types.Either;
import org.apache.flink.types.Row;
import org.apache.flink.util.Collector;

/**
 * The same join as {@link JavaJoinFunction} over ONE input carrying both tables' changes ({@link
 * Either#Left} for the left table, {@link Either#Right} for the right), keyed by join key.
 *
 * <p>A two-input operator reads its inputs in whatever order the network delivers them; with one
 * input, the join sees the changes in exactly the order of the stream, so the emitted changelog
 * (not only its materialized result) is deterministic: the form to use when the two tables come
 * from one ordered log, and for comparing changelogs exactly.
 *
 * <p>Usually built by {@link JavaJoin#joinChangesInOrder}.
 */
public class OrderedJavaJoinFunction extends KeyedProcessFunction<Row, Either<Row, Row>, Row>
        implements CheckpointedFunction {

    private static final long serialVersionUID = 1L;

    /** The emission rules and state. */
    private final JoinCore core;

    /**
     * A join function for a definition.
     *
     * @param definition the join
     */
    public OrderedJavaJoinFunction(JoinSpec definition) {
        this(ResolvedJoin.of(definition));
    }

    OrderedJavaJoinFunction(ResolvedJoin plan) {
        this.core = new JoinCore(plan);
    }

    @Override
    public void open(OpenContext openContext) throws Exception {
        core.open(getRuntimeContext());
    }

    @Override
    public void processElement(Either<Row, Row> change, Context ctx, Collector<Row> out)
            throws Exception {
        boolean left = change.isLeft();
        core.process(
                left,
                left ? change.left() : change.right(),
                out,
                r -> ctx.output(BadRecord.OUTPUT, r));
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
