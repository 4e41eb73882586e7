package dev.cdcjoin.flink.javajoin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.cdcjoin.flink.SideSpec;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.types.Row;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;

/**
 * {@link RowEnvelopeReader}: the op rules on {@code Row(before, op, after)} envelopes, values
 * normalised as the native decoder emits them, and every rejection naming the record.
 */
class RowEnvelopeReaderTest {

    private static final SideSpec USERS =
            new SideSpec(
                    "users",
                    CdcSchema.of(
                            Column.notNull("id", "INT"), Column.nullable("v", "DECIMAL(5, 2)")),
                    List.of("id"),
                    List.of("id"),
                    null);

    private static List<String> read(RowEnvelopeReader reader, Row envelope) {
        List<String> out = new ArrayList<>();
        int n =
                reader.read(
                        envelope,
                        7,
                        new Collector<Row>() {
                            @Override
                            public void collect(Row row) {
                                out.add(row.toString());
                            }

                            @Override
                            public void close() {}
                        });
        assertEquals(out.size(), n);
        return out;
    }

    private static List<String> read(Row envelope) {
        return read(new RowEnvelopeReader(USERS, false), envelope);
    }

    private static String rejected(Row envelope) {
        return assertThrows(DebeziumDecodeException.class, () -> read(envelope)).getMessage();
    }

    private static Row user(int id, String v) {
        return Row.of(id, v == null ? null : new BigDecimal(v));
    }

    @Test
    void opsBecomeChangesWithValuesAtTheColumnsScale() {
        assertEquals(List.of("+I[1, 2.50]"), read(Row.of(null, "c", user(1, "2.5"))));
        assertEquals(List.of("+I[1, null]"), read(Row.of(null, 'r', user(1, null))));
        assertEquals(
                List.of("-U[1, 2.50]", "+U[1, 3.00]"),
                read(Row.of(user(1, "2.5"), "u", user(1, "3"))));
        assertEquals(List.of("-D[1, 2.50]"), read(Row.of(user(1, "2.5"), "d", null)));
        assertEquals(
                List.of("-D[1, 2.50]", "+I[1, 3.00]"),
                read(
                        new RowEnvelopeReader(USERS, true),
                        Row.of(user(1, "2.5"), "u", user(1, "3"))));
    }

    @Test
    void namedEnvelopesAreReadByName() {
        Row named = Row.withNames();
        named.setField("op", "c");
        named.setField("after", user(2, "1"));
        named.setField("before", null);
        assertEquals(List.of("+I[2, 1.00]"), read(named));
    }

    @Test
    void badEnvelopesAreRejectedNamingTheRecord() {
        assertEquals("users record #7: null envelope", rejected(null));
        assertEquals(
                "users record #7: expected Row(before, op, after), got 2 fields",
                rejected(Row.of("c", user(1, "1"))));
        assertEquals(
                "users record #7: unknown \"op\" value \"t\" (expected \"c\", \"r\", \"u\" or \"d\")",
                rejected(Row.of(null, "t", user(1, "1"))));
        assertEquals(
                "users record #7: unknown \"op\" value null (expected \"c\", \"r\", \"u\" or \"d\")",
                rejected(Row.of(null, null, user(1, "1"))));
        assertEquals(
                "users record #7: before/after must be a Row, found String",
                rejected(Row.of(null, "c", "x")));
        assertEquals(
                "users record #7: The \"after\" field of INSERT message is null.",
                rejected(Row.of(null, "c", null)));
        assertEquals(
                "users record #7: The \"before\" field of UPDATE message is null, if you are using"
                        + " Debezium Postgres Connector, please check the Postgres table has been"
                        + " set REPLICA IDENTITY to FULL level.",
                rejected(Row.of(null, "u", user(1, "1"))));
    }
}
