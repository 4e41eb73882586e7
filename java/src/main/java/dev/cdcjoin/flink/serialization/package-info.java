/**
 * Flink serializers of the records that cross the {@code keyBy} between the decode and the join
 * operators ({@link dev.cdcjoin.flink.runtime.ChangeBatch}) and of the public per-change records.
 * Flink would otherwise treat {@link dev.cdcjoin.flink.ChangeRecord}, {@link
 * dev.cdcjoin.flink.JoinKey} and the batches as POJOs, whose serializer writes field flags and sets
 * fields by reflection for every record; these write the bytes as they are.
 */
package dev.cdcjoin.flink.serialization;
