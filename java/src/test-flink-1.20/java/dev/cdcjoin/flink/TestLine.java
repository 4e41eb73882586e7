package dev.cdcjoin.flink;

import dev.cdcjoin.flink.FidelityJoins.FlinkOperator;
import dev.cdcjoin.flink.FidelityTrace.Layout;
import java.util.List;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.OperatorSnapshotFinalizer;
import org.apache.flink.streaming.api.operators.OperatorSnapshotFutures;
import org.apache.flink.table.runtime.operators.join.stream.state.JoinInputSideSpec;
import org.apache.flink.table.types.logical.RowType;

/**
 * The test adapter of the Flink 1.20 line: what the shared tests need that Flink 1.20 spells or
 * does differently from the 2.x line ({@code java/src/test-flink-2/java} holds the other one, with
 * the same methods).
 */
final class TestLine {

    private TestLine() {}

    /**
     * The state a checkpoint's futures hand to the JobManager, once they are done (1.20: a public
     * constructor of {@link OperatorSnapshotFinalizer}; 2.x: a factory method).
     *
     * @param futures the operator's snapshot
     * @return its JobManager-owned state
     * @throws Exception if a future failed
     */
    static OperatorSubtaskState jobManagerOwnedState(OperatorSnapshotFutures futures)
            throws Exception {
        return new OperatorSnapshotFinalizer(futures).getJobManagerOwnedState();
    }

    /**
     * A side's input spec of Flink SQL's streaming join, from its layout (1.20: in package {@code
     * join.stream.state}; 2.x: {@code join.stream.utils}).
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
     * Whether an exception from a failed task's {@code close()} ends its TaskManager: not on 1.20,
     * whose {@code Task} adds it to the task's failure as suppressed ({@code Task.java:950-955} of
     * 1.20.3).
     *
     * @return false
     */
    static boolean closeFailureOfAFailedTaskIsFatal() {
        return false;
    }

    /**
     * The committed savepoints (test resources) this line restores: the one written by the 1.20
     * build. Flink 1.20 reads checkpoint metadata up to version 4, so not the 2.x savepoint of
     * release 0.1.0 (version 6).
     *
     * @return resource paths of {@link SavepointCompatibilityTest}'s fixtures
     */
    static List<String> restorableSavepoints() {
        return List.of(SavepointCompatibilityTest.FLINK_1_20);
    }
}
