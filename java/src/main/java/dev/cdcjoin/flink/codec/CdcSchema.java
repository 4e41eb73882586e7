package dev.cdcjoin.flink.codec;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.Row;

/**
 * The columns of one CDC table, in row order: what the Debezium {@code before}/{@code after}
 * objects are decoded into. Declared with Flink's {@code DataTypes} ({@link #of(DataType)}) or
 * column by column ({@link #of(Column...)}).
 */
public final class CdcSchema implements Serializable {

    private static final long serialVersionUID = 1L;

    private final List<Column> columns;

    private CdcSchema(List<Column> columns) {
        if (columns.isEmpty()) {
            throw new IllegalArgumentException("a schema needs at least one column");
        }
        Set<String> seen = new HashSet<>();
        for (Column c : columns) {
            if (!seen.add(c.name())) {
                throw new IllegalArgumentException("column '" + c.name() + "' is declared twice");
            }
        }
        this.columns = Collections.unmodifiableList(new ArrayList<>(columns));
    }

    /**
     * A schema of these columns.
     *
     * @param columns the columns, in row order
     * @return the schema
     */
    public static CdcSchema of(Column... columns) {
        return new CdcSchema(Arrays.asList(columns));
    }

    /**
     * A schema of these columns.
     *
     * @param columns the columns, in row order
     * @return the schema
     */
    public static CdcSchema of(List<Column> columns) {
        return new CdcSchema(columns);
    }

    /**
     * A schema from a Flink ROW data type, e.g. {@code DataTypes.ROW(DataTypes.FIELD("id",
     * DataTypes.BIGINT().notNull()), DataTypes.FIELD("name", DataTypes.STRING()))}.
     *
     * @param rowType a ROW type
     * @return the schema
     * @throws IllegalArgumentException if a field's type is not supported
     */
    public static CdcSchema of(DataType rowType) {
        LogicalType logical = rowType.getLogicalType();
        if (!(logical instanceof RowType)) {
            throw new IllegalArgumentException("expected a ROW type, got " + logical);
        }
        List<Column> columns = new ArrayList<>();
        for (RowType.RowField f : ((RowType) logical).getFields()) {
            LogicalType t = f.getType();
            columns.add(new Column(f.getName(), ColumnType.fromLogicalType(t), t.isNullable()));
        }
        return new CdcSchema(columns);
    }

    /**
     * The columns.
     *
     * @return the columns, in row order
     */
    public List<Column> columns() {
        return columns;
    }

    /**
     * Number of columns.
     *
     * @return the arity
     */
    public int size() {
        return columns.size();
    }

    /**
     * Position of a column.
     *
     * @param name the column's name
     * @return its index
     * @throws IllegalArgumentException if there is no such column
     */
    public int indexOf(String name) {
        for (int i = 0; i < columns.size(); i++) {
            if (columns.get(i).name().equals(name)) {
                return i;
            }
        }
        throw new IllegalArgumentException("unknown column '" + name + "' (schema: " + this + ")");
    }

    /**
     * The schema as a Flink ROW data type (exact DECIMAL and TIMESTAMP parameters, NOT NULL where
     * declared), e.g. for a {@code Schema} in {@code StreamTableEnvironment.fromChangelogStream}.
     *
     * @return a ROW data type with one field per column
     */
    public DataType dataType() {
        DataTypes.Field[] fields = new DataTypes.Field[columns.size()];
        for (int i = 0; i < fields.length; i++) {
            Column c = columns.get(i);
            fields[i] = DataTypes.FIELD(c.name(), c.type().dataType(c.isNullable()));
        }
        return DataTypes.ROW(fields);
    }

    /**
     * The schema as the type of a DataStream's {@link Row}s: one field per column, by name, of the
     * column type's Java class (e.g. for a stream of decoded changes).
     *
     * @return the row type information
     */
    public RowTypeInfo rowTypeInfo() {
        TypeInformation<?>[] types = new TypeInformation<?>[columns.size()];
        String[] names = new String[columns.size()];
        for (int i = 0; i < types.length; i++) {
            types[i] = columns.get(i).type().typeInformation();
            names[i] = columns.get(i).name();
        }
        return new RowTypeInfo(types, names);
    }

    @Override
    public String toString() {
        return columns.toString();
    }
}
