/**
 * The Java engine: the same Debezium decoding and the same changelog-join emission rules as the
 * native engine ({@code rust/join/src/engine.rs}), written with Jackson and Flink keyed state. It
 * is the fallback on platforms without the native library and the honest baseline of the benchmark;
 * jobs choose it with {@code CdcJoin.builder()...engine(Engine.JAVA)}, and {@link
 * dev.cdcjoin.flink.javajoin.JavaJoin} lays out its job graph.
 *
 * <p>Names follow one scheme across both engines. A step of the job graph is named after what it
 * does and which engine does it: {@code runtime.NativeDecodeOperator} / {@link
 * dev.cdcjoin.flink.javajoin.JavaDecodeFunction} decode one table's records into changes, {@code
 * runtime.NativeJoinOperator} / {@link dev.cdcjoin.flink.javajoin.JavaJoinFunction} join them; the
 * {@code Ordered} variants ({@link dev.cdcjoin.flink.javajoin.OrderedJavaDecodeFunction}, {@link
 * dev.cdcjoin.flink.javajoin.OrderedJavaJoinFunction}) take both tables in one stream, in its
 * order. The native engine's JNI bindings are {@code nativelib.NativeDecoder} and {@code
 * nativelib.NativeJoin}. In the Java engine, what parses is a reader: {@link
 * dev.cdcjoin.flink.javajoin.DebeziumJsonReader} (a Debezium JSON message, envelope and wrapper),
 * {@link dev.cdcjoin.flink.javajoin.RowEnvelopeReader} (a {@code Row(before, op, after)}), {@link
 * dev.cdcjoin.flink.javajoin.ColumnReader} (one value, in its declared encoding); {@link
 * dev.cdcjoin.flink.javajoin.ChangeRules} turn a parsed envelope into changes, {@link
 * dev.cdcjoin.flink.javajoin.JoinCore} applies the join's emission rules to a key's state.
 */
package dev.cdcjoin.flink.javajoin;
