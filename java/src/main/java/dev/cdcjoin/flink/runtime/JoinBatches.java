package dev.cdcjoin.flink.runtime;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The Java mirror of the native join's batch formats (Rust {@code cdcjoin_join::batch}, whose
 * module documentation holds the grammar), little-endian:
 *
 * <pre>
 * batch        := input block*
 * input block  := side u8 (SIDE_LEFT | SIDE_RIGHT) | block        (block: {@link ChangeBlocks})
 * output entry := stamp | kind u8 | body                          (stamp: {@link ChangeBlocks})
 *   kind 0..3 (a RowKind byte, a joined row):
 *          body := leftLen i32 | left bytes | rightLen i32 | right bytes   (NULL_SIDE: no bytes)
 *   kind REJECTED (the input change is refused):
 *          body := side u8 | msgLen i32 | message bytes (UTF-8)
 * chained output := rejections i32 | output entry{rejections} (all REJECTED) | block*
 * </pre>
 *
 * <p>A multi-way join's batches and entries (Rust {@code cdcjoin_join::multiway}) are the same with
 * more inputs: an input block's first byte is its input's index, a joined row holds one {@code len
 * i32 | bytes} per input, and a rejection's side byte is the input's index ({@link
 * Entries#Entries(int)}).
 *
 * <p>A Flink output (Rust {@code cdcjoin_join::flink_rows}, {@code rowData()}) is the same entries
 * with each joined row one row in Flink's {@code BinaryRowData} layout, read as a joined row of one
 * input ({@code Entries(1)}): {@code kind u8 | len i32 | Flink row}.
 *
 * <p>A chained output (Rust {@code cdcjoin_join::chain}) is what a join whose output feeds another
 * join emits: its rejections, then its rows re-keyed into the next join's input blocks.
 *
 * <p>A joined row from its kind byte on is also the record of the raw output ({@code
 * dev.cdcjoin.flink.RawJoinOutput}).
 */
public final class JoinBatches {

    /** Side byte of the left input. */
    public static final byte SIDE_LEFT = 0;

    /** Side byte of the right input. */
    public static final byte SIDE_RIGHT = 1;

    /** Kind byte of an output entry that rejects its input change instead of a row. */
    public static final byte REJECTED = (byte) 0xFF;

    /** Length of a null side (null padding) in a joined row. */
    public static final int NULL_SIDE = -1;

    /** Index of {@code leftLen} in a joined row, from its kind byte. */
    public static final int LEFT_LENGTH_AT = 1;

    /** Index of the left row's bytes in a joined row, from its kind byte. */
    public static final int LEFT_AT = LEFT_LENGTH_AT + 4;

    /** Bytes before a chained output's first entry (its rejection count). */
    public static final int CHAINED_HEADER_LEN = 4;

    /** Index of {@code side} in a rejection, from its kind byte. */
    private static final int REJECTED_SIDE_AT = 1;

    /** Index of {@code msgLen} in a rejection, from its kind byte. */
    private static final int MESSAGE_LENGTH_AT = 2;

    private JoinBatches() {}

    /**
     * A joined row from its kind byte on, as the native join writes it (the record of the raw
     * output): {@code kind u8 | (len i32 | row)} per input, {@link #NULL_SIDE} and no bytes for a
     * null-padded input.
     *
     * @param kind the row's kind byte ({@code RowKind#toByteValue()})
     * @param rows one row per input in the compact row encoding, {@code null} for null padding
     * @return the record
     */
    public static byte[] joinedRow(byte kind, byte[]... rows) {
        int length = 1;
        for (byte[] row : rows) {
            length += 4 + (row == null ? 0 : row.length);
        }
        ByteBuffer buf = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        buf.put(kind);
        for (byte[] row : rows) {
            buf.putInt(row == null ? NULL_SIDE : row.length);
            if (row != null) {
                buf.put(row);
            }
        }
        return buf.array();
    }

    /**
     * Appends one key group's changes to a join batch as an input block; public so that benchmarks
     * frame exactly as the operator does.
     *
     * @param batch the join batch
     * @param side {@link #SIDE_LEFT} or {@link #SIDE_RIGHT}, or a multi-way join's input index
     * @param changes one key group's changes
     */
    public static void frame(BatchBuffer batch, byte side, ChangeBatch changes) {
        batch.reserve(1 + ChangeBlocks.BLOCK_HEADER_LEN + changes.payload.length);
        ChangeBlocks.putBlock(batch.put(side), changes);
        batch.recordsAdded(changes.count);
    }

    /**
     * A cursor over the entries of a join output, each read in place: one instance is reused for
     * every batch, nothing is allocated per entry but a rejection's message.
     */
    public static final class Entries {
        private ByteBuffer out;
        private int stampAt;
        private int kindAt;

        /** Per input of the joined row: where its length is. */
        private final int[] lengthAt;

        private int end;

        /** A cursor over a two-table join's entries. */
        public Entries() {
            this(2);
        }

        /**
         * A cursor over entries whose joined rows have {@code inputs} rows: a multi-way join's, or
         * 1 for a join's Flink output, whose joined row is one row in Flink's layout.
         *
         * @param inputs rows per joined row, at least 1
         */
        public Entries(int inputs) {
            if (inputs < 1) {
                throw new IllegalArgumentException("a joined row has at least 1 row");
            }
            this.lengthAt = new int[inputs];
        }

        /**
         * Starts over on an output.
         *
         * @param out a little-endian buffer holding the entries at {@code [from, limit)}; a heap
         *     one if {@link #message()} is to be read
         * @param from where the first entry starts
         * @return this
         */
        public Entries reset(ByteBuffer out, int from) {
            this.out = out;
            this.end = from;
            return this;
        }

        /**
         * Moves to the next entry.
         *
         * @return whether there was one
         */
        public boolean next() {
            if (end >= out.limit()) {
                return false;
            }
            stampAt = end;
            kindAt = stampAt + ChangeBlocks.STAMP_LEN;
            if (isRejection()) {
                end = kindAt + MESSAGE_LENGTH_AT + 4 + out.getInt(kindAt + MESSAGE_LENGTH_AT);
            } else {
                int at = kindAt + LEFT_LENGTH_AT;
                for (int i = 0; i < lengthAt.length; i++) {
                    lengthAt[i] = at;
                    at += 4 + sideBytes(at);
                }
                end = at;
            }
            return true;
        }

        private int sideBytes(int lengthAt) {
            return Math.max(out.getInt(lengthAt), 0);
        }

        /**
         * Where the entry's stamp is ({@link ChangeBlocks#stamped}).
         *
         * @return its index
         */
        public int stampAt() {
            return stampAt;
        }

        /**
         * Whether the entry rejects an input change rather than being a row.
         *
         * @return {@code true} for a rejection
         */
        public boolean isRejection() {
            return out.get(kindAt) == REJECTED;
        }

        /**
         * The row's kind byte (Flink's {@code RowKind} byte value).
         *
         * @return the kind
         */
        public byte kind() {
            return out.get(kindAt);
        }

        /**
         * Where the row's left side starts.
         *
         * @return the index of its first byte, or {@code -1} when it is null-padded
         */
        public int leftAt() {
            return inputAt(0);
        }

        /**
         * Where the row's right side starts.
         *
         * @return the index of its first byte, or {@code -1} when it is null-padded
         */
        public int rightAt() {
            return inputAt(1);
        }

        /**
         * Where the row of input {@code i} starts (the left side is input 0, the right one 1).
         *
         * @param i the input
         * @return the index of its first byte, or {@code -1} when it is null-padded
         */
        public int inputAt(int i) {
            return out.getInt(lengthAt[i]) < 0 ? -1 : lengthAt[i] + 4;
        }

        /**
         * Where the row starts without its stamp (the raw output record is {@code [rowStart,
         * end)}).
         *
         * @return the index of its kind byte
         */
        public int rowStart() {
            return kindAt;
        }

        /**
         * Where the entry ends.
         *
         * @return the index after its last byte
         */
        public int end() {
            return end;
        }

        /**
         * The side of a rejected change, or a multi-way join's input index.
         *
         * @return {@link #SIDE_LEFT} or {@link #SIDE_RIGHT}, or the input's index
         */
        public byte rejectedSide() {
            return out.get(kindAt + REJECTED_SIDE_AT);
        }

        /**
         * The reason a change was rejected.
         *
         * @return the engine's message
         */
        public String message() {
            int at = kindAt + MESSAGE_LENGTH_AT;
            return new String(out.array(), at + 4, out.getInt(at), StandardCharsets.UTF_8);
        }
    }
}
