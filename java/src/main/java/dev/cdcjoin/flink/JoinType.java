package dev.cdcjoin.flink;

/** The SQL join type. */
public enum JoinType {
    /** Only matched pairs. */
    INNER,
    /** Every left row, null-padded when unmatched. */
    LEFT,
    /** Every right row, null-padded when unmatched. */
    RIGHT,
    /** Every row of both sides. */
    FULL
}
