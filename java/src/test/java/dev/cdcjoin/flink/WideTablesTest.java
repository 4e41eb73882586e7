package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A table of 1,000 columns (Postgres allows 1,600) of five types, nulls and escaped strings among
 * them, inserted, updated and deleted, LEFT joined with a narrow one, every column selected: the
 * same rows on both engines as the join of the tables the messages leave.
 */
@SuppressWarnings("try") // CloseableIterator#close may throw InterruptedException
class WideTablesTest {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withSlots(4);

    static final int COLUMNS = 1000;
    static final String[] TYPES = {"INT", "STRING", "DOUBLE", "BOOLEAN", "BIGINT"};

    static final CdcSchema WIDE = wideSchema();
    static final CdcSchema ORDERS =
            CdcSchema.of(
                    Column.notNull("id", "BIGINT"),
                    Column.nullable("wide_row", "BIGINT"),
                    Column.nullable("note", "STRING"));

    static CdcSchema wideSchema() {
        List<Column> columns = new ArrayList<>();
        columns.add(Column.notNull("id", "BIGINT"));
        for (int c = 1; c < COLUMNS; c++) {
            columns.add(Column.nullable("c" + c, TYPES[c % TYPES.length]));
        }
        return CdcSchema.of(columns);
    }

    /** Column {@code c} (from 1) of wide row {@code id} in its {@code version}. */
    static Object value(long id, int c, int version) {
        if ((id + c + version) % 7 == 0) {
            return null;
        }
        switch (TYPES[c % TYPES.length]) {
            case "INT":
                return (int) (id * 1000 + c + version);
            case "STRING":
                return "s" + id + "_" + c + "_" + version + (c % 3 == 0 ? " \"q\\ é" : "");
            case "DOUBLE":
                return id + c / 4.0 + version;
            case "BOOLEAN":
                return (id + c + version) % 2 == 0;
            default:
                return id * 1_000_000L + c + version;
        }
    }

    static Object[] wideRow(long id, int version) {
        Object[] row = new Object[COLUMNS];
        row[0] = id;
        for (int c = 1; c < COLUMNS; c++) {
            row[c] = value(id, c, version);
        }
        return row;
    }

    static String json(Object[] row) {
        StringBuilder b = new StringBuilder("{");
        for (int c = 0; c < row.length; c++) {
            b.append(c == 0 ? "\"id\":" : ",\"c" + c + "\":");
            Object v = row[c];
            b.append(v instanceof String ? RandomCdc.JSON.valueToTree(v).toString() : v);
        }
        return b.append('}').toString();
    }

    static String message(String op, Object[] before, Object[] after) {
        return "{\"op\":\""
                + op
                + "\",\"before\":"
                + (before == null ? "null" : json(before))
                + ",\"after\":"
                + (after == null ? "null" : json(after))
                + "}";
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void everyColumnOfAThousandIsJoined(Engine engine) throws Exception {
        List<String> wide = new ArrayList<>();
        Map<Long, Object[]> wideRows = new TreeMap<>();
        for (long id = 0; id < 50; id++) {
            wideRows.put(id, wideRow(id, 0));
            wide.add(message("c", null, wideRows.get(id)));
        }
        for (long id = 0; id < 50; id += 3) {
            Object[] after = wideRow(id, 1);
            wide.add(message("u", wideRows.put(id, after), after));
        }
        for (long id = 9; id < 50; id += 10) {
            wide.add(message("d", wideRows.remove(id), null));
        }
        List<String> orders = new ArrayList<>();
        for (long id = 0; id < 60; id++) {
            String after =
                    "{\"id\":" + id + ",\"wide_row\":" + id % 55 + ",\"note\":\"n" + id + "\"}";
            orders.add("{\"op\":\"c\",\"before\":null,\"after\":" + after + "}");
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        CdcJoin join =
                CdcJoin.builder()
                        .left("wide", WIDE, List.of("id"), List.of("id"))
                        .right("orders", ORDERS, List.of("wide_row"), List.of("id"))
                        .joinType(JoinType.LEFT)
                        .engine(engine)
                        .batchSize(16)
                        .build();
        List<String> changelog = new ArrayList<>();
        try (CloseableIterator<String> it =
                join.joinStrings(
                                env.fromData(wide).setParallelism(1),
                                env.fromData(orders).setParallelism(1))
                        .rows()
                        .map(Row::toString)
                        .executeAndCollect("wide tables")) {
            it.forEachRemaining(changelog::add);
        }
        Map<String, Integer> expected = new TreeMap<>();
        wideRows.forEach(
                (id, w) -> {
                    boolean matched = false;
                    for (long o = 0; o < 60; o++) {
                        if (o % 55 == id) {
                            add(expected, w, o, o % 55, "n" + o);
                            matched = true;
                        }
                    }
                    if (!matched) {
                        add(expected, w, null, null, null);
                    }
                });
        assertEquals(expected, Changelogs.materialize(changelog));
    }

    private static void add(Map<String, Integer> rows, Object[] wide, Object... order) {
        Object[] values = new Object[wide.length + order.length];
        System.arraycopy(wide, 0, values, 0, wide.length);
        System.arraycopy(order, 0, values, wide.length, order.length);
        rows.merge(Row.of(values).toString().substring(2), 1, Integer::sum);
    }
}
