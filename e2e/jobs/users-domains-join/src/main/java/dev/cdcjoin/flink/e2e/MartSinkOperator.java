package dev.cdcjoin.flink.e2e;

import dev.cdcjoin.flink.nativelib.NativeLibrary;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

/**
 * Applies a changelog of {@link Row}s to a Postgres table, exactly once: {@code +I}/{@code +U}
 * insert the row (an upsert on the table's key, see below), {@code -U}/{@code -D} delete it only
 * where the stored row equals the retracted row, column by column.
 *
 * <p>How: the rows that arrive between two checkpoint barriers are one batch. {@link
 * #snapshotState} puts it, with the batches not yet committed, into operator state (so a completed
 * checkpoint never lacks a row that reached the sink before its barrier); {@link
 * #notifyCheckpointComplete} applies the batches up to that checkpoint to the database in one
 * transaction, in order, together with the sink's progress row in {@code mart.sink_progress}
 * ({@code (mart_table, job_id, subtask)} → last applied checkpoint id). After a failure the job
 * restores the last completed checkpoint: its batches not yet applied (the progress row tells) are
 * applied in {@link #initializeState}, and the replay starts after them. So the table always holds
 * exactly the changelog up to a completed checkpoint, which is what the restored join state has
 * emitted: no row is lost, none applied twice, and no row written from input that is replayed in
 * another order after the restore is left behind (an at-least-once sink can leave those: the replay
 * need not retract a row that the lost attempt inserted).
 *
 * <p>The table needs a unique key ({@code keyColumns}, e.g. {@code (id, domain_id)} with {@code
 * UNIQUE NULLS NOT DISTINCT} where a key column can be NULL) that includes the join key, and this
 * operator must receive the join's output forward (same parallelism, chained), so that all changes
 * of one table row arrive in one ordered stream. The first key column must never be NULL (it is the
 * index probe of the deletes).
 *
 * <p>Values: every Java class the product's rows carry ({@link MartValues}), kept exactly in the
 * batches and bound as they are (an {@code Instant} as a UTC {@code OffsetDateTime}), so a
 * retraction finds the row its insertion stored, whatever the column types.
 *
 * <p>Consistency counters, kept in the progress row in the same transaction (so they are exact
 * across failures): {@code inserted} (a {@code +I}/{@code +U} that found its key free), {@code
 * upserted_existing} (one that found its key taken: a retraction is missing; the row is then
 * overwritten), {@code deleted}, {@code delete_missed} (a retraction whose row was not stored as
 * retracted: nothing deleted). With a correct changelog the two anomaly counters stay 0.
 */
public final class MartSinkOperator extends AbstractStreamOperator<Void>
        implements OneInputStreamOperator<Row, Void> {

    private static final long serialVersionUID = 1L;

    static final String PROGRESS_TABLE = "mart.sink_progress";
    private static final int BATCH_FORMAT = 1;

    private final String jdbcUrl;
    private final String jdbcUser;
    private final String jdbcPassword;
    private final String table;
    private final List<String> columns;
    private final List<String> keyColumns;

    private transient Connection connection;
    private transient int[] sqlTypes;
    private transient String insertSql;
    private transient String upsertSql;
    private transient String deleteSql;

    /** The rows since the last barrier, encoded. */
    private transient ByteArrayOutputStream current;

    private transient DataOutputStream currentOut;
    private transient int currentCount;

    /** Batches snapshotted but not yet committed, by checkpoint id. */
    private transient TreeMap<Long, byte[]> pending;

    private transient ListState<byte[]> pendingState;

    private transient String jobId;
    private transient int subtask;

    /**
     * Adds a mart sink after {@code rows}: forward, so at their parallelism and chained to their
     * operator (one mart row's changes come from one ordered stream), uid {@code mart-sink}.
     *
     * @param rows the join's changelog
     * @param url the mart database
     * @param user its user
     * @param password its password
     * @param table the mart table
     * @param columns its columns, in the rows' order
     * @param key its primary key columns
     */
    static void sink(
            DataStream<Row> rows,
            String url,
            String user,
            String password,
            String table,
            List<String> columns,
            List<String> key) {
        E2eJobs.chained(
                        rows.forward()
                                .transform(
                                        "mart sink " + table,
                                        Types.VOID,
                                        new MartSinkOperator(
                                                url, user, password, table, columns, key)))
                .uid("mart-sink");
    }

    /**
     * A sink into {@code table}.
     *
     * @param jdbcUrl e.g. {@code jdbc:postgresql://127.0.0.1:15432/e2e}
     * @param jdbcUser the user
     * @param jdbcPassword the password, empty for none
     * @param table the table, e.g. {@code mart.users_domains}
     * @param columns its columns, in the rows' field order
     * @param keyColumns its unique key (first column never NULL)
     */
    public MartSinkOperator(
            String jdbcUrl,
            String jdbcUser,
            String jdbcPassword,
            String table,
            List<String> columns,
            List<String> keyColumns) {
        if (!columns.containsAll(keyColumns) || keyColumns.isEmpty()) {
            throw new IllegalArgumentException(
                    "key " + keyColumns + " not among the columns " + columns);
        }
        this.jdbcUrl = jdbcUrl;
        this.jdbcUser = jdbcUser;
        this.jdbcPassword = jdbcPassword;
        this.table = table;
        this.columns = List.copyOf(columns);
        this.keyColumns = List.copyOf(keyColumns);
    }

    // ---------------------------------------------------------------------------------------
    // lifecycle

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        jobId = getRuntimeContext().getJobInfo().getJobId().toString();
        subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        pending = new TreeMap<>();
        newCurrent();
        pendingState =
                context.getOperatorStateStore()
                        .getListState(
                                new ListStateDescriptor<>(
                                        "mart-sink-pending-batches",
                                        PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO));
        connect();
        if (context.isRestored()) {
            // Every batch in the restored state belongs to a completed checkpoint (the one
            // restored, or an earlier one whose commit had not happened): apply the ones the
            // database does not have yet.
            List<byte[]> restored = new ArrayList<>();
            for (byte[] b : pendingState.get()) {
                restored.add(b);
            }
            int applied = commit(restored);
            LOG.info(
                    "mart sink {} subtask {}: restored {} uncommitted batch(es), applied {} (the others were in the database)",
                    table,
                    subtask,
                    restored.size(),
                    applied);
            pendingState.clear();
        }
    }

    @Override
    public void open() throws Exception {
        super.open();
        // The product's loader: one extracted copy per class loader. Print where this job's class
        // loader got it from (the join operator in this chain uses the very same class), and call
        // into it, so the e2e can check both jobs on both TaskManagers.
        NativeLibrary.load();
        String line =
                "E2E_NATIVE job="
                        + jobId
                        + " table="
                        + table
                        + " subtask="
                        + subtask
                        + " attempt="
                        + getRuntimeContext().getTaskInfo().getAttemptNumber()
                        + " tm="
                        + System.getProperty("e2e.tm", "?")
                        + " pid="
                        + ProcessHandle.current().pid()
                        + " loader="
                        + Integer.toHexString(
                                System.identityHashCode(NativeLibrary.class.getClassLoader()))
                        + " version="
                        + NativeLibrary.version()
                        + " loadedFrom="
                        + NativeLibrary.loadedFrom();
        System.out.println(line);
        LOG.info(line);
        getRuntimeContext()
                .registerUserCodeClassLoaderReleaseHookIfAbsent(
                        "cdcjoin-e2e-deregister-pgjdbc", MartSinkOperator::deregisterDriver);
    }

    @Override
    public void processElement(StreamRecord<Row> element) throws Exception {
        Row row = element.getValue();
        if (row.getArity() != columns.size()) {
            throw new IllegalArgumentException(
                    "row of arity "
                            + row.getArity()
                            + " for "
                            + columns.size()
                            + " columns: "
                            + row);
        }
        currentOut.writeByte(row.getKind().toByteValue());
        for (int i = 0; i < columns.size(); i++) {
            MartValues.write(currentOut, row.getField(i));
        }
        currentCount++;
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        long checkpointId = context.getCheckpointId();
        if (currentCount > 0) {
            pending.put(checkpointId, sealCurrent(checkpointId));
            newCurrent();
        }
        pendingState.update(new ArrayList<>(pending.values()));
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws Exception {
        super.notifyCheckpointComplete(checkpointId);
        Map<Long, byte[]> done = pending.headMap(checkpointId, true);
        if (!done.isEmpty()) {
            commit(new ArrayList<>(done.values()));
            done.clear();
        }
    }

    @Override
    public void close() throws Exception {
        try {
            super.close();
        } finally {
            if (connection != null) {
                try {
                    connection.close();
                } catch (SQLException ignored) {
                    // closing anyway
                }
                connection = null;
            }
        }
    }

    static void deregisterDriver() {
        try {
            if (org.postgresql.Driver.isRegistered()) {
                org.postgresql.Driver.deregister();
            }
        } catch (SQLException | RuntimeException ignored) {
            // best effort: it only frees the job's class loader sooner
        }
    }

    // ---------------------------------------------------------------------------------------
    // the database

    private void connect() throws SQLException {
        connection =
                E2eJobs.connect(
                        jdbcUrl, jdbcUser, jdbcPassword, "cdcjoin-e2e " + table + " #" + subtask);
        connection.setAutoCommit(false);
        sqlTypes = new int[columns.size()];
        try (Statement s = connection.createStatement();
                ResultSet rs =
                        s.executeQuery(
                                "SELECT "
                                        + String.join(", ", columns)
                                        + " FROM "
                                        + table
                                        + " WHERE false")) {
            ResultSetMetaData md = rs.getMetaData();
            for (int i = 0; i < sqlTypes.length; i++) {
                sqlTypes[i] = md.getColumnType(i + 1);
            }
        }
        try (Statement s = connection.createStatement()) {
            s.executeQuery("SELECT 1 FROM " + PROGRESS_TABLE + " WHERE false").close();
        } catch (SQLException e) {
            throw new SQLException(
                    "the mart sink needs its progress table "
                            + PROGRESS_TABLE
                            + " (see e2e/sql/schema.sql)",
                    e);
        }
        connection.commit();
        String cols = String.join(", ", columns);
        String params = columns.stream().map(c -> "?").collect(Collectors.joining(", "));
        String key = String.join(", ", keyColumns);
        insertSql =
                "INSERT INTO "
                        + table
                        + " ("
                        + cols
                        + ") VALUES ("
                        + params
                        + ") ON CONFLICT ("
                        + key
                        + ") DO NOTHING";
        String set =
                columns.stream()
                        .filter(c -> !keyColumns.contains(c))
                        .map(c -> c + " = EXCLUDED." + c)
                        .collect(Collectors.joining(", "));
        upsertSql =
                "INSERT INTO "
                        + table
                        + " ("
                        + cols
                        + ") VALUES ("
                        + params
                        + ") ON CONFLICT ("
                        + key
                        + ") DO "
                        + (set.isEmpty() ? "NOTHING" : "UPDATE SET " + set);
        String first = keyColumns.get(0);
        deleteSql =
                "DELETE FROM "
                        + table
                        + " WHERE "
                        + columns.stream()
                                .map(
                                        c ->
                                                c.equals(first)
                                                        ? c + " = ?"
                                                        : c + " IS NOT DISTINCT FROM ?")
                                .collect(Collectors.joining(" AND "));
    }

    /** One decoded batch. */
    private static final class Batch {
        long checkpointId;
        String jobId;
        int subtask;
        byte[] kinds;
        Object[][] rows;
    }

    /**
     * Applies the batches (any order; sorted here) that the progress table does not have yet, in
     * one transaction; returns how many were applied.
     */
    private int commit(List<byte[]> encoded) throws Exception {
        List<Batch> batches = new ArrayList<>();
        for (byte[] b : encoded) {
            batches.add(decode(b));
        }
        batches.sort(
                Comparator.comparing((Batch b) -> b.jobId)
                        .thenComparingInt(b -> b.subtask)
                        .thenComparingLong(b -> b.checkpointId));
        int applied = 0;
        try {
            for (Batch b : batches) {
                long done = lockProgress(b.jobId, b.subtask);
                if (b.checkpointId <= done) {
                    continue;
                }
                long[] counts = apply(b); // inserted, upserted_existing, deleted, delete_missed
                try (PreparedStatement ps =
                        connection.prepareStatement(
                                "UPDATE "
                                        + PROGRESS_TABLE
                                        + " SET checkpoint_id = ?, batches = batches + 1, changes = changes + ?, inserted = inserted + ?,"
                                        + " upserted_existing = upserted_existing + ?, deleted = deleted + ?, delete_missed = delete_missed + ?,"
                                        + " updated_at = now() WHERE mart_table = ? AND job_id = ? AND subtask = ?")) {
                    ps.setLong(1, b.checkpointId);
                    ps.setLong(2, b.kinds.length);
                    for (int i = 0; i < 4; i++) {
                        ps.setLong(3 + i, counts[i]);
                    }
                    ps.setString(7, table);
                    ps.setString(8, b.jobId);
                    ps.setInt(9, b.subtask);
                    ps.executeUpdate();
                }
                if (counts[1] + counts[3] > 0) {
                    LOG.warn(
                            "mart sink {} subtask {}: checkpoint {}: {} insert(s) found their key taken, {} retraction(s) found no equal row",
                            table,
                            b.subtask,
                            b.checkpointId,
                            counts[1],
                            counts[3]);
                }
                applied++;
            }
            connection.commit();
        } catch (SQLException | RuntimeException e) {
            try {
                connection.rollback();
            } catch (SQLException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw new IOException(
                    "mart sink " + table + ": commit of " + batches.size() + " batch(es) failed",
                    e);
        }
        return applied;
    }

    /** The last checkpoint applied for (job, subtask), its row locked (created if missing). */
    private long lockProgress(String job, int origin) throws SQLException {
        try (PreparedStatement ins =
                connection.prepareStatement(
                        "INSERT INTO "
                                + PROGRESS_TABLE
                                + " (mart_table, job_id, subtask, checkpoint_id) VALUES (?, ?, ?, -1) ON CONFLICT DO NOTHING")) {
            ins.setString(1, table);
            ins.setString(2, job);
            ins.setInt(3, origin);
            ins.executeUpdate();
        }
        try (PreparedStatement sel =
                connection.prepareStatement(
                        "SELECT checkpoint_id FROM "
                                + PROGRESS_TABLE
                                + " WHERE mart_table = ? AND job_id = ? AND subtask = ? FOR UPDATE")) {
            sel.setString(1, table);
            sel.setString(2, job);
            sel.setInt(3, origin);
            try (ResultSet rs = sel.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /**
     * Applies one batch in order: consecutive inserts, resp. deletes, go in one JDBC batch. Returns
     * {inserted, upserted_existing, deleted, delete_missed}.
     */
    private long[] apply(Batch b) throws SQLException {
        long[] counts = new long[4];
        try (PreparedStatement insert = connection.prepareStatement(insertSql);
                PreparedStatement delete = connection.prepareStatement(deleteSql)) {
            int i = 0;
            while (i < b.kinds.length) {
                boolean retract = isRetraction(b.kinds[i]);
                int end = i;
                PreparedStatement ps = retract ? delete : insert;
                while (end < b.kinds.length && isRetraction(b.kinds[end]) == retract) {
                    bind(ps, b.rows[end]);
                    ps.addBatch();
                    end++;
                }
                int[] results = ps.executeBatch();
                for (int k = 0; k < results.length; k++) {
                    boolean hit = results[k] > 0 || results[k] == Statement.SUCCESS_NO_INFO;
                    if (retract) {
                        counts[hit ? 2 : 3]++;
                    } else if (hit) {
                        counts[0]++;
                    } else {
                        // the key is taken: no retraction came for the row there. Upsert anyway.
                        counts[1]++;
                        try (PreparedStatement up = connection.prepareStatement(upsertSql)) {
                            bind(up, b.rows[i + k]);
                            up.executeUpdate();
                        }
                    }
                }
                i = end;
            }
        }
        return counts;
    }

    private static boolean isRetraction(byte kind) {
        RowKind k = RowKind.fromByteValue(kind);
        return k == RowKind.UPDATE_BEFORE || k == RowKind.DELETE;
    }

    private void bind(PreparedStatement ps, Object[] row) throws SQLException {
        for (int c = 0; c < row.length; c++) {
            if (row[c] == null) {
                ps.setNull(c + 1, sqlTypes[c]);
            } else {
                ps.setObject(c + 1, MartValues.jdbc(row[c]));
            }
        }
    }

    // ---------------------------------------------------------------------------------------
    // batch encoding (operator state)

    private void newCurrent() {
        current = new ByteArrayOutputStream(4096);
        currentOut = new DataOutputStream(current);
        currentCount = 0;
    }

    private byte[] sealCurrent(long checkpointId) throws IOException {
        currentOut.flush();
        ByteArrayOutputStream all = new ByteArrayOutputStream(current.size() + 64);
        DataOutputStream out = new DataOutputStream(all);
        out.writeInt(BATCH_FORMAT);
        out.writeLong(checkpointId);
        out.writeUTF(jobId);
        out.writeInt(subtask);
        out.writeInt(currentCount);
        current.writeTo(out);
        out.flush();
        return all.toByteArray();
    }

    private Batch decode(byte[] bytes) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
        int format = in.readInt();
        if (format != BATCH_FORMAT) {
            throw new IOException("unknown mart sink batch format " + format);
        }
        Batch b = new Batch();
        b.checkpointId = in.readLong();
        b.jobId = in.readUTF();
        b.subtask = in.readInt();
        int n = in.readInt();
        b.kinds = new byte[n];
        b.rows = new Object[n][];
        for (int i = 0; i < n; i++) {
            b.kinds[i] = in.readByte();
            Object[] row = new Object[columns.size()];
            for (int c = 0; c < row.length; c++) {
                row[c] = MartValues.read(in);
            }
            b.rows[i] = row;
        }
        return b;
    }
}
