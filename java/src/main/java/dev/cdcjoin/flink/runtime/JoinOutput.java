package dev.cdcjoin.flink.runtime;

import dev.cdcjoin.flink.SideSpec;
import java.io.Serializable;
import java.util.Objects;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

/**
 * What a native join operator ({@link NativeJoinOperator}, {@link NativeMultiJoinOperator}) emits,
 * chosen when it is created; {@code OUT} is the type of its output records, so one typed factory
 * per operator serves every form.
 *
 * @param <OUT> {@link Row}, {@link RowData}, {@code byte[]} or {@link ChangeBatch}
 */
public final class JoinOutput<OUT> implements Serializable {

    private static final long serialVersionUID = 1L;

    /** {@link Row}s carrying their {@link RowKind}, projected to the join's output columns. */
    public static final JoinOutput<Row> ROWS = new JoinOutput<>(JoinedRows.Form.ROWS, null, "");

    /**
     * Flink's {@link BinaryRowData} with its {@link RowKind}, projected, written in Flink's layout
     * by the native join, so Java builds no object per column.
     */
    public static final JoinOutput<RowData> ROW_DATA =
            new JoinOutput<>(JoinedRows.Form.ROW_DATA, null, " (RowData)");

    /**
     * Each joined row's native bytes, every input's row whole (the projection is not applied):
     * {@code kind u8 | (len i32 | row)*inputs}, see {@link dev.cdcjoin.flink.RawJoinOutput}.
     */
    public static final JoinOutput<byte[]> BYTES =
            new JoinOutput<>(JoinedRows.Form.BYTES, null, " (bytes)");

    final JoinedRows.Form form;

    /** The next join's side this output feeds, or {@code null}. */
    final SideSpec next;

    private final String nameSuffix;

    private JoinOutput(JoinedRows.Form form, SideSpec next, String nameSuffix) {
        this.form = form;
        this.next = next;
        this.nameSuffix = nameSuffix;
    }

    /**
     * The input of a next join: each output row projected to the join's output columns, as a change
     * of the next join's side {@code next}, in {@link ChangeBatch}es of the key groups of {@code
     * next}'s join key under the next join's max parallelism, re-keyed in native code ({@code
     * cdcjoin_join::chain}) and routed by {@link KeyGroupRoutes} as the decoder's batches are; no
     * Java object is built per row.
     *
     * @param next the next join's side (its schema is the join's output schema)
     * @return the output
     */
    public static JoinOutput<ChangeBatch> chained(SideSpec next) {
        Objects.requireNonNull(next, "next");
        return new JoinOutput<>(JoinedRows.Form.ROWS, next, " → " + next.name());
    }

    /**
     * What the operator's name ends with for this output: empty for {@link #ROWS}.
     *
     * @return the suffix
     */
    public String nameSuffix() {
        return nameSuffix;
    }
}
