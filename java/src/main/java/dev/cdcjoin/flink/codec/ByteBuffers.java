package dev.cdcjoin.flink.codec;

import java.nio.ByteBuffer;

/**
 * Absolute bulk reads on Java 11, whose {@link ByteBuffer} has none ({@code get(int, byte[], int,
 * int)} is Java 13): the main code is built for Java 11 (Flink 1.20's oldest Java). A read through
 * a {@code duplicate()} would allocate a buffer object per call on the hot paths (every batch a
 * native call returns, every checkpoint chunk); this one moves the buffer's own position and puts
 * it back.
 */
public final class ByteBuffers {

    private ByteBuffers() {}

    /**
     * Copies {@code buf[at, at + length)} to {@code dst[offset, offset + length)}, as Java 13's
     * absolute {@code get} does; the buffer's position is the same afterwards.
     *
     * @param buf the buffer to read (not read by another thread meanwhile, as for any relative
     *     read)
     * @param at the first byte, {@code at + length <= buf.limit()}
     * @param dst the destination
     * @param offset the first byte written in {@code dst}
     * @param length the number of bytes
     * @throws IndexOutOfBoundsException if the range is not within the buffer's limit or {@code
     *     dst}
     */
    public static void read(ByteBuffer buf, int at, byte[] dst, int offset, int length) {
        int position = buf.position();
        if (at < 0 || at > buf.limit() - length) {
            throw new IndexOutOfBoundsException(
                    "read of "
                            + length
                            + " bytes at "
                            + at
                            + " in a buffer of limit "
                            + buf.limit());
        }
        buf.position(at);
        try {
            buf.get(dst, offset, length);
        } finally {
            buf.position(position);
        }
    }
}
