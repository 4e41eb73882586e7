package dev.cdcjoin.flink.javajoin;

/**
 * How one side's rows are kept in Flink keyed state (keyed by the join key), chosen from the side's
 * keys as Flink SQL's {@code JoinInputSideSpec} chooses, and as the native join does.
 *
 * <p>Outer sides keep, next to each row, its number of matches on the other side; map layouts keep
 * an insertion sequence number so that a key's matches are emitted in insertion order (what the
 * native join does), on every state backend.
 */
public enum StateLayout {
    /**
     * The join key contains the primary key: at most one row per join key, in a {@code
     * ValueState<Row>} (inner side) or {@code ValueState<Tuple2<row, matches>>} (outer side).
     */
    JOIN_KEY_CONTAINS_PRIMARY_KEY,
    /**
     * The side has a primary key that the join key does not contain: {@code MapState<primary key,
     * Tuple3<row, matches, sequence>>}.
     */
    HAS_PRIMARY_KEY,
    /**
     * No primary key: the rows are a multiset, {@code MapState<row, Tuple3<count, matches,
     * sequence>>}.
     */
    NO_PRIMARY_KEY
}
