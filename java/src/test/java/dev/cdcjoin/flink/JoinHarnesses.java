package dev.cdcjoin.flink;

import dev.cdcjoin.flink.runtime.ChangeBatch;
import dev.cdcjoin.flink.runtime.KeyGroupRoutes;
import dev.cdcjoin.flink.runtime.NativeJoinOperator;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.core.memory.ManagedMemoryUseCase;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.runtime.state.storage.JobManagerCheckpointStorage;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;

/**
 * The native join operator in Flink's keyed test harness (one subtask, max parallelism {@value
 * #MAX_PARALLELISM}), keyed as the job keys it, fed changes one by one as batches of one.
 */
final class JoinHarnesses {

    /** The harness's max parallelism (Flink's default for its test harness). */
    static final int MAX_PARALLELISM = 1;

    private JoinHarnesses() {}

    /** A harness around {@code op}, keyed by key group as in a job; not set up. */
    static <OUT> KeyedTwoInputStreamOperatorTestHarness<Integer, ChangeBatch, ChangeBatch, OUT> of(
            NativeJoinOperator<OUT> op) throws Exception {
        KeyGroupRoutes routes = new KeyGroupRoutes();
        return new KeyedTwoInputStreamOperatorTestHarness<>(op, routes, routes, Types.INT);
    }

    /**
     * Sets up and opens {@code h} as a native join runs in a job: no managed memory fraction (the
     * join then holds no budget), a heap backend with checkpoints up to 64 MiB kept by the
     * JobManager (the default is 5 MiB), Flink's {@code snapshot-compression} set to {@code
     * compress}, restored from {@code state} unless it is null.
     *
     * @return {@code h}
     */
    static <H extends AbstractStreamOperatorTestHarness<?>> H open(
            H h, OperatorSubtaskState state, boolean compress) throws Exception {
        h.getStreamConfig()
                .setManagedMemoryFractionOperatorOfUseCase(ManagedMemoryUseCase.OPERATOR, 0.0);
        // The backend set explicitly: Flink 1.20's harness defaults to MemoryStateBackend, which is
        // its own checkpoint storage (5 MiB at most) and ignores setCheckpointStorage.
        h.setStateBackend(new HashMapStateBackend());
        h.setCheckpointStorage(new JobManagerCheckpointStorage(64 << 20));
        h.getExecutionConfig().setUseSnapshotCompression(compress);
        h.setup();
        if (state != null) {
            h.initializeState(state);
        }
        h.open();
        return h;
    }

    /** A change as a batch of one, with no timestamp. */
    static StreamRecord<ChangeBatch> batch(ChangeRecord change) {
        return batch(new StreamRecord<>(change));
    }

    /** A change as a batch of one, keeping the record's timestamp (or its absence). */
    static StreamRecord<ChangeBatch> batch(StreamRecord<ChangeRecord> change) {
        return new StreamRecord<>(ChangeBatch.of(MAX_PARALLELISM, change));
    }
}
