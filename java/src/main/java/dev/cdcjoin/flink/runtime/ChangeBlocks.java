package dev.cdcjoin.flink.runtime;

import dev.cdcjoin.flink.codec.ByteBuffers;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * The Java mirror of the batch exchange's formats (Rust {@code cdcjoin_model::exchange}, whose
 * module documentation holds the grammar), little-endian:
 *
 * <pre>
 * block   := keyGroup u16 | count u32 | len u32 | change{count}
 * change  := kind u8 | stamp | rowLen u32 | row
 * stamp   := flag u8 (STAMP_NONE | STAMP_PRESENT) | timestamp i64
 * </pre>
 *
 * A {@link ChangeBatch} carries one block's changes; the join operator appends the block behind
 * {@code side u8} ({@link JoinBatches}). A stamp is a Flink record's timestamp, or its absence.
 */
public final class ChangeBlocks {

    /** Stamp flag: the record has no timestamp. */
    public static final byte STAMP_NONE = 0;

    /** Stamp flag: the record has the timestamp that follows. */
    public static final byte STAMP_PRESENT = 1;

    /** Bytes of a stamp. */
    public static final int STAMP_LEN = 9;

    /** Bytes of a block header ({@code keyGroup | count | len}). */
    public static final int BLOCK_HEADER_LEN = 10;

    /** Bytes of a change before its row ({@code kind | stamp | rowLen}). */
    public static final int CHANGE_HEADER_LEN = 1 + STAMP_LEN + 4;

    /** Index of {@code count} in a block header. */
    private static final int COUNT_AT = 2;

    /** Index of {@code len} in a block header. */
    private static final int LEN_AT = COUNT_AT + 4;

    private ChangeBlocks() {}

    /**
     * Appends a batch's changes as a block.
     *
     * @param batch the buffer
     * @param changes one key group's changes
     */
    static void putBlock(BatchBuffer batch, ChangeBatch changes) {
        batch.reserve(BLOCK_HEADER_LEN + changes.payload.length)
                .putShort(changes.keyGroup)
                .putInt(changes.count)
                .putInt(changes.payload.length)
                .putBytes(changes.payload);
    }

    /**
     * Reads the block at {@code at}, which ends at {@code at + BLOCK_HEADER_LEN + payload.length}.
     *
     * @param out a little-endian buffer
     * @param at the block's index
     * @param maxParallelism the max parallelism its key group was computed for
     * @return its changes, copied
     */
    static ChangeBatch readBlock(ByteBuffer out, int at, int maxParallelism) {
        byte[] payload = new byte[out.getInt(at + LEN_AT)];
        ByteBuffers.read(out, at + BLOCK_HEADER_LEN, payload, 0, payload.length);
        return new ChangeBatch(
                Short.toUnsignedInt(out.getShort(at)),
                maxParallelism,
                out.getInt(at + COUNT_AT),
                payload);
    }

    /**
     * Appends the stamp of {@code element} to a batch.
     *
     * @param batch the batch
     * @param element the record whose timestamp (or its absence) is written
     */
    static void putStamp(BatchBuffer batch, StreamRecord<?> element) {
        boolean present = element.hasTimestamp();
        batch.put(present ? STAMP_PRESENT : STAMP_NONE)
                .putLong(present ? element.getTimestamp() : 0L);
    }

    /**
     * Gives {@code reuse} the value and the timestamp of the stamp at {@code at}.
     *
     * @param out a little-endian buffer
     * @param at the stamp's index
     * @param reuse the record to fill
     * @param value its value
     * @return {@code reuse}
     */
    static <T> StreamRecord<T> stamped(ByteBuffer out, int at, StreamRecord<T> reuse, T value) {
        byte flag = out.get(at);
        if (flag == STAMP_PRESENT) {
            return reuse.replace(value, out.getLong(at + 1));
        }
        if (flag != STAMP_NONE) {
            throw new IllegalStateException("bad stamp flag " + flag + " in native output");
        }
        reuse.replace(value);
        reuse.eraseTimestamp();
        return reuse;
    }

    /** Accumulates the changes of one block on the heap. */
    static final class Writer {
        private ByteBuffer buf = ByteBuffer.allocate(256).order(ByteOrder.LITTLE_ENDIAN);
        private int count;

        /** Appends a change of kind {@code kind} with {@code element}'s stamp. */
        void add(byte kind, StreamRecord<?> element, byte[] row) {
            reserve(CHANGE_HEADER_LEN + row.length);
            boolean present = element.hasTimestamp();
            buf.put(kind)
                    .put(present ? STAMP_PRESENT : STAMP_NONE)
                    .putLong(present ? element.getTimestamp() : 0L)
                    .putInt(row.length)
                    .put(row);
            count++;
        }

        /** Changes so far. */
        int count() {
            return count;
        }

        /** The changes so far as a batch of {@code keyGroup}; the writer is emptied. */
        ChangeBatch take(int keyGroup, int maxParallelism) {
            ChangeBatch batch =
                    new ChangeBatch(
                            keyGroup,
                            maxParallelism,
                            count,
                            Arrays.copyOf(buf.array(), buf.position()));
            buf.clear();
            count = 0;
            return batch;
        }

        private void reserve(int bytes) {
            if (buf.remaining() < bytes) {
                int size = Math.max(buf.capacity() * 2, buf.position() + bytes);
                ByteBuffer bigger = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
                buf.flip();
                buf = bigger.put(buf);
            }
        }
    }
}
