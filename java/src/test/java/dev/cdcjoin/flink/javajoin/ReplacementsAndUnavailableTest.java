package dev.cdcjoin.flink.javajoin;

import static dev.cdcjoin.flink.javajoin.JavaJoinFunctionTest.del;
import static dev.cdcjoin.flink.javajoin.JavaJoinFunctionTest.ins;
import static dev.cdcjoin.flink.javajoin.JavaJoinFunctionTest.ua;
import static dev.cdcjoin.flink.javajoin.JavaJoinFunctionTest.ub;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.BadRecord;
import dev.cdcjoin.flink.BadRecordPolicy;
import dev.cdcjoin.flink.DebeziumFormat;
import dev.cdcjoin.flink.JoinSpec;
import dev.cdcjoin.flink.JoinType;
import dev.cdcjoin.flink.SideSpec;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.streaming.api.operators.co.KeyedCoProcessOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;

/**
 * The join's rules for replacements on primary-key sides, {@link Unavailable} columns (filled from
 * the stored row, or rejected through the bad-record policy) and TTL refreshes, in Flink's operator
 * test harness.
 */
class ReplacementsAndUnavailableTest {

    static final CdcSchema USERS =
            CdcSchema.of(Column.notNull("id", "INT"), Column.nullable("name", "STRING"));
    static final CdcSchema DOCS =
            CdcSchema.of(
                    Column.notNull("id", "INT"),
                    Column.nullable("user_id", "INT"),
                    Column.nullable("body", "STRING"));

    static final Object NA = Unavailable.VALUE;

    /** A harness around a join with a bad-record policy. */
    static final class Join implements AutoCloseable {
        final KeyedTwoInputStreamOperatorTestHarness<Row, Row, Row, Row> harness;
        final JavaJoin join;
        private int taken;

        Join(JoinSpec def, BadRecordPolicy policy) throws Exception {
            join = JavaJoin.of(def).badRecordPolicy(policy);
            harness =
                    new KeyedTwoInputStreamOperatorTestHarness<>(
                            new KeyedCoProcessOperator<>(
                                    new JavaJoinFunction(ResolvedJoin.of(def).withPolicy(policy))),
                            join.leftKeySelector(),
                            join.rightKeySelector(),
                            join.keyTypeInfo());
            harness.setup();
            harness.open();
        }

        void left(Row change) throws Exception {
            harness.processElement1(new StreamRecord<>(change));
        }

        void right(Row change) throws Exception {
            harness.processElement2(new StreamRecord<>(change));
        }

        /** Decodes a right-side Debezium message and feeds its changes. */
        void rightMessage(String json) throws Exception {
            for (Row r : join.rightReader().readToList(json.getBytes(StandardCharsets.UTF_8), 0)) {
                right(r);
            }
        }

        List<String> take() {
            List<Row> all = harness.extractOutputValues();
            List<String> out = new ArrayList<>();
            for (Row r : all.subList(taken, all.size())) {
                assertTrue(r.toString().indexOf("<unavailable>") < 0, "never emitted: " + r);
                out.add(r.toString());
            }
            taken = all.size();
            return out;
        }

        List<BadRecord> badRecords() {
            List<BadRecord> out = new ArrayList<>();
            if (harness.getSideOutput(BadRecord.OUTPUT) != null) {
                harness.getSideOutput(BadRecord.OUTPUT).forEach(r -> out.add(r.getValue()));
            }
            return out;
        }

        @Override
        public void close() throws Exception {
            harness.close();
        }
    }

    /**
     * users(id) LEFT/INNER docs(id, user_id, body); docs keyed by user_id, primary key id or none.
     */
    static JoinSpec usersDocs(JoinType type, boolean docsKey, Duration ttl, DebeziumFormat docs) {
        return new JoinSpec(
                new SideSpec("users", USERS, List.of("id"), List.of("id"), ttl),
                new SideSpec(
                        "docs",
                        DOCS,
                        List.of("user_id"),
                        docsKey ? List.of("id") : null,
                        ttl,
                        docs),
                type,
                false,
                null,
                null);
    }

    static JoinSpec usersDocs(JoinType type, boolean docsKey) {
        return usersDocs(type, docsKey, null, DebeziumFormat.defaults());
    }

    @Test
    void anIdenticalRedeliveryEmitsNothing() throws Exception {
        try (Join j = new Join(usersDocs(JoinType.INNER, true), BadRecordPolicy.FAIL)) {
            j.left(ins(1, "Ana"));
            j.right(ins(10, 1, "a"));
            assertEquals(List.of("+I[1, Ana, 10, 1, a]"), j.take());
            j.right(ins(10, 1, "a")); // Kafka Connect restarted: the same event again
            j.left(ins(1, "Ana")); // an incremental snapshot reads a row that exists
            j.right(ua(10, 1, "a"));
            assertEquals(List.of(), j.take());
        }
    }

    @Test
    void aReplacementRetractsTheStoredRowFirst() throws Exception {
        try (Join j = new Join(usersDocs(JoinType.INNER, true), BadRecordPolicy.FAIL)) {
            j.left(ins(1, "Ana"));
            j.right(ins(10, 1, "a"));
            j.right(ins(11, 1, "b"));
            j.take();
            j.right(ins(10, 1, "a2")); // re-delivered with newer values: replaces, goes last
            assertEquals(List.of("-U[1, Ana, 10, 1, a]", "+U[1, Ana, 10, 1, a2]"), j.take());
            j.left(ins(1, "Bo")); // the join key contains the primary key: one row per key
            assertEquals(
                    List.of(
                            "-U[1, Ana, 11, 1, b]",
                            "-U[1, Ana, 10, 1, a2]",
                            "+U[1, Bo, 11, 1, b]",
                            "+U[1, Bo, 10, 1, a2]"),
                    j.take());
        }
    }

    @Test
    void aReplacementOnAnOuterSideKeepsMatchCountsExact() throws Exception {
        try (Join j = new Join(usersDocs(JoinType.FULL, true), BadRecordPolicy.FAIL)) {
            j.left(ins(1, "Ana"));
            j.right(ins(10, 1, "a"));
            j.take();
            j.left(ins(1, "Bo"));
            assertEquals(
                    List.of(
                            "-D[1, Ana, 10, 1, a]",
                            "+I[null, null, 10, 1, a]",
                            "-D[null, null, 10, 1, a]",
                            "+I[1, Bo, 10, 1, a]"),
                    j.take());
            j.left(del(1, "Bo"));
            assertEquals(List.of("-D[1, Bo, 10, 1, a]", "+I[null, null, 10, 1, a]"), j.take());
        }
    }

    @Test
    void unavailableColumnsAreTakenFromTheStoredRow() throws Exception {
        try (Join j = new Join(usersDocs(JoinType.LEFT, true), BadRecordPolicy.FAIL)) {
            j.left(ins(1, "Ana"));
            j.right(ins(10, 1, "long body"));
            j.take();
            j.right(ua(10, 1, NA)); // an update of other columns: body unchanged, not sent
            assertEquals(List.of(), j.take(), "identical once filled");
            j.right(ub(10, 1, NA)); // a retraction by primary key retracts the stored row
            j.right(ua(10, 1, "new"));
            assertEquals(
                    List.of(
                            "-U[1, Ana, 10, 1, long body]", // the inner side keeps -U (FLINK-17337)
                            "+I[1, Ana, null, null, null]",
                            "-D[1, Ana, null, null, null]",
                            "+I[1, Ana, 10, 1, new]"),
                    j.take());
        }
    }

    @Test
    void upsertDeletesByKeyRetractTheStoredRow() throws Exception {
        JoinSpec def =
                new JoinSpec(
                        new SideSpec("users", USERS, List.of("id"), List.of("id"), null),
                        new SideSpec(
                                "docs",
                                DOCS,
                                List.of("id"),
                                List.of("id"),
                                null,
                                DebeziumFormat.defaults().withUpsert(true)),
                        JoinType.INNER,
                        false,
                        null,
                        null);
        try (Join j = new Join(def, BadRecordPolicy.FAIL)) {
            j.left(ins(10, "Ana"));
            j.rightMessage("{\"op\":\"c\",\"after\":{\"id\":10,\"user_id\":1,\"body\":\"x\"}}");
            j.rightMessage(
                    "{\"op\":\"u\",\"before\":null,\"after\":{\"id\":10,\"user_id\":1,"
                            + "\"body\":\"__debezium_unavailable_value\"}}");
            j.rightMessage(
                    "{\"op\":\"u\",\"before\":null,\"after\":{\"id\":10,\"user_id\":2,"
                            + "\"body\":\"__debezium_unavailable_value\"}}");
            j.rightMessage("{\"op\":\"d\",\"before\":{\"id\":10,\"user_id\":null,\"body\":null}}");
            assertEquals(
                    List.of(
                            "+I[10, Ana, 10, 1, x]",
                            "-U[10, Ana, 10, 1, x]",
                            "+U[10, Ana, 10, 2, x]",
                            "-D[10, Ana, 10, 2, x]"),
                    j.take());
        }
    }

    @Test
    void anUnavailableColumnWithoutStoredRowFailsTheJobUnderFail() throws Exception {
        try (Join j = new Join(usersDocs(JoinType.LEFT, true), BadRecordPolicy.FAIL)) {
            j.left(ins(1, "Ana"));
            Exception e = assertThrows(Exception.class, () -> j.right(ua(7, 1, NA)));
            Throwable cause = e;
            while (!(cause instanceof RejectedChangeException) && cause.getCause() != null) {
                cause = cause.getCause();
            }
            assertEquals(
                    "right row +U[7, 1, <unavailable>]: column 'body' is unavailable (the change does"
                            + " not carry the value, e.g. Debezium's placeholder for an unchanged"
                            + " TOASTed value, or a delete by key), and no row with primary key [7]"
                            + " is stored to take it from (first sight of the key, or expired by TTL)",
                    cause.getMessage());
        }
    }

    @Test
    void rejectionsGoToTheSideOutputAndChangeNothing() throws Exception {
        try (Join j = new Join(usersDocs(JoinType.FULL, true), BadRecordPolicy.SIDE_OUTPUT)) {
            j.left(ins(1, "Ana"));
            j.take();
            j.right(ua(7, 1, NA)); // first sight of the key
            j.right(ins(8, NA, "x")); // the join key is unavailable
            assertEquals(List.of(), j.take());
            List<BadRecord> bad = j.badRecords();
            assertEquals(2, bad.size());
            assertEquals("docs", bad.get(0).source);
            assertEquals(-1, bad.get(0).index);
            assertEquals(null, bad.get(0).raw);
            assertTrue(
                    bad.get(0)
                            .reason
                            .startsWith("right row +U[7, 1, <unavailable>]: column 'body'"),
                    bad.get(0).reason);
            assertEquals(
                    "right row +I[8, <unavailable>, x]: column 'user_id' of the join key is"
                            + " unavailable: the row's join key, and so its state, is unknown",
                    bad.get(1).reason);
            j.right(ins(7, 1, "y")); // nothing was stored: a first insert
            assertEquals(List.of("-D[1, Ana, null, null, null]", "+I[1, Ana, 7, 1, y]"), j.take());
        }
    }

    @Test
    void anUnavailablePrimaryKeyIsRejected() throws Exception {
        try (Join j = new Join(usersDocs(JoinType.INNER, true), BadRecordPolicy.SIDE_OUTPUT)) {
            j.right(del(NA, 1, "y"));
            assertEquals(List.of(), j.take());
            assertEquals(
                    "right row -D[<unavailable>, 1, y]: column 'id' of the primary key is"
                            + " unavailable: the stored row it changes cannot be found",
                    j.badRecords().get(0).reason);
        }
    }

    @Test
    void aSideWithoutPrimaryKeyRejectsUnavailableColumns() throws Exception {
        try (Join j = new Join(usersDocs(JoinType.INNER, false), BadRecordPolicy.SIDE_OUTPUT)) {
            j.right(ins(7, 1, "y"));
            j.right(ub(7, 1, NA));
            j.left(ins(1, "Ana"));
            assertEquals(
                    List.of("+I[1, Ana, 7, 1, y]"), j.take(), "the retraction was not applied");
            assertEquals(
                    "right row -U[7, 1, <unavailable>]: column 'body' is unavailable (the change does"
                            + " not carry the value, e.g. Debezium's placeholder for an unchanged"
                            + " TOASTed value, or a delete by key), and a side without a primary key"
                            + " cannot fill unavailable columns: no stored row is known to be the"
                            + " same row",
                    j.badRecords().get(0).reason);
        }
    }

    @Test
    void retractingOneOfTwoDuplicatesRefreshesTheOther() throws Exception {
        Duration ttl = Duration.ofMillis(1000);
        try (Join j =
                new Join(
                        usersDocs(JoinType.INNER, false, ttl, DebeziumFormat.defaults()),
                        BadRecordPolicy.FAIL)) {
            j.harness.setStateTtlProcessingTime(0);
            j.right(ins(7, 1, "y"));
            j.right(ins(7, 1, "y"));
            j.harness.setStateTtlProcessingTime(800);
            j.right(del(7, 1, "y")); // Flink writes the entry: the remaining copy lives on
            j.harness.setStateTtlProcessingTime(1500);
            j.left(ins(1, "Ana"));
            assertEquals(List.of("+I[1, Ana, 7, 1, y]"), j.take());
        }
    }

    @Test
    void anIdenticalRedeliveryRefreshesTheTtl() throws Exception {
        Duration ttl = Duration.ofMillis(1000);
        try (Join j =
                new Join(
                        usersDocs(JoinType.INNER, true, ttl, DebeziumFormat.defaults()),
                        BadRecordPolicy.FAIL)) {
            j.harness.setStateTtlProcessingTime(0);
            j.right(ins(7, 1, "y"));
            j.harness.setStateTtlProcessingTime(800);
            j.right(ins(7, 1, "y"));
            j.harness.setStateTtlProcessingTime(1500);
            j.left(ins(1, "Ana"));
            assertEquals(List.of("+I[1, Ana, 7, 1, y]"), j.take());
        }
    }
}
