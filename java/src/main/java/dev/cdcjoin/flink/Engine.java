package dev.cdcjoin.flink;

/** Which implementation a {@link CdcJoin} runs; both give the same changelog. */
public enum Engine {
    /** Decoding and join state in the native library (the default). */
    NATIVE,
    /**
     * The pure-Java join ({@link dev.cdcjoin.flink.javajoin.JavaJoin}): Jackson decoding and Flink
     * keyed state, no native library. The fallback where the library is not available, and the
     * baseline the native operator is measured against.
     */
    JAVA
}
