package dev.cdcjoin.flink.javajoin;

/**
 * A retraction ({@code -U}/{@code -D}) of a row that is not in the join's state (never inserted,
 * already retracted, or expired by TTL), raised when the join definition asks to fail on those
 * (otherwise they are counted in the {@link dev.cdcjoin.flink.CdcJoinMetrics#ABSENT_RETRACTIONS}
 * metric and emit nothing).
 */
public final class AbsentRetractionException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * An error naming the change.
     *
     * @param message what was retracted, and where
     */
    public AbsentRetractionException(String message) {
        super(message);
    }
}
