/**
 * The native engine's steps of the job graph, behind the API: {@link
 * dev.cdcjoin.flink.runtime.NativeDecodeOperator} (one table's Debezium records decoded, a batch
 * per native call, into one {@link dev.cdcjoin.flink.runtime.ChangeBatch} per key group with
 * changes), {@link dev.cdcjoin.flink.runtime.ChangeBatcher} (the same batches from changes given
 * one by one), {@link dev.cdcjoin.flink.runtime.KeyGroupRoutes} (the {@code keyBy} that sends a
 * batch to its key group's subtask), {@link dev.cdcjoin.flink.runtime.NativeJoinOperator} (the
 * keyed join) and the batch buffers and formats they share ({@link
 * dev.cdcjoin.flink.runtime.ChangeBlocks}).
 */
package dev.cdcjoin.flink.runtime;
