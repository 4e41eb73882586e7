package dev.cdcjoin.flink;

import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

/**
 * Random changelogs of two tables, record by record, for comparing a join with Flink's own {@code
 * StreamingJoinOperator} per input record. Each side has one of Flink's three state layouts ({@link
 * Layout}); every record says why it is there ({@link Case}): an ordinary change of the table the
 * generator keeps, or one of the inputs on which cdcjoin deliberately differs from Flink's join,
 * generated on purpose so that the test can name it and check it.
 */
final class FidelityTrace {

    /**
     * A join input's state layout in Flink's join ({@code JoinInputSideSpec}) and in cdcjoin's, and
     * a table shape that has it. Every shape joins on its INT column {@code k}; {@code v} is the
     * payload.
     */
    enum Layout {
        /** {@code (k INT NOT NULL, v STRING)}, primary key {@code k}: one row per join key. */
        JOIN_KEY_CONTAINS_UNIQUE_KEY(new String[] {"k", "v"}, 0, 0),
        /** {@code (id INT NOT NULL, k INT, v STRING)}, primary key {@code id}: rows by key. */
        HAS_UNIQUE_KEY(new String[] {"id", "k", "v"}, 0, 1),
        /** {@code (k INT, v STRING)} without a primary key: a multiset of rows per join key. */
        NO_UNIQUE_KEY(new String[] {"k", "v"}, -1, 0);

        /** Column names; the last one is {@code v} (STRING), the others INT. */
        final String[] columns;

        /** Index of the primary key column, or -1. */
        final int pk;

        /** Index of the join key column. */
        final int k;

        Layout(String[] columns, int pk, int k) {
            this.columns = columns;
            this.pk = pk;
            this.k = k;
        }

        boolean hasPrimaryKey() {
            return pk >= 0;
        }

        int payload() {
            return columns.length - 1;
        }

        /** Primary key columns are NOT NULL; a join key that is not one may be null. */
        boolean nullable(int column) {
            return column != pk;
        }

        CdcSchema schema() {
            Column[] cols = new Column[columns.length];
            for (int i = 0; i < cols.length; i++) {
                String type = i == payload() ? "STRING" : "INT";
                cols[i] =
                        nullable(i)
                                ? Column.nullable(columns[i], type)
                                : Column.notNull(columns[i], type);
            }
            return CdcSchema.of(cols);
        }

        List<String> primaryKey() {
            return hasPrimaryKey() ? List.of(columns[pk]) : null;
        }

        /** The same columns as a Flink {@link RowType}. */
        RowType rowType() {
            LogicalType[] types = new LogicalType[columns.length];
            for (int i = 0; i < types.length; i++) {
                types[i] = i == payload() ? VarCharType.STRING_TYPE : new IntType(nullable(i));
            }
            return RowType.of(types, columns.clone());
        }
    }

    /** Why a record is in the trace. */
    enum Case {
        /**
         * An insert of a new row, the {@code -U}/{@code +U} pair of an update (payload, join key or
         * primary key), or the delete of a stored row: the output must equal Flink's exactly.
         */
        PLAIN,
        /**
         * An insert of a copy of a stored row on a side without a primary key. Each copy counts one
         * match, in Flink 2.3 as in cdcjoin: the output must equal Flink's exactly.
         */
        DUPLICATE,
        /**
         * A {@code -U}/{@code -D} of a row that is not in state. Flink emits retractions of joined
         * rows it never emitted (and, when the other side is outer, miscounts its matches); cdcjoin
         * emits nothing.
         */
        ABSENT_RETRACTION,
        /**
         * A {@code +I} whose primary key is stored with a different row (a Debezium re-delivery or
         * incremental snapshot read of a changed row). Flink adds the new row's joined rows and
         * keeps the stored row's; cdcjoin emits what Flink emits for the normalized pair {@code
         * -U(stored), +U(new)} (what a ChangelogNormalize would feed it).
         */
        REPLACEMENT,
        /**
         * A {@code +U} replacing the stored row of its primary key with no {@code -U} first (an
         * upsert stream). On outer joins Flink counts a new match for the replaced row as well
         * (FLINK-40681) and later loses the null-padded row; cdcjoin emits what Flink emits for
         * {@code -U(stored), +U(new)}, with exact match counts.
         */
        UPSERT_FLINK_40681,
        /**
         * A {@code +I}/{@code +U} identical to the stored row of its primary key (a re-delivery).
         * Flink emits its joined rows again; cdcjoin emits nothing.
         */
        REPLACEMENT_IDENTICAL,
        /**
         * A {@code -U}/{@code -D} whose primary key is stored with another payload (a retraction
         * carrying stale values). Flink retracts joined rows of the values given, which it never
         * emitted, and leaves the stored row's in the result; cdcjoin retracts the stored row: what
         * Flink emits for a retraction of the stored row.
         */
        RETRACTION_BY_KEY
    }

    /** One input record. */
    static final class Change {
        /** Whether it is on the right input. */
        final boolean right;

        final RowKind kind;

        /** Its values ({@code Integer}s and a {@code String}). */
        final Object[] row;

        /** Why it is there. */
        final Case why;

        /**
         * For a replacement or a retraction by key: the stored row it replaces or retracts, else
         * {@code null}.
         */
        final Object[] stored;

        Change(boolean right, RowKind kind, Object[] row, Case why, Object[] stored) {
            this.right = right;
            this.kind = kind;
            this.row = row;
            this.why = why;
            this.stored = stored;
        }

        @Override
        public String toString() {
            String s = (right ? "right " : "left ") + Row.ofKind(kind, row);
            return stored == null ? s : s + " (stored: " + Arrays.toString(stored) + ")";
        }
    }

    /** Largest join key value (keys are 0..KEYS-1, so rows match often). */
    private static final int KEYS = 6;

    /** Largest primary key value of a {@link Layout#HAS_UNIQUE_KEY} side. */
    private static final int IDS = 24;

    /** One side's table as the changelog leaves it: a multiset of rows, in insertion order. */
    private static final class Table {
        final Layout layout;
        final boolean right;
        final List<Object[]> rows = new ArrayList<>();

        Table(Layout layout, boolean right) {
            this.layout = layout;
            this.right = right;
        }

        /** A random row (its primary key may be taken). */
        Object[] random(Random rnd) {
            Object[] row = new Object[layout.columns.length];
            if (layout == Layout.HAS_UNIQUE_KEY) {
                row[layout.pk] = rnd.nextInt(IDS);
            }
            row[layout.k] =
                    layout.nullable(layout.k) && rnd.nextInt(12) == 0 ? null : rnd.nextInt(KEYS);
            row[layout.payload()] = "v" + rnd.nextInt(3);
            return row;
        }

        /** The stored row with {@code row}'s primary key, or {@code null}. */
        Object[] byKey(Object[] row) {
            if (!layout.hasPrimaryKey()) {
                return null;
            }
            return rows.stream()
                    .filter(r -> r[layout.pk].equals(row[layout.pk]))
                    .findFirst()
                    .orElse(null);
        }

        boolean contains(Object[] row) {
            return rows.stream().anyMatch(r -> Arrays.equals(r, row));
        }

        Object[] pick(Random rnd) {
            return rows.get(rnd.nextInt(rows.size()));
        }

        Change change(RowKind kind, Object[] row, Case why) {
            return new Change(right, kind, row, why, null);
        }
    }

    /**
     * A random changelog of a left table of layout {@code left} and a right table of layout {@code
     * right}.
     *
     * @param left the left side's layout
     * @param right the right side's layout
     * @param seed the random seed
     * @param records about how many records (an update adds two)
     * @return the records, in order
     */
    static List<Change> generate(Layout left, Layout right, long seed, int records) {
        Random rnd = new Random(seed);
        Table[] tables = {new Table(left, false), new Table(right, true)};
        List<Change> out = new ArrayList<>();
        while (out.size() < records) {
            Table t = tables[rnd.nextInt(2)];
            int action = t.rows.isEmpty() ? 0 : rnd.nextInt(100);
            if (action < 35) {
                insert(rnd, t, out);
            } else if (action < 60) {
                update(rnd, t, out);
            } else if (action < 72) {
                delete(rnd, t, out);
            } else if (action < 90) {
                replaceOrDuplicate(rnd, t, out);
            } else {
                absentRetraction(rnd, t, out);
            }
        }
        return out;
    }

    private static void insert(Random rnd, Table t, List<Change> out) {
        Object[] row = t.random(rnd);
        if (t.byKey(row) == null) {
            t.rows.add(row);
            out.add(t.change(RowKind.INSERT, row, Case.PLAIN));
        }
    }

    /** An update as Debezium's {@code u} becomes: {@code -U(old)}, {@code +U(new)}. */
    private static void update(Random rnd, Table t, List<Change> out) {
        Object[] old = t.pick(rnd);
        Object[] row = old.clone();
        int column;
        switch (rnd.nextInt(3)) {
            case 0:
                column = t.layout.payload();
                break;
            case 1:
                column = t.layout.k; // moves to another join key
                break;
            default:
                column = t.layout.hasPrimaryKey() ? t.layout.pk : t.layout.k;
        }
        row[column] = t.random(rnd)[column];
        Object[] sameKey = t.byKey(row);
        if (Arrays.equals(old, row) || (sameKey != null && sameKey != old)) {
            return;
        }
        t.rows.set(t.rows.indexOf(old), row);
        out.add(t.change(RowKind.UPDATE_BEFORE, old, Case.PLAIN));
        out.add(t.change(RowKind.UPDATE_AFTER, row, Case.PLAIN));
    }

    /**
     * A {@code -D} of a stored row; on a primary-key side, half of them a {@code -U}/{@code -D}
     * carrying another payload than the stored row's.
     */
    private static void delete(Random rnd, Table t, List<Change> out) {
        Object[] stored = t.pick(rnd);
        t.rows.remove(stored);
        if (!t.layout.hasPrimaryKey() || rnd.nextBoolean()) {
            out.add(t.change(RowKind.DELETE, stored, Case.PLAIN));
            return;
        }
        Object[] given = stored.clone();
        given[t.layout.payload()] = stored[t.layout.payload()] + "~";
        RowKind kind = rnd.nextBoolean() ? RowKind.UPDATE_BEFORE : RowKind.DELETE;
        out.add(new Change(t.right, kind, given, Case.RETRACTION_BY_KEY, stored));
    }

    /**
     * On a primary-key side, a {@code +I}/{@code +U} of a stored primary key (same join key), a
     * quarter of them identical to the stored row; without one, an insert of a stored row's copy.
     */
    private static void replaceOrDuplicate(Random rnd, Table t, List<Change> out) {
        Object[] stored = t.pick(rnd);
        if (!t.layout.hasPrimaryKey()) {
            Object[] copy = stored.clone();
            t.rows.add(copy);
            out.add(t.change(RowKind.INSERT, copy, Case.DUPLICATE));
            return;
        }
        Object[] row = stored.clone();
        if (rnd.nextInt(4) != 0) {
            row[t.layout.payload()] = stored[t.layout.payload()] + "'";
        }
        RowKind kind = rnd.nextBoolean() ? RowKind.INSERT : RowKind.UPDATE_AFTER;
        Case why =
                Arrays.equals(row, stored)
                        ? Case.REPLACEMENT_IDENTICAL
                        : kind == RowKind.INSERT ? Case.REPLACEMENT : Case.UPSERT_FLINK_40681;
        t.rows.set(t.rows.indexOf(stored), row);
        out.add(new Change(t.right, kind, row, why, stored));
    }

    /** A {@code -U}/{@code -D} of a row not in the table (on a primary-key side: of a free key). */
    private static void absentRetraction(Random rnd, Table t, List<Change> out) {
        Object[] row = t.random(rnd);
        if (t.byKey(row) == null && !t.contains(row)) {
            RowKind kind = rnd.nextBoolean() ? RowKind.UPDATE_BEFORE : RowKind.DELETE;
            out.add(t.change(kind, row, Case.ABSENT_RETRACTION));
        }
    }

    private FidelityTrace() {}
}
