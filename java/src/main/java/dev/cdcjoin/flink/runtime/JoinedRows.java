package dev.cdcjoin.flink.runtime;

import dev.cdcjoin.flink.codec.Column;
import dev.cdcjoin.flink.codec.ColumnType;
import dev.cdcjoin.flink.codec.RowCodec;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.apache.flink.core.memory.MemorySegment;
import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

/**
 * The joined rows of a native join's output ({@link JoinBatches.Entries}) in the form its operator
 * emits, chosen when the operator is created: the one place that turns an output entry into a
 * {@link Row}, the raw bytes or a {@link BinaryRowData}, for the two-table and the multi-way join.
 */
final class JoinedRows {

    /** The forms of a join operator's output rows. */
    enum Form {
        /** {@link Row}s with their {@link RowKind}, projected, one Java object per column. */
        ROWS,
        /**
         * The entry from its kind byte on, copied as it is ({@code
         * dev.cdcjoin.flink.RawJoinOutput}); every input's row whole.
         */
        BYTES,
        /**
         * {@link BinaryRowData}, projected, written in Flink's layout by the native join ({@code
         * KeyGroupJoin#flinkRows}): a joined row is one row, copied into a chunk and pointed at.
         */
        ROW_DATA
    }

    /** The least size of an array {@link Form#ROW_DATA} rows are copied into. */
    static final int CHUNK_BYTES = 32 * 1024;

    private final Form form;
    private final RowCodec[] codecs;
    private final int[] projectedInput;
    private final int[] projectedColumn;

    /**
     * The chunk {@link Form#ROW_DATA} rows are copied into, as Flink's rows point at it, and its
     * first free byte: each row its own region that is never written again, so the only object per
     * row is its {@link BinaryRowData}, and a row kept downstream keeps at most one chunk alive.
     */
    private MemorySegment[] chunk = {MemorySegmentFactory.wrap(new byte[0])};

    private int free;

    /**
     * Per input, where its row was in the previous {@link Form#ROWS} entry of the current output
     * ({@code -1}: none yet, or null-padded): a row that repeats the previous entry's row of the
     * same input (a row joined to many, as when one side of a key changes) shares its column values
     * instead of decoding them again.
     */
    private final int[] previousAt;

    /** Per input, whether its row in the current entry repeats that of the previous one. */
    private final boolean[] repeated;

    /** The values of the previous {@link Form#ROWS} entry, one per output column. */
    private final Object[] previous;

    /** Output columns whose values may be shared between rows (all but mutable {@code byte[]}s). */
    private final boolean[] shareable;

    /**
     * The joined rows of a join of inputs {@code codecs}, output column {@code i} being column
     * {@code projectedColumn[i]} of input {@code projectedInput[i]}.
     *
     * @throws UnsupportedOperationException for {@link Form#ROW_DATA} on a big-endian machine (the
     *     native join writes Flink's layout little-endian)
     */
    JoinedRows(Form form, RowCodec[] codecs, int[] projectedInput, int[] projectedColumn) {
        if (form == Form.ROW_DATA && !BinaryRowData.LITTLE_ENDIAN) {
            throw new UnsupportedOperationException(
                    "rowData() output needs a little-endian machine; use rows()");
        }
        this.form = form;
        this.codecs = codecs;
        this.projectedInput = projectedInput;
        this.projectedColumn = projectedColumn;
        this.previousAt = new int[codecs.length];
        this.repeated = new boolean[codecs.length];
        this.previous = new Object[projectedInput.length];
        this.shareable = new boolean[projectedInput.length];
        for (int i = 0; form == Form.ROWS && i < projectedInput.length; i++) {
            Column column = codecs[projectedInput[i]].schema().columns().get(projectedColumn[i]);
            shareable[i] = column.type().kind() != ColumnType.Kind.BYTES;
        }
        newOutput();
    }

    /** Starts reading a new output: nothing of the previous one is shared with its rows. */
    void newOutput() {
        Arrays.fill(previousAt, -1);
    }

    /**
     * The rows per joined row of the output this form reads ({@link JoinBatches.Entries}): one per
     * input, or the one Flink row.
     *
     * @return the rows per entry
     */
    int rowsPerEntry() {
        return form == Form.ROW_DATA ? 1 : codecs.length;
    }

    /**
     * The current row of {@code e}, a cursor over {@code out}, in this form.
     *
     * @param out the heap copy of the join's output
     * @param e a cursor on a joined row (not a rejection)
     * @return the row to emit
     */
    Object of(ByteBuffer out, JoinBatches.Entries e) {
        switch (form) {
            case BYTES:
                return Arrays.copyOfRange(out.array(), e.rowStart(), e.end());
            case ROW_DATA:
                return rowData(out, e.inputAt(0));
            default:
                return row(out, e);
        }
    }

    /** The Flink row at {@code at} of {@code out} (its length before it), copied into a chunk. */
    private BinaryRowData rowData(ByteBuffer out, int at) {
        int length = out.getInt(at - Integer.BYTES);
        if (free + length > chunk[0].size()) {
            chunk =
                    new MemorySegment[] {
                        MemorySegmentFactory.wrap(new byte[Math.max(CHUNK_BYTES, length)])
                    };
            free = 0;
        }
        chunk[0].put(free, out.array(), out.arrayOffset() + at, length);
        BinaryRowData row = new BinaryRowData(projectedInput.length);
        row.pointTo(chunk, free, length);
        free += length;
        return row;
    }

    /**
     * The projected {@link Row}; only the projected columns are decoded, straight into the row's
     * own fields ({@link Row#ofKind} would copy them from a second array), and an input's row equal
     * to that of the previous entry shares its decoded values.
     */
    private Row row(ByteBuffer out, JoinBatches.Entries e) {
        Row row = new Row(RowKind.fromByteValue(e.kind()), projectedInput.length);
        for (int input = 0; input < previousAt.length; input++) {
            int at = e.inputAt(input);
            repeated[input] =
                    at >= 0 && previousAt[input] >= 0 && sameRow(out, at, previousAt[input]);
            previousAt[input] = at; // a read that fails below fails the job: no entry follows
        }
        for (int i = 0; i < projectedInput.length; i++) {
            int input = projectedInput[i];
            if (!repeated[input] || !shareable[i]) {
                int at = e.inputAt(input);
                previous[i] = at >= 0 ? codecs[input].read(out, at, projectedColumn[i]) : null;
            }
            row.setField(i, previous[i]);
        }
        return row;
    }

    /**
     * Whether the rows at {@code a} and {@code b} of {@code out} (lengths before them) are equal.
     */
    private static boolean sameRow(ByteBuffer out, int a, int b) {
        int length = out.getInt(a - Integer.BYTES);
        if (length != out.getInt(b - Integer.BYTES)) {
            return false;
        }
        byte[] bytes = out.array();
        int offset = out.arrayOffset();
        return Arrays.equals(
                bytes, offset + a, offset + a + length, bytes, offset + b, offset + b + length);
    }
}
