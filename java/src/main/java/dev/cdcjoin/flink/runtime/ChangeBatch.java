package dev.cdcjoin.flink.runtime;

import dev.cdcjoin.flink.ChangeRecord;
import dev.cdcjoin.flink.serialization.ChangeBatchSerializer;
import java.util.Arrays;
import org.apache.flink.api.common.typeinfo.TypeInfo;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * The changes of one key group, one Flink record for many changes: what crosses the native engine's
 * {@code keyBy} from the decode step to the join (see {@link ChangeBlocks} for the payload's
 * format). Routed by {@link KeyGroupRoutes} to the subtask owning {@link #keyGroup}, so that an
 * in-flight batch restored from an unaligned checkpoint at another parallelism lands where its key
 * group's state is. Flink serializes it with {@link ChangeBatchSerializer}.
 */
@TypeInfo(ChangeBatchSerializer.Factory.class)
public final class ChangeBatch {

    /** The Flink key group of every change in the batch. */
    public int keyGroup;

    /** The max parallelism {@link #keyGroup} was computed for; the join checks it is its own. */
    public int maxParallelism;

    /** Changes in {@link #payload}. */
    public int count;

    /** The changes: {@code (kind u8 | stamp | rowLen u32 | row)*}, see {@link ChangeBlocks}. */
    public byte[] payload;

    /** An empty batch, for deserialization. */
    public ChangeBatch() {}

    /**
     * A batch.
     *
     * @param keyGroup the key group of its changes
     * @param maxParallelism the max parallelism of that key group
     * @param count changes in the payload
     * @param payload the changes
     */
    public ChangeBatch(int keyGroup, int maxParallelism, int count, byte[] payload) {
        this.keyGroup = keyGroup;
        this.maxParallelism = maxParallelism;
        this.count = count;
        this.payload = payload;
    }

    /**
     * One change as a batch of one, stamped with its record's timestamp: for callers that hand the
     * join operator changes one by one (tests, benchmarks).
     *
     * @param maxParallelism the join's max parallelism
     * @param element the change and its timestamp
     * @return the batch
     */
    public static ChangeBatch of(int maxParallelism, StreamRecord<ChangeRecord> element) {
        ChangeRecord change = element.getValue();
        ChangeBlocks.Writer block = new ChangeBlocks.Writer();
        block.add(change.kind, element, change.row);
        return block.take(
                KeyGroupRangeAssignment.assignToKeyGroup(change.key, maxParallelism),
                maxParallelism);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ChangeBatch)) {
            return false;
        }
        ChangeBatch b = (ChangeBatch) o;
        return keyGroup == b.keyGroup
                && maxParallelism == b.maxParallelism
                && count == b.count
                && Arrays.equals(payload, b.payload);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * keyGroup + count) + Arrays.hashCode(payload);
    }

    @Override
    public String toString() {
        return "ChangeBatch{keyGroup="
                + keyGroup
                + "/"
                + maxParallelism
                + ", count="
                + count
                + ", bytes="
                + (payload == null ? 0 : payload.length)
                + "}";
    }
}
