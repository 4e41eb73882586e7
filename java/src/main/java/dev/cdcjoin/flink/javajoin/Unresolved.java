package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.javajoin.ResolvedJoin.ResolvedSide;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntPredicate;
import org.apache.flink.types.Row;

/**
 * The join's rules for {@link Unavailable} columns, and the messages of the changes it rejects.
 *
 * <p>Only a primary key can say which stored row holds an unavailable column's value, and only
 * known join and primary key columns can place a row: a change without them cannot be applied
 * without guessing, so it is rejected (nothing stored, nothing emitted) and reported by the
 * bad-record policy, naming the input, the row, the columns and the reason. The checks and their
 * words are the native engine's ({@code rust/join/src/reject.rs}), so both engines report the same
 * bad records.
 */
final class Unresolved {

    /** What an unavailable column is, for messages. */
    private static final String WHAT =
            " (the change does not carry the value, e.g. Debezium's placeholder for an unchanged"
                    + " TOASTed value, or a delete by key)";

    private Unresolved() {}

    /** Whether a row has an unavailable column. */
    static boolean any(Row row) {
        for (int i = 0; i < row.getArity(); i++) {
            if (Unavailable.is(row.getField(i))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Why a change with unavailable columns can never be applied on this side, whatever its state
     * holds (one in the join key, then in the primary key; any on a side without primary key), or
     * null.
     */
    static String check(ResolvedSide plan, Row row) {
        if (!any(row)) {
            return null;
        }
        List<String> inJoinKey = columns(plan, row, plan::isJoinKeyColumn);
        if (!inJoinKey.isEmpty()) {
            return prefix(plan, row)
                    + columns(inJoinKey, " of the join key")
                    + ": the row's join key, and so its state, is unknown";
        }
        List<String> inPrimaryKey = columns(plan, row, plan::isPrimaryKeyColumn);
        if (!inPrimaryKey.isEmpty()) {
            return prefix(plan, row)
                    + columns(inPrimaryKey, " of the primary key")
                    + ": the stored row it changes cannot be found";
        }
        if (!plan.hasPrimaryKey()) {
            return prefix(plan, row)
                    + columns(columns(plan, row, c -> true), "")
                    + WHAT
                    + ", and a side without a primary key cannot fill unavailable columns: no"
                    + " stored row is known to be the same row";
        }
        return null;
    }

    /** The message of an accumulation whose unavailable columns have no stored row to come from. */
    static String noStoredRow(ResolvedSide plan, Row row) {
        return prefix(plan, row)
                + columns(columns(plan, row, c -> true), "")
                + WHAT
                + ", and no row with primary key "
                + plan.primaryKeyText(row)
                + " is stored to take it from (first sight of the key, or expired by TTL)";
    }

    /** Each unavailable column of {@code row} takes the value of {@code stored}. */
    static void fill(Row row, Row stored) {
        for (int i = 0; i < row.getArity(); i++) {
            if (Unavailable.is(row.getField(i))) {
                row.setField(i, stored.getField(i));
            }
        }
    }

    /** The names of the unavailable columns of {@code row} that {@code which} accepts. */
    private static List<String> columns(ResolvedSide plan, Row row, IntPredicate which) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < row.getArity(); i++) {
            if (Unavailable.is(row.getField(i)) && which.test(i)) {
                out.add(plan.columnName(i));
            }
        }
        return out;
    }

    /** {@code left row +U[7, <unavailable>]: }. */
    private static String prefix(ResolvedSide plan, Row row) {
        return plan.label + " row " + row + ": ";
    }

    /** {@code column 'a'{of} is unavailable} or {@code columns 'a', 'b'{of} are unavailable}. */
    private static String columns(List<String> names, String of) {
        StringBuilder b = new StringBuilder(names.size() == 1 ? "column " : "columns ");
        for (int i = 0; i < names.size(); i++) {
            b.append(i == 0 ? "" : ", ").append('\'').append(names.get(i)).append('\'');
        }
        return b.append(of)
                .append(names.size() == 1 ? " is unavailable" : " are unavailable")
                .toString();
    }
}
