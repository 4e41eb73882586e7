package dev.cdcjoin.flink;

/**
 * The names of the metrics cdcjoin's operators register in their operator metric groups, beside
 * Flink's own ({@code numRecordsIn}, {@code numRecordsOut}, ...), written down once: the operators
 * register them by these constants, the README lists them, the tests read them. Both engines use
 * the same name for the same count, so a dashboard or an alert does not change with the engine.
 *
 * <p>The native join operators also register a gauge per counter of their native engine (its state
 * size, its absent retractions, ...), named by {@link #ofNativeCounter}; those of the engine's
 * counters the operator counts itself are not repeated as gauges.
 */
public final class CdcJoinMetrics {

    private CdcJoinMetrics() {}

    /** Decode steps, both engines: records that could not be decoded (counter). */
    public static final String BAD_RECORDS = "cdcjoinBadRecords";

    /** Decode steps, both engines: tombstones (null values), counted and dropped (counter). */
    public static final String TOMBSTONES = "cdcjoinTombstones";

    /** Native decode steps: records in (counter). */
    public static final String RECORDS_IN = "cdcjoinRecordsIn";

    /**
     * Native decode steps: changes out, an update counting two ({@code -U} and {@code +U})
     * (counter); Flink's {@code numRecordsOut} counts the key group batches that carry them.
     */
    public static final String CHANGES_OUT = "cdcjoinChangesOut";

    /**
     * Native decode steps and two-table joins: batches processed, one native call each (counter).
     */
    public static final String BATCHES = "cdcjoinBatches";

    /** Two-table joins, both engines: changes in from the left input (counter). */
    public static final String RECORDS_IN_LEFT = "cdcjoinRecordsInLeft";

    /** Two-table joins, both engines: changes in from the right input (counter). */
    public static final String RECORDS_IN_RIGHT = "cdcjoinRecordsInRight";

    /**
     * Two-table joins, both engines, and native multi-way joins: retractions of rows that were not
     * in state (never inserted, already retracted, or expired), which emit nothing (a counter, or a
     * gauge of the native engine's count).
     */
    public static final String ABSENT_RETRACTIONS = ofNativeCounter("absent_retractions");

    /**
     * Two-table joins, both engines, and native multi-way joins: changes the join could not apply
     * (an unchanged TOASTed column with nothing to fill it from), sent where the bad-record policy
     * says (a counter, or a gauge of the native engine's count).
     */
    public static final String REJECTED = ofNativeCounter("rejected");

    /** Native joins: rows emitted (counter). */
    public static final String ROWS_OUT = "cdcjoinRowsOut";

    /** Native two-table joins: changes in the last batch (gauge). */
    public static final String LAST_BATCH_SIZE = "cdcjoinLastBatchSize";

    /** Native joins: bytes of join state this subtask read when restored, 0 if none (gauge). */
    public static final String RESTORED_STATE_BYTES = "cdcjoinRestoredStateBytes";

    /**
     * Native joins: milliseconds this subtask spent restoring its join state, 0 if none (gauge).
     */
    public static final String STATE_RESTORE_MILLIS = "cdcjoinStateRestoreMillis";

    /**
     * The gauge of a native engine counter: {@code cdcjoin} and the counter's name in camel case
     * ({@code state_rows}: {@code cdcjoinStateRows}, {@code records_in_0}: {@code
     * cdcjoinRecordsIn0}).
     *
     * @param counter the engine's name of the counter (Rust {@code COUNTER_NAMES}, {@code
     *     MULTIWAY_COUNTER_NAMES})
     * @return the metric's name
     */
    public static String ofNativeCounter(String counter) {
        StringBuilder metric = new StringBuilder("cdcjoin");
        for (String word : counter.split("_")) {
            metric.append(Character.toUpperCase(word.charAt(0))).append(word.substring(1));
        }
        return metric.toString();
    }
}
