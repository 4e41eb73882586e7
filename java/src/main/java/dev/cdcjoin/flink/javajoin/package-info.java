/**
 * The pure-Java join: the same Debezium decoding and the same changelog-join emission rules as the
 * native operator ({@code rust/join/src/engine.rs}), written with Jackson and Flink keyed state.
 *
 * <p>It is the fallback on platforms without the native library and the honest baseline of the
 * benchmark. Entry point: {@link dev.cdcjoin.flink.javajoin.JavaJoin}. Building blocks, usable on
 * their own: {@link dev.cdcjoin.flink.javajoin.DebeziumJsonDecoder} (Jackson streaming decoder),
 * {@link dev.cdcjoin.flink.javajoin.DebeziumDecodeFunction} (the decoder as a Flink function),
 * {@link dev.cdcjoin.flink.javajoin.JavaJoinFunction} (the join as a {@code
 * KeyedCoProcessFunction}) and {@link dev.cdcjoin.flink.javajoin.OrderedJavaJoinFunction} (the same
 * join over one stream carrying both sides in their global order).
 */
package dev.cdcjoin.flink.javajoin;
