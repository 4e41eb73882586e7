package dev.cdcjoin.flink;

import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.RowType;

/**
 * What every join declaration has, the two-table {@link JoinSpec} and the multi-way {@link
 * MultiJoinSpec} alike: its inputs, each on a join key of one length; the absent-retraction policy;
 * and its output columns, a projection over all inputs' columns in input order, with their names
 * and types. A two-table join is the case of two inputs; what differs between the two is which
 * inputs an outer join can null-pad ({@link #padded(int)}) and the native declaration ({@link
 * #specJson(int, int)}). Immutable.
 */
public abstract class JoinDefinition implements Serializable {

    private static final long serialVersionUID = 1L;

    private final List<SideSpec> inputs;
    private final boolean failOnAbsentRetraction;
    private final int[] projection;
    private final String[] outputNames;

    /** Per output column: its input, and its column in that input's schema. */
    private final int[] inputOf;

    private final int[] columnOf;

    /**
     * A declaration over {@code inputs}.
     *
     * @param projection output columns as indexes into all inputs' columns in input order, or
     *     {@code null} for all
     * @param outputNames one name per output column, or {@code null} for the defaults (column
     *     names, prefixed {@code table_} where several inputs have one)
     * @throws IllegalArgumentException if the join keys differ in length, a projection index is out
     *     of range, or the names do not match the output columns or are not unique
     */
    JoinDefinition(
            List<SideSpec> inputs,
            boolean failOnAbsentRetraction,
            int[] projection,
            String[] outputNames) {
        this.inputs = List.copyOf(inputs);
        this.failOnAbsentRetraction = failOnAbsentRetraction;
        for (SideSpec s : this.inputs) {
            if (s.joinKey().size() != this.inputs.get(0).joinKey().size()) {
                throw new IllegalArgumentException(
                        "the join keys differ in length: "
                                + this.inputs.get(0).name()
                                + " and "
                                + s.name());
            }
        }
        int all = this.inputs.stream().mapToInt(s -> s.schema().size()).sum();
        this.projection =
                projection == null ? IntStream.range(0, all).toArray() : projection.clone();
        this.inputOf = new int[this.projection.length];
        this.columnOf = new int[this.projection.length];
        for (int i = 0; i < this.projection.length; i++) {
            int p = this.projection[i];
            if (p < 0 || p >= all) {
                throw new IllegalArgumentException("projection index " + p + " out of range");
            }
            int input = 0;
            while (p >= this.inputs.get(input).schema().size()) {
                p -= this.inputs.get(input++).schema().size();
            }
            inputOf[i] = input;
            columnOf[i] = p;
        }
        this.outputNames = outputNames == null ? defaultNames() : outputNames.clone();
        if (this.outputNames.length != this.projection.length) {
            throw new IllegalArgumentException("need one output name per output column");
        }
        requireUniqueNames(outputNames == null);
    }

    /**
     * Refuses two output columns of one name (Flink's row types need unique names), naming the
     * columns: default names collide where a prefixed name is another column's ({@code users.id}
     * becomes {@code users_id} beside the other input's {@code users_id}).
     */
    private void requireUniqueNames(boolean defaults) {
        Map<String, List<String>> columns = new LinkedHashMap<>();
        for (int i = 0; i < outputNames.length; i++) {
            String column = inputs.get(inputOf[i]).name() + "." + column(i).name();
            columns.computeIfAbsent(outputNames[i], n -> new ArrayList<>()).add(column);
        }
        columns.forEach(
                (name, of) -> {
                    if (of.size() > 1) {
                        throw new IllegalArgumentException(
                                "output column name '"
                                        + name
                                        + "' is given to "
                                        + String.join(" and ", of)
                                        + (defaults
                                                ? " (a column name several inputs have is"
                                                        + " prefixed with its table's name)"
                                                : "")
                                        + "; name them apart with select(column, outputName)");
                    }
                });
    }

    /** The projected columns' names; a name several inputs have is prefixed {@code table_}. */
    private String[] defaultNames() {
        Map<String, Integer> count = new HashMap<>();
        inputs.forEach(
                s -> s.schema().columns().forEach(c -> count.merge(c.name(), 1, Integer::sum)));
        String[] names = new String[projection.length];
        for (int i = 0; i < names.length; i++) {
            SideSpec s = inputs.get(inputOf[i]);
            String name = s.schema().columns().get(columnOf[i]).name();
            names[i] = count.get(name) > 1 ? s.name() + "_" + name : name;
        }
        return names;
    }

    /**
     * The inputs, in declaration order.
     *
     * @return the inputs
     */
    public List<SideSpec> inputs() {
        return inputs;
    }

    /**
     * Whether a retraction of a row that is not in state fails the job (otherwise it is counted and
     * emits nothing).
     *
     * @return true to fail
     */
    public boolean failOnAbsentRetraction() {
        return failOnAbsentRetraction;
    }

    /**
     * Output columns as indexes into all inputs' columns in input order.
     *
     * @return a copy of the projection
     */
    public int[] projection() {
        return projection.clone();
    }

    /**
     * The input output column {@code i} comes from.
     *
     * @param i an output column
     * @return its input's index
     */
    public int inputOf(int i) {
        return inputOf[i];
    }

    /**
     * The column of its input output column {@code i} is.
     *
     * @param i an output column
     * @return the column's index in its input's schema
     */
    public int columnOf(int i) {
        return columnOf[i];
    }

    /**
     * Output column names.
     *
     * @return a copy of the names
     */
    public String[] outputNames() {
        return outputNames.clone();
    }

    /**
     * Whether input {@code i}'s columns can be null-padded in an output row (an outer join keeps
     * rows without a match in it).
     *
     * @param i an input
     * @return whether its columns are nullable in the output
     */
    public abstract boolean padded(int i);

    /**
     * Whether output column {@code name} can be null-padded: its input can be ({@link #padded}).
     *
     * @param name an output column
     * @return whether an output row can hold null there for want of a match
     */
    public boolean paddedColumn(String name) {
        int i = Arrays.asList(outputNames).indexOf(name);
        return i >= 0 && padded(inputOf[i]);
    }

    /**
     * The native declaration for an instance owning key groups {@code [start, end]}.
     *
     * @param start first key group
     * @param end last key group (inclusive)
     * @return JSON
     */
    public abstract String specJson(int start, int end);

    private Column column(int i) {
        return inputs.get(inputOf[i]).schema().columns().get(columnOf[i]);
    }

    /**
     * The output's type: a {@link RowTypeInfo} that {@code
     * StreamTableEnvironment.fromChangelogStream} accepts.
     *
     * @return the row type information
     */
    public RowTypeInfo rowTypeInfo() {
        TypeInformation<?>[] types = new TypeInformation<?>[projection.length];
        for (int i = 0; i < projection.length; i++) {
            types[i] = column(i).type().typeInformation();
        }
        return new RowTypeInfo(types, outputNames.clone());
    }

    /**
     * The output's Flink data type (exact DECIMAL/TIMESTAMP parameters; columns are nullable where
     * their input can be null-padded), for a {@code Schema} in {@code fromChangelogStream}.
     *
     * @return a ROW data type
     */
    public DataType dataType() {
        DataTypes.Field[] fields = new DataTypes.Field[projection.length];
        for (int i = 0; i < projection.length; i++) {
            Column c = column(i);
            boolean nullable = c.isNullable() || padded(inputOf[i]);
            fields[i] = DataTypes.FIELD(outputNames[i], c.type().dataType(nullable));
        }
        return DataTypes.ROW(fields);
    }

    /**
     * The output's type as Flink's internal row type, that of {@code CdcJoin.Result#rowData()}
     * ({@code InternalTypeInfo.of(rowType())}): the fields of {@link #dataType()}. Every column
     * type has an exact internal form (DECIMAL as {@code DecimalData}, TIMESTAMP and TIMESTAMP_LTZ
     * as {@code TimestampData}, DATE as int days, TIME as int milliseconds, STRING as {@code
     * StringData}, BYTES as {@code byte[]}).
     *
     * @return a ROW logical type
     */
    public RowType rowType() {
        return (RowType) dataType().getLogicalType();
    }

    /**
     * The native declaration of how this join's output feeds a next join's side (Rust {@code
     * cdcjoin_join::ChainSpec}, its projection over the inputs' columns in input order).
     *
     * @param next the next join's side whose rows are this join's output
     * @param maxParallelism the next join's max parallelism
     * @return JSON
     */
    public String chainJson(SideSpec next, int maxParallelism) {
        return NativeConfig.chain(projection, next, maxParallelism);
    }

    /**
     * The native declaration of this join's output rows in Flink's {@code BinaryRowData} layout
     * ({@code CdcJoin.Result#rowData()}): its output columns.
     *
     * @return the Rust {@code FlinkRowsSpec} as JSON
     */
    public String flinkRowsJson() {
        return NativeConfig.flinkRows(projection);
    }

    /**
     * The output's columns as a schema, that of a next join's side fed by this join.
     *
     * @return the schema of {@link #dataType()}
     */
    public CdcSchema outputSchema() {
        return CdcSchema.of(dataType());
    }
}
