package dev.cdcjoin.flink;

import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.RowType;

/**
 * A complete join declaration: both sides, the join type, the absent-retraction policy and the
 * output columns. Immutable; built by {@link CdcJoin.Builder}.
 */
public final class JoinSpec implements Serializable {

    private static final long serialVersionUID = 1L;

    private final SideSpec left;
    private final SideSpec right;
    private final JoinType joinType;
    private final boolean failOnAbsentRetraction;
    private final int[] projection;
    private final String[] outputNames;

    /**
     * A declaration.
     *
     * @param left the left input
     * @param right the right input
     * @param joinType inner, left, right or full
     * @param failOnAbsentRetraction fail on a retraction of a row not in state (else count it)
     * @param projection output columns as indexes into left-then-right columns, or {@code null} for
     *     all
     * @param outputNames output column names (one per output column), or {@code null} for the
     *     defaults (column names, prefixed with the table's name where both sides share one)
     */
    public JoinSpec(
            SideSpec left,
            SideSpec right,
            JoinType joinType,
            boolean failOnAbsentRetraction,
            int[] projection,
            String[] outputNames) {
        this.left = Objects.requireNonNull(left, "left");
        this.right = Objects.requireNonNull(right, "right");
        this.joinType = Objects.requireNonNull(joinType, "joinType");
        this.failOnAbsentRetraction = failOnAbsentRetraction;
        int all = left.schema().size() + right.schema().size();
        this.projection = projection == null ? identity(all) : projection.clone();
        for (int p : this.projection) {
            if (p < 0 || p >= all) {
                throw new IllegalArgumentException("projection index " + p + " out of range");
            }
        }
        this.outputNames = names(outputNames);
        if (left.joinKey().size() != right.joinKey().size()) {
            throw new IllegalArgumentException("the two join keys differ in length");
        }
    }

    private static int[] identity(int n) {
        int[] p = new int[n];
        Arrays.setAll(p, i -> i);
        return p;
    }

    private String[] names(String[] given) {
        if (given != null) {
            if (given.length != projection.length) {
                throw new IllegalArgumentException("need one output name per output column");
            }
            return given.clone();
        }
        List<String> all = defaultNames();
        String[] out = new String[projection.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = all.get(projection[i]);
        }
        return out;
    }

    /** Column names, left then right; names both sides have are prefixed {@code table_}. */
    private List<String> defaultNames() {
        Set<String> leftNames = new HashSet<>();
        Set<String> rightNames = new HashSet<>();
        left.schema().columns().forEach(c -> leftNames.add(c.name()));
        right.schema().columns().forEach(c -> rightNames.add(c.name()));
        List<String> names = new ArrayList<>();
        for (Column c : left.schema().columns()) {
            names.add(rightNames.contains(c.name()) ? left.name() + "_" + c.name() : c.name());
        }
        for (Column c : right.schema().columns()) {
            names.add(leftNames.contains(c.name()) ? right.name() + "_" + c.name() : c.name());
        }
        return names;
    }

    /**
     * The left input.
     *
     * @return the side
     */
    public SideSpec left() {
        return left;
    }

    /**
     * The right input.
     *
     * @return the side
     */
    public SideSpec right() {
        return right;
    }

    /**
     * The join type.
     *
     * @return the type
     */
    public JoinType joinType() {
        return joinType;
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
     * Output columns as indexes into the left-then-right columns.
     *
     * @return a copy of the projection
     */
    public int[] projection() {
        return projection.clone();
    }

    /**
     * Output column names.
     *
     * @return a copy of the names
     */
    public String[] outputNames() {
        return outputNames.clone();
    }

    private Column column(int combinedIndex) {
        int leftSize = left.schema().size();
        return combinedIndex < leftSize
                ? left.schema().columns().get(combinedIndex)
                : right.schema().columns().get(combinedIndex - leftSize);
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
            types[i] = column(projection[i]).type().typeInformation();
        }
        return new RowTypeInfo(types, outputNames.clone());
    }

    /**
     * The output's Flink data type (exact DECIMAL/TIMESTAMP parameters; columns are nullable where
     * a side can be null-padded), for a {@code Schema} in {@code fromChangelogStream}.
     *
     * @return a ROW data type
     */
    public DataType dataType() {
        DataTypes.Field[] fields = new DataTypes.Field[projection.length];
        int leftSize = left.schema().size();
        for (int i = 0; i < projection.length; i++) {
            Column c = column(projection[i]);
            boolean padded =
                    projection[i] < leftSize
                            ? joinType == JoinType.RIGHT || joinType == JoinType.FULL
                            : joinType == JoinType.LEFT || joinType == JoinType.FULL;
            fields[i] =
                    DataTypes.FIELD(outputNames[i], c.type().dataType(c.isNullable() || padded));
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
     * The native join spec for an instance owning key groups {@code [start, end]}.
     *
     * @param start first key group
     * @param end last key group (inclusive)
     * @return JSON
     */
    public String specJson(int start, int end) {
        return NativeConfig.joinSpec(this, start, end);
    }

    /**
     * The native declaration of how this join's output feeds a next join's side (Rust {@code
     * cdcjoin_join::ChainSpec}).
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
