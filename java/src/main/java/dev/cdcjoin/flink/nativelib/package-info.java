/**
 * Loading of the native library {@code cdcjoin_jni} (Rust crate {@code cdcjoin-jni}) that is
 * bundled in the {@code cdcjoin-flink} JAR, and its JNI entry points. See {@link
 * dev.cdcjoin.flink.nativelib.NativeLibrary}.
 */
package dev.cdcjoin.flink.nativelib;
