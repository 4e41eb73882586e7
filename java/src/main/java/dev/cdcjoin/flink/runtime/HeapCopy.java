package dev.cdcjoin.flink.runtime;

import dev.cdcjoin.flink.codec.ByteBuffers;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A reusable heap copy of a native call's output. One bulk copy per batch is cheaper than many
 * small reads of the direct buffer: each bulk read from a direct buffer pays bounds and session
 * checks, and a string decoded from the heap array needs no temporary {@code byte[]}.
 */
final class HeapCopy {

    private ByteBuffer heap = ByteBuffer.allocate(64 * 1024).order(ByteOrder.LITTLE_ENDIAN);

    /**
     * Copies {@code direct[0, limit)}.
     *
     * @param direct a native call's output
     * @return a little-endian heap buffer with the same content and limit, valid until the next
     *     call
     */
    ByteBuffer of(ByteBuffer direct) {
        int n = direct.limit();
        if (heap.capacity() < n) {
            heap =
                    ByteBuffer.allocate(Math.max(n, 2 * heap.capacity()))
                            .order(ByteOrder.LITTLE_ENDIAN);
        }
        ByteBuffers.read(direct, 0, heap.array(), 0, n);
        heap.clear().limit(n);
        return heap;
    }
}
