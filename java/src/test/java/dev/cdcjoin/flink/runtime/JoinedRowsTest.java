package dev.cdcjoin.flink.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import dev.cdcjoin.flink.codec.RowCodec;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;

/**
 * {@link JoinedRows} in {@link JoinedRows.Form#ROW_DATA}: the native join's Flink rows ({@code
 * tests/wire/flink_rows.bin}, whose values {@code RowDataOutputTest} checks) copied into chunks,
 * each row intact after later rows were written, over more than one chunk; in {@link
 * JoinedRows.Form#ROWS}: an input's row repeated from the entry before shares its immutable values,
 * never its {@code byte[]}s, and never across outputs.
 */
class JoinedRowsTest {

    /** users(id INT NOT NULL, name STRING, photo BYTES). */
    private static final RowCodec USERS = codec("id INT", "name STRING", "photo BYTES");

    /** domains(id INT NOT NULL, user_id INT, domain STRING). */
    private static final RowCodec DOMAINS = codec("id INT", "user_id INT", "domain STRING");

    /** A codec of columns written "name TYPE", the first one NOT NULL. */
    private static RowCodec codec(String... columns) {
        List<Column> list = new ArrayList<>();
        for (String c : columns) {
            String[] nameType = c.split(" ");
            list.add(
                    list.isEmpty()
                            ? Column.notNull(nameType[0], nameType[1])
                            : Column.nullable(nameType[0], nameType[1]));
        }
        return new RowCodec(CdcSchema.of(list));
    }

    /** users.name, users.photo, domains.id, domains.domain. */
    private static JoinedRows projectedRows() {
        return new JoinedRows(
                JoinedRows.Form.ROWS,
                new RowCodec[] {USERS, DOMAINS},
                new int[] {0, 0, 1, 1},
                new int[] {1, 2, 0, 2});
    }

    private static byte[] user(int id, String name) {
        return USERS.encode(new Object[] {id, name, new byte[] {(byte) id, 7}});
    }

    private static byte[] domain(int id, int userId, String domain) {
        return DOMAINS.encode(new Object[] {id, userId, domain});
    }

    /** A join output of {@code rows} (kind, left row or null, right row or null), unstamped. */
    private static ByteBuffer output(Object[]... rows) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Object[] r : rows) {
            out.writeBytes(new byte[ChangeBlocks.STAMP_LEN]);
            RowKind kind = (RowKind) r[0];
            out.writeBytes(JoinBatches.joinedRow(kind.toByteValue(), (byte[]) r[1], (byte[]) r[2]));
        }
        return ByteBuffer.wrap(out.toByteArray()).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static List<Row> read(JoinedRows rows, ByteBuffer out) {
        rows.newOutput();
        List<Row> read = new ArrayList<>();
        for (JoinBatches.Entries e = new JoinBatches.Entries().reset(out, 0); e.next(); ) {
            read.add((Row) rows.of(out, e));
        }
        return read;
    }

    @Test
    void aRowRepeatedFromTheEntryBeforeSharesItsImmutableValues() {
        byte[] alice = user(1, "alice");
        ByteBuffer out =
                output(
                        new Object[] {RowKind.UPDATE_BEFORE, alice, domain(10, 1, "a.example")},
                        new Object[] {RowKind.UPDATE_BEFORE, alice, domain(11, 1, "b.example")},
                        new Object[] {RowKind.DELETE, null, domain(11, 1, "b.example")},
                        new Object[] {RowKind.INSERT, alice, domain(11, 1, "b.example")},
                        new Object[] {
                            RowKind.UPDATE_AFTER, user(1, "alicia"), domain(11, 1, "b.example")
                        });
        List<Row> rows = read(projectedRows(), out);

        assertEquals(
                Row.ofKind(RowKind.UPDATE_BEFORE, "alice", null, 10, "a.example"),
                nullPhoto(rows.get(0)));
        assertEquals(
                Row.ofKind(RowKind.UPDATE_BEFORE, "alice", null, 11, "b.example"),
                nullPhoto(rows.get(1)));
        assertSame(rows.get(0).getField(0), rows.get(1).getField(0), "the repeated user's name");
        assertNotSame(rows.get(0).getField(1), rows.get(1).getField(1), "a byte[] is never shared");
        assertArrayEquals(new byte[] {1, 7}, (byte[]) rows.get(1).getField(1));
        assertEquals(Row.ofKind(RowKind.DELETE, null, null, 11, "b.example"), rows.get(2));
        assertSame(rows.get(1).getField(3), rows.get(2).getField(3), "the repeated domain");
        assertEquals(
                Row.ofKind(RowKind.INSERT, "alice", null, 11, "b.example"), nullPhoto(rows.get(3)));
        assertNotSame(rows.get(1).getField(0), rows.get(3).getField(0), "not across a null side");
        assertEquals("alicia", rows.get(4).getField(0));
        assertSame(rows.get(3).getField(3), rows.get(4).getField(3));
    }

    @Test
    void aNewOutputSharesNothingWithThePreviousOne() {
        JoinedRows rows = projectedRows();
        ByteBuffer out =
                output(new Object[] {RowKind.INSERT, user(1, "alice"), domain(10, 1, "a")});
        assertEquals("alice", read(rows, out).get(0).getField(0));
        // the next output in the same buffer, its row at the same place: equal bytes there now
        ByteBuffer next =
                output(new Object[] {RowKind.INSERT, user(1, "bobby"), domain(10, 1, "a")});
        System.arraycopy(next.array(), 0, out.array(), 0, next.limit());
        assertEquals("bobby", read(rows, out).get(0).getField(0));
    }

    private static Row nullPhoto(Row row) {
        Row copy = Row.copy(row);
        copy.setField(1, null);
        return copy;
    }

    /** Columns of the golden file's rows: two inputs of 18 columns. */
    private static final int ARITY = 36;

    @Test
    void rowDataRowsFillChunksAndStayIntact() throws Exception {
        byte[] golden = GoldenFiles.read("flink_rows.bin");
        ByteBuffer file = ByteBuffer.wrap(golden).order(ByteOrder.LITTLE_ENDIAN);
        List<BinaryRowData> expected = new ArrayList<>();
        ByteArrayOutputStream rowEntries = new ByteArrayOutputStream();
        JoinBatches.Entries e = new JoinBatches.Entries(1).reset(file, 0);
        while (e.next() && !e.isRejection()) {
            int at = e.inputAt(0);
            BinaryRowData row = new BinaryRowData(ARITY);
            row.pointTo(MemorySegmentFactory.wrap(golden), at, file.getInt(at - 4));
            expected.add(row);
            rowEntries.write(golden, e.stampAt(), e.end() - e.stampAt());
        }
        int rounds = 100;
        ByteArrayOutputStream repeated = new ByteArrayOutputStream();
        for (int r = 0; r < rounds; r++) {
            rowEntries.writeTo(repeated);
        }
        ByteBuffer out = ByteBuffer.wrap(repeated.toByteArray()).order(ByteOrder.LITTLE_ENDIAN);
        int[] none = new int[ARITY];
        JoinedRows rows =
                new JoinedRows(JoinedRows.Form.ROW_DATA, new RowCodec[2], none, none.clone());
        assertEquals(1, rows.rowsPerEntry());
        List<BinaryRowData> written = new ArrayList<>();
        for (JoinBatches.Entries cursor = new JoinBatches.Entries(1).reset(out, 0);
                cursor.next(); ) {
            written.add((BinaryRowData) rows.of(out, cursor));
        }
        assertEquals(rounds * expected.size(), written.size());
        for (int i = 0; i < written.size(); i++) {
            BinaryRowData row = written.get(i);
            assertEquals(expected.get(i % expected.size()), row, "row #" + i);
            assertEquals(expected.get(i % expected.size()).getRowKind(), row.getRowKind());
        }
        assertNotSame(
                written.get(0).getSegments()[0],
                written.get(written.size() - 1).getSegments()[0],
                "rows in more than one chunk");
    }
}
