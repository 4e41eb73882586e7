package dev.cdcjoin.flink.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link MartSinkOperator} against a live Postgres with e2e/sql/schema.sql loaded ({@code
 * -De2e.jdbc.url=jdbc:postgresql://127.0.0.1:15432/e2e?user=postgres}; skipped without it).
 * e2e/run.sh runs it once its Postgres is up. Each test writes a scratch table {@code
 * mart.sink_test} shaped like the left mart ({@code UNIQUE NULLS NOT DISTINCT (id, domain_id)}).
 */
class MartSinkOperatorTest {

    private static final String TABLE = "mart.sink_test";
    private static final String TYPED = "mart.sink_test_typed";
    private static final String URL = System.getProperty("e2e.jdbc.url", "");

    private Connection db;
    private final List<OneInputStreamOperatorTestHarness<Row, Void>> harnesses = new ArrayList<>();

    @BeforeEach
    void setUp() throws SQLException {
        assumeTrue(
                !URL.isEmpty(), "no -De2e.jdbc.url: MartSinkOperatorTest needs the e2e Postgres");
        db = new org.postgresql.Driver().connect(URL, props());
        sql("DROP TABLE IF EXISTS " + TABLE + ", " + TYPED);
        sql(
                "CREATE TABLE "
                        + TABLE
                        + " (id integer NOT NULL, firstname text, lastname text, domain_id integer,"
                        + " user_id integer, domain_name text, UNIQUE NULLS NOT DISTINCT (id, domain_id))");
        sql(
                "DELETE FROM mart.sink_progress WHERE mart_table IN ('"
                        + TABLE
                        + "', '"
                        + TYPED
                        + "')");
    }

    @AfterEach
    void tearDown() throws Exception {
        for (OneInputStreamOperatorTestHarness<Row, Void> h : harnesses) {
            h.close();
        }
        if (db != null) {
            sql("DROP TABLE IF EXISTS " + TABLE + ", " + TYPED);
            sql(
                    "DELETE FROM mart.sink_progress WHERE mart_table IN ('"
                            + TABLE
                            + "', '"
                            + TYPED
                            + "')");
            db.close();
        }
    }

    /** Rows reach the table only when their checkpoint completes. */
    @Test
    void commitsOnCheckpointCompletion() throws Exception {
        OneInputStreamOperatorTestHarness<Row, Void> h = harness(null);
        h.processElement(rec(RowKind.INSERT, 1, "Ana", "Li", 10, 1, "a.io"));
        h.processElement(rec(RowKind.INSERT, 2, "Bo", null, null, null, null));
        assertEquals(0, count());
        h.snapshot(1, 1);
        assertEquals(0, count(), "nothing before the checkpoint completes");
        h.notifyOfCompletedCheckpoint(1);
        assertEquals(List.of("1|Ana|Li|10|1|a.io", "2|Bo|null|null|null|null"), rows());
        assertEquals("1 2 2 0 0 0", progress());
    }

    /**
     * A checkpoint completed but its notification was lost (the TaskManager died): the restore
     * applies its batch; a second restore from the same checkpoint applies nothing again.
     */
    @Test
    void restoreAppliesUncommittedBatchesOnce() throws Exception {
        OneInputStreamOperatorTestHarness<Row, Void> h = harness(null);
        h.processElement(rec(RowKind.INSERT, 1, "Ana", "Li", 10, 1, "a.io"));
        h.snapshot(1, 1);
        h.notifyOfCompletedCheckpoint(1);
        h.processElement(rec(RowKind.UPDATE_BEFORE, 1, "Ana", "Li", 10, 1, "a.io"));
        h.processElement(rec(RowKind.UPDATE_AFTER, 1, "Anna", "Li", 10, 1, "a.io"));
        h.processElement(rec(RowKind.INSERT, 3, "Chen", "Kim", null, null, null));
        OperatorSubtaskState cp2 = h.snapshot(2, 2);
        // checkpoint 2 completes, but the notification never arrives
        assertEquals(List.of("1|Ana|Li|10|1|a.io"), rows());

        harness(cp2);
        assertEquals(List.of("1|Anna|Li|10|1|a.io", "3|Chen|Kim|null|null|null"), rows());
        assertEquals("2 4 3 0 1 0", progress());

        harness(cp2); // restored again from the same checkpoint: applied already
        assertEquals(List.of("1|Anna|Li|10|1|a.io", "3|Chen|Kim|null|null|null"), rows());
        assertEquals("2 4 3 0 1 0", progress());
    }

    /** Batches of an aborted checkpoint are applied, in order, with the next completed one. */
    @Test
    void abortedCheckpointRidesWithTheNext() throws Exception {
        OneInputStreamOperatorTestHarness<Row, Void> h = harness(null);
        h.processElement(rec(RowKind.INSERT, 1, "Ana", "Li", null, null, null));
        h.snapshot(1, 1); // never completes
        h.processElement(rec(RowKind.DELETE, 1, "Ana", "Li", null, null, null));
        h.processElement(rec(RowKind.INSERT, 1, "Ana", "Li", 10, 1, "a.io"));
        h.snapshot(2, 2);
        h.notifyOfCompletedCheckpoint(2);
        assertEquals(List.of("1|Ana|Li|10|1|a.io"), rows());
        assertEquals("2 3 2 0 1 0", progress());
    }

    /**
     * A retraction deletes only the row it retracts (NULL key columns included); an insertion on a
     * taken key overwrites it. Both anomalies are counted.
     */
    @Test
    void retractionsMatchWholeRowsAndAnomaliesAreCounted() throws Exception {
        OneInputStreamOperatorTestHarness<Row, Void> h = harness(null);
        h.processElement(rec(RowKind.INSERT, 1, "Ana", "Li", null, null, null));
        h.processElement(rec(RowKind.INSERT, 2, "Bo", "Kim", 20, 2, "b.io"));
        h.snapshot(1, 1);
        h.notifyOfCompletedCheckpoint(1);
        h.processElement(
                rec(
                        RowKind.DELETE,
                        1,
                        "Ana",
                        "Li",
                        null,
                        null,
                        null)); // the null-padded row: deleted
        h.processElement(
                rec(
                        RowKind.UPDATE_BEFORE,
                        2,
                        "Bo",
                        "OLD",
                        20,
                        2,
                        "b.io")); // not the stored row: kept
        h.processElement(
                rec(RowKind.INSERT, 2, "Bo", "New", 20, 2, "b.io")); // key taken: overwritten
        h.snapshot(2, 2);
        h.notifyOfCompletedCheckpoint(2);
        assertEquals(List.of("2|Bo|New|20|2|b.io"), rows());
        assertEquals("2 5 2 1 1 1", progress());
    }

    /**
     * A row of every type the product emits is stored as it came, and its whole-row retraction
     * finds it: each type compares equal to itself through {@code IS NOT DISTINCT FROM ?} (floats
     * at their extremes, times with fractions, instants before 1970, empty bytes).
     */
    @Test
    void everyTypeIsStoredAndRetractedExactly() throws Exception {
        sql(
                "CREATE TABLE "
                        + TYPED
                        + " (k integer PRIMARY KEY, b boolean, ti smallint, s smallint, l bigint,"
                        + " f real, d double precision, n numeric(38, 10), bin bytea, dt date, tm time, ts timestamp(6),"
                        + " tz timestamptz, str text)");
        List<String> cols =
                List.of(
                        "k", "b", "ti", "s", "l", "f", "d", "n", "bin", "dt", "tm", "ts", "tz",
                        "str");
        OneInputStreamOperatorTestHarness<Row, Void> h = harness(TYPED, cols, List.of("k"), null);
        Object[] row = {
            1,
            true,
            (byte) -128,
            (short) 32767,
            Long.MIN_VALUE,
            Float.MIN_VALUE,
            -Double.MAX_VALUE,
            new BigDecimal("-1234567890123456789012345678.1234567890"),
            new byte[0],
            LocalDate.of(1600, 2, 29),
            LocalTime.of(23, 59, 59, 999_000_000),
            LocalDateTime.of(1969, 12, 31, 23, 59, 59, 999_999_000),
            Instant.parse("1969-12-31T23:59:59.999999Z"),
            "Zoë 😀"
        };
        h.processElement(rec(RowKind.INSERT, row));
        sql("SET TIME ZONE 'UTC'");
        h.snapshot(1, 1);
        h.notifyOfCompletedCheckpoint(1);
        assertEquals(
                List.of(
                        "1|t|-128|32767|-9223372036854775808|1e-45|-1.7976931348623157e+308"
                                + "|-1234567890123456789012345678.1234567890|\\x|1600-02-29|23:59:59.999|1969-12-31 23:59:59.999999"
                                + "|1969-12-31 23:59:59.999999+00|Zoë 😀"),
                select("SELECT * FROM " + TYPED, cols.size()));
        h.processElement(rec(RowKind.DELETE, row));
        h.snapshot(2, 2);
        h.notifyOfCompletedCheckpoint(2);
        assertEquals(List.of(), select("SELECT * FROM " + TYPED, cols.size()));
        assertEquals("2 2 1 0 1 0", progress(TYPED));
    }

    // -------------------------------------------------------------------------------------------

    private OneInputStreamOperatorTestHarness<Row, Void> harness(OperatorSubtaskState restore)
            throws Exception {
        return harness(
                TABLE, UsersDomainsMartJob.MART_COLUMNS, UsersDomainsMartJob.MART_KEY, restore);
    }

    private OneInputStreamOperatorTestHarness<Row, Void> harness(
            String table, List<String> columns, List<String> key, OperatorSubtaskState restore)
            throws Exception {
        MartSinkOperator op = new MartSinkOperator(URL, "postgres", "", table, columns, key);
        OneInputStreamOperatorTestHarness<Row, Void> h =
                new OneInputStreamOperatorTestHarness<>(op);
        harnesses.add(h);
        h.setup();
        h.initializeState(restore);
        h.open();
        return h;
    }

    private static StreamRecord<Row> rec(RowKind kind, Object... values) {
        return new StreamRecord<>(Row.ofKind(kind, values));
    }

    private static Properties props() {
        Properties p = new Properties();
        if (!URL.contains("user=")) {
            p.setProperty("user", "postgres");
        }
        return p;
    }

    private void sql(String s) throws SQLException {
        try (Statement st = db.createStatement()) {
            st.execute(s);
        }
    }

    private int count() throws SQLException {
        return rows().size();
    }

    private List<String> rows() throws SQLException {
        return select("SELECT * FROM " + TABLE + " ORDER BY id, domain_id", 6);
    }

    /** The query's rows, each as its first n columns' text joined with |. */
    private List<String> select(String query, int n) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Statement st = db.createStatement();
                ResultSet rs = st.executeQuery(query)) {
            while (rs.next()) {
                StringBuilder sb = new StringBuilder();
                for (int i = 1; i <= n; i++) {
                    sb.append(i > 1 ? "|" : "").append(rs.getString(i));
                }
                out.add(sb.toString());
            }
        }
        return out;
    }

    /**
     * "checkpoint changes inserted upserted_existing deleted delete_missed" of the progress rows.
     */
    private String progress() throws SQLException {
        return progress(TABLE);
    }

    private String progress(String table) throws SQLException {
        try (Statement st = db.createStatement();
                ResultSet rs =
                        st.executeQuery(
                                "SELECT max(checkpoint_id), sum(changes), sum(inserted),"
                                        + " sum(upserted_existing), sum(deleted), sum(delete_missed) FROM mart.sink_progress"
                                        + " WHERE mart_table = '"
                                        + table
                                        + "'")) {
            rs.next();
            StringBuilder sb = new StringBuilder();
            for (int i = 1; i <= 6; i++) {
                sb.append(i > 1 ? " " : "").append(rs.getString(i));
            }
            return sb.toString();
        }
    }
}
