package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.codec.BinaryRowEncoder;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import dev.cdcjoin.flink.codec.RowCodec;
import dev.cdcjoin.flink.demo.UsersDomainsTrace;
import dev.cdcjoin.flink.nativelib.NativeDecoder;
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

    /** Values of {@link #EVERY_TYPE} that cross each of the layout's cases. */
    private static List<Object[]> everyTypeValues() {
        List<Object[]> rows = new ArrayList<>();
        rows.add(
                new Object[] {
                    true,
                    (byte) -7,
                    (short) 300,
                    -5,
                    Long.MIN_VALUE,
                    1.5f,
                    Double.NaN,
                    new BigDecimal("-12345678.91"),
                    new BigDecimal("-1234567890123456789012.3456"),
                    "",
                    new byte[0],
                    LocalDate.of(1969, 12, 31),
                    LocalTime.of(23, 59, 59, 999_000_000),
                    LocalDateTime.of(1960, 1, 1, 0, 0, 0, 1_000_000),
                    LocalDateTime.of(1969, 12, 31, 23, 59, 59, 999_999_000),
                    LocalDateTime.of(2024, 2, 29, 12, 0, 0, 123_456_789),
                    Instant.ofEpochSecond(-1, 1000),
                    1L
                });
        rows.add(
                new Object[] {
                    false,
                    Byte.MAX_VALUE,
                    Short.MIN_VALUE,
                    Integer.MAX_VALUE,
                    42L,
                    -0.0f,
                    1e300,
                    new BigDecimal("0.00"),
                    new BigDecimal("0.0000"),
                    "seven b",
                    "1234567".getBytes(StandardCharsets.UTF_8),
                    LocalDate.of(9999, 12, 31),
                    LocalTime.MIDNIGHT,
                    LocalDateTime.of(2024, 1, 1, 0, 0),
                    LocalDateTime.of(1970, 1, 1, 0, 0, 0, 1000),
                    LocalDateTime.of(1969, 12, 31, 23, 59, 59, 999_999_999),
                    Instant.ofEpochSecond(1_700_000_000L, 999_999_000),
                    2L
                });
        rows.add(
                new Object[] {
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    new BigDecimal("99999999.99"),
                    new BigDecimal("99999999999999999999999999999999.9999"),
                    "eight by, ünïcødé ✓ and more than a word",
                    "eight by".getBytes(StandardCharsets.UTF_8),
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    3L
                });
        rows.add(
                new Object[] {
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    new BigDecimal("-0.0001"),
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    4L
                });
        rows.add(
                new Object[] {
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    new BigDecimal("-128.0000"),
                    "ü",
                    new byte[] {-1, 0, 1},
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    5L
                });
        return rows;
    }

    /**
     * Every column type: rows of two sources side by side, projected, reordered and with a
     * null-padded source, written by {@link BinaryRowEncoder} and read back with Flink's converter,
     * equal the values {@link RowCodec} decodes, also after later rows were written.
     */
    @Test
    void everyColumnTypeReadsBackWithFlinksConverter() {
        RowCodec codec = new RowCodec(EVERY_TYPE);
        int n = codec.arity();
        // Output: every column of source 1 reversed, then every column of source 0.
        int[] source = new int[2 * n];
        int[] column = new int[2 * n];
        DataTypes.Field[] fields = new DataTypes.Field[2 * n];
        for (int i = 0; i < 2 * n; i++) {
            source[i] = i < n ? 1 : 0;
            column[i] = i < n ? n - 1 - i : i - n;
            Column c = EVERY_TYPE.columns().get(column[i]);
            fields[i] = DataTypes.FIELD(c.name() + i, c.type().dataType(true));
        }
        BinaryRowEncoder encoder =
                new BinaryRowEncoder(new RowCodec[] {codec, codec}, source, column);
        DataStructureConverter<Object, Object> converter = converter(DataTypes.ROW(fields));
        List<Object[]> rows = everyTypeValues();
        List<BinaryRowData> written = new ArrayList<>();
        List<Row> expectedRows = new ArrayList<>();
        // Many rounds, so that rows fill several chunks.
        for (int round = 0; round < 200; round++) {
            encodeEveryPair(encoder, codec, source, column, rows, written, expectedRows);
        }
        for (int r = 0; r < written.size(); r++) {
            assertEquals(expectedRows.get(r), external(converter, written.get(r)), "row #" + r);
            assertEquals(expectedRows.get(r).getKind(), written.get(r).getRowKind());
        }
        assertTrue(
                written.get(0).getSegments()[0] != written.get(written.size() - 1).getSegments()[0],
                "rows in more than one chunk");
    }

    /**
     * Encodes each row of {@code rows} beside each other one and beside a null-padded source,
     * adding the rows written and the rows expected.
     */
    private static void encodeEveryPair(
            BinaryRowEncoder encoder,
            RowCodec codec,
            int[] source,
            int[] column,
            List<Object[]> rows,
            List<BinaryRowData> written,
            List<Row> expectedRows) {
        for (int a = 0; a < rows.size(); a++) {
            for (int b = -1; b < rows.size(); b++) {
                byte[] left = codec.encode(rows.get(a));
                byte[] right = b < 0 ? new byte[0] : codec.encode(rows.get(b));
                ByteBuffer buf = ByteBuffer.allocate(3 + left.length + right.length);
                buf.order(ByteOrder.LITTLE_ENDIAN).position(3);
                buf.put(left).put(right);
                int[] starts = {3, b < 0 ? -1 : 3 + left.length};
                RowKind kind = RowKind.values()[(a + b + 1) % 4];
                BinaryRowData row = encoder.encode(kind.toByteValue(), buf, starts);

                Object[] expected = new Object[source.length];
                for (int i = 0; i < expected.length; i++) {
                    if (starts[source[i]] >= 0) {
                        expected[i] = codec.read(buf, starts[source[i]], column[i]);
                    }
                }
                written.add(row);
                expectedRows.add(Row.ofKind(kind, expected));
            }
        }
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
                NativeJoinOperator.rows(def, 3, 1000, BadRecordPolicy.FAIL);
        NativeJoinOperator<RowData> dataOp =
                NativeJoinOperator.rowData(def, 3, 1000, BadRecordPolicy.FAIL);
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
