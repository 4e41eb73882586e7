package dev.cdcjoin.flink.nativelib;

import java.nio.ByteBuffer;

/**
 * A native Debezium batch decoder (Rust {@code cdcjoin_debezium::batch::BatchDecoder}): one native
 * call decodes a whole batch of messages.
 *
 * <p>Input batches are direct buffers: JSON batches as {@code (len u32 | bytes)*} with {@code len =
 * 0xFFFFFFFF} for a null message; row batches as {@code (op u8 | before | after)*}, each image
 * {@code len u32 | compact row} or {@code 0xFFFFFFFF} for null. The output, little-endian, is
 * {@code changes u32 | errors u32 | tombstones u32} then per change {@code 0 u8 | index u32 | kind
 * u8 | keyLen u32 | key | rowLen u32 | row} and per rejected message {@code 1 u8 | index u32 |
 * msgLen u32 | UTF-8 reason}.
 *
 * <p>Created with {@link #partitioned}, it partitions instead for the batch exchange (Rust {@code
 * cdcjoin_debezium::batch}): each input message is preceded by its stamp, and the output is {@code
 * changes u32 | errors u32 | tombstones u32}, the rejected messages as above, then one block per
 * key group with changes ({@code dev.cdcjoin.flink.runtime.ChangeBlocks}).
 *
 * <p>Not thread-safe: use one instance per operator instance. {@link #close()} frees the native
 * memory; any later call throws {@link IllegalStateException}.
 */
public final class NativeDecoder extends NativeHandle {

    private static final int INITIAL_OUTPUT = 64 * 1024;

    /**
     * Creates a decoder. Loads the native library if needed.
     *
     * @param configJson {@code {"schema": {...}, "join_key": [...], "source": "...", "update_mode":
     *     "Retract"|"DeleteInsert", ...}}
     * @throws IllegalArgumentException if the configuration is invalid
     */
    public NativeDecoder(String configJson) {
        super("NativeDecoder", INITIAL_OUTPUT, () -> create(configJson));
    }

    /**
     * A decoder that partitions its output by Flink key group (see the class documentation).
     *
     * @param configJson the decoder configuration, a JSON object as for {@link
     *     #NativeDecoder(String)}
     * @param maxParallelism the join's max parallelism: the number of key groups
     * @return the decoder
     * @throws IllegalArgumentException if the configuration is invalid
     */
    public static NativeDecoder partitioned(String configJson, int maxParallelism) {
        String object = configJson.strip();
        if (!object.endsWith("}") || object.contains("\"max_parallelism\"")) {
            throw new IllegalArgumentException(
                    "not a decoder configuration without max_parallelism: " + configJson);
        }
        return new NativeDecoder(
                object.substring(0, object.length() - 1)
                        + ",\"max_parallelism\":"
                        + maxParallelism
                        + "}");
    }

    /**
     * Decodes a batch of JSON messages.
     *
     * @param in direct buffer holding the batch at positions {@code [0, length)}
     * @param length batch length in bytes
     * @param firstIndex number of the batch's first message, used in error messages
     * @return the output (little-endian, position 0, limit = length), valid until the next call
     */
    public ByteBuffer decodeJson(ByteBuffer in, int length, long firstIndex) {
        long h = open();
        long r = decodeJson(h, in, length, firstIndex, output());
        return collect(h, r);
    }

    /**
     * Decodes a batch of envelopes whose rows are already in the compact encoding.
     *
     * @param in direct buffer holding the batch at positions {@code [0, length)}
     * @param length batch length in bytes
     * @param firstIndex number of the batch's first message, used in error messages
     * @return the output, as for {@link #decodeJson}
     */
    public ByteBuffer decodeRows(ByteBuffer in, int length, long firstIndex) {
        long h = open();
        long r = decodeRows(h, in, length, firstIndex, output());
        return collect(h, r);
    }

    /**
     * Decodes a batch of upsert-kafka records: per record its key (the primary key as JSON) and its
     * value (the row as JSON; null for a delete), each length-prefixed.
     *
     * @param in direct buffer holding the batch at positions {@code [0, length)}
     * @param length batch length in bytes
     * @param firstIndex number of the batch's first record, used in error messages
     * @return the output, as for {@link #decodeJson}
     */
    public ByteBuffer decodeUpsert(ByteBuffer in, int length, long firstIndex) {
        long h = open();
        long r = decodeUpsert(h, in, length, firstIndex, output());
        return collect(h, r);
    }

    private ByteBuffer collect(long h, long result) {
        return collect(result, out -> takeOutput(h, out));
    }

    @Override
    void release(long handle) {
        free(handle);
    }

    static native long create(String configJson);

    static native long decodeJson(
            long handle, ByteBuffer in, int length, long firstIndex, ByteBuffer out);

    static native long decodeRows(
            long handle, ByteBuffer in, int length, long firstIndex, ByteBuffer out);

    static native long decodeUpsert(
            long handle, ByteBuffer in, int length, long firstIndex, ByteBuffer out);

    static native long takeOutput(long handle, ByteBuffer out);

    static native void free(long handle);
}
