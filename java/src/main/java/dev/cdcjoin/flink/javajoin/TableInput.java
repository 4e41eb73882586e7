package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.BadRecord;
import dev.cdcjoin.flink.KafkaMessage;
import dev.cdcjoin.flink.SideSpec;
import dev.cdcjoin.flink.UpsertRecord;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.function.Consumer;
import org.apache.flink.types.Row;
import org.apache.flink.util.Collector;

/**
 * One table's input to the Java engine's decode step: the join side, how its updates are emitted,
 * what its records are; once opened, the reader of its records and their count. It is the one place
 * where a record is decoded or rejected, so {@link JavaDecodeFunction} (one table) and {@link
 * OrderedJavaDecodeFunction} (both tables in one stream) number, decode and report records alike.
 */
final class TableInput implements Serializable {

    private static final long serialVersionUID = 1L;

    /** What the table's records are, which decides their reader. */
    enum Records {
        /**
         * Debezium JSON messages ({@code byte[]}, {@code String} or a {@link KafkaMessage}'s value,
         * {@code null} for a tombstone) or upsert-kafka records ({@link UpsertRecord}), read by
         * {@link DebeziumJsonReader}.
         */
        DEBEZIUM_JSON,
        /**
         * {@link KafkaMessage}s of an upsert-kafka shaped topic: the key and the value (null for a
         * delete), read by {@link DebeziumJsonReader#readUpsert}.
         */
        KAFKA_UPSERT,
        /** {@code Row(before, op, after)} envelopes, read by {@link RowEnvelopeReader}. */
        ROW_ENVELOPES
    }

    /** The table: name, columns, primary key, Debezium format. */
    final SideSpec side;

    /** The table's name (in error messages and bad records). */
    final String source;

    /** Updates as {@code -D}/{@code +I} instead of {@code -U}/{@code +U}. */
    final boolean deleteInsertUpdates;

    private final Records records;

    private transient DebeziumJsonReader json;
    private transient RowEnvelopeReader envelopes;
    private transient long index;

    TableInput(SideSpec side, boolean deleteInsertUpdates, Records records) {
        this.side = Objects.requireNonNull(side, "side");
        this.source = side.name();
        this.deleteInsertUpdates = deleteInsertUpdates;
        this.records = Objects.requireNonNull(records, "records");
    }

    /** A new reader of the table's Debezium JSON messages. */
    DebeziumJsonReader jsonReader() {
        return new DebeziumJsonReader(side, deleteInsertUpdates);
    }

    /** Builds the reader and starts counting records from 0; call from the function's open. */
    void open() {
        if (records == Records.ROW_ENVELOPES) {
            envelopes = new RowEnvelopeReader(side, deleteInsertUpdates);
        } else {
            json = jsonReader();
        }
        index = 0;
    }

    /**
     * Decodes the table's next record into {@code out}, or hands it to {@code badRecords} when it
     * cannot be decoded.
     *
     * @param record the record
     * @param out receives its changes
     * @param badRecords what to do with a bad record
     * @param sideOutput the function's {@link BadRecord#OUTPUT}
     * @return whether the record was a tombstone (decoded to nothing)
     */
    boolean decode(
            Object record,
            Collector<Row> out,
            BadRecords badRecords,
            Consumer<BadRecord> sideOutput) {
        long i = index++;
        try {
            return read(record, i, out) == 0;
        } catch (DebeziumDecodeException e) {
            boolean kafka = record instanceof KafkaMessage;
            DebeziumDecodeException error = kafka ? e.locatedAt((KafkaMessage) record) : e;
            badRecords.reject(error, sideOutput, () -> badRecord(record, i, e.getMessage()));
            return false;
        }
    }

    /** Reads one record with the reader of its kind; the number of changes emitted. */
    private int read(Object record, long i, Collector<Row> out) {
        if (records == Records.ROW_ENVELOPES) {
            if (record != null && !(record instanceof Row)) {
                throw notA("Row(before, op, after) envelopes", record);
            }
            return envelopes.read((Row) record, i, out);
        }
        if (record == null || record instanceof byte[]) {
            return json.read((byte[]) record, i, out);
        }
        if (record instanceof String) {
            return json.read((String) record, i, out);
        }
        if (records == Records.KAFKA_UPSERT) {
            if (!(record instanceof KafkaMessage)) {
                throw notA("KafkaMessages", record);
            }
            KafkaMessage m = (KafkaMessage) record;
            return json.readUpsert(m.key, m.value, i, out);
        }
        if (record instanceof KafkaMessage) {
            return json.read(((KafkaMessage) record).value, i, out);
        }
        if (record instanceof UpsertRecord) {
            UpsertRecord r = (UpsertRecord) record;
            return json.readUpsert(r.key, r.value, i, out);
        }
        throw notA("Debezium messages (byte[], String or KafkaMessage) or UpsertRecords", record);
    }

    private IllegalArgumentException notA(String expected, Object record) {
        return new IllegalArgumentException(
                source
                        + ": records must be "
                        + expected
                        + ", got "
                        + (record == null ? "null" : record.getClass().getName()));
    }

    /** The report of record {@code i}, rejected for {@code reason}. */
    private BadRecord badRecord(Object record, long i, String reason) {
        return record instanceof KafkaMessage
                ? BadRecord.of(source, i, (KafkaMessage) record, reason)
                : new BadRecord(source, i, raw(record), reason);
    }

    /** The record as a {@link BadRecord} holds it. */
    private byte[] raw(Object record) {
        if (record instanceof byte[]) {
            return (byte[]) record;
        }
        if (record instanceof UpsertRecord) {
            UpsertRecord r = (UpsertRecord) record;
            return r.value != null ? r.value : r.key;
        }
        if (record == null && records == Records.DEBEZIUM_JSON) {
            return null;
        }
        return String.valueOf(record).getBytes(StandardCharsets.UTF_8);
    }
}
