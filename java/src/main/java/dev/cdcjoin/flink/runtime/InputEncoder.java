package dev.cdcjoin.flink.runtime;

import dev.cdcjoin.flink.BadRecord;
import dev.cdcjoin.flink.KafkaMessage;
import dev.cdcjoin.flink.UpsertRecord;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.RowCodec;
import dev.cdcjoin.flink.codec.RowEnvelope;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import org.apache.flink.types.Row;

/**
 * Appends one input record of type {@code IN} to a batch in the native decoder's framing.
 *
 * @param <IN> the input type
 */
public interface InputEncoder<IN> extends Serializable {

    /** The native decoder's batch framings (Rust {@code cdcjoin_debezium::batch}). */
    enum Framing {
        /** Debezium JSON messages. */
        JSON,
        /** Envelopes of rows already in the compact encoding. */
        ROW_ENVELOPES,
        /** Upsert-kafka records: a key and a value each. */
        UPSERT_RECORDS
    }

    /**
     * How batches of this encoder's records are framed.
     *
     * @return the framing
     */
    Framing framing();

    /**
     * Appends {@code value} to {@code batch}.
     *
     * @param value the record
     * @param batch the batch
     * @throws IllegalArgumentException if the record cannot be encoded (nothing is appended)
     */
    void append(IN value, BatchBuffer batch);

    /**
     * The record's raw form for a bad-record report.
     *
     * @param value the record
     * @return its bytes
     */
    byte[] raw(IN value);

    /**
     * The report of a record the decoder rejected.
     *
     * @param source the input's name
     * @param index the record's number
     * @param value the record
     * @param reason why, naming the record
     * @return the bad record: by default its {@link #raw} form and the reason
     */
    default BadRecord badRecord(String source, long index, IN value, String reason) {
        return new BadRecord(source, index, raw(value), reason);
    }

    /**
     * Debezium JSON messages as bytes (e.g. Kafka record values).
     *
     * @return the encoder
     */
    static InputEncoder<byte[]> jsonBytes() {
        return new JsonBytes();
    }

    /**
     * Debezium JSON messages as strings.
     *
     * @return the encoder
     */
    static InputEncoder<String> jsonStrings() {
        return new JsonStrings();
    }

    /**
     * {@code Row(before, op, after)} envelopes whose images are rows of {@code schema}.
     *
     * @param schema the table's schema
     * @return the encoder
     */
    static InputEncoder<Row> rowEnvelopes(CdcSchema schema) {
        return new RowEnvelopes(schema);
    }

    /**
     * Upsert-kafka records (key and value as JSON bytes).
     *
     * @return the encoder
     */
    static InputEncoder<UpsertRecord> upsertRecords() {
        return new UpsertRecords();
    }

    /**
     * Kafka records of Debezium topics: their values decoded as JSON messages, their Kafka
     * coordinates in bad-record reports.
     *
     * @return the encoder
     */
    static InputEncoder<KafkaMessage> kafkaMessages() {
        return new KafkaMessages(false);
    }

    /**
     * Kafka records of upsert-kafka shaped topics: key and value decoded as {@link #upsertRecords}
     * are, their Kafka coordinates in bad-record reports.
     *
     * @return the encoder
     */
    static InputEncoder<KafkaMessage> kafkaUpsertMessages() {
        return new KafkaMessages(true);
    }

    /**
     * Kafka records: the value, as {@link JsonBytes} frames it, or key and value, as {@link
     * UpsertRecords} frames them; reported with their coordinates.
     */
    final class KafkaMessages implements InputEncoder<KafkaMessage> {
        private static final long serialVersionUID = 1L;

        /** Upsert-kafka shaped records (else Debezium messages). */
        private final boolean upsert;

        KafkaMessages(boolean upsert) {
            this.upsert = upsert;
        }

        @Override
        public Framing framing() {
            return upsert ? Framing.UPSERT_RECORDS : Framing.JSON;
        }

        @Override
        public void append(KafkaMessage value, BatchBuffer batch) {
            if (upsert) {
                batch.putSized(value.key);
            }
            batch.putSized(value.value);
        }

        @Override
        public byte[] raw(KafkaMessage value) {
            return value.bytes();
        }

        @Override
        public BadRecord badRecord(String source, long index, KafkaMessage value, String reason) {
            return BadRecord.of(source, index, value, reason);
        }
    }

    /** Upsert-kafka records: the key, then the value (null for a delete), each length-prefixed. */
    final class UpsertRecords implements InputEncoder<UpsertRecord> {
        private static final long serialVersionUID = 1L;

        @Override
        public Framing framing() {
            return Framing.UPSERT_RECORDS;
        }

        @Override
        public void append(UpsertRecord value, BatchBuffer batch) {
            batch.putSized(value.key);
            batch.putSized(value.value);
        }

        @Override
        public byte[] raw(UpsertRecord value) {
            return value.value != null ? value.value : value.key;
        }
    }

    /** JSON as bytes. */
    final class JsonBytes implements InputEncoder<byte[]> {
        private static final long serialVersionUID = 1L;

        @Override
        public Framing framing() {
            return Framing.JSON;
        }

        @Override
        public void append(byte[] value, BatchBuffer batch) {
            batch.putSized(value);
        }

        @Override
        public byte[] raw(byte[] value) {
            return value;
        }
    }

    /** JSON as strings. */
    final class JsonStrings implements InputEncoder<String> {
        private static final long serialVersionUID = 1L;

        @Override
        public Framing framing() {
            return Framing.JSON;
        }

        @Override
        public void append(String value, BatchBuffer batch) {
            batch.putSized(raw(value));
        }

        @Override
        public byte[] raw(String value) {
            return value == null ? null : value.getBytes(StandardCharsets.UTF_8);
        }
    }

    /**
     * {@code Row(before Row, op Character|String, after Row)}, taken apart by {@link RowEnvelope}.
     */
    final class RowEnvelopes implements InputEncoder<Row> {
        private static final long serialVersionUID = 1L;

        private final RowCodec codec;

        RowEnvelopes(CdcSchema schema) {
            this.codec = new RowCodec(schema);
        }

        @Override
        public Framing framing() {
            return Framing.ROW_ENVELOPES;
        }

        @Override
        public void append(Row envelope, BatchBuffer batch) {
            RowEnvelope e = RowEnvelope.of(envelope, codec);
            batch.put((byte) e.op).putSized(e.before).putSized(e.after);
        }

        @Override
        public byte[] raw(Row value) {
            return String.valueOf(value).getBytes(StandardCharsets.UTF_8);
        }
    }
}
