package dev.cdcjoin.flink;

import java.util.Arrays;

/**
 * A join key: the key columns of a row in the compact row encoding. Equal keys have equal bytes,
 * so {@link #hashCode()} and {@link #equals(Object)} work on the content and the class can be used
 * with {@code keyBy}. A Flink POJO.
 */
public final class JoinKey {

    /** The encoded key columns. */
    public byte[] bytes;

    /** An empty key, for Flink's POJO serializer. */
    public JoinKey() {
        this.bytes = new byte[0];
    }

    /**
     * A key over these bytes (not copied).
     *
     * @param bytes the encoded key columns
     */
    public JoinKey(byte[] bytes) {
        this.bytes = bytes;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof JoinKey && Arrays.equals(bytes, ((JoinKey) o).bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("JoinKey[");
        for (byte b : bytes) {
            sb.append(String.format("%02x", b & 0xff));
        }
        return sb.append(']').toString();
    }
}
