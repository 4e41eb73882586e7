package dev.cdcjoin.bench;

import java.io.Serializable;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

/**
 * How the counting sink ({@link ChecksumWriter}) reads a changelog row of its input type: {@link
 * #ROWS} for {@link Row}s, {@link #rowData(RowType)} for Flink's internal rows, with the same
 * checksum for the same rows ({@link RowHash}), so the result checks hold for either.
 *
 * @param <T> the sink's input type
 */
interface RowAccess<T> extends Serializable {

    /** The row's kind. */
    RowKind kind(T row);

    /** The row's {@link RowHash}. */
    long hash(T row);

    /** Field {@code i} as a Java object (a probe's fields: a number or a string), or null. */
    Object field(T row, int i);

    /** {@link Row}s. */
    RowAccess<Row> ROWS =
            new RowAccess<>() {
                private static final long serialVersionUID = 1L;

                @Override
                public RowKind kind(Row row) {
                    return row.getKind();
                }

                @Override
                public long hash(Row row) {
                    return RowHash.of(row);
                }

                @Override
                public Object field(Row row, int i) {
                    return row.getField(i);
                }
            };

    /**
     * Internal rows of {@code type}, hashed in place ({@link RowHash#of(RowData, LogicalType[])}).
     *
     * @throws IllegalArgumentException if {@link RowHash} has no hash for a field's type
     */
    static RowAccess<RowData> rowData(RowType type) {
        LogicalType[] types = type.getChildren().toArray(new LogicalType[0]);
        RowHash.check(types);
        RowData.FieldGetter[] getters = new RowData.FieldGetter[types.length];
        for (int i = 0; i < types.length; i++) {
            getters[i] = RowData.createFieldGetter(types[i], i);
        }
        return new RowAccess<>() {
            private static final long serialVersionUID = 1L;

            @Override
            public RowKind kind(RowData row) {
                return row.getRowKind();
            }

            @Override
            public long hash(RowData row) {
                return RowHash.of(row, types);
            }

            @Override
            public Object field(RowData row, int i) {
                Object v = getters[i].getFieldOrNull(row);
                return v instanceof Number || v == null ? v : v.toString();
            }
        };
    }
}
