package dev.cdcjoin.flink;

import dev.cdcjoin.flink.FidelityJoins.FlinkOperator;
import dev.cdcjoin.flink.FidelityTrace.Layout;
import java.util.List;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.OperatorSnapshotFinalizer;
import org.apache.flink.streaming.api.operators.OperatorSnapshotFutures;
import org.apache.flink.table.runtime.operators.join.stream.utils.JoinInputSideSpec;
import org.apache.flink.table.types.logical.RowType;

/**
 * The test adapter of the Flink 2.x line: what the shared tests need that Flink 2.x spells or does
 * differently from the 1.20 line ({@code java/src/test-flink-1.20/java} holds the other one, with
 * the same methods).
 */
final class TestLine {

    private TestLine() {}

    /**
     * The state a checkpoint's futures hand to the JobManager, once they are done (2.x: a factory
     * method of {@link OperatorSnapshotFinalizer}; 1.20: a public constructor).
     *
     * @param futures the operator's snapshot
     * @return its JobManager-owned state
     * @throws Exception if a future failed
     */
    static OperatorSubtaskState jobManagerOwnedState(OperatorSnapshotFutures futures)
            throws Exception {
        return OperatorSnapshotFinalizer.create(futures).getJobManagerOwnedState();
    }

    /**
     * A side's input spec of Flink SQL's streaming join, from its layout (2.x: in package {@code
     * join.stream.utils}; 1.20: {@code join.stream.state}).
     *
     * @param layout the side's keys
     * @param type the side's row type
     * @return the spec
     */
    static JoinInputSideSpec sideSpec(Layout layout, RowType type) {
        return FlinkOperator.sideSpec(
                layout,
                type,
                JoinInputSideSpec::withUniqueKeyContainedByJoinKey,
                JoinInputSideSpec::withUniqueKey,
                JoinInputSideSpec::withoutUniqueKey);
    }

    /**
     * Whether an exception from a failed task's {@code close()} ends its TaskManager: on 2.x it
     * does, the task's cleanup running in a registry whose failure is fatal ({@code
     * Task.java:970-973, 812} of 2.3.0).
     *
     * @return true
     */
    static boolean closeFailureOfAFailedTaskIsFatal() {
        return true;
    }

    /**
     * The committed savepoints (test resources) this line restores: release 0.1.0's, taken on 2.3,
     * and the one written by the 1.20 build (an upgrade from 1.20 to 2.x).
     *
     * @return resource paths of {@link SavepointCompatibilityTest}'s fixtures
     */
    static List<String> restorableSavepoints() {
        return List.of(SavepointCompatibilityTest.FORMAT_1, SavepointCompatibilityTest.FLINK_1_20);
    }
}
