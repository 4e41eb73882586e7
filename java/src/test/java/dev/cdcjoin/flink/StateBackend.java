package dev.cdcjoin.flink;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateChangelogOptions;

/**
 * The state backend a test job runs on. The native join keeps its state as raw keyed state, outside
 * the backend, so every checkpoint and savepoint test should hold on each of these.
 */
enum StateBackend {
    /** {@code hashmap}. */
    HEAP,
    /** {@code rocksdb} with incremental checkpoints. */
    ROCKSDB_INCREMENTAL,
    /**
     * {@code hashmap} under the changelog state backend ({@code state.changelog.enabled}); the
     * log's storage is a TaskManager setting, the MiniCluster's default (in memory).
     */
    HEAP_CHANGELOG;

    /** Sets this backend in a job's configuration. */
    void configure(Configuration conf) {
        conf.set(
                StateBackendOptions.STATE_BACKEND,
                this == ROCKSDB_INCREMENTAL ? "rocksdb" : "hashmap");
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, this == ROCKSDB_INCREMENTAL);
        conf.set(StateChangelogOptions.ENABLE_STATE_CHANGE_LOG, this == HEAP_CHANGELOG);
    }
}
