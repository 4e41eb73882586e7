package dev.cdcjoin.flink;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.conversion.DataStructureConverter;
import org.apache.flink.table.data.conversion.DataStructureConverters;
import org.apache.flink.table.types.DataType;
import org.apache.flink.types.Row;

/**
 * The rows of a join in Flink's internal form, converted by Flink's own converter ({@link
 * DataStructureConverters}): the {@code rowData()} of the joins whose engine emits {@link Row}s
 * (the pure-Java engine), so that every engine offers the same {@link CdcJoin.Result}.
 */
final class RowToRowData extends RichMapFunction<Row, RowData> {

    private static final long serialVersionUID = 1L;

    private final DataType type;
    private transient DataStructureConverter<Object, Object> converter;

    /**
     * A conversion of rows of {@code type}.
     *
     * @param type the rows' ROW data type (with {@link Row} as its conversion class)
     */
    RowToRowData(DataType type) {
        this.type = type;
    }

    @Override
    public void open(OpenContext context) {
        converter = DataStructureConverters.getConverter(type);
        converter.open(getRuntimeContext().getUserCodeClassLoader());
    }

    @Override
    public RowData map(Row row) {
        return (RowData) converter.toInternal(row);
    }
}
