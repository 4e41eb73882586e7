/**
 * Flink serializers of the records that cross the {@code keyBy} between the decode and the join
 * operators. Flink would otherwise treat {@link dev.cdcjoin.flink.ChangeRecord} and {@link
 * dev.cdcjoin.flink.JoinKey} as POJOs, whose serializer writes field flags and sets fields by
 * reflection for every record; these write the bytes as they are.
 */
package dev.cdcjoin.flink.serialization;
