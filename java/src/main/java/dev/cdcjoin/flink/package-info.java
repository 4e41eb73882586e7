/**
 * The DataStream API of cdcjoin: decode Debezium change streams natively ({@link
 * dev.cdcjoin.flink.DebeziumDecoder}) and join two of them in native state ({@link
 * dev.cdcjoin.flink.CdcJoin}), producing a changelog of {@link org.apache.flink.types.Row}s.
 */
package dev.cdcjoin.flink;
