package dev.cdcjoin.flink;

/** What happens to an input record that cannot be decoded. */
public enum BadRecordPolicy {
    /** Fail the job with an exception whose message names the record and the reason. */
    FAIL,
    /** Send it, with the reason, to the side output {@link BadRecord#OUTPUT}. */
    SIDE_OUTPUT
}
