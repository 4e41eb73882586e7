package dev.cdcjoin.flink;

import java.util.Arrays;

/**
 * One record of an upsert-kafka shaped topic (what Flink's {@code upsert-kafka} connector reads):
 * the record key holds the primary key as a JSON object, the value the whole row as a flat JSON
 * object, and a null value deletes the row of that key. Decoded with {@link
 * DebeziumDecoder#decodeUpsert} or joined with {@link CdcJoin#joinUpsert}; the side must be in
 * upsert mode ({@link DebeziumFormat#withUpsert(boolean)}). A Flink POJO.
 */
public final class UpsertRecord {

    /** The record key: the primary key columns as JSON. */
    public byte[] key;

    /** The record value: the row as JSON, or {@code null} for a delete. */
    public byte[] value;

    /** An empty record, for Flink's POJO serializer. */
    public UpsertRecord() {}

    /**
     * A record.
     *
     * @param key the primary key as JSON
     * @param value the row as JSON, or {@code null} for a delete
     */
    public UpsertRecord(byte[] key, byte[] value) {
        this.key = key;
        this.value = value;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof UpsertRecord
                && Arrays.equals(key, ((UpsertRecord) o).key)
                && Arrays.equals(value, ((UpsertRecord) o).value);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(key) + Arrays.hashCode(value);
    }
}
