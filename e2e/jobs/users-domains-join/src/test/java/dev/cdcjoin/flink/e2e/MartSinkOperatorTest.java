package dev.cdcjoin.flink.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
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
 * -De2e.jdbc.url=jdbc:postgresql://127.0.0.1:15432/e2e?user=postgres}; skipped without it). e2e/run.sh
 * runs it once its Postgres is up. Each test writes a scratch table {@code mart.sink_test} shaped
 * like the left mart ({@code UNIQUE NULLS NOT DISTINCT (id, domain_id)}).
 */
class MartSinkOperatorTest {

    private static final String TABLE = "mart.sink_test";
    private static final String URL = System.getProperty("e2e.jdbc.url", "");

    private Connection db;
    private final List<OneInputStreamOperatorTestHarness<Row, Void>> harnesses = new ArrayList<>();

    @BeforeEach
    void setUp() throws SQLException {
        assumeTrue(!URL.isEmpty(), "no -De2e.jdbc.url: MartSinkOperatorTest needs the e2e Postgres");
        db = new org.postgresql.Driver().connect(URL, props());
        sql("DROP TABLE IF EXISTS " + TABLE);
        sql("CREATE TABLE " + TABLE + " (id integer NOT NULL, firstname text, lastname text, domain_id integer,"
                + " user_id integer, domain_name text, UNIQUE NULLS NOT DISTINCT (id, domain_id))");
        sql("DELETE FROM mart.sink_progress WHERE mart_table = '" + TABLE + "'");
    }

    @AfterEach
    void tearDown() throws Exception {
        for (OneInputStreamOperatorTestHarness<Row, Void> h : harnesses) {
            h.close();
        }
        if (db != null) {
            sql("DROP TABLE IF EXISTS " + TABLE);
            sql("DELETE FROM mart.sink_progress WHERE mart_table = '" + TABLE + "'");
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
        h.processElement(rec(RowKind.DELETE, 1, "Ana", "Li", null, null, null));      // the null-padded row: deleted
        h.processElement(rec(RowKind.UPDATE_BEFORE, 2, "Bo", "OLD", 20, 2, "b.io"));  // not the stored row: kept
        h.processElement(rec(RowKind.INSERT, 2, "Bo", "New", 20, 2, "b.io"));         // key taken: overwritten
        h.snapshot(2, 2);
        h.notifyOfCompletedCheckpoint(2);
        assertEquals(List.of("2|Bo|New|20|2|b.io"), rows());
        assertEquals("2 5 2 1 1 1", progress());
    }

    // -------------------------------------------------------------------------------------------

    private OneInputStreamOperatorTestHarness<Row, Void> harness(OperatorSubtaskState restore) throws Exception {
        MartSinkOperator op = new MartSinkOperator(URL, "postgres", "", TABLE,
                UsersDomainsMartJob.MART_COLUMNS, UsersDomainsMartJob.MART_KEY);
        OneInputStreamOperatorTestHarness<Row, Void> h = new OneInputStreamOperatorTestHarness<>(op);
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
        List<String> out = new ArrayList<>();
        try (Statement st = db.createStatement();
                ResultSet rs = st.executeQuery("SELECT * FROM " + TABLE + " ORDER BY id, domain_id")) {
            while (rs.next()) {
                StringBuilder sb = new StringBuilder();
                for (int i = 1; i <= 6; i++) {
                    sb.append(i > 1 ? "|" : "").append(rs.getString(i));
                }
                out.add(sb.toString());
            }
        }
        return out;
    }

    /** "checkpoint changes inserted upserted_existing deleted delete_missed" of the progress rows. */
    private String progress() throws SQLException {
        try (Statement st = db.createStatement();
                ResultSet rs = st.executeQuery("SELECT max(checkpoint_id), sum(changes), sum(inserted),"
                        + " sum(upserted_existing), sum(deleted), sum(delete_missed) FROM mart.sink_progress"
                        + " WHERE mart_table = '" + TABLE + "'")) {
            rs.next();
            StringBuilder sb = new StringBuilder();
            for (int i = 1; i <= 6; i++) {
                sb.append(i > 1 ? " " : "").append(rs.getString(i));
            }
            return sb.toString();
        }
    }
}
