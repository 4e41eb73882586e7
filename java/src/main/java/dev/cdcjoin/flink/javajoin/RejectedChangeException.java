package dev.cdcjoin.flink.javajoin;

/**
 * A change the join cannot apply without guessing (an {@link Unavailable} column with no stored row
 * to take it from, or where a key must be known), raised under {@link
 * dev.cdcjoin.flink.BadRecordPolicy#FAIL}; under {@code SIDE_OUTPUT} the same message goes to
 * {@link BadRecord#OUTPUT}.
 */
public final class RejectedChangeException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * An error naming the change.
     *
     * @param message the side, the row, the columns and the reason
     */
    public RejectedChangeException(String message) {
        super(message);
    }
}
