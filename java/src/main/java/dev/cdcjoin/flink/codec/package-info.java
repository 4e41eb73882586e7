/**
 * Schemas of CDC tables and the compact row encoding shared with the native library: {@link
 * dev.cdcjoin.flink.codec.CdcSchema}, {@link dev.cdcjoin.flink.codec.ColumnType} and {@link
 * dev.cdcjoin.flink.codec.RowCodec}.
 */
package dev.cdcjoin.flink.codec;
