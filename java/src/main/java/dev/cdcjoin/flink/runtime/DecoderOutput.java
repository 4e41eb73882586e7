package dev.cdcjoin.flink.runtime;

import dev.cdcjoin.flink.codec.ByteBuffers;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.flink.types.RowKind;

/**
 * The Java mirror of the native decoder's output ({@code cdcjoin_debezium::batch}, whose module doc
 * has the grammar; golden files {@code decode_output.bin} and {@code decode_output_partitioned.bin}
 * in {@code tests/wire/} hold both sides to the same bytes):
 *
 * <pre>
 * output             := changes u32 | errors u32 | tombstones u32 | entry*
 * entry              := TAG_CHANGE u8 | index u32 | kind u8 | key_len u32 | key | row_len u32 | row
 *                     | TAG_ERROR u8  | index u32 | msg_len u32 | message (UTF-8)
 * partitioned output := changes u32 | errors u32 | tombstones u32 | error entry{errors} | block*
 * </pre>
 *
 * <p>where a block is an exchange block ({@link ChangeBlocks}). {@link #read} walks an output and
 * hands each entry to a {@link Visitor}, so the offsets live here only.
 */
final class DecoderOutput {

    /** Tag of a change entry. */
    static final byte TAG_CHANGE = 0;

    /** Tag of an error entry. */
    static final byte TAG_ERROR = 1;

    /** Bytes of the output header (three counts). */
    static final int HEADER_LEN = 12;

    /** Offset of the error count in the header. */
    private static final int ERRORS_AT = 4;

    /** Offset of the tombstone count in the header. */
    private static final int TOMBSTONES_AT = 8;

    /** Bytes of an entry's tag and message index. */
    private static final int ENTRY_HEADER_LEN = 5;

    private DecoderOutput() {}

    /** What {@link #read} finds in an output, in order. */
    interface Visitor {
        /** A change of message {@code index} (an unpartitioned output). */
        void change(int index, RowKind kind, byte[] key, byte[] row) throws Exception;

        /** Message {@code index} was rejected for {@code message}. */
        void error(int index, String message) throws Exception;

        /** One key group's changes (a partitioned output). */
        void block(ChangeBatch block) throws Exception;
    }

    /** The output's tombstone count. */
    static int tombstones(ByteBuffer out) {
        return out.getInt(TOMBSTONES_AT);
    }

    /**
     * Walks an output (little-endian, from 0 to its limit): a partitioned one holds its errors,
     * then key group blocks for {@code maxParallelism}; an unpartitioned one entries in message
     * order.
     */
    static void read(ByteBuffer out, boolean partitioned, int maxParallelism, Visitor visitor)
            throws Exception {
        int p = HEADER_LEN;
        if (!partitioned) {
            while (p < out.limit()) {
                p = entry(out, p, visitor);
            }
            return;
        }
        for (int i = out.getInt(ERRORS_AT); i > 0; i--) {
            p = entry(out, p, visitor);
        }
        while (p < out.limit()) {
            ChangeBatch block = ChangeBlocks.readBlock(out, p, maxParallelism);
            visitor.block(block);
            p += ChangeBlocks.BLOCK_HEADER_LEN + block.payload.length;
        }
    }

    /** Visits the entry at {@code p}; returns where the next one starts. */
    private static int entry(ByteBuffer out, int p, Visitor visitor) throws Exception {
        byte tag = out.get(p);
        int index = out.getInt(p + 1);
        p += ENTRY_HEADER_LEN;
        if (tag == TAG_ERROR) {
            byte[] message = lengthPrefixed(out, p);
            visitor.error(index, new String(message, StandardCharsets.UTF_8));
            return p + 4 + message.length;
        }
        if (tag != TAG_CHANGE) {
            throw new IllegalStateException(
                    "decoder output: unknown entry tag " + tag + " at " + p);
        }
        RowKind kind = RowKind.fromByteValue(out.get(p));
        byte[] key = lengthPrefixed(out, p + 1);
        int rowAt = p + 1 + 4 + key.length;
        byte[] row = lengthPrefixed(out, rowAt);
        visitor.change(index, kind, key, row);
        return rowAt + 4 + row.length;
    }

    /** The bytes of a {@code len u32 | bytes} field at {@code at}. */
    private static byte[] lengthPrefixed(ByteBuffer buf, int at) {
        byte[] b = new byte[buf.getInt(at)];
        ByteBuffers.read(buf, at + 4, b, 0, b.length);
        return b;
    }
}
