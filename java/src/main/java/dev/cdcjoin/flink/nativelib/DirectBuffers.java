package dev.cdcjoin.flink.nativelib;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Allocation of the little-endian direct buffers that batches cross the JNI boundary in. */
public final class DirectBuffers {

    /** The most bytes a buffer holds (a Java array's limit). */
    static final int MAX_OUTPUT = Integer.MAX_VALUE - 8;

    private DirectBuffers() {}

    /**
     * Allocates a little-endian direct buffer.
     *
     * @param capacity bytes
     * @return the buffer, position 0, limit = capacity
     */
    public static ByteBuffer allocate(int capacity) {
        return ByteBuffer.allocateDirect(capacity).order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * A buffer of at least {@code needed} bytes: {@code buf} itself when large enough, else a new
     * one (at least twice as large) holding a copy of {@code buf}'s first {@code used} bytes.
     *
     * @param buf the current buffer
     * @param used bytes of {@code buf} to keep
     * @param needed capacity required
     * @return a buffer of capacity {@code >= needed}
     */
    public static ByteBuffer ensure(ByteBuffer buf, int used, long needed) {
        if (needed <= buf.capacity()) {
            return buf;
        }
        if (needed > MAX_OUTPUT) {
            throw new IllegalArgumentException("batch buffer of " + needed + " bytes is too large");
        }
        long grown = Math.max(needed, Math.min((long) buf.capacity() * 2, MAX_OUTPUT));
        ByteBuffer bigger = allocate((int) grown);
        ByteBuffer old = buf.duplicate();
        old.position(0).limit(used);
        bigger.put(old);
        bigger.clear();
        return bigger;
    }

    /**
     * Reads a native call's result that follows the "length, or minus the needed capacity"
     * contract: when {@code result} is negative, grows {@code out} and asks {@code take} to copy
     * the pending output again.
     *
     * @param result the native call's return value
     * @param out the buffer the output was (or would have been) copied to
     * @param take copies the pending output to the given buffer and returns its length
     * @return the buffer holding the output, position 0 and limit = its length
     */
    static ByteBuffer result(long result, ByteBuffer out, OutputTaker take) {
        ByteBuffer target = out;
        long length = result;
        if (length < -MAX_OUTPUT) {
            throw new IllegalStateException(
                    "a native call's output of "
                            + -length
                            + " bytes is more than a Java buffer holds (2 GiB): a join emits its"
                            + " rows in pieces of about 32 MiB, so one joined row was this large");
        }
        if (length < 0) {
            target = ensure(out, 0, -length);
            length = take.take(target);
            if (length < 0) {
                throw new IllegalStateException("native output did not fit after growing");
            }
        }
        target.clear().limit((int) length);
        return target;
    }

    /** Copies pending native output into a buffer. */
    @FunctionalInterface
    interface OutputTaker {
        long take(ByteBuffer out);
    }
}
