package dev.cdcjoin.flink;

import java.util.List;
import java.util.Objects;

/**
 * A complete join declaration: both sides, the join type, the absent-retraction policy and the
 * output columns (what {@link JoinDefinition} holds for every join, here of two inputs). Immutable;
 * built by {@link CdcJoin.Builder}.
 */
public final class JoinSpec extends JoinDefinition {

    private static final long serialVersionUID = 2L;

    private final JoinType joinType;

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
     * @throws IllegalArgumentException if the declaration is inconsistent
     */
    public JoinSpec(
            SideSpec left,
            SideSpec right,
            JoinType joinType,
            boolean failOnAbsentRetraction,
            int[] projection,
            String[] outputNames) {
        super(
                List.of(
                        Objects.requireNonNull(left, "left"),
                        Objects.requireNonNull(right, "right")),
                failOnAbsentRetraction,
                projection,
                outputNames);
        this.joinType = Objects.requireNonNull(joinType, "joinType");
    }

    /**
     * The left input.
     *
     * @return the side
     */
    public SideSpec left() {
        return inputs().get(0);
    }

    /**
     * The right input.
     *
     * @return the side
     */
    public SideSpec right() {
        return inputs().get(1);
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
     * Whether side {@code i} (0 left, 1 right) can be null-padded: the left side in a right or full
     * join, the right side in a left or full join.
     *
     * @param i a side
     * @return whether its columns are nullable in the output
     */
    @Override
    public boolean padded(int i) {
        return joinType == JoinType.FULL || joinType == (i == 0 ? JoinType.RIGHT : JoinType.LEFT);
    }

    /**
     * The native join spec for an instance owning key groups {@code [start, end]}.
     *
     * @param start first key group
     * @param end last key group (inclusive)
     * @return JSON
     */
    @Override
    public String specJson(int start, int end) {
        return NativeConfig.joinSpec(this, start, end);
    }
}
