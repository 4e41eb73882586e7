package dev.cdcjoin.flink;

import java.util.List;

/**
 * A complete multi-way join declaration ({@link CdcMultiJoin}): 2 to 8 inputs on one join key, one
 * join type per input after the first ({@code steps.get(j - 1)} joins the result of inputs {@code
 * 0..j-1} with input {@code j}, on the {@code USING} key), the absent-retraction policy and the
 * output columns, as indexes into the inputs' columns in input order ({@link JoinDefinition}).
 * Immutable.
 */
public final class MultiJoinSpec extends JoinDefinition {

    private static final long serialVersionUID = 2L;

    /** Most inputs of a multi-way join (Rust {@code multiway::MAX_INPUTS}). */
    public static final int MAX_INPUTS = 8;

    private final List<JoinType> steps;

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
        super(checkedInputs(inputs), failOnAbsentRetraction, projection, outputNames);
        this.steps = List.copyOf(steps);
        int n = inputs.size();
        if (this.steps.size() != n - 1) {
            throw new IllegalArgumentException(
                    n + " inputs take " + (n - 1) + " join types, not " + this.steps.size());
        }
    }

    /** {@code inputs}, if there are 2 to {@value #MAX_INPUTS} of them. */
    private static List<SideSpec> checkedInputs(List<SideSpec> inputs) {
        int n = inputs.size();
        if (n < 2 || n > MAX_INPUTS) {
            throw new IllegalArgumentException(
                    "a multi-way join takes 2 to " + MAX_INPUTS + " inputs, not " + n);
        }
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
     * Whether input {@code i}'s columns can be null-padded in an output row: its own step is LEFT
     * or FULL, or a later step is RIGHT or FULL (which pads the whole result before it).
     *
     * @param i an input
     * @return whether its columns are nullable in the output
     */
    @Override
    public boolean padded(int i) {
        if (i > 0 && (steps.get(i - 1) == JoinType.LEFT || steps.get(i - 1) == JoinType.FULL)) {
            return true;
        }
        for (int k = i + 1; k < inputs().size(); k++) {
            if (steps.get(k - 1) == JoinType.RIGHT || steps.get(k - 1) == JoinType.FULL) {
                return true;
            }
        }
        return false;
    }

    /**
     * The native declaration for an instance owning key groups {@code [start, end]} (Rust {@code
     * MultiwaySpec}).
     *
     * @param start first key group
     * @param end last key group (inclusive)
     * @return JSON
     */
    @Override
    public String specJson(int start, int end) {
        return NativeConfig.multiwaySpec(this, start, end);
    }

    @Override
    public String toString() {
        List<SideSpec> inputs = inputs();
        StringBuilder b = new StringBuilder(inputs.get(0).name());
        for (int j = 1; j < inputs.size(); j++) {
            b.append(' ').append(steps.get(j - 1)).append(' ').append(inputs.get(j).name());
        }
        return b.toString();
    }
}
