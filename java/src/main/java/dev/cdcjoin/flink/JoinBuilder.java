package dev.cdcjoin.flink;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The settings every join builder has ({@link CdcJoin.Builder}, {@link CdcMultiJoin.Builder}): the
 * engine, where bad records go, how the native operators batch, and the output columns.
 *
 * @param <B> the builder's own type, which every setter returns
 */
public abstract class JoinBuilder<B extends JoinBuilder<B>> {
    BadRecordPolicy policy = BadRecordPolicy.FAIL;
    int batchSize = 1024;
    Duration maxFlushDelay = Duration.ofMillis(100);
    Engine engine = Engine.NATIVE;
    String uid;
    final List<String> projection = new ArrayList<>();
    final List<String> outputNames = new ArrayList<>();

    JoinBuilder() {}

    @SuppressWarnings("unchecked") // B is this builder's own class
    private B self() {
        return (B) this;
    }

    /**
     * Sets what happens to undecodable records and to changes the join rejects (default FAIL).
     *
     * @param policy the policy
     * @return this
     */
    public B badRecordPolicy(BadRecordPolicy policy) {
        this.policy = Objects.requireNonNull(policy);
        return self();
    }

    /**
     * Sets the records per native call, for decoding and joining (default 1024).
     *
     * @param batchSize at least 1
     * @return this
     */
    public B batchSize(int batchSize) {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be >= 1");
        }
        this.batchSize = batchSize;
        return self();
    }

    /**
     * Sets the longest time a record waits in an unfilled batch (default 100 ms).
     *
     * @param delay the delay
     * @return this
     */
    public B maxFlushDelay(Duration delay) {
        this.maxFlushDelay = Objects.requireNonNull(delay);
        return self();
    }

    /**
     * Chooses the engine (default {@link Engine#NATIVE}): the native operators, or the pure-Java
     * joins (package {@code javajoin}) with the same changelog and the same result types.
     *
     * @param engine the engine
     * @return this
     */
    public B engine(Engine engine) {
        this.engine = Objects.requireNonNull(engine);
        return self();
    }

    /**
     * Names the operators this join adds to a job, so that a savepoint restores into the job after
     * it changed elsewhere: each gets a uid (Flink's {@code uid}) of {@code uid + "/"} and its
     * role, {@code decode-<input>} for an input's decoder, {@code join} for the join behind {@code
     * rows()}, {@code join-rowdata}, {@code join-raw} and {@code join-chained} for the others (and
     * {@code /1}, {@code /2}, ... after a role for the operators behind the one that emits its
     * stream). Without one, Flink derives each operator's ID from the shape of the whole job, and a
     * changed job no longer finds the join's state. The roles do not depend on the join's
     * definition, so a changed definition still meets the join's own restore check, which names
     * what changed. Give each join of a job its own.
     *
     * @param uid the prefix, not empty
     * @return this
     */
    public B uid(String uid) {
        if (uid == null || uid.isEmpty()) {
            throw new IllegalArgumentException("uid must not be empty");
        }
        this.uid = uid;
        return self();
    }

    /**
     * Adds an output column: {@code "table.column"}, or a column name found in one input only.
     * Without any, the output is every input's columns in input order (left, then right).
     *
     * @param column the column
     * @param outputName its name in the output
     * @return this
     */
    public B select(String column, String outputName) {
        projection.add(column);
        outputNames.add(outputName);
        return self();
    }

    /**
     * Adds an output column under its own name (see {@link #select(String, String)}).
     *
     * @param column the column
     * @return this
     */
    public B select(String column) {
        int dot = column.indexOf('.');
        return select(column, dot < 0 ? column : column.substring(dot + 1));
    }
}
