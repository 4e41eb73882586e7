package dev.cdcjoin.flink;

import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.RowType;

/**
 * A complete multi-way join declaration ({@link CdcMultiJoin}): 2 to 8 inputs on one join key, one
 * join type per input after the first ({@code steps.get(j - 1)} joins the result of inputs {@code
 * 0..j-1} with input {@code j}, on the {@code USING} key), the absent-retraction policy and the
 * output columns, as indexes into the inputs' columns in input order. Immutable.
 */
public final class MultiJoinSpec implements Serializable {

    private static final long serialVersionUID = 1L;

    /** Most inputs of a multi-way join (Rust {@code multiway::MAX_INPUTS}). */
    public static final int MAX_INPUTS = 8;

    private final List<SideSpec> inputs;
    private final List<JoinType> steps;
    private final boolean failOnAbsentRetraction;
    private final int[] projection;
    private final String[] outputNames;

    /**
     * A declaration.
     *
     * @param inputs the inputs, 2 to {@value #MAX_INPUTS}, join keys of one length
     * @param steps one join type per input after the first
     * @param failOnAbsentRetraction fail on a retraction of a row not in state (else count it)
     * @param projection output columns as indexes into all inputs' columns in input order, or
     *     {@code null} for all
     * @param outputNames one name per output column, or {@code null} for the defaults (column
     *     names, prefixed {@code table_} where several inputs have one)
     * @throws IllegalArgumentException if the declaration is inconsistent
     */
    public MultiJoinSpec(
            List<SideSpec> inputs,
            List<JoinType> steps,
            boolean failOnAbsentRetraction,
            int[] projection,
            String[] outputNames) {
        this.inputs = List.copyOf(inputs);
        this.steps = List.copyOf(steps);
        this.failOnAbsentRetraction = failOnAbsentRetraction;
        int n = this.inputs.size();
        if (n < 2 || n > MAX_INPUTS) {
            throw new IllegalArgumentException(
                    "a multi-way join takes 2 to " + MAX_INPUTS + " inputs, not " + n);
        }
        if (this.steps.size() != n - 1) {
            throw new IllegalArgumentException(
                    n + " inputs take " + (n - 1) + " join types, not " + this.steps.size());
        }
        for (SideSpec s : this.inputs) {
            if (s.joinKey().size() != this.inputs.get(0).joinKey().size()) {
                throw new IllegalArgumentException(
                        "the join keys differ in length: "
                                + this.inputs.get(0).name()
                                + " and "
                                + s.name());
            }
        }
        int all = columns().size();
        this.projection = projection == null ? identity(all) : projection.clone();
        for (int p : this.projection) {
            if (p < 0 || p >= all) {
                throw new IllegalArgumentException("projection index " + p + " out of range");
            }
        }
        this.outputNames = outputNames == null ? defaultNames() : outputNames.clone();
        if (this.outputNames.length != this.projection.length) {
            throw new IllegalArgumentException("need one output name per output column");
        }
    }

    private static int[] identity(int n) {
        int[] p = new int[n];
        for (int i = 0; i < n; i++) {
            p[i] = i;
        }
        return p;
    }

    /** Every input's columns in input order, each as {@code {input, column}}. */
    private List<int[]> columns() {
        List<int[]> all = new ArrayList<>();
        for (int i = 0; i < inputs.size(); i++) {
            for (int c = 0; c < inputs.get(i).schema().size(); c++) {
                all.add(new int[] {i, c});
            }
        }
        return all;
    }

    /** The projected columns' names; a name several inputs have is prefixed {@code table_}. */
    private String[] defaultNames() {
        Map<String, Integer> count = new HashMap<>();
        inputs.forEach(
                s -> s.schema().columns().forEach(c -> count.merge(c.name(), 1, Integer::sum)));
        String[] names = new String[projection.length];
        for (int i = 0; i < names.length; i++) {
            SideSpec s = inputs.get(inputOf(i));
            String name = s.schema().columns().get(columnOf(i)).name();
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
     * The join type of each input after the first.
     *
     * @return one per step
     */
    public List<JoinType> steps() {
        return steps;
    }

    /**
     * Whether a retraction of a row not in state fails the job.
     *
     * @return the policy
     */
    public boolean failOnAbsentRetraction() {
        return failOnAbsentRetraction;
    }

    /**
     * Output columns as indexes into all inputs' columns in input order.
     *
     * @return a copy
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
        return columns().get(projection[i])[0];
    }

    /**
     * The column of its input output column {@code i} is.
     *
     * @param i an output column
     * @return the column's index in its input's schema
     */
    public int columnOf(int i) {
        return columns().get(projection[i])[1];
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
     * Whether input {@code i}'s columns can be null-padded in an output row: its own step is LEFT
     * or FULL, or a later step is RIGHT or FULL (which pads the whole result before it).
     *
     * @param i an input
     * @return whether its columns are nullable in the output
     */
    public boolean padded(int i) {
        if (i > 0 && (steps.get(i - 1) == JoinType.LEFT || steps.get(i - 1) == JoinType.FULL)) {
            return true;
        }
        for (int k = i + 1; k < inputs.size(); k++) {
            if (steps.get(k - 1) == JoinType.RIGHT || steps.get(k - 1) == JoinType.FULL) {
                return true;
            }
        }
        return false;
    }

    private Column column(int i) {
        return inputs.get(inputOf(i)).schema().columns().get(columnOf(i));
    }

    /**
     * The output's type, accepted by {@code StreamTableEnvironment.fromChangelogStream}.
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
     * The output's Flink data type (columns nullable where their input can be null-padded).
     *
     * @return a ROW data type
     */
    public DataType dataType() {
        DataTypes.Field[] fields = new DataTypes.Field[projection.length];
        for (int i = 0; i < projection.length; i++) {
            Column c = column(i);
            boolean nullable = c.isNullable() || padded(inputOf(i));
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
     * The native declaration for an instance owning key groups {@code [start, end]} (Rust {@code
     * MultiwaySpec}).
     *
     * @param start first key group
     * @param end last key group (inclusive)
     * @return JSON
     */
    public String specJson(int start, int end) {
        return NativeConfig.multiwaySpec(this, start, end);
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

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder(inputs.get(0).name());
        for (int j = 1; j < inputs.size(); j++) {
            b.append(' ').append(steps.get(j - 1)).append(' ').append(inputs.get(j).name());
        }
        return b.toString();
    }
}
