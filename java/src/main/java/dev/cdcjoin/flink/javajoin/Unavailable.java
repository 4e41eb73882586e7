package dev.cdcjoin.flink.javajoin;

import java.io.Serializable;

/**
 * The value of a column that a change does not carry: Debezium's placeholder for an unchanged
 * TOASTed value ({@code unavailable.value.placeholder}), or a non-key column of a delete by key in
 * upsert mode.
 *
 * <p>The decoder writes {@link #VALUE} into such a column instead of the placeholder (which is not
 * the value) and instead of {@code null} (which would be a value). Only the join resolves it: it
 * takes the column from the stored row with the same primary key, or rejects the change as a bad
 * record. It is never stored and never emitted. Rows carrying it cross the {@code keyBy} with
 * {@link ChangeRowTypeInfo}'s serializer.
 */
public final class Unavailable implements Serializable {

    private static final long serialVersionUID = 1L;

    /** The one instance. */
    public static final Unavailable VALUE = new Unavailable();

    private Unavailable() {}

    /**
     * Whether a value is {@link #VALUE}.
     *
     * @param value a row's field
     * @return whether the column is unavailable
     */
    public static boolean is(Object value) {
        return value == VALUE;
    }

    private Object readResolve() {
        return VALUE;
    }

    /** How rows print it: {@code +U[7, <unavailable>, x]}. */
    @Override
    public String toString() {
        return "<unavailable>";
    }
}
