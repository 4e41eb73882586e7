/**
 * The native engine's steps of the job graph, behind the API: {@link
 * dev.cdcjoin.flink.runtime.NativeDecodeOperator} (one table's Debezium records decoded, a batch
 * per native call), {@link dev.cdcjoin.flink.runtime.NativeJoinOperator} (the keyed join) and the
 * batch buffers they share.
 */
package dev.cdcjoin.flink.runtime;
