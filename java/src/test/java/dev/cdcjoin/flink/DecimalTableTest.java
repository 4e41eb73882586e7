package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.cdcjoin.flink.codec.CdcSchema;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.types.DataType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * DECIMAL columns keep their precision and scale through {@code fromChangelogStream} when the
 * table's schema is {@link JoinSpec#dataType()}: a DECIMAL(30, 3) beyond 18 digits and a
 * DECIMAL(10, 2), typed exactly in the table and exact in SQL arithmetic; without it, the {@code
 * TypeInformation} alone gives the legacy DECIMAL(38, 18).
 */
@SuppressWarnings("try") // CloseableIterator#close may throw InterruptedException
class DecimalTableTest {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withSlots(2);

    static final CdcSchema ACCOUNTS =
            CdcSchema.of(
                    DataTypes.ROW(
                            DataTypes.FIELD("id", DataTypes.BIGINT().notNull()),
                            DataTypes.FIELD("balance", DataTypes.DECIMAL(30, 3))));
    static final CdcSchema PAYMENTS =
            CdcSchema.of(
                    DataTypes.ROW(
                            DataTypes.FIELD("pid", DataTypes.BIGINT().notNull()),
                            DataTypes.FIELD("acct", DataTypes.BIGINT()),
                            DataTypes.FIELD("amount", DataTypes.DECIMAL(10, 2))));

    static CdcJoin join() {
        return CdcJoin.builder()
                .left("accounts", ACCOUNTS, List.of("id"), List.of("id"))
                .right("payments", PAYMENTS, List.of("acct"), List.of("pid"))
                .joinType(JoinType.LEFT)
                .build();
    }

    static List<String> collect(Table t) throws Exception {
        List<String> out = new ArrayList<>();
        try (CloseableIterator<Row> it = t.execute().collect()) {
            it.forEachRemaining(r -> out.add(r.toString()));
        }
        return out;
    }

    @Test
    void decimalsKeepTheirPrecisionThroughFromChangelogStream() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        CdcJoin join = join();
        CdcJoin.Result result =
                join.joinStrings(
                        env.fromData(
                                        List.of(
                                                "{\"op\":\"c\",\"after\":{\"id\":1,\"balance\":\"-123456789012345678901234.567\"}}",
                                                "{\"op\":\"c\",\"after\":{\"id\":2,\"balance\":\"0.001\"}}",
                                                "{\"op\":\"u\",\"before\":{\"id\":2,\"balance\":\"0.001\"},"
                                                        + "\"after\":{\"id\":2,\"balance\":\"99999999999999999999999999.999\"}}"))
                                .setParallelism(1),
                        env.fromData(
                                        List.of(
                                                "{\"op\":\"c\",\"after\":{\"pid\":10,\"acct\":1,\"amount\":\"12.34\"}}",
                                                "{\"op\":\"c\",\"after\":{\"pid\":11,\"acct\":1,\"amount\":\"-0.05\"}}",
                                                "{\"op\":\"c\",\"after\":{\"pid\":12,\"acct\":3,\"amount\":\"99999999.99\"}}"))
                                .setParallelism(1));
        DataType rowType = join.spec().dataType();
        Table joined =
                tEnv.fromChangelogStream(
                        result.rows(), Schema.newBuilder().fromRowDataType(rowType).build());
        assertEquals("DECIMAL(30, 3)", columnType(joined, "balance"));
        assertEquals("DECIMAL(10, 2)", columnType(joined, "amount"));
        assertEquals("BIGINT NOT NULL", columnType(joined, "id"));
        assertEquals("BIGINT", columnType(joined, "pid"), "null-padded: nullable");

        tEnv.createTemporaryView("joined", joined);
        List<String> changelog =
                collect(
                        tEnv.sqlQuery(
                                "SELECT id, CAST(balance AS STRING) AS b, amount, balance + amount AS total"
                                        + " FROM joined"));
        assertEquals(
                Map.of(
                        "[1, -123456789012345678901234.567, 12.34, -123456789012345678901222.227]",
                                1,
                        "[1, -123456789012345678901234.567, -0.05, -123456789012345678901234.617]",
                                1,
                        "[2, 99999999999999999999999999.999, null, null]", 1),
                Changelogs.materialize(changelog));
        List<String> sums = collect(tEnv.sqlQuery("SELECT SUM(amount) AS s FROM joined"));
        assertEquals(Map.of("[12.29]", 1), Changelogs.materialize(sums));

        // The TypeInformation alone loses the declared precision: what dataType() is for.
        Table legacy =
                tEnv.fromChangelogStream(
                        join().joinStrings(
                                        env.fromData(
                                                List.of(
                                                        "{\"op\":\"c\",\"after\":{\"id\":1,\"balance\":\"1.5\"}}")),
                                        env.fromData(
                                                List.of(
                                                        "{\"op\":\"c\",\"after\":{\"pid\":1,\"acct\":1,\"amount\":\"1\"}}")))
                                .rows());
        assertEquals("DECIMAL(38, 18)", columnType(legacy, "balance"));
    }

    /** A column's SQL type, e.g. {@code DECIMAL(30, 3)}. */
    static String columnType(Table t, String name) {
        return t.getResolvedSchema()
                .getColumn(name)
                .orElseThrow()
                .getDataType()
                .getLogicalType()
                .asSummaryString();
    }
}
