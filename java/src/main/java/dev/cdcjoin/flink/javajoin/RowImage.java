package dev.cdcjoin.flink.javajoin;

import org.apache.flink.types.Row;

/**
 * One row image of an envelope ({@code before} or {@code after}) as parsed: whether it was there,
 * its values, and per column the first reason a value could not be read. Reasons are kept, not
 * thrown, because only the images the op needs may fail a record, and a repeated JSON key replaces
 * an earlier bad value.
 */
final class RowImage {

    /** The key was absent. */
    static final int MISSING = 0;

    /** The key held JSON {@code null}. */
    static final int NULL = 1;

    /** The key held an object: {@link #row} is set. */
    static final int OBJECT = 2;

    int state;
    Row row;

    /** Per-column reasons, allocated on the first error. */
    String[] errors;

    void reset() {
        state = MISSING;
        row = null;
        errors = null;
    }

    void start(int arity) {
        state = OBJECT;
        row = Row.withPositions(arity);
        errors = null;
    }

    void set(int col, Object value) {
        row.setField(col, value);
        if (errors != null) {
            errors[col] = null;
        }
    }

    void fail(int col, String reason) {
        if (errors == null) {
            errors = new String[row.getArity()];
        }
        row.setField(col, null);
        errors[col] = reason;
    }

    String error(int col) {
        return errors == null ? null : errors[col];
    }

    /** Whether column {@code col} holds a value that can stand in for an unavailable one. */
    boolean carries(int col) {
        if (state != OBJECT || error(col) != null) {
            return false;
        }
        Object v = row.getField(col);
        return v != null && !Unavailable.is(v);
    }
}
