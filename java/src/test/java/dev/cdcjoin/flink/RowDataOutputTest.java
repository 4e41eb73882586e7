package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import dev.cdcjoin.flink.demo.UsersDomainsTrace;
import dev.cdcjoin.flink.nativelib.NativeDecoder;
import dev.cdcjoin.flink.runtime.GoldenFiles;
import dev.cdcjoin.flink.runtime.JoinBatches;
import dev.cdcjoin.flink.runtime.JoinOutput;
import dev.cdcjoin.flink.runtime.NativeJoinOperator;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.data.conversion.DataStructureConverter;
import org.apache.flink.table.data.conversion.DataStructureConverters;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.DataType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The output in Flink's internal form ({@link CdcJoin.Result#rowData()}): read back with Flink's
 * own converter ({@link DataStructureConverters}), it is the {@link Row} output, row for row, for
 * every column type, every join type and the shared vectors, in the operator harness and in a job.
 */
@SuppressWarnings("try") // CloseableIterator#close may throw InterruptedException
class RowDataOutputTest {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withSlots(4);

    /** Flink's converter of internal rows of {@code type} to {@link Row}s. */
    static DataStructureConverter<Object, Object> converter(DataType type) {
        DataStructureConverter<Object, Object> c = DataStructureConverters.getConverter(type);
        c.open(RowDataOutputTest.class.getClassLoader());
        return c;
    }

    /** {@code row} converted by {@code converter}, with positional fields as the Row output. */
    static Row external(DataStructureConverter<Object, Object> converter, RowData row) {
        Row named = (Row) converter.toExternal(row);
        Object[] values = new Object[named.getArity()];
        for (int i = 0; i < values.length; i++) {
            values[i] = named.getField(i);
        }
        return Row.ofKind(named.getKind(), values);
    }

    private static final CdcSchema EVERY_TYPE =
            CdcSchema.of(
                    Column.nullable("b", "BOOLEAN"),
                    Column.nullable("t", "TINYINT"),
                    Column.nullable("s", "SMALLINT"),
                    Column.nullable("i", "INT"),
                    Column.nullable("l", "BIGINT"),
                    Column.nullable("f", "FLOAT"),
                    Column.nullable("d", "DOUBLE"),
                    Column.nullable("dec", "DECIMAL(10, 2)"),
                    Column.nullable("wide", "DECIMAL(38, 4)"),
                    Column.nullable("str", "STRING"),
                    Column.nullable("bin", "BYTES"),
                    Column.nullable("day", "DATE"),
                    Column.nullable("tm", "TIME(3)"),
                    Column.nullable("ts3", "TIMESTAMP(3)"),
                    Column.nullable("ts6", "TIMESTAMP(6)"),
                    Column.nullable("ts9", "TIMESTAMP(9)"),
                    Column.nullable("ltz", "TIMESTAMP_LTZ(6)"),
                    Column.notNull("id", "BIGINT"));

    /**
     * The three rows of {@code tests/wire/flink_rows.bin}, written by the native join's Flink rows
     * (Rust {@code flink_rows::tests::flink_rows_layout}, which spells the same values).
     */
    private static final Object[][] GOLDEN_ROWS = {
        {
            true,
            (byte) -7,
            (short) 300,
            -5,
            Long.MIN_VALUE,
            1.5f,
            -0.25,
            new BigDecimal("-12345678.91"),
            new BigDecimal("-1234567890123456789012.3456"),
            "seven b",
            new byte[0],
            LocalDate.of(1969, 12, 31),
            LocalTime.of(23, 59, 59, 999_000_000),
            LocalDateTime.of(1960, 1, 1, 0, 0, 0, 1_000_000),
            LocalDateTime.of(1969, 12, 31, 23, 59, 59, 999_999_000),
            LocalDateTime.of(2024, 2, 29, 12, 0, 0, 123_456_789),
            Instant.ofEpochSecond(-1, 1000),
            1L
        },
        {
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            new BigDecimal("-0.0001"),
            "eight by, ünïcødé ✓",
            new byte[] {-1, 0, 1, 2, 3, 4, 5, 6, 7},
            null,
            null,
            null,
            null,
            null,
            null,
            2L
        },
        {
            false,
            Byte.MAX_VALUE,
            Short.MIN_VALUE,
            Integer.MAX_VALUE,
            42L,
            -0.0f,
            Double.NaN,
            new BigDecimal("99999999.99"),
            new BigDecimal("9999999999999999999999999999999999.9999"),
            "",
            "1234567".getBytes(StandardCharsets.UTF_8),
            LocalDate.of(9999, 12, 31),
            LocalTime.MIDNIGHT,
            LocalDateTime.of(2024, 1, 1, 0, 0),
            LocalDateTime.of(1970, 1, 1, 0, 0, 0, 1000),
            LocalDateTime.of(1969, 12, 31, 23, 59, 59, 999_999_999),
            Instant.ofEpochSecond(1_700_000_000L, 999_999_000),
            3L
        }
    };

    /**
     * Every column type, as the native join writes Flink rows: the shared golden file's entries
     * (each row the right row's columns reversed then the left row's: {@code +I[0, 1]}, {@code
     * -U[1, null]}, {@code +U[2, 0]} of {@link #GOLDEN_ROWS}, then a rejection), read as the
     * operator reads them and pointed at as it does, equal the values read back with Flink's
     * converter.
     */
    @Test
    void goldenFlinkRowsReadBackWithFlinksConverter() throws Exception {
        int n = EVERY_TYPE.columns().size();
        DataTypes.Field[] fields = new DataTypes.Field[2 * n];
        for (int i = 0; i < 2 * n; i++) {
            Column c = EVERY_TYPE.columns().get(i < n ? n - 1 - i : i - n);
            fields[i] = DataTypes.FIELD(c.name() + i, c.type().dataType(true));
        }
        List<Row> expected =
                List.of(
                        joined(RowKind.INSERT, GOLDEN_ROWS[0], GOLDEN_ROWS[1]),
                        joined(RowKind.UPDATE_BEFORE, GOLDEN_ROWS[1], null),
                        joined(RowKind.UPDATE_AFTER, GOLDEN_ROWS[2], GOLDEN_ROWS[0]));

        byte[] golden = GoldenFiles.read("flink_rows.bin");
        ByteBuffer out = ByteBuffer.wrap(golden).order(ByteOrder.LITTLE_ENDIAN);
        JoinBatches.Entries e = new JoinBatches.Entries(1).reset(out, 0);
        DataStructureConverter<Object, Object> converter = converter(DataTypes.ROW(fields));
        List<Row> read = new ArrayList<>();
        while (e.next() && !e.isRejection()) {
            int at = e.inputAt(0);
            BinaryRowData row = new BinaryRowData(2 * n);
            row.pointTo(MemorySegmentFactory.wrap(golden), at, out.getInt(at - 4));
            assertEquals(RowKind.fromByteValue(e.kind()), row.getRowKind());
            read.add(external(converter, row));
        }
        assertEquals(expected, read);
        assertTrue(e.isRejection(), "the rejection follows the rows");
        assertEquals(JoinBatches.SIDE_RIGHT, e.rejectedSide());
        assertEquals("no", e.message());
        assertFalse(e.next(), "nothing after the rejection");
    }

    /** The golden file's projection of {@code left} and {@code right} (null: null-padded). */
    private static Row joined(RowKind kind, Object[] left, Object[] right) {
        int n = left.length;
        Object[] values = new Object[2 * n];
        for (int i = 0; i < n; i++) {
            values[i] = right == null ? null : right[n - 1 - i];
            values[n + i] = left[i];
        }
        return Row.ofKind(kind, values);
    }

    static Stream<Arguments> vectorsAndJoinTypes() throws Exception {
        return TestVectors.all().stream()
                .flatMap(v -> Arrays.stream(JoinType.values()).map(t -> Arguments.of(v, t)));
    }

    /**
     * The shared vectors: the operator's {@link RowData}, converted with Flink's converter, is its
     * {@link Row} output row for row, every join type (null-padded sides included).
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("vectorsAndJoinTypes")
    void vectorsRowDataIsTheRowOutputRowForRow(TestVectors.Vector v, JoinType type)
            throws Exception {
        JoinSpec def = new JoinSpec(v.left, v.right, type, false, null, null);
        NativeJoinOperator<Row> rowsOp =
                NativeJoinOperator.of(def, JoinOutput.ROWS, 3, 1000, BadRecordPolicy.FAIL);
        NativeJoinOperator<RowData> dataOp =
                NativeJoinOperator.of(def, JoinOutput.ROW_DATA, 3, 1000, BadRecordPolicy.FAIL);
        List<Row> rows;
        List<RowData> data;
        try (NativeDecoder left = new NativeDecoder(def.left().decoderConfigJson(false));
                NativeDecoder right = new NativeDecoder(def.right().decoderConfigJson(false));
                var rowsHarness = RawOutputTest.harness(rowsOp);
                var dataHarness = JoinHarnesses.of(dataOp)) {
            dataHarness.setup(new RowDataSerializer(def.rowType()));
            dataHarness.open();
            for (String e : v.events) {
                boolean isLeft = e.startsWith("L|");
                for (ChangeRecord c : NativeChanges.decode(isLeft ? left : right, e.substring(2))) {
                    if (isLeft) {
                        rowsHarness.processElement1(JoinHarnesses.batch(c));
                        dataHarness.processElement1(JoinHarnesses.batch(c));
                    } else {
                        rowsHarness.processElement2(JoinHarnesses.batch(c));
                        dataHarness.processElement2(JoinHarnesses.batch(c));
                    }
                }
            }
            rowsOp.flush();
            dataOp.flush();
            rows = new ArrayList<>(rowsHarness.extractOutputValues());
            data = new ArrayList<>(dataHarness.extractOutputValues());
        }
        assertFalse(rows.isEmpty(), "an empty changelog");
        assertEquals(v.expected.get(type).size(), rows.size(), "the vector's changelog length");
        DataStructureConverter<Object, Object> converter = converter(def.dataType());
        List<Row> converted = new ArrayList<>();
        for (RowData r : data) {
            assertTrue(r instanceof BinaryRowData, "a binary row: " + r.getClass());
            converted.add(external(converter, r));
        }
        assertEquals(rows, converted);
    }

    /**
     * In a job, both engines: {@code rowData()} typed {@code InternalTypeInfo.of(rowType())},
     * projected, materializes to the same result as {@code rows()} and as the reference join.
     */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void rowDataInAJobMaterializesToTheRowOutput(Engine engine) throws Exception {
        UsersDomainsTrace trace = RawOutputTest.jobTrace();
        CdcJoin join =
                RawOutputTest.usersDomains(JoinType.FULL).engine(engine).batchSize(50).build();
        CdcJoin.Result result = RawOutputTest.joinInAJob(join, trace);
        assertEquals(
                InternalTypeInfo.of(join.spec().rowType()), result.rowData().getType(), "type");
        assertEquals(result.rowData(), result.rowData(), "one operator per output form");
        DataType type = join.spec().dataType();
        DataStream<String> data =
                result.rowData()
                        .map(r -> "DATA" + external(converter(type), r))
                        .returns(String.class);
        RawOutputTest.assertBothMaterialize(trace, "DATA", data, result.rows().map(Row::toString));
    }
}
