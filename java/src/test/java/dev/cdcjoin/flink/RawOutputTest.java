package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.codec.RowCodec;
import dev.cdcjoin.flink.demo.UsersDomainsTrace;
import dev.cdcjoin.flink.nativelib.NativeDecoder;
import dev.cdcjoin.flink.runtime.ChangeBatch;
import dev.cdcjoin.flink.runtime.JoinOutput;
import dev.cdcjoin.flink.runtime.NativeJoinOperator;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The byte-encoded output ({@link CdcJoin.Result#rawRows()}): decoded with {@link RowCodec}, it is
 * the {@link Row} output, row for row in the operator harness and as a materialized result in a
 * job.
 */
@SuppressWarnings("try") // CloseableIterator#close may throw InterruptedException
class RawOutputTest {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withSlots(4);

    static CdcJoin.Builder usersDomains(JoinType type) {
        return CdcJoin.builder()
                .left("users", UsersDomainsTrace.USERS, List.of("id"), List.of("id"))
                .right("domains", UsersDomainsTrace.DOMAINS, List.of("user_id"), List.of("id"))
                .joinType(type)
                .maxFlushDelay(Duration.ofMillis(20));
    }

    /**
     * Decodes a raw record by hand with the two sides' {@link RowCodec}s: left columns then right
     * columns, null for a null-padded side.
     */
    static Row decodeWithRowCodec(byte[] record, RowCodec left, RowCodec right) {
        ByteBuffer buf = ByteBuffer.wrap(record).order(ByteOrder.LITTLE_ENDIAN);
        RowKind kind = RowKind.fromByteValue(buf.get(0));
        Object[] values = new Object[left.arity() + right.arity()];
        int leftLength = buf.getInt(1);
        int p = 5;
        if (leftLength >= 0) {
            left.decodeInto(buf, p, values, 0);
            p += leftLength;
        }
        int rightLength = buf.getInt(p);
        p += 4;
        if (rightLength >= 0) {
            right.decodeInto(buf, p, values, left.arity());
            p += rightLength;
        }
        assertEquals(record.length, p, "record length");
        return Row.ofKind(kind, values);
    }

    /** A harness around one native join operator. */
    static <OUT>
            KeyedTwoInputStreamOperatorTestHarness<Integer, ChangeBatch, ChangeBatch, OUT> harness(
                    NativeJoinOperator<OUT> op) throws Exception {
        KeyedTwoInputStreamOperatorTestHarness<Integer, ChangeBatch, ChangeBatch, OUT> h =
                JoinHarnesses.of(op);
        h.open();
        return h;
    }

    @ParameterizedTest
    @EnumSource(JoinType.class)
    void rawOutputDecodesToTheRowOutputRowForRow(JoinType type) throws Exception {
        UsersDomainsTrace trace = UsersDomainsTrace.generate(5, 1500, 60);
        CdcJoin all = usersDomains(type).build();
        // The Row output projected (and reordered); the raw output always carries whole sides.
        CdcJoin projected =
                usersDomains(type)
                        .select("domain")
                        .select("users.id", "uid")
                        .select("name")
                        .build();
        JoinSpec def = projected.spec();
        NativeJoinOperator<Row> rowsOp =
                NativeJoinOperator.of(def, JoinOutput.ROWS, 7, 1000, BadRecordPolicy.FAIL);
        NativeJoinOperator<byte[]> rawOp =
                NativeJoinOperator.of(def, JoinOutput.BYTES, 7, 1000, BadRecordPolicy.FAIL);
        List<Row> rows;
        List<byte[]> raw;
        try (NativeDecoder users = new NativeDecoder(def.left().decoderConfigJson(false));
                NativeDecoder domains = new NativeDecoder(def.right().decoderConfigJson(false));
                var rowsHarness = harness(rowsOp);
                var rawHarness = harness(rawOp)) {
            for (UsersDomainsTrace.Event e : trace.events()) {
                for (ChangeRecord c : NativeChanges.decode(e.users ? users : domains, e.json)) {
                    if (e.users) {
                        rowsHarness.processElement1(JoinHarnesses.batch(c));
                        rawHarness.processElement1(JoinHarnesses.batch(c));
                    } else {
                        rowsHarness.processElement2(JoinHarnesses.batch(c));
                        rawHarness.processElement2(JoinHarnesses.batch(c));
                    }
                }
            }
            rowsOp.flush();
            rawOp.flush();
            rows = new ArrayList<>(rowsHarness.extractOutputValues());
            raw = new ArrayList<>(rawHarness.extractOutputValues());
        }
        assertTrue(rows.size() > 500, "too small a changelog: " + rows.size());
        assertEquals(rows.size(), raw.size(), "number of output rows");

        RowCodec left = new RowCodec(def.left().schema());
        RowCodec right = new RowCodec(def.right().schema());
        RawJoinOutput decoder = new RawJoinOutput(def);
        RawJoinOutput decoderAll = new RawJoinOutput(all.spec());
        int[] projection = def.projection();
        List<String> wholeRows = new ArrayList<>();
        boolean sawNullSide = false;
        for (int i = 0; i < rows.size(); i++) {
            byte[] record = raw.get(i);
            Row whole = decodeWithRowCodec(record, left, right);
            Object[] projectedValues = new Object[projection.length];
            for (int c = 0; c < projection.length; c++) {
                projectedValues[c] = whole.getField(projection[c]);
            }
            Row expected = rows.get(i);
            assertEquals(expected, Row.ofKind(whole.getKind(), projectedValues), "row #" + i);
            assertEquals(expected, decoder.toRow(record), "RawJoinOutput, row #" + i);
            assertEquals(whole, decoderAll.map(record), "RawJoinOutput without projection, #" + i);
            assertEquals(whole.getKind(), RawJoinOutput.kind(record));
            byte[] l = RawJoinOutput.left(record);
            byte[] r = RawJoinOutput.right(record);
            if (l == null || r == null) {
                sawNullSide = true;
                assertEquals(
                        RawJoinOutput.NULL_SIDE,
                        l == null
                                ? RawJoinOutput.leftLength(record)
                                : RawJoinOutput.rightLength(record));
            }
            if (l != null) {
                assertArrayEquals(
                        left.encode(Arrays.copyOfRange(rowValues(whole), 0, left.arity())), l);
            } else {
                assertNull(whole.getField(0));
            }
            if (r != null) {
                assertArrayEquals(
                        right.encode(
                                Arrays.copyOfRange(
                                        rowValues(whole),
                                        left.arity(),
                                        left.arity() + right.arity())),
                        r);
            }
            wholeRows.add(whole.toString());
        }
        assertEquals(
                type != JoinType.INNER, sawNullSide, "null-padded rows in a " + type + " join");
        assertEquals(ReferenceJoin.usersDomains(trace, type), Changelogs.materialize(wholeRows));
    }

    /**
     * Each output row carries the timestamp of the input record that caused it (none if that record
     * had none), in both output forms, although rows are emitted after the batch's native call: as
     * in Flink's own join operator.
     */
    @Test
    void everyOutputRowHasTheTimestampOfTheRecordThatCausedIt() throws Exception {
        JoinSpec def = usersDomains(JoinType.LEFT).build().spec();
        for (NativeJoinOperator<?> op :
                List.of(
                        NativeJoinOperator.of(def, JoinOutput.ROWS, 16, 1000, BadRecordPolicy.FAIL),
                        NativeJoinOperator.of(
                                def, JoinOutput.BYTES, 16, 1000, BadRecordPolicy.FAIL))) {
            try (NativeDecoder users = new NativeDecoder(def.left().decoderConfigJson(false));
                    NativeDecoder domains =
                            new NativeDecoder(def.right().decoderConfigJson(false));
                    var h = harness(op)) {
                h.processElement1(
                        JoinHarnesses.batch(
                                new StreamRecord<>(
                                        change(users, "{\"id\":1,\"name\":\"a\"}"), 100)));
                h.processElement2(
                        JoinHarnesses.batch(
                                new StreamRecord<>(
                                        change(
                                                domains,
                                                "{\"id\":10,\"user_id\":1,\"domain\":\"x\"}"),
                                        200)));
                h.processElement2(
                        JoinHarnesses.batch(
                                change(domains, "{\"id\":11,\"user_id\":1,\"domain\":\"y\"}")));
                h.processElement1(
                        JoinHarnesses.batch(
                                new StreamRecord<>(
                                        change(users, "{\"id\":2,\"name\":\"b\"}"), 50)));
                op.flush();
                List<String> stamped = new ArrayList<>();
                for (Object o : h.getOutput()) {
                    StreamRecord<?> r = (StreamRecord<?>) o;
                    stamped.add(r.hasTimestamp() ? "" + r.getTimestamp() : "none");
                }
                // +I[1, null]; -D[1, null], +I[1, 10]; +I[1, 11]; +I[2, null]
                assertEquals(List.of("100", "200", "200", "none", "50"), stamped, op.toString());
            }
        }
    }

    private static ChangeRecord change(NativeDecoder decoder, String after) {
        List<ChangeRecord> changes =
                NativeChanges.decode(
                        decoder, "{\"before\":null,\"after\":" + after + ",\"op\":\"c\"}");
        assertEquals(1, changes.size());
        return changes.get(0);
    }

    static Object[] rowValues(Row row) {
        Object[] values = new Object[row.getArity()];
        for (int i = 0; i < values.length; i++) {
            values[i] = row.getField(i);
        }
        return values;
    }

    /** The trace of the job tests: both output forms of a FULL join materialize to its result. */
    static UsersDomainsTrace jobTrace() {
        return UsersDomainsTrace.generate(9, 3000, 200);
    }

    /** {@code join} over {@code trace}'s messages in a job of parallelism 2 (sources at 1). */
    static CdcJoin.Result joinInAJob(CdcJoin join, UsersDomainsTrace trace) {
        List<String> users = new ArrayList<>();
        List<String> domains = new ArrayList<>();
        trace.events().forEach(e -> (e.users ? users : domains).add(e.json));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        return join.joinStrings(
                env.fromData(users).setParallelism(1), env.fromData(domains).setParallelism(1));
    }

    /**
     * Runs the job of two outputs, {@code tagged}'s strings starting with {@code tag}, and checks
     * that each materializes to the FULL join of {@code trace}.
     */
    static void assertBothMaterialize(
            UsersDomainsTrace trace, String tag, DataStream<String> tagged, DataStream<String> rows)
            throws Exception {
        List<String> taggedOut = new ArrayList<>();
        List<String> rowsOut = new ArrayList<>();
        try (CloseableIterator<String> it = tagged.union(rows).executeAndCollect()) {
            it.forEachRemaining(
                    s -> {
                        if (s.startsWith(tag)) {
                            taggedOut.add(s.substring(tag.length()));
                        } else {
                            rowsOut.add(s);
                        }
                    });
        }
        assertFalse(taggedOut.isEmpty());
        Map<String, Integer> expected = ReferenceJoin.usersDomains(trace, JoinType.FULL);
        assertEquals(expected, Changelogs.materialize(taggedOut), tag);
        assertEquals(expected, Changelogs.materialize(rowsOut), "rows");
    }

    @Test
    void rawRowsInAJobMaterializeToTheRowOutput() throws Exception {
        UsersDomainsTrace trace = jobTrace();
        CdcJoin join = usersDomains(JoinType.FULL).batchSize(50).build();
        CdcJoin.Result result = joinInAJob(join, trace);
        RowCodec left = new RowCodec(join.spec().left().schema());
        RowCodec right = new RowCodec(join.spec().right().schema());
        DataStream<String> raw =
                result.rawRows().map(b -> "RAW" + decodeWithRowCodec(b, left, right));
        assertEquals(result.rawRows(), result.rawRows(), "one operator per output form");
        assertBothMaterialize(trace, "RAW", raw, result.rows().map(Row::toString));
    }
}
