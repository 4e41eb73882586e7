package dev.cdcjoin.flink.runtime;

import dev.cdcjoin.flink.ChangeRecord;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * Turns the public per-change stream ({@link ChangeRecord}s, e.g. from {@code DebeziumDecoder})
 * into the native join's input: {@link ChangeBatch}es, one per key group with changes per flush,
 * each change keeping its record's timestamp. The key group is Flink's own ({@link
 * KeyGroupRangeAssignment}) for the change's join key and the join's max parallelism ({@link
 * ConsumerKeyGroups}), which the join checks is its own. Flushed like the other batching operators
 * (full, after the max flush delay, before a watermark or a checkpoint barrier, at end of input).
 */
public final class ChangeBatcher extends BatchingOperator<ChangeBatch>
        implements OneInputStreamOperator<ChangeRecord, ChangeBatch>, BoundedOneInput {

    private static final long serialVersionUID = 1L;

    /** Per key group, its changes since the last flush ({@code null} until it has had one). */
    private transient ChangeBlocks.Writer[] blocks;

    /** Key groups with changes since the last flush. */
    private transient List<Integer> touched;

    private transient int changes;
    private transient long bytes;
    private transient StreamRecord<ChangeBatch> reuse;

    /**
     * A batcher.
     *
     * @param batchSize changes per flush
     * @param maxFlushDelayMs longest time a change waits
     */
    public ChangeBatcher(int batchSize, long maxFlushDelayMs) {
        super(batchSize, maxFlushDelayMs);
    }

    @Override
    protected boolean keysItsBatches() {
        return true;
    }

    @Override
    public void open() throws Exception {
        super.open();
        blocks = new ChangeBlocks.Writer[outputKeyGroups];
        touched = new ArrayList<>();
        reuse = new StreamRecord<>(null);
    }

    @Override
    public void processElement(StreamRecord<ChangeRecord> element) throws Exception {
        ChangeRecord change = element.getValue();
        int group = KeyGroupRangeAssignment.assignToKeyGroup(change.key, outputKeyGroups);
        ChangeBlocks.Writer block = blocks[group];
        if (block == null) {
            block = blocks[group] = new ChangeBlocks.Writer();
        }
        if (block.count() == 0) {
            touched.add(group);
        }
        block.add(change.kind, element, change.row);
        bytes += ChangeBlocks.CHANGE_HEADER_LEN + change.row.length;
        afterAppend(++changes, bytes);
    }

    /** Emits one batch per key group with changes, in key group order. */
    @Override
    public void flush() {
        if (changes == 0) {
            return;
        }
        Collections.sort(touched);
        for (int group : touched) {
            reuse.replace(blocks[group].take(group, outputKeyGroups));
            reuse.eraseTimestamp();
            output.collect(reuse);
        }
        touched.clear();
        changes = 0;
        bytes = 0;
    }

    @Override
    public void endInput() {
        flush();
    }

    @Override
    public void finish() throws Exception {
        flush();
        super.finish();
    }
}
