package dev.cdcjoin.flink.runtime;

import dev.cdcjoin.flink.nativelib.DirectBuffers;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.flink.runtime.state.KeyGroupStatePartitionStreamProvider;
import org.apache.flink.runtime.state.StateInitializationContext;

/**
 * Restores a native state from Flink raw keyed state: one self-delimiting section ({@code len u32 |
 * payload}) per key group that held state, as the native joins' snapshots write them ({@link
 * FrozenStateSnapshot}), handed to the native state one at a time.
 */
final class KeyGroupSections {

    /** What takes a section: the native state's {@code restore}. */
    @FunctionalInterface
    interface Restore {
        /**
         * Restores the section at {@code [0, length)} of {@code in}, which Flink stored under key
         * group {@code keyGroup}.
         */
        void restore(ByteBuffer in, int length, int keyGroup);
    }

    private KeyGroupSections() {}

    /**
     * Restores every key group section of {@code context} into {@code state}, each checked against
     * the key group it was stored under, failing with the key group's number on a corrupt or
     * refused section.
     *
     * @param context the operator's restore context
     * @param state the native state's restore
     * @return the bytes of state read
     * @throws Exception if a section cannot be read or restored
     */
    static long restore(StateInitializationContext context, Restore state) throws Exception {
        long bytes = 0;
        ByteBuffer section = DirectBuffers.allocate(64 * 1024);
        byte[] chunk = new byte[64 * 1024];
        for (KeyGroupStatePartitionStreamProvider p : context.getRawKeyedStateInputs()) {
            // The stream is shared by the handle's key groups: read one section, do not close.
            DataInputStream in = new DataInputStream(p.getStream());
            int length = Integer.reverseBytes(in.readInt());
            if (length < 0) {
                throw new IllegalStateException(
                        "corrupt join state of key group " + p.getKeyGroupId());
            }
            section = DirectBuffers.ensure(section, 0, 4L + length);
            section.clear();
            section.putInt(length);
            readInto(in, section, length, chunk);
            bytes += 4L + length;
            try {
                state.restore(section, 4 + length, p.getKeyGroupId());
            } catch (RuntimeException e) {
                throw new IllegalStateException(
                        "cannot restore the join state of key group "
                                + p.getKeyGroupId()
                                + ": "
                                + e.getMessage(),
                        e);
            }
        }
        return bytes;
    }

    /** Reads {@code length} bytes of {@code in} into {@code section}, through {@code chunk}. */
    private static void readInto(DataInputStream in, ByteBuffer section, int length, byte[] chunk)
            throws IOException {
        for (int left = length; left > 0; ) {
            int n = Math.min(chunk.length, left);
            in.readFully(chunk, 0, n);
            section.put(chunk, 0, n);
            left -= n;
        }
    }
}
