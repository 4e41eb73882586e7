package dev.cdcjoin.flink.runtime;

import dev.cdcjoin.flink.BadRecordPolicy;
import dev.cdcjoin.flink.MultiJoinSpec;
import dev.cdcjoin.flink.nativelib.KeyGroupJoin;
import dev.cdcjoin.flink.nativelib.NativeCounters;
import dev.cdcjoin.flink.nativelib.NativeMultiJoin;
import java.util.List;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.Row;

/**
 * The keyed multi-way join operator: 2 to 8 inputs on one join key, its state in the native
 * multi-way join ({@link NativeMultiJoin}).
 *
 * <p>Its input is the union of the inputs' {@link ChangeBatch}es, each tagged with its input's
 * index ({@code Tuple2<index, batch>}), keyed by the batch's key group ({@link KeyGroupRoutes}).
 * One input over a union rather than Flink's multiple-input operator: the union's watermark is the
 * minimum of the inputs', its checkpoint barriers are aligned across them, and the operator is the
 * two-table join's batching operator ({@link BatchingOperator}) unchanged. Each batch is framed
 * behind its input's index into one direct buffer ({@link JoinBatches#frame}) and joined in one
 * native call, flushed as the two-table join's is (full batch, max delay, watermark, before the
 * checkpoint barrier, end of input). The output is any {@link JoinOutput}, as for the two-table
 * join, each row with the timestamp of the input record that caused it; rejected changes go to the
 * bad-record policy as in {@link NativeJoinOperator}.
 *
 * <p>The native state is Flink raw keyed state, one section per key group with state, the same
 * format and handles as the two-table join's, so checkpoints, savepoints and rescaling work. As the
 * two-table join's, a checkpoint freezes the state in its synchronous phase, in time proportional
 * to the key groups, and writes it in the asynchronous phase while the join goes on ({@link
 * FrozenStateSnapshot}).
 *
 * @param <OUT> {@link Row}, {@link RowData}, {@code byte[]} or {@link ChangeBatch}
 */
public final class NativeMultiJoinOperator<OUT> extends KeyGroupJoinOperator<OUT>
        implements OneInputStreamOperator<Tuple2<Integer, ChangeBatch>, OUT>, BoundedOneInput {

    private static final long serialVersionUID = 1L;

    private transient NativeMultiJoin join;
    private transient long[] stats;
    private transient int heapBytes;

    private NativeMultiJoinOperator(
            MultiJoinSpec definition,
            JoinOutput<OUT> output,
            int batchSize,
            long maxFlushDelayMs,
            BadRecordPolicy policy) {
        super(definition, batchSize, maxFlushDelayMs, policy, output);
    }

    /**
     * A multi-way join operator emitting {@code output}: {@link JoinOutput#ROWS} (of {@link
     * MultiJoinSpec#rowTypeInfo()}), {@link JoinOutput#ROW_DATA} (of {@link
     * MultiJoinSpec#rowType()}), {@link JoinOutput#BYTES}, or {@link JoinOutput#chained} (a next
     * join's side, whose schema is {@link MultiJoinSpec#outputSchema()}).
     *
     * @param definition the join
     * @param output what it emits
     * @param batchSize input records per native call
     * @param maxFlushDelayMs longest time a record waits in a batch
     * @param policy where changes the join rejects go
     * @param <OUT> the output records' type
     * @return the operator
     */
    public static <OUT> NativeMultiJoinOperator<OUT> of(
            MultiJoinSpec definition,
            JoinOutput<OUT> output,
            int batchSize,
            long maxFlushDelayMs,
            BadRecordPolicy policy) {
        return new NativeMultiJoinOperator<>(
                definition, output, batchSize, maxFlushDelayMs, policy);
    }

    @Override
    KeyGroupJoin createJoin(int firstKeyGroup, int lastKeyGroup) {
        join = new NativeMultiJoin(definition.specJson(firstKeyGroup, lastKeyGroup));
        return join;
    }

    @Override
    public void open() throws Exception {
        List<String> counters = NativeMultiJoin.counters();
        stats = new long[counters.size()];
        heapBytes = counters.indexOf("state_heap_bytes");
        registerGauges(counters, name -> name.equals(NativeCounters.ROWS_OUT) || absentInput(name));
        super.open();
    }

    /** Whether native counter {@code name} counts the records of an input the join lacks. */
    private boolean absentInput(String name) {
        String prefix = "records_in_";
        return name.startsWith(prefix)
                && Integer.parseInt(name.substring(prefix.length())) >= definition.inputs().size();
    }

    @Override
    public void processElement(StreamRecord<Tuple2<Integer, ChangeBatch>> element)
            throws Exception {
        append(element.getValue().f0.byteValue(), element.getValue().f1);
    }

    /**
     * No key context: the operator keeps no Flink keyed state and no keyed timers (its state is
     * native, written as raw keyed state per key group, and each batch's key group is framed with
     * it), so Flink may skip the key selector and {@code setCurrentKey} per record, as for {@link
     * NativeJoinOperator#hasKeyContext1()}.
     */
    @Override
    public boolean hasKeyContext() {
        return false;
    }

    /** Copies the native counters and accounts the state's memory as managed memory. */
    @Override
    void updateStats(int records) {
        join.stats(stats);
        memory.track(stats[heapBytes]);
    }

    @Override
    long counter(String name) {
        return nativeStat(name);
    }

    /**
     * A native counter after the last batch, for tests and summaries.
     *
     * @param name one of {@link NativeMultiJoin#counters()}, such as {@code state_frozen_bytes}
     * @return its value
     * @throws IllegalArgumentException if no counter has that name
     */
    public long nativeStat(String name) {
        int at = NativeMultiJoin.counters().indexOf(name);
        if (at < 0) {
            throw new IllegalArgumentException("no native counter " + name);
        }
        return stats[at];
    }

    @Override
    public void endInput() throws Exception {
        flush();
    }
}
