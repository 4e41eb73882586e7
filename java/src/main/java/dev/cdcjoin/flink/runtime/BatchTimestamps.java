package dev.cdcjoin.flink.runtime;

import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * The timestamps of the input records of a batch, so that what a record causes is emitted with that
 * record's timestamp (or none), as Flink's own operators do, although it is emitted after the
 * batch's native call.
 */
final class BatchTimestamps {

    private final long[] values;
    private final boolean[] present;

    /**
     * Room for a batch.
     *
     * @param capacity records per batch
     */
    BatchTimestamps(int capacity) {
        values = new long[capacity];
        present = new boolean[capacity];
    }

    /** Remembers the timestamp of the batch's record {@code index}. */
    void set(int index, StreamRecord<?> element) {
        values[index] = element.getTimestamp();
        present[index] = element.hasTimestamp();
    }

    /**
     * Puts {@code value} into {@code reuse} with the timestamp of input record {@code index}.
     *
     * @return {@code reuse}
     */
    <T> StreamRecord<T> stamp(StreamRecord<T> reuse, T value, int index) {
        if (present[index]) {
            return reuse.replace(value, values[index]);
        }
        reuse.replace(value);
        reuse.eraseTimestamp();
        return reuse;
    }
}
