package dev.cdcjoin.flink.runtime;

import java.util.Arrays;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;

/**
 * Routes a {@link ChangeBatch} through Flink's {@code keyBy} to the subtask owning its key group:
 * the key is an int that Flink's own {@link KeyGroupRangeAssignment#assignToKeyGroup} puts in that
 * key group (the smallest non-negative one), so Flink's partitioner, and its re-partitioning of
 * in-flight data restored from an unaligned checkpoint, send the batch where its state is. The
 * table is computed once per max parallelism.
 */
public final class KeyGroupRoutes implements KeySelector<ChangeBatch, Integer> {

    private static final long serialVersionUID = 1L;

    private transient int[] routes;

    @Override
    public Integer getKey(ChangeBatch batch) {
        if (routes == null || routes.length != batch.maxParallelism) {
            routes = routes(batch.maxParallelism);
        }
        return routes[batch.keyGroup];
    }

    /**
     * Checks that a batch of table {@code table} reaching a join's subtask was partitioned for the
     * join's max parallelism and is of a key group the subtask owns: otherwise it would be joined
     * against the wrong state, so the job fails, naming both.
     *
     * @param table the batch's table, for the message
     * @param changes the batch
     * @param maxParallelism the join's max parallelism
     * @param keyGroups the key groups of the subtask
     * @param context the subtask's context, for its index
     * @throws IllegalStateException if the batch cannot be joined here
     */
    static void check(
            String table,
            ChangeBatch changes,
            int maxParallelism,
            KeyGroupRange keyGroups,
            RuntimeContext context) {
        if (changes.maxParallelism != maxParallelism) {
            throw new IllegalStateException(
                    String.format(
                            "%s: a batch of key group %d was partitioned for max parallelism %d,"
                                    + " this join's is %d (its producer keys its batches for its"
                                    + " own when it reaches no keyBy in its task, e.g. with"
                                    + " chaining disabled before it); give the producer and the"
                                    + " join the same max parallelism",
                            table, changes.keyGroup, changes.maxParallelism, maxParallelism));
        }
        if (!keyGroups.contains(changes.keyGroup)) {
            throw new IllegalStateException(
                    String.format(
                            "%s: a batch of key group %d reached subtask %d, which owns key groups"
                                    + " %s",
                            table,
                            changes.keyGroup,
                            context.getTaskInfo().getIndexOfThisSubtask(),
                            keyGroups));
        }
    }

    /**
     * Per key group, the smallest non-negative int that Flink assigns to it.
     *
     * @param maxParallelism the number of key groups
     * @return the table
     */
    public static int[] routes(int maxParallelism) {
        KeyGroupRangeAssignment.checkParallelismPreconditions(maxParallelism);
        int[] routes = new int[maxParallelism];
        Arrays.fill(routes, -1);
        int missing = maxParallelism;
        for (int key = 0; missing > 0; key++) {
            int group = KeyGroupRangeAssignment.assignToKeyGroup(key, maxParallelism);
            if (routes[group] < 0) {
                routes[group] = key;
                missing--;
            }
        }
        return routes;
    }
}
