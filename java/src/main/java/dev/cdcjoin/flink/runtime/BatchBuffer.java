package dev.cdcjoin.flink.runtime;

import dev.cdcjoin.flink.nativelib.DirectBuffers;
import java.nio.ByteBuffer;

/**
 * A growing little-endian direct buffer that records are appended to until a batch is handed to
 * native code in one call.
 */
public final class BatchBuffer {

    /** Length prefix of a null message or a null row image. */
    public static final int NULL_LENGTH = -1;

    private ByteBuffer buf;
    private int records;

    /**
     * A buffer.
     *
     * @param initialCapacity initial bytes
     */
    public BatchBuffer(int initialCapacity) {
        buf = DirectBuffers.allocate(initialCapacity);
    }

    /**
     * Makes room for {@code bytes} more bytes.
     *
     * @param bytes bytes about to be appended
     * @return this
     */
    public BatchBuffer reserve(int bytes) {
        int at = buf.position();
        if (buf.remaining() < bytes) {
            buf = DirectBuffers.ensure(buf, at, (long) at + bytes);
            buf.position(at);
        }
        return this;
    }

    /**
     * Appends a byte.
     *
     * @param b the byte
     * @return this
     */
    public BatchBuffer put(byte b) {
        reserve(1).buf.put(b);
        return this;
    }

    /**
     * Appends a little-endian u16.
     *
     * @param v the value
     * @return this
     */
    public BatchBuffer putShort(int v) {
        reserve(2).buf.putShort((short) v);
        return this;
    }

    /**
     * Appends a little-endian int.
     *
     * @param v the value
     * @return this
     */
    public BatchBuffer putInt(int v) {
        reserve(4).buf.putInt(v);
        return this;
    }

    /**
     * Appends a little-endian long.
     *
     * @param v the value
     * @return this
     */
    public BatchBuffer putLong(long v) {
        reserve(8).buf.putLong(v);
        return this;
    }

    /**
     * Appends bytes as they are.
     *
     * @param bytes the bytes
     * @return this
     */
    public BatchBuffer putBytes(byte[] bytes) {
        reserve(bytes.length).buf.put(bytes);
        return this;
    }

    /**
     * Appends {@code length u32 | bytes}, or {@link #NULL_LENGTH} for {@code null}.
     *
     * @param bytes the bytes, or {@code null}
     * @return this
     */
    public BatchBuffer putSized(byte[] bytes) {
        if (bytes == null) {
            return putInt(NULL_LENGTH);
        }
        reserve(4 + bytes.length).buf.putInt(bytes.length).put(bytes);
        return this;
    }

    /** Counts one more record in the batch. */
    public void recordAdded() {
        records++;
    }

    /**
     * Counts {@code n} more records in the batch.
     *
     * @param n records appended
     */
    public void recordsAdded(int n) {
        records += n;
    }

    /**
     * Records in the batch.
     *
     * @return the count
     */
    public int records() {
        return records;
    }

    /**
     * Bytes in the batch.
     *
     * @return the length
     */
    public int length() {
        return buf.position();
    }

    /**
     * The direct buffer holding the batch at {@code [0, length())}.
     *
     * @return the buffer
     */
    public ByteBuffer buffer() {
        return buf;
    }

    /** Empties the batch, keeping the memory. */
    public void clear() {
        buf.clear();
        records = 0;
    }
}
