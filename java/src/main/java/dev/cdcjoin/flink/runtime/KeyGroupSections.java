package dev.cdcjoin.flink.runtime;

import java.io.DataInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import org.apache.flink.runtime.state.KeyGroupStatePartitionStreamProvider;
import org.apache.flink.runtime.state.StateInitializationContext;

/**
 * Restores a native state from Flink raw keyed state: one self-delimiting section ({@code len u32 |
 * payload}) per key group that held state, as the native joins' snapshots write them ({@link
 * FrozenStateSnapshot}). Sections are gathered into restore chunks of about {@link #CHUNK_BYTES}
 * ({@code keyGroup u32 | section}, the form snapshot chunks take) that the native state decodes on
 * up to {@link #THREADS} threads: a restore is CPU work that stops the job, and key groups are
 * independent. Chunks are heap arrays, copied once into native memory: a direct buffer of their
 * size would count against the TaskManager's small direct memory budget.
 */
final class KeyGroupSections {

    /** Bytes of sections gathered before the native state decodes them. */
    static final int CHUNK_BYTES = 32 << 20;

    /** Threads a restore chunk is decoded on: the cores, at most 4. */
    static final int THREADS = Math.min(4, Runtime.getRuntime().availableProcessors());

    /** What takes a chunk: the native state's {@code restore}. */
    @FunctionalInterface
    interface Restore {
        /**
         * Restores the chunk at {@code [0, length)} of {@code chunk} on up to {@code threads}
         * threads; returns the number of sections it held.
         */
        int restore(byte[] chunk, int length, int threads);
    }

    private KeyGroupSections() {}

    /**
     * Restores every key group section of {@code context} into {@code state}, failing with the key
     * groups' numbers on a corrupt or refused section.
     *
     * @param context the operator's restore context
     * @param state the native state's restore
     * @return the bytes of state read
     * @throws Exception if a section cannot be read or restored
     */
    static long restore(StateInitializationContext context, Restore state) throws Exception {
        Chunk chunk = new Chunk(state);
        for (KeyGroupStatePartitionStreamProvider p : context.getRawKeyedStateInputs()) {
            // The stream is shared by the handle's key groups: read one section, do not close.
            DataInputStream in = new DataInputStream(p.getStream());
            int length = Integer.reverseBytes(in.readInt());
            if (length < 0) {
                throw new IllegalStateException(
                        "corrupt join state of key group " + p.getKeyGroupId());
            }
            chunk.add(p.getKeyGroupId(), length, in);
            if (chunk.length >= CHUNK_BYTES) {
                chunk.flush();
            }
        }
        chunk.flush();
        return chunk.bytes;
    }

    /** Sections gathered for one native call. */
    private static final class Chunk {
        private final Restore state;
        private byte[] buf = new byte[1 << 20];
        private int length;
        private int sections;
        private int firstKeyGroup;
        private int lastKeyGroup;

        /** Section bytes read, all chunks. */
        long bytes;

        Chunk(Restore state) {
            this.state = state;
        }

        /**
         * Appends key group {@code keyGroup}'s section of {@code payload} bytes from {@code in}.
         */
        void add(int keyGroup, int payload, DataInputStream in) throws IOException {
            long needed = (long) length + 8 + payload;
            if (needed > Integer.MAX_VALUE - 8) {
                throw new IllegalStateException(
                        "join state of key group " + keyGroup + " is too large to restore");
            }
            if (needed > buf.length) {
                buf =
                        Arrays.copyOf(
                                buf,
                                (int) Math.max(needed, Math.min(2L * buf.length, CHUNK_BYTES)));
            }
            ByteBuffer header = ByteBuffer.wrap(buf, length, 8).order(ByteOrder.LITTLE_ENDIAN);
            header.putInt(keyGroup).putInt(payload);
            in.readFully(buf, length + 8, payload);
            if (sections++ == 0) {
                firstKeyGroup = keyGroup;
            }
            lastKeyGroup = keyGroup;
            length += 8 + payload;
            bytes += 4L + payload;
        }

        /** Hands the gathered sections to the native state. */
        void flush() {
            if (sections == 0) {
                return;
            }
            int restored;
            try {
                restored = state.restore(buf, length, THREADS);
            } catch (RuntimeException e) {
                throw new IllegalStateException(
                        "cannot restore the join state of key groups "
                                + firstKeyGroup
                                + ".."
                                + lastKeyGroup
                                + ": "
                                + e.getMessage(),
                        e);
            }
            if (restored != sections) {
                throw new IllegalStateException(
                        "join state of key groups "
                                + firstKeyGroup
                                + ".."
                                + lastKeyGroup
                                + ": "
                                + restored
                                + " sections restored of "
                                + sections);
            }
            length = 0;
            sections = 0;
        }
    }
}
