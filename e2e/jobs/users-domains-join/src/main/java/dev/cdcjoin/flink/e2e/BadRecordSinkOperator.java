package dev.cdcjoin.flink.e2e;

import dev.cdcjoin.flink.BadRecord;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * Writes the records a job's decoders or join rejected ({@code Result.badRecords()} under {@code
 * BadRecordPolicy.SIDE_OUTPUT}) to {@code mart.fid_bad_records}, one autocommitted row each: the
 * mart, the input, the reason, an excerpt of the record and where it lies in Kafka. So a rejected
 * record is a failed check with its reason (the e2e expects the table empty), not a job that fails
 * and restarts for ever. At least once is enough: a replay can only repeat a row, and any row fails
 * the check.
 */
public final class BadRecordSinkOperator extends AbstractStreamOperator<Void>
        implements OneInputStreamOperator<BadRecord, Void> {

    private static final long serialVersionUID = 1L;

    static final String TABLE = "mart.fid_bad_records";

    /** Characters of the record kept: enough to see the offending field, not a 20 KB row. */
    private static final int EXCERPT = 2000;

    private final String jdbcUrl;
    private final String jdbcUser;
    private final String jdbcPassword;
    private final String martTable;

    private transient Connection connection;
    private transient PreparedStatement insert;

    /**
     * A sink of one job's bad records.
     *
     * @param martTable the job's mart, to tell the jobs' rows apart
     */
    public BadRecordSinkOperator(
            String jdbcUrl, String jdbcUser, String jdbcPassword, String martTable) {
        this.jdbcUrl = jdbcUrl;
        this.jdbcUser = jdbcUser;
        this.jdbcPassword = jdbcPassword;
        this.martTable = martTable;
    }

    @Override
    public void open() throws Exception {
        super.open();
        connection =
                E2eJobs.connect(
                        jdbcUrl, jdbcUser, jdbcPassword, "cdcjoin-e2e bad records " + martTable);
        insert =
                connection.prepareStatement(
                        "INSERT INTO "
                                + TABLE
                                + " (mart_table, source, reason, record, kafka_topic,"
                                + " kafka_partition, kafka_offset) VALUES (?, ?, ?, ?, ?, ?, ?)");
        getRuntimeContext()
                .registerUserCodeClassLoaderReleaseHookIfAbsent(
                        "cdcjoin-e2e-deregister-pgjdbc", MartSinkOperator::deregisterDriver);
    }

    @Override
    public void processElement(StreamRecord<BadRecord> element) throws SQLException {
        BadRecord b = element.getValue();
        String raw = b.rawAsString();
        LOG.warn("bad record for {}: {}", martTable, b.reason);
        insert.setString(1, martTable);
        insert.setString(2, b.source);
        insert.setString(3, b.reason);
        insert.setString(4, raw.length() > EXCERPT ? raw.substring(0, EXCERPT) + "..." : raw);
        insert.setString(5, b.topic);
        insert.setObject(6, b.topic == null ? null : b.partition, Types.INTEGER);
        insert.setObject(7, b.topic == null ? null : b.offset, Types.BIGINT);
        insert.executeUpdate();
    }

    @Override
    public void close() throws Exception {
        try {
            super.close();
        } finally {
            if (connection != null) {
                connection.close();
                connection = null;
            }
        }
    }
}
