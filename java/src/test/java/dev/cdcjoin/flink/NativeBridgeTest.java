package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.codec.ByteBuffers;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import dev.cdcjoin.flink.codec.RowCodec;
import dev.cdcjoin.flink.nativelib.DirectBuffers;
import dev.cdcjoin.flink.nativelib.FrozenState;
import dev.cdcjoin.flink.nativelib.NativeCounters;
import dev.cdcjoin.flink.nativelib.NativeDecoder;
import dev.cdcjoin.flink.nativelib.NativeJoin;
import dev.cdcjoin.flink.nativelib.NativeMultiJoin;
import dev.cdcjoin.flink.runtime.BatchBuffer;
import dev.cdcjoin.flink.runtime.ChangeBlocks;
import dev.cdcjoin.flink.runtime.JoinBatches;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The JNI surface called directly: decoding, the Java row codec, joining, errors. */
class NativeBridgeTest {

    static final CdcSchema ALL_TYPES =
            CdcSchema.of(
                    Column.notNull("id", "BIGINT"),
                    Column.nullable("name", "STRING"),
                    Column.nullable("small", "DECIMAL(10, 2)"),
                    Column.nullable("big", "DECIMAL(30, 3)"),
                    Column.nullable("ok", "BOOLEAN"),
                    Column.nullable("f", "FLOAT"),
                    Column.nullable("d", "DOUBLE"),
                    Column.nullable("day", "DATE"),
                    Column.nullable("ts", "TIMESTAMP(3)"),
                    Column.nullable("tsn", "TIMESTAMP(9)"),
                    Column.nullable("blob", "BYTES"),
                    Column.nullable("n", "INT"));

    static final SideSpec SIDE =
            new SideSpec("t", ALL_TYPES, List.of("name", "id"), List.of("id"), null);

    static Object[] sample(long id, String name) {
        return new Object[] {
            id,
            name,
            new BigDecimal("-12.34"),
            new BigDecimal("-123456789012345678901234.567"),
            true,
            1.5f,
            Double.NaN,
            LocalDate.of(2024, 2, 29),
            LocalDateTime.of(1969, 12, 31, 23, 59, 59, 123_000_000),
            LocalDateTime.of(2024, 1, 1, 0, 0, 0, 1),
            new byte[] {1, -1},
            null
        };
    }

    /** The decoder's output entries, as "#i kind key=... row=..." or "#i error: ...". */
    static List<String> entries(ByteBuffer out, RowCodec codec, List<byte[]> rows) {
        List<String> shown = new ArrayList<>();
        int p = 12;
        while (p < out.limit()) {
            byte tag = out.get(p);
            int index = out.getInt(p + 1);
            p += 5;
            if (tag == 0) {
                byte kind = out.get(p);
                int keyLength = out.getInt(p + 1);
                int rowAt = p + 5 + keyLength;
                int rowLength = out.getInt(rowAt);
                byte[] row = new byte[rowLength];
                ByteBuffers.read(out, rowAt + 4, row, 0, row.length);
                rows.add(row);
                Object[] v = codec.decode(out, rowAt + 4);
                shown.add("#" + index + " " + kind + " " + v[0] + "/" + v[1]);
                p = rowAt + 4 + rowLength;
            } else {
                byte[] msg = new byte[out.getInt(p)];
                ByteBuffers.read(out, p + 4, msg, 0, msg.length);
                shown.add("#" + index + " error: " + new String(msg, StandardCharsets.UTF_8));
                p += 4 + msg.length;
            }
        }
        return shown;
    }

    @Test
    void javaEncodedRowsAreValidNativeRowsAndRoundTrip() {
        RowCodec codec = new RowCodec(ALL_TYPES);
        byte[] a = codec.encode(sample(7, "héllo"));
        byte[] b = codec.encode(sample(7, null));
        BatchBuffer batch = new BatchBuffer(16);
        batch.put((byte) 'c').putSized(null).putSized(a);
        batch.put((byte) 'u').putSized(a).putSized(b);
        batch.put((byte) 'd').putSized(Arrays.copyOf(a, 10)).putSized(null);
        try (NativeDecoder d = new NativeDecoder(SIDE.decoderConfigJson(false))) {
            ByteBuffer out = d.decodeRows(batch.buffer(), batch.length(), 40);
            assertEquals(3, out.getInt(0));
            assertEquals(1, out.getInt(4));
            List<byte[]> rows = new ArrayList<>();
            List<String> shown = entries(out, codec, rows);
            assertEquals("#0 0 7/héllo", shown.get(0));
            assertEquals("#1 1 7/héllo", shown.get(1));
            assertEquals("#1 2 7/null", shown.get(2));
            assertTrue(
                    shown.get(3).startsWith("#2 error: t record #42: the \"before\" row is not"),
                    shown.get(3));
            assertArrayEquals(a, rows.get(0));
            assertArrayEquals(b, rows.get(2));
            Object[] back =
                    codec.decode(ByteBuffer.wrap(a).order(java.nio.ByteOrder.LITTLE_ENDIAN), 0);
            Object[] expect = sample(7, "héllo");
            for (int i = 0; i < expect.length; i++) {
                if (expect[i] instanceof byte[]) {
                    assertArrayEquals((byte[]) expect[i], (byte[]) back[i]);
                } else {
                    assertEquals(expect[i], back[i], "column " + i);
                }
            }
        }
    }

    @Test
    void jsonBatchesKeepGoodMessagesAroundBadOnes() {
        BatchBuffer batch = new BatchBuffer(8);
        String good = "{\"op\":\"c\",\"after\":{\"id\":1,\"name\":\"x\",\"n\":5}}";
        batch.putSized(good.getBytes(StandardCharsets.UTF_8));
        batch.putSized("{\"op\":".getBytes(StandardCharsets.UTF_8));
        batch.putSized(null);
        batch.putSized(new byte[0]);
        batch.putSized("{\"op\":\"d\",\"before\":{\"id\":\"x\"}}".getBytes(StandardCharsets.UTF_8));
        batch.putSized(good.getBytes(StandardCharsets.UTF_8));
        try (NativeDecoder d = new NativeDecoder(SIDE.decoderConfigJson(false))) {
            ByteBuffer out = d.decodeJson(batch.buffer(), batch.length(), 0);
            assertEquals(2, out.getInt(0));
            assertEquals(2, out.getInt(4));
            assertEquals(2, out.getInt(8));
            List<String> shown = entries(out, new RowCodec(ALL_TYPES), new ArrayList<>());
            assertEquals("#0 0 1/x", shown.get(0));
            assertTrue(shown.get(1).startsWith("#1 error: t record #1: malformed JSON"));
            assertTrue(
                    shown.get(2).startsWith("#4 error: t record #4: column \"id\""), shown.get(2));
            assertEquals("#5 0 1/x", shown.get(3));
        }
    }

    @Test
    void outputLargerThanTheInitialBufferIsTakenInFull() {
        StringBuilder name = new StringBuilder();
        for (int i = 0; i < 200_000; i++) {
            name.append('n');
        }
        BatchBuffer batch = new BatchBuffer(8);
        String json = "{\"op\":\"c\",\"after\":{\"id\":1,\"name\":\"" + name + "\"}}";
        batch.putSized(json.getBytes(StandardCharsets.UTF_8));
        try (NativeDecoder d = new NativeDecoder(SIDE.decoderConfigJson(false))) {
            ByteBuffer out = d.decodeJson(batch.buffer(), batch.length(), 0);
            assertEquals(1, out.getInt(0));
            assertTrue(out.limit() > 400_000);
        }
    }

    @Test
    void misuseThrowsInsteadOfCrashing() {
        NativeDecoder d = new NativeDecoder(SIDE.decoderConfigJson(false));
        ByteBuffer heap = ByteBuffer.allocate(16);
        IllegalArgumentException notDirect =
                assertThrows(IllegalArgumentException.class, () -> d.decodeJson(heap, 0, 0));
        assertTrue(
                notDirect.getMessage().contains("not a direct ByteBuffer"), notDirect.getMessage());
        ByteBuffer direct = DirectBuffers.allocate(16);
        IllegalArgumentException tooLong =
                assertThrows(IllegalArgumentException.class, () -> d.decodeJson(direct, 17, 0));
        assertTrue(tooLong.getMessage().contains("outside its capacity"));
        assertThrows(IllegalArgumentException.class, () -> d.decodeJson(direct, -1, 0));
        assertThrows(IllegalArgumentException.class, () -> d.decodeJson(null, 0, 0));
        direct.putInt(0, 1000);
        IllegalArgumentException framing =
                assertThrows(IllegalArgumentException.class, () -> d.decodeJson(direct, 8, 0));
        assertTrue(framing.getMessage().contains("malformed batch"), framing.getMessage());
        d.close();
        d.close();
        assertThrows(IllegalStateException.class, () -> d.decodeJson(direct, 0, 0));
        IllegalArgumentException config =
                assertThrows(IllegalArgumentException.class, () -> new NativeDecoder("{"));
        assertTrue(config.getMessage().contains("invalid decoder configuration"));
    }

    static final CdcSchema USERS =
            CdcSchema.of(Column.notNull("id", "BIGINT"), Column.nullable("name", "STRING"));
    static final CdcSchema DOMAINS =
            CdcSchema.of(
                    Column.notNull("id", "BIGINT"),
                    Column.nullable("user_id", "BIGINT"),
                    Column.nullable("domain", "STRING"));

    static JoinSpec usersDomains(JoinType type) {
        return new JoinSpec(
                new SideSpec("users", USERS, List.of("id"), List.of("id"), null),
                new SideSpec("domains", DOMAINS, List.of("user_id"), List.of("id"), null),
                type,
                false,
                null,
                null);
    }

    /** Appends a block of one change without timestamp, byte by byte (see ChangeBlocks). */
    static void record(BatchBuffer b, int side, int kind, int kg, byte[] row) {
        b.put((byte) side)
                .putShort(kg)
                .putInt(1)
                .putInt(ChangeBlocks.CHANGE_HEADER_LEN + row.length);
        b.put((byte) kind).put(ChangeBlocks.STAMP_NONE).putLong(0).putSized(row);
    }

    static List<String> joined(ByteBuffer out) {
        RowCodec l = new RowCodec(USERS);
        RowCodec r = new RowCodec(DOMAINS);
        List<String> rows = new ArrayList<>();
        JoinBatches.Entries e = new JoinBatches.Entries().reset(out, 0);
        while (e.next()) {
            assertEquals(
                    ChangeBlocks.STAMP_NONE, out.get(e.stampAt()), "no timestamp in, none out");
            rows.add(e.kind() + " " + side(l, out, e.leftAt()) + side(r, out, e.rightAt()));
        }
        return rows;
    }

    private static String side(RowCodec codec, ByteBuffer out, int at) {
        return at < 0 ? "null" : Arrays.toString(codec.decode(out, at));
    }

    @Test
    void joinSnapshotRestoreAndErrors() {
        RowCodec u = new RowCodec(USERS);
        RowCodec dm = new RowCodec(DOMAINS);
        BatchBuffer b = new BatchBuffer(8);
        record(b, 0, 0, 3, u.encode(new Object[] {1L, "alice"}));
        record(b, 1, 0, 3, dm.encode(new Object[] {10L, 1L, "a.com"}));
        NativeJoin j = new NativeJoin(usersDomains(JoinType.LEFT).specJson(0, 127));
        List<String> rows = joined(j.processBatch(b.buffer(), b.length(), 0));
        assertEquals(
                List.of("0 [1, alice]null", "3 [1, alice]null", "0 [1, alice][10, 1, a.com]"),
                rows);
        NativeCounters stats = new NativeCounters();
        j.stats(stats);
        assertEquals(1, stats.get(NativeCounters.RECORDS_IN_LEFT));
        assertEquals(3, stats.get(NativeCounters.ROWS_OUT));
        assertEquals(2, stats.get(NativeCounters.STATE_ROWS));
        IllegalStateException unknown =
                assertThrows(IllegalStateException.class, () -> stats.get("no_such_counter"));
        assertTrue(unknown.getMessage().contains("out of step"), unknown.getMessage());

        ByteBuffer snap = j.snapshot(0, Integer.MAX_VALUE);
        assertEquals(3, snap.getInt(0));
        int length = snap.getInt(4);
        assertEquals(8 + length, snap.limit());
        ByteBuffer section = DirectBuffers.allocate(4 + length);
        for (int i = 0; i < 4 + length; i++) {
            section.put(i, snap.get(4 + i));
        }
        NativeJoin restored = new NativeJoin(usersDomains(JoinType.LEFT).specJson(0, 10));
        IllegalArgumentException moved =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> restored.restore(section, 4 + length, 4));
        assertTrue(
                moved.getMessage()
                        .contains("stored under key group 4, the section holds key group 3"),
                moved.getMessage());
        restored.restore(section, 4 + length, 3);
        b.clear();
        record(b, 1, 3, 3, dm.encode(new Object[] {10L, 1L, "a.com"}));
        assertEquals(
                List.of("3 [1, alice][10, 1, a.com]", "0 [1, alice]null"),
                joined(restored.processBatch(b.buffer(), b.length(), 0)));
        IllegalArgumentException twice =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> restored.restore(section, 4 + length, 3));
        assertTrue(twice.getMessage().contains("restored twice"), twice.getMessage());

        NativeJoin elsewhere = new NativeJoin(usersDomains(JoinType.LEFT).specJson(50, 60));
        assertThrows(
                IllegalArgumentException.class, () -> elsewhere.restore(section, 4 + length, 3));
        b.clear();
        record(b, 0, 0, 3, new byte[] {1, 2});
        IllegalStateException invalid =
                assertThrows(
                        IllegalStateException.class,
                        () -> j.processBatch(b.buffer(), b.length(), 0));
        assertTrue(invalid.getMessage().contains("invalid row"), invalid.getMessage());
        b.clear();
        b.put((byte) 9);
        assertThrows(IllegalStateException.class, () -> j.processBatch(b.buffer(), b.length(), 0));
        for (NativeJoin x : new NativeJoin[] {j, restored, elsewhere}) {
            x.close();
        }
        assertThrows(IllegalStateException.class, () -> j.snapshot(0, 1));
        assertThrows(IllegalArgumentException.class, () -> new NativeJoin("{}"));
    }

    /**
     * A batch whose output would be far larger than a call's bound (32 MiB): a key of 100,000
     * domains, then a batch of 30 changes of its user (each joined with every domain, 10-20 MB of
     * output each, about 600 MB in all) and one of another user. The batch comes out in pieces of
     * the bound and one joined row's output at most, each call ending at the joined row at which
     * its output reaches the bound, within a change too; a new batch is refused until the last
     * piece is taken; all the rows come out, in order.
     */
    @Test
    void aLargeOutputComesInPiecesOfAboutTheBound() {
        RowCodec u = new RowCodec(USERS);
        RowCodec dm = new RowCodec(DOMAINS);
        int domains = 100_000;
        int changes = 30;
        try (NativeJoin j = new NativeJoin(usersDomains(JoinType.INNER).specJson(0, 127))) {
            BatchBuffer b = new BatchBuffer(1 << 20);
            for (long d = 0; d < domains; d++) {
                record(b, 1, 0, 3, dm.encode(new Object[] {d, 1L, "domain-" + d + ".example"}));
            }
            assertEquals(0, j.processBatch(b.buffer(), b.length(), 0).limit());
            assertTrue(!j.hasPending());
            b.clear();
            for (int i = 0; i < changes; i++) {
                Object[] user = {1L, "user one, version " + i};
                record(b, 0, i == 0 ? 0 : 2, 3, u.encode(user)); // +I, then +U replacing it
            }
            record(b, 0, 0, 5, u.encode(new Object[] {2L, "no domains"}));
            long rows = 0;
            long bytes = 0;
            int calls = 0;
            String last = null;
            for (ByteBuffer out = j.processBatch(b.buffer(), b.length(), 0); ; ) {
                calls++;
                // The bound and at most one joined row's output (two rows) beyond it.
                assertTrue(out.limit() < (32 << 20) + 256, out.limit() + " bytes in a call");
                assertTrue(out.limit() >= 32 << 20 || !j.hasPending(), out.limit() + " bytes");
                bytes += out.limit();
                JoinBatches.Entries e = new JoinBatches.Entries().reset(out, 0);
                while (e.next()) {
                    rows++;
                    last = e.kind() + " " + Arrays.toString(u.decode(out, e.leftAt()));
                }
                if (!j.hasPending()) {
                    break;
                }
                IllegalStateException refused =
                        assertThrows(
                                IllegalStateException.class,
                                () -> j.processBatch(b.buffer(), b.length(), 0));
                assertTrue(refused.getMessage().contains("resume"), refused.getMessage());
                out = j.continueBatch();
            }
            // The first change inserts (one row per domain); each replacement retracts and inserts.
            assertEquals((long) domains * (1 + 2 * (changes - 1)), rows);
            assertEquals("2 [1, user one, version " + (changes - 1) + "]", last); // +U
            // Every call but the last writes the bound at least, and less than a row more.
            long bound = 32 << 20;
            assertTrue(calls - 1 <= bytes / bound, calls + " calls, " + bytes + " bytes");
            assertTrue(calls >= bytes / (bound + 256), calls + " calls, " + bytes + " bytes");
        }
    }

    /**
     * The multi-way join through JNI: users LEFT JOIN domains FULL JOIN backups (domains' schema),
     * a batch naming its inputs by index, the wide output, counters by name, a snapshot restored
     * elsewhere, and every failure as a Java exception.
     */
    @Test
    void multiwayJoinBatchSnapshotAndErrors() {
        RowCodec u = new RowCodec(USERS);
        RowCodec dm = new RowCodec(DOMAINS);
        MultiJoinSpec spec = usersAnd(List.of("domains", "backups"), JoinType.LEFT, JoinType.FULL);
        BatchBuffer b = new BatchBuffer(8);
        record(b, 2, 0, 3, dm.encode(new Object[] {20L, 1L, "c.com"}));
        record(b, 0, 0, 3, u.encode(new Object[] {1L, "alice"}));
        NativeMultiJoin j = new NativeMultiJoin(spec.specJson(0, 127));
        assertEquals(
                List.of(
                        "0 null null [20, 1, c.com]",
                        "3 null null [20, 1, c.com]",
                        "0 [1, alice] null [20, 1, c.com]"),
                wide(j.processBatch(b.buffer(), b.length(), 0), u, dm, dm));
        long[] stats = new long[NativeMultiJoin.counters().size()];
        j.stats(stats);
        List<String> names = NativeMultiJoin.counters();
        assertEquals(
                List.of(1L, 0L, 1L, 3L, 2L),
                List.of("records_in_0", "records_in_1", "records_in_2", "rows_out", "state_rows")
                        .stream()
                        .map(n -> stats[names.indexOf(n)])
                        .collect(Collectors.toList()));
        assertThrows(IllegalArgumentException.class, () -> j.stats(new long[3]));

        ByteBuffer snap = j.snapshot(0, Integer.MAX_VALUE);
        int length = snap.getInt(4);
        ByteBuffer section = DirectBuffers.allocate(4 + length);
        for (int i = 0; i < 4 + length; i++) {
            section.put(i, snap.get(4 + i));
        }
        NativeMultiJoin restored = new NativeMultiJoin(spec.specJson(0, 10));
        restored.restore(section, 4 + length, 3);
        b.clear();
        record(b, 1, 0, 3, dm.encode(new Object[] {10L, 1L, "a.com"}));
        // The chain's transient padding: the LEFT step retracts [alice, null] before it adds
        // [alice, a.com], so the FULL step pads c.com alone in between.
        assertEquals(
                List.of(
                        "3 [1, alice] null [20, 1, c.com]",
                        "0 null null [20, 1, c.com]",
                        "3 null null [20, 1, c.com]",
                        "0 [1, alice] [10, 1, a.com] [20, 1, c.com]"),
                wide(restored.processBatch(b.buffer(), b.length(), 0), u, dm, dm));

        b.clear();
        b.put((byte) 9);
        IllegalStateException bad =
                assertThrows(
                        IllegalStateException.class,
                        () -> j.processBatch(b.buffer(), b.length(), 0));
        assertTrue(bad.getMessage().contains("bad side byte 9"), bad.getMessage());
        b.clear();
        record(b, 3, 0, 3, u.encode(new Object[] {2L, "bo"}));
        IllegalStateException fourth =
                assertThrows(
                        IllegalStateException.class,
                        () -> j.processBatch(b.buffer(), b.length(), 0));
        assertTrue(fourth.getMessage().contains("input 3 does not exist"), fourth.getMessage());
        j.close();
        restored.close();
        assertThrows(IllegalStateException.class, () -> j.snapshot(0, 1));
        assertThrows(IllegalArgumentException.class, () -> new NativeMultiJoin("{}"));
    }

    /** The entries of a multi-way join's output, each as its kind and its inputs' rows. */
    /**
     * A multi-way join of users (keyed by id) and tables of the domains' schema named {@code
     * others} (keyed by user id, no primary key), joined by {@code steps}.
     */
    private static MultiJoinSpec usersAnd(List<String> others, JoinType... steps) {
        List<SideSpec> inputs = new ArrayList<>();
        inputs.add(new SideSpec("users", USERS, List.of("id"), List.of("id"), null));
        for (String name : others) {
            inputs.add(new SideSpec(name, DOMAINS, List.of("user_id"), null, null));
        }
        return new MultiJoinSpec(inputs, List.of(steps), false, null, null);
    }

    private static List<String> wide(ByteBuffer out, RowCodec... inputs) {
        List<String> rows = new ArrayList<>();
        JoinBatches.Entries e = new JoinBatches.Entries(inputs.length).reset(out, 0);
        while (e.next()) {
            List<String> sides = new ArrayList<>();
            for (int i = 0; i < inputs.length; i++) {
                sides.add(side(inputs[i], out, e.inputAt(i)));
            }
            rows.add(e.kind() + " " + String.join(" ", sides));
        }
        return rows;
    }

    /**
     * One change of the multi-way join on a key of 300,000 rows, through JNI: users LEFT JOIN
     * domains, a user inserted, then replaced (its -U and +U rows, about 40 MB, more than a call's
     * bound). Every call but the last writes 32 MiB and less than a row more, within the change
     * too, and all the rows come out, in order.
     */
    @Test
    void aMultiwayChangeComesInPieces() {
        RowCodec u = new RowCodec(USERS);
        RowCodec dm = new RowCodec(DOMAINS);
        MultiJoinSpec spec = usersAnd(List.of("domains"), JoinType.LEFT);
        int domains = 300_000;
        try (NativeMultiJoin j = new NativeMultiJoin(spec.specJson(0, 127))) {
            BatchBuffer b = new BatchBuffer(1 << 20);
            for (long d = 0; d < domains; d++) {
                record(b, 1, 0, 3, dm.encode(new Object[] {d, 1L, "domain-" + d + ".example"}));
            }
            j.processBatch(b.buffer(), b.length(), 0);
            assertTrue(!j.hasPending());
            b.clear();
            record(b, 0, 0, 3, u.encode(new Object[] {1L, "user one"}));
            record(b, 0, 2, 3, u.encode(new Object[] {1L, "user one, renamed"})); // +U
            long bound = 32 << 20;
            long rows = 0;
            String last = null;
            for (ByteBuffer out = j.processBatch(b.buffer(), b.length(), 0); ; ) {
                assertTrue(out.limit() < bound + 256, out.limit() + " bytes in a call");
                assertTrue(out.limit() >= bound || !j.hasPending(), out.limit() + " bytes");
                JoinBatches.Entries e = new JoinBatches.Entries(2).reset(out, 0);
                while (e.next()) {
                    rows++;
                    last = e.kind() + " " + side(u, out, e.inputAt(0));
                }
                if (!j.hasPending()) {
                    break;
                }
                out = j.continueBatch();
            }
            // The insert joins every domain; the replacement retracts and inserts every row (as -D
            // and +I: the outer side's rows).
            assertEquals(3L * domains, rows);
            assertEquals("0 [1, user one, renamed]", last); // +I
        }
    }

    /** A snapshot is taken in chunks: key groups in order, from a given one, up to a size. */
    @Test
    void snapshotsComeInChunksOfWholeKeyGroups() {
        RowCodec u = new RowCodec(USERS);
        BatchBuffer b = new BatchBuffer(256);
        for (int kg : new int[] {9, 3, 40}) {
            record(b, 0, 0, kg, u.encode(new Object[] {(long) kg, "user " + kg}));
        }
        try (NativeJoin j = new NativeJoin(usersDomains(JoinType.LEFT).specJson(0, 127))) {
            j.processBatch(b.buffer(), b.length(), 0);
            int whole = j.snapshot(0, Integer.MAX_VALUE).limit();
            List<Integer> keyGroups = new ArrayList<>();
            int chunks = 0;
            int bytes = 0;
            int from = 0;
            for (ByteBuffer c = j.snapshot(from, 1); c.limit() > 0; c = j.snapshot(from, 1)) {
                chunks++;
                bytes += c.limit();
                for (int p = 0; p < c.limit(); p += 8 + c.getInt(p + 4)) {
                    keyGroups.add(c.getInt(p));
                    from = c.getInt(p) + 1;
                }
            }
            assertEquals(List.of(3, 9, 40), keyGroups);
            assertEquals(3, chunks, "one section per chunk of at least 1 byte");
            assertEquals(whole, bytes);
            assertEquals(0, j.snapshot(41, Integer.MAX_VALUE).limit());
            assertEquals(2, countSections(j.snapshot(4, Integer.MAX_VALUE)));
        }
    }

    /**
     * A frozen state is written on another thread while the join goes on, and writes the state of
     * the instant it was frozen, each section once; what only it holds (the keys the join changed
     * meanwhile, as they were) is counted, and freed with the next batch once written, or when it
     * is closed.
     */
    @Test
    void frozenStateIsWrittenWhileTheJoinGoesOn() throws Exception {
        RowCodec u = new RowCodec(USERS);
        BatchBuffer b = new BatchBuffer(256);
        for (int kg = 0; kg < 100; kg++) {
            record(b, 0, 0, kg, u.encode(new Object[] {(long) kg, "user " + kg}));
        }
        try (NativeJoin j = new NativeJoin(usersDomains(JoinType.LEFT).specJson(0, 127))) {
            j.processBatch(b.buffer(), b.length(), 0);
            byte[] before = bytes(j.snapshot(0, Integer.MAX_VALUE));
            FrozenState frozen = j.freeze();
            b.clear();
            for (int kg = 0; kg < 100; kg += 2) {
                record(b, 0, 3, kg, u.encode(new Object[] {(long) kg, "user " + kg}));
            }
            j.processBatch(b.buffer(), b.length(), 0);
            NativeCounters stats = new NativeCounters();
            j.stats(stats);
            assertTrue(
                    stats.get(NativeCounters.STATE_FROZEN_BYTES) > 0,
                    "keys copied before the join wrote to them");
            assertEquals(50, stats.get(NativeCounters.STATE_ROWS));
            ExecutorService writer = Executors.newSingleThreadExecutor();
            try {
                byte[] written = writer.submit(() -> bytes(frozen.snapshot(0, 1 << 30))).get();
                assertArrayEquals(before, written, "the state of the instant it was frozen");
            } finally {
                writer.shutdown();
            }
            j.processBatch(b.buffer(), 0, 0); // the next batch merges the copies back
            j.stats(stats);
            assertEquals(0, stats.get(NativeCounters.STATE_FROZEN_BYTES), "released once written");
            assertThrows(IllegalStateException.class, () -> frozen.snapshot(0, 1 << 30));
            frozen.close();
            frozen.close();
            j.stats(stats);
            assertEquals(0, stats.get(NativeCounters.STATE_FROZEN_BYTES));
            assertThrows(IllegalStateException.class, () -> frozen.snapshot(0, 1));
            assertTrue(bytes(j.snapshot(0, Integer.MAX_VALUE)).length < before.length);
        }
    }

    private static byte[] bytes(ByteBuffer chunk) {
        byte[] out = new byte[chunk.limit()];
        ByteBuffers.read(chunk, 0, out, 0, out.length);
        return out;
    }

    private static int countSections(ByteBuffer chunk) {
        int n = 0;
        for (int p = 0; p < chunk.limit(); p += 8 + chunk.getInt(p + 4)) {
            n++;
        }
        return n;
    }
}
