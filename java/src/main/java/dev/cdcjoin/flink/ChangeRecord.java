package dev.cdcjoin.flink;

import dev.cdcjoin.flink.serialization.ChangeRecordSerializer;
import java.util.Objects;
import org.apache.flink.api.common.typeinfo.TypeInfo;
import org.apache.flink.types.RowKind;

/**
 * One change of a CDC table as decoded natively: its {@link RowKind}, its join key and the row in
 * the compact row encoding; the input of the native join. Flink serializes it with {@link
 * ChangeRecordSerializer}.
 */
@TypeInfo(ChangeRecordSerializer.Factory.class)
public final class ChangeRecord {

    /** The change kind, as {@link RowKind#toByteValue()}. */
    public byte kind;

    /** The join key, for {@code keyBy}. */
    public JoinKey key;

    /** The row, in the compact row encoding of its table's schema. */
    public byte[] row;

    /** An empty record. */
    public ChangeRecord() {}

    /**
     * A record.
     *
     * @param kind the change kind
     * @param key the join key
     * @param row the encoded row
     */
    public ChangeRecord(RowKind kind, JoinKey key, byte[] row) {
        this.kind = kind.toByteValue();
        this.key = key;
        this.row = row;
    }

    /**
     * The change kind.
     *
     * @return the kind
     */
    public RowKind rowKind() {
        return RowKind.fromByteValue(kind);
    }

    /**
     * The join key (a key selector for {@code keyBy}).
     *
     * @return the key
     */
    public JoinKey getKey() {
        return key;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ChangeRecord)) {
            return false;
        }
        ChangeRecord c = (ChangeRecord) o;
        return kind == c.kind && Objects.equals(key, c.key) && java.util.Arrays.equals(row, c.row);
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, key) * 31 + java.util.Arrays.hashCode(row);
    }

    @Override
    public String toString() {
        return rowKind().shortString() + " " + key + " (" + (row == null ? 0 : row.length) + " B)";
    }
}
