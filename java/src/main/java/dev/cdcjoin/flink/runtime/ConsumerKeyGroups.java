package dev.cdcjoin.flink.runtime;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.flink.runtime.io.network.api.writer.ResultPartitionWriter;
import org.apache.flink.runtime.jobgraph.IntermediateDataSetID;
import org.apache.flink.streaming.api.graph.NonChainedOutput;
import org.apache.flink.streaming.api.graph.StreamConfig;
import org.apache.flink.streaming.api.graph.StreamEdge;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.runtime.partitioner.KeyGroupStreamPartitioner;

/**
 * The number of key groups that an operator emitting {@link ChangeBatch}es must compute them for:
 * that of the {@code keyBy} its main output reaches. Flink's {@code StreamTask} configures each
 * {@code keyBy} partitioner with its writer's {@link
 * ResultPartitionWriter#getNumTargetKeyGroups()}, the consuming operator's max parallelism as the
 * scheduler fixed it (set on the job or the operator, Flink's default for its parallelism, or
 * restored from a checkpoint); a batch keyed for that number lands where {@code keyBy} sends it and
 * is of a key group its consumer owns, whatever the producer's own max parallelism. So a decode
 * step at parallelism 1 feeds a join whose max parallelism is 256, or Flink's default for
 * parallelism 100, without the job setting one for both.
 *
 * <p>The main output is followed through the operators chained to it (the multi-way join's input
 * tag) to the {@code keyBy} edges leaving the task; side outputs (bad records) are not. When it
 * reaches none (chaining disabled before the {@code keyBy}, a test harness), the operator's own max
 * parallelism is used and the consumer checks it is its own, failing the job with both numbers
 * otherwise. Consumers with different numbers are an error: no one number routes to both.
 */
final class ConsumerKeyGroups {

    private ConsumerKeyGroups() {}

    /**
     * The key groups of the {@code keyBy} that {@code operator}'s main output reaches.
     *
     * @param operator an operator set up in its task
     * @return the consumer's max parallelism, or the operator's own when it reaches no {@code
     *     keyBy}
     * @throws IllegalStateException if it reaches two with different max parallelisms
     */
    static int of(AbstractStreamOperator<?> operator) {
        ClassLoader loader = operator.getUserCodeClassloader();
        StreamConfig task = operator.getContainingTask().getConfiguration();
        List<IntermediateDataSetID> keyed = new ArrayList<>();
        keyedOutputs(
                operator.getOperatorConfig(),
                task.getTransitiveChainedTaskConfigsWithSelf(loader),
                loader,
                keyed);
        TreeSet<Integer> counts = new TreeSet<>();
        for (ResultPartitionWriter writer :
                operator.getContainingTask().getEnvironment().getAllWriters()) {
            if (keyed.contains(
                    writer.getPartitionId().getPartitionId().getIntermediateDataSetID())) {
                counts.add(writer.getNumTargetKeyGroups());
            }
        }
        if (counts.size() > 1) {
            throw new IllegalStateException(
                    operator.getOperatorConfig().getOperatorName()
                            + " feeds keyed operators of different max parallelisms "
                            + counts
                            + ": give them one max parallelism");
        }
        return counts.isEmpty()
                ? operator.getRuntimeContext().getTaskInfo().getMaxNumberOfParallelSubtasks()
                : counts.first();
    }

    /** Adds the data sets of the {@code keyBy} edges that {@code config}'s main output reaches. */
    private static void keyedOutputs(
            StreamConfig config,
            Map<Integer, StreamConfig> chained,
            ClassLoader loader,
            List<IntermediateDataSetID> into) {
        for (NonChainedOutput out : config.getOperatorNonChainedOutputs(loader)) {
            if (out.getOutputTag() == null
                    && out.getPartitioner() instanceof KeyGroupStreamPartitioner) {
                into.add(out.getDataSetId());
            }
        }
        for (StreamEdge edge : config.getChainedOutputs(loader)) {
            StreamConfig next = chained.get(edge.getTargetId());
            if (edge.getOutputTag() == null && next != null) {
                keyedOutputs(next, chained, loader, into);
            }
        }
    }
}
