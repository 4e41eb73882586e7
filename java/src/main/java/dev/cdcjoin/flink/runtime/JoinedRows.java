package dev.cdcjoin.flink.runtime;

import dev.cdcjoin.flink.codec.BinaryRowEncoder;
import dev.cdcjoin.flink.codec.RowCodec;
import java.nio.ByteBuffer;
import java.util.Arrays;
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
        /** {@link BinaryRowData} with its {@link RowKind}, projected ({@link BinaryRowEncoder}). */
        ROW_DATA
    }

    private final Form form;
    private final RowCodec[] codecs;
    private final int[] projectedInput;
    private final int[] projectedColumn;
    private final BinaryRowEncoder binary;

    /** Per input: where its row starts in the current entry ({@link #rowData}). */
    private final int[] starts;

    /**
     * The joined rows of a join of inputs {@code codecs}, output column {@code i} being column
     * {@code projectedColumn[i]} of input {@code projectedInput[i]}.
     */
    JoinedRows(Form form, RowCodec[] codecs, int[] projectedInput, int[] projectedColumn) {
        this.form = form;
        this.codecs = codecs;
        this.projectedInput = projectedInput;
        this.projectedColumn = projectedColumn;
        this.binary =
                form == Form.ROW_DATA
                        ? new BinaryRowEncoder(codecs, projectedInput, projectedColumn)
                        : null;
        this.starts = new int[codecs.length];
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
                return rowData(out, e);
            default:
                return row(out, e);
        }
    }

    private BinaryRowData rowData(ByteBuffer out, JoinBatches.Entries e) {
        for (int i = 0; i < starts.length; i++) {
            starts[i] = e.inputAt(i);
        }
        return binary.encode(e.kind(), out, starts);
    }

    /** The projected {@link Row}; only the projected columns are decoded. */
    private Row row(ByteBuffer out, JoinBatches.Entries e) {
        Object[] values = new Object[projectedInput.length];
        for (int i = 0; i < values.length; i++) {
            int input = projectedInput[i];
            int at = e.inputAt(input);
            if (at >= 0) {
                values[i] = codecs[input].read(out, at, projectedColumn[i]);
            }
        }
        return Row.ofKind(RowKind.fromByteValue(e.kind()), values);
    }
}
