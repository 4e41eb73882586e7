package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.javajoin.JoinPlan.SidePlan;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.types.Row;

/**
 * The join's rules for {@link Unavailable} columns, and the messages of the changes it rejects.
 *
 * <p>Only a primary key can say which stored row holds an unavailable column's value, and only
 * known join and primary key columns can place a row: a change without them cannot be applied
 * without guessing, so it is rejected (nothing stored, nothing emitted) and reported by the
 * bad-record policy, naming the row, the columns and the reason.
 */
final class Unresolved {

    /** Why a column is unavailable, as the messages say it. */
    private static final String WHY =
            " (Debezium's placeholder for an unchanged TOASTed value, or a column a delete by key"
                    + " does not carry)";

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
     * Why a change with unavailable columns can never be applied on this side (one in the join
     * key or primary key; any on a side without primary key), or null.
     */
    static String check(SidePlan plan, Row row) {
        if (!any(row)) {
            return null;
        }
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < row.getArity(); i++) {
            if (Unavailable.is(row.getField(i)) && plan.isKeyColumn(i)) {
                keys.add(plan.columnName(i));
            }
        }
        if (!keys.isEmpty()) {
            return prefix(plan, row, columns(plan, row)) + WHY
                    + " and the join key and primary key columns " + quoted(keys)
                    + " must be known to place the row";
        }
        if (!plan.hasPrimaryKey()) {
            return prefix(plan, row, columns(plan, row)) + WHY
                    + " and a side without a primary key cannot take it from a stored row";
        }
        return null;
    }

    /** The message of an accumulation whose unavailable columns have no stored row to come from. */
    static String noStoredRow(SidePlan plan, Row row) {
        return prefix(plan, row, columns(plan, row))
                + " (Debezium's placeholder for an unchanged TOASTed value) and no stored row with"
                + " primary key " + plan.primaryKeyText(row)
                + " to take it from (first sight of the key, or expired by TTL)";
    }

    /** Each unavailable column of {@code row} takes the value of {@code stored}. */
    static void fill(Row row, Row stored) {
        for (int i = 0; i < row.getArity(); i++) {
            if (Unavailable.is(row.getField(i))) {
                row.setField(i, stored.getField(i));
            }
        }
    }

    private static List<String> columns(SidePlan plan, Row row) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < row.getArity(); i++) {
            if (Unavailable.is(row.getField(i))) {
                out.add(plan.columnName(i));
            }
        }
        return out;
    }

    private static String prefix(SidePlan plan, Row row, List<String> columns) {
        return plan.name + " row " + row + ": " + (columns.size() == 1 ? "column " : "columns ")
                + quoted(columns) + (columns.size() == 1 ? " is" : " are") + " unavailable";
    }

    private static String quoted(List<String> names) {
        StringBuilder b = new StringBuilder();
        for (String n : names) {
            b.append(b.length() == 0 ? "" : ", ").append('\'').append(n).append('\'');
        }
        return b.toString();
    }
}
