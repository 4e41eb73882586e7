package dev.cdcjoin.flink.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;

import dev.cdcjoin.flink.codec.RowCodec;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.junit.jupiter.api.Test;

/**
 * {@link JoinedRows} in {@link JoinedRows.Form#ROW_DATA}: the native join's Flink rows ({@code
 * tests/wire/flink_rows.bin}, whose values {@code RowDataOutputTest} checks) copied into chunks,
 * each row intact after later rows were written, over more than one chunk.
 */
class JoinedRowsTest {

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
