package dev.cdcjoin.flink;

import dev.cdcjoin.flink.serialization.JoinKeySerializer;
import java.util.Arrays;
import org.apache.flink.api.common.typeinfo.TypeInfo;

/**
 * A join key: the key columns of a row in the compact row encoding. Equal keys have equal bytes, so
 * {@link #hashCode()} and {@link #equals(Object)} work on the content and the class can be used
 * with {@code keyBy}. Immutable; the hash is computed once, since Flink asks for it at least twice
 * per record (the partitioner and the keyed operator). Flink serializes it with {@link
 * JoinKeySerializer}.
 */
@TypeInfo(JoinKeySerializer.Factory.class)
public final class JoinKey {

    private final byte[] bytes;
    private int hash;
    private boolean hashed;

    /**
     * A key over these bytes (not copied: the caller must not change them afterwards).
     *
     * @param bytes the encoded key columns
     */
    public JoinKey(byte[] bytes) {
        this.bytes = bytes;
    }

    /**
     * The encoded key columns (not a copy: do not change them).
     *
     * @return the bytes
     */
    public byte[] bytes() {
        return bytes;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof JoinKey && Arrays.equals(bytes, ((JoinKey) o).bytes);
    }

    @Override
    public int hashCode() {
        if (!hashed) {
            hash = Arrays.hashCode(bytes);
            hashed = true;
        }
        return hash;
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
