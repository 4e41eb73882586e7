package dev.cdcjoin.flink.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.cdcjoin.flink.ChangeRecord;
import dev.cdcjoin.flink.JoinKey;
import dev.cdcjoin.flink.RawJoinOutput;
import dev.cdcjoin.flink.UpsertRecord;
import dev.cdcjoin.flink.codec.ByteBuffers;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import dev.cdcjoin.flink.codec.RowCodec;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;

/**
 * The Java mirrors of the native wire formats held to the golden files of {@code tests/wire/} (see
 * its README), which the Rust tests hold the Rust encoders and readers to: the Java writers produce
 * each file exactly, the Java readers parse it back.
 */
class WireFormatsTest {

    private static final int MAX_PARALLELISM = 128;

    /** The message of {@code decode_json.bin}. */
    private static final String JSON =
            "{\"op\":\"c\",\"after\":{\"id\":1,\"user_id\":10,\"name\":\"a.com\"}}";

    /** The table of the decoder's golden files (its join key: {@code user_id}). */
    private static final CdcSchema DOMAINS =
            CdcSchema.of(
                    Column.notNull("id", "INT"),
                    Column.nullable("user_id", "BIGINT"),
                    Column.nullable("name", "STRING"));

    /** Holds the bytes written to {@code batch} to golden file {@code name}. */
    private static void assertGolden(String name, BatchBuffer batch) throws IOException {
        byte[] written = new byte[batch.length()];
        ByteBuffers.read(batch.buffer(), 0, written, 0, written.length);
        assertArrayEquals(GoldenFiles.read(name), written, "golden file " + name);
    }

    private static ByteBuffer little(byte[] bytes) {
        return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The changes of {@code exchange_block.bin}: {@code +U} at -2 of row {@code ab}, {@code -D}.
     */
    private static ChangeBatch blockChanges() {
        ChangeBlocks.Writer w = new ChangeBlocks.Writer();
        w.add(RowKind.UPDATE_AFTER.toByteValue(), new StreamRecord<>(null, -2), utf8("ab"));
        w.add(RowKind.DELETE.toByteValue(), new StreamRecord<>(null), new byte[0]);
        return w.take(300, MAX_PARALLELISM);
    }

    @Test
    void exchangeBlock() throws IOException {
        BatchBuffer batch = new BatchBuffer(8);
        ChangeBlocks.putBlock(batch, blockChanges());
        assertGolden("exchange_block.bin", batch);
        assertEquals(
                blockChanges(),
                ChangeBlocks.readBlock(
                        little(GoldenFiles.read("exchange_block.bin")), 0, MAX_PARALLELISM));
    }

    @Test
    void joinInputFrame() throws IOException {
        BatchBuffer batch = new BatchBuffer(8);
        JoinBatches.frame(batch, JoinBatches.SIDE_RIGHT, blockChanges());
        assertGolden("join_input.bin", batch);
        assertEquals(2, batch.records());
    }

    @Test
    void joinOutputEntries() throws IOException {
        ByteBuffer out = little(GoldenFiles.read("join_output.bin"));
        JoinBatches.Entries entries = new JoinBatches.Entries().reset(out, 0);
        List<String> read = new ArrayList<>();
        while (entries.next()) {
            read.add(timestamp(out, entries) + " " + describe(out, entries));
        }
        assertEquals(List.of("258 +I[l, rr]", "none +U[null, r]", "-1 rejected 1: é"), read);
    }

    /**
     * A multi-way join's entries (Rust {@code OutputWriter::emit_wide} and {@code reject_input}):
     * one {@code len | row} per input, -1 for a padded input, and a rejection naming input 2.
     */
    @Test
    void multiwayOutputEntries() {
        ByteBuffer out = little(new byte[64]);
        out.put(ChangeBlocks.STAMP_PRESENT).putLong(7).put(RowKind.UPDATE_AFTER.toByteValue());
        out.putInt(1).put((byte) 'a').putInt(JoinBatches.NULL_SIDE).putInt(2).put(utf8("bc"));
        out.put(ChangeBlocks.STAMP_NONE).putLong(0).put(JoinBatches.REJECTED).put((byte) 2);
        out.putInt(1).put(utf8("x"));
        out.flip();
        JoinBatches.Entries e = new JoinBatches.Entries(3).reset(out, 0);
        assertEquals(true, e.next());
        assertEquals(RowKind.UPDATE_AFTER.toByteValue(), e.kind());
        assertEquals(
                List.of('a', -1, 'b'),
                List.of((char) out.get(e.inputAt(0)), e.inputAt(1), (char) out.get(e.inputAt(2))));
        assertEquals(true, e.next());
        assertEquals(
                List.of(true, 2, "x"),
                List.of(e.isRejection(), (int) e.rejectedSide(), e.message()));
        assertEquals(false, e.next());
    }

    /** The timestamp of the entry's stamp, or {@code none}. */
    private static String timestamp(ByteBuffer out, JoinBatches.Entries e) {
        StreamRecord<Object> r = ChangeBlocks.stamped(out, e.stampAt(), new StreamRecord<>(0), 0);
        return r.hasTimestamp() ? String.valueOf(r.getTimestamp()) : "none";
    }

    /**
     * A rejection's side and message, or a row's kind and sides as text, read both by the cursor
     * and by {@link RawJoinOutput} from the row's raw record, which must agree.
     */
    private static String describe(ByteBuffer out, JoinBatches.Entries e) {
        if (e.isRejection()) {
            return "rejected " + e.rejectedSide() + ": " + e.message();
        }
        byte[] record = Arrays.copyOfRange(out.array(), e.rowStart(), e.end());
        assertEquals(RowKind.fromByteValue(e.kind()), RawJoinOutput.kind(record));
        String left = side(out, e.leftAt(), RawJoinOutput.left(record));
        String right = side(out, e.rightAt(), RawJoinOutput.right(record));
        return RawJoinOutput.kind(record).shortString() + "[" + left + ", " + right + "]";
    }

    /**
     * A side's bytes as text, checking that the cursor finds them where the raw record has them.
     */
    private static String side(ByteBuffer out, int at, byte[] raw) {
        if (raw == null) {
            assertEquals(-1, at);
            return "null";
        }
        assertArrayEquals(raw, Arrays.copyOfRange(out.array(), at, at + raw.length));
        return new String(raw, StandardCharsets.UTF_8);
    }

    @Test
    void decoderJsonFraming() throws IOException {
        BatchBuffer bytes = new BatchBuffer(8);
        InputEncoder<byte[]> asBytes = InputEncoder.jsonBytes();
        asBytes.append(utf8(JSON), bytes);
        asBytes.append(null, bytes);
        assertGolden("decode_json.bin", bytes);
        BatchBuffer strings = new BatchBuffer(8);
        InputEncoder<String> asStrings = InputEncoder.jsonStrings();
        asStrings.append(JSON, strings);
        asStrings.append(null, strings);
        assertGolden("decode_json.bin", strings);
    }

    @Test
    void decoderRowEnvelopeFraming() throws IOException {
        BatchBuffer batch = new BatchBuffer(8);
        InputEncoder.rowEnvelopes(DOMAINS).append(Row.of(null, "c", Row.of(1, 5L, "x")), batch);
        assertGolden("decode_rows.bin", batch);
    }

    @Test
    void decoderUpsertFraming() throws IOException {
        BatchBuffer batch = new BatchBuffer(8);
        InputEncoder<UpsertRecord> upsert = InputEncoder.upsertRecords();
        upsert.append(
                new UpsertRecord(
                        utf8("{\"id\":1}"), utf8("{\"id\":1,\"user_id\":10,\"name\":\"a.com\"}")),
                batch);
        upsert.append(new UpsertRecord(utf8("{\"id\":2}"), null), batch);
        assertGolden("decode_upsert.bin", batch);
    }

    /**
     * The decoder's outputs: {@code decode_output.bin} holds a change and an error entry (message
     * index 2, a tombstone, only counted); {@code decode_output_partitioned.bin} the same error,
     * then the change as a block of its key group, stamped with its message's timestamp 100.
     */
    @Test
    void decoderOutputs() throws Exception {
        List<Object> plain = decoded("decode_output.bin", false);
        String error =
                "#1: domains record #8: malformed JSON: EOF while parsing an object at line 1 column 1";
        assertEquals(2, plain.size());
        ChangeRecord change = (ChangeRecord) plain.get(0);
        assertEquals(RowKind.INSERT, change.rowKind());
        assertEquals(
                Arrays.asList(1, 10L, "a.com"),
                Arrays.asList(new RowCodec(DOMAINS).decode(little(change.row), 0)));
        assertEquals(error, plain.get(1));
        assertEquals(
                List.of(error, ChangeBatch.of(MAX_PARALLELISM, new StreamRecord<>(change, 100))),
                decoded("decode_output_partitioned.bin", true));
        assertEquals(1, DecoderOutput.tombstones(little(GoldenFiles.read("decode_output.bin"))));
    }

    /** What {@link DecoderOutput#read} hands out of golden file {@code name}, in order. */
    private static List<Object> decoded(String name, boolean partitioned) throws Exception {
        List<Object> seen = new ArrayList<>();
        DecoderOutput.read(
                little(GoldenFiles.read(name)),
                partitioned,
                MAX_PARALLELISM,
                new DecoderOutput.Visitor() {
                    @Override
                    public void change(int index, RowKind kind, byte[] key, byte[] row) {
                        assertEquals(0, index);
                        seen.add(new ChangeRecord(kind, new JoinKey(key), row));
                    }

                    @Override
                    public void error(int index, String message) {
                        seen.add("#" + index + ": " + message);
                    }

                    @Override
                    public void block(ChangeBatch block) {
                        seen.add(block);
                    }
                });
        return seen;
    }
}
