/**
 * The Flink operators behind the API: the native Debezium decode operator, the keyed native join
 * operator, and the batch buffers they share.
 */
package dev.cdcjoin.flink.runtime;
