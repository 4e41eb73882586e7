package dev.cdcjoin.flink;

import dev.cdcjoin.flink.FidelityTrace.Change;
import dev.cdcjoin.flink.FidelityTrace.Layout;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.RowCodec;
import dev.cdcjoin.flink.javajoin.JavaJoin;
import dev.cdcjoin.flink.javajoin.JavaJoinFunction;
import dev.cdcjoin.flink.runtime.ChangeBatch;
import dev.cdcjoin.flink.runtime.JoinOutput;
import dev.cdcjoin.flink.runtime.NativeJoinOperator;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.apache.flink.api.common.functions.AbstractRichFunction;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.streaming.api.operators.co.KeyedCoProcessOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.runtime.generated.GeneratedJoinCondition;
import org.apache.flink.table.runtime.generated.JoinCondition;
import org.apache.flink.table.runtime.operators.join.stream.StreamingJoinOperator;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.Row;
import org.apache.flink.util.function.SerializableSupplier;

/**
 * The joins the fidelity test compares, each a keyed two-input operator in Flink's own operator
 * test harness, fed one {@link Change} at a time and returning the rows that change caused, printed
 * as {@code Row#toString} ({@code "+I[1, v0, 3, 1, v2]"}), in emission order.
 */
@SuppressWarnings("try") // the harnesses' close() may throw InterruptedException
final class FidelityJoins {

    /** A join fed record by record. */
    interface RecordJoin extends AutoCloseable {
        /**
         * Processes one record.
         *
         * @param change the record
         * @return the rows it caused, in emission order
         * @throws Exception if the operator fails
         */
        List<String> process(Change change) throws Exception;
    }

    /**
     * Flink's {@link StreamingJoinOperator} as the SQL planner builds it for {@code l JOIN r ON l.k
     * = r.k}: each side's input spec from its layout ({@link #sideSpec}), null keys filtered, no
     * TTL, in a {@link KeyedTwoInputStreamOperatorTestHarness} as Flink's own {@code
     * StreamingJoinOperatorTest} drives it.
     */
    static final class FlinkOperator implements RecordJoin {
        private final KeyedTwoInputStreamOperatorTestHarness<RowData, RowData, RowData, RowData>
                harness;
        private final RowData.FieldGetter[] outputFields;

        FlinkOperator(Layout left, Layout right, JoinType type) throws Exception {
            RowType l = left.rowType();
            RowType r = right.rowType();
            StreamingJoinOperator op =
                    new StreamingJoinOperator(
                            InternalTypeInfo.of(l),
                            InternalTypeInfo.of(r),
                            new GivenCondition("AlwaysTrue", True::new),
                            TestLine.sideSpec(left, l),
                            TestLine.sideSpec(right, r),
                            type == JoinType.LEFT || type == JoinType.FULL,
                            type == JoinType.RIGHT || type == JoinType.FULL,
                            new boolean[] {true},
                            0,
                            0);
            harness =
                    new KeyedTwoInputStreamOperatorTestHarness<>(
                            op,
                            new Projection(l, left.k),
                            new Projection(r, right.k),
                            InternalTypeInfo.of(RowType.of(new IntType())));
            List<LogicalType> out = new ArrayList<>(l.getChildren());
            out.addAll(r.getChildren());
            harness.setup(new RowDataSerializer(out.toArray(new LogicalType[0])));
            harness.open();
            outputFields = new RowData.FieldGetter[out.size()];
            for (int i = 0; i < outputFields.length; i++) {
                // Nullable getters: an outer join pads NOT NULL columns with null, and Flink 1.20's
                // getter for a NOT NULL type reads the field without checking (2.x always checks).
                outputFields[i] = RowData.createFieldGetter(out.get(i).copy(true), i);
            }
        }

        /**
         * A side's input spec of Flink SQL's join (class {@code JoinInputSideSpec}, in another
         * package per Flink line: {@link TestLine#sideSpec}), built by the line's factories.
         */
        static <S> S sideSpec(
                Layout layout,
                RowType type,
                BiFunction<InternalTypeInfo<RowData>, KeySelector<RowData, RowData>, S>
                        uniqueKeyContainedByJoinKey,
                BiFunction<InternalTypeInfo<RowData>, KeySelector<RowData, RowData>, S> uniqueKey,
                Supplier<S> withoutUniqueKey) {
            InternalTypeInfo<RowData> pkType = InternalTypeInfo.of(RowType.of(new IntType(false)));
            switch (layout) {
                case JOIN_KEY_CONTAINS_UNIQUE_KEY:
                    return uniqueKeyContainedByJoinKey.apply(
                            pkType, new Projection(type, layout.pk));
                case HAS_UNIQUE_KEY:
                    return uniqueKey.apply(pkType, new Projection(type, layout.pk));
                case NO_UNIQUE_KEY:
                    return withoutUniqueKey.get();
                default:
                    throw new AssertionError(layout);
            }
        }

        @Override
        public List<String> process(Change change) throws Exception {
            Object[] values = change.row.clone();
            for (int i = 0; i < values.length; i++) {
                if (values[i] instanceof String) {
                    values[i] = StringData.fromString((String) values[i]);
                }
            }
            // A new row each time: the operator overwrites the input's kind.
            feed(
                    harness,
                    change.right,
                    new StreamRecord<>(GenericRowData.ofKind(change.kind, values)));
            List<String> rows = new ArrayList<>();
            for (Object o : drain(harness)) {
                rows.add(printed((RowData) ((StreamRecord<?>) o).getValue()));
            }
            return rows;
        }

        /** An output row as {@code Row#toString} prints it. */
        private String printed(RowData row) {
            Object[] fields = new Object[outputFields.length];
            for (int i = 0; i < fields.length; i++) {
                Object v = outputFields[i].getFieldOrNull(row);
                fields[i] = v instanceof StringData ? v.toString() : v;
            }
            return Row.ofKind(row.getRowKind(), fields).toString();
        }

        @Override
        public void close() throws Exception {
            harness.close();
        }
    }

    /**
     * cdcjoin's {@link NativeJoinOperator} with batches of one record (each record flushed at
     * once).
     */
    static final class NativeOperator implements RecordJoin {
        private final KeyedTwoInputStreamOperatorTestHarness<Integer, ChangeBatch, ChangeBatch, Row>
                harness;
        private final RowCodec[] rows;
        private final RowCodec[] keys;
        private final Layout[] layouts;

        NativeOperator(Layout left, Layout right, JoinType type) throws Exception {
            JoinSpec definition = definition(left, right, type);
            harness =
                    JoinHarnesses.of(
                            NativeJoinOperator.of(
                                    definition, JoinOutput.ROWS, 1, 1000, BadRecordPolicy.FAIL));
            harness.setup(definition.rowTypeInfo().createSerializer(new SerializerConfigImpl()));
            harness.open();
            layouts = new Layout[] {left, right};
            rows = new RowCodec[] {new RowCodec(left.schema()), new RowCodec(right.schema())};
            keys = new RowCodec[] {keyCodec(left), keyCodec(right)};
        }

        /** The join key's encoding: the row encoding over the key columns, as the decoder's. */
        private static RowCodec keyCodec(Layout layout) {
            return new RowCodec(CdcSchema.of(layout.schema().columns().get(layout.k)));
        }

        @Override
        public List<String> process(Change change) throws Exception {
            int side = change.right ? 1 : 0;
            Object[] values = change.row;
            JoinKey key = new JoinKey(keys[side].encode(new Object[] {values[layouts[side].k]}));
            StreamRecord<ChangeRecord> record =
                    new StreamRecord<>(
                            new ChangeRecord(change.kind, key, rows[side].encode(values)));
            feed(harness, change.right, JoinHarnesses.batch(record));
            return printed(harness);
        }

        @Override
        public void close() throws Exception {
            harness.close();
        }
    }

    /** cdcjoin's pure-Java engine, {@link JavaJoinFunction}, as {@link JavaJoin} runs it. */
    static final class JavaOperator implements RecordJoin {
        private final KeyedTwoInputStreamOperatorTestHarness<Row, Row, Row, Row> harness;

        JavaOperator(Layout left, Layout right, JoinType type) throws Exception {
            JoinSpec definition = definition(left, right, type);
            JavaJoin join = JavaJoin.of(definition);
            harness =
                    new KeyedTwoInputStreamOperatorTestHarness<>(
                            new KeyedCoProcessOperator<>(new JavaJoinFunction(definition)),
                            join.leftKeySelector(),
                            join.rightKeySelector(),
                            join.keyTypeInfo());
            harness.setup(definition.rowTypeInfo().createSerializer(new SerializerConfigImpl()));
            harness.open();
        }

        @Override
        public List<String> process(Change change) throws Exception {
            StreamRecord<Row> record =
                    new StreamRecord<>(Row.ofKind(change.kind, change.row.clone()));
            feed(harness, change.right, record);
            return printed(harness);
        }

        @Override
        public void close() throws Exception {
            harness.close();
        }
    }

    /** cdcjoin's declaration of {@code l JOIN r ON l.k = r.k}. */
    private static JoinSpec definition(Layout left, Layout right, JoinType type) {
        return CdcJoin.builder()
                .left("l", left.schema(), List.of("k"), left.primaryKey())
                .right("r", right.schema(), List.of("k"), right.primaryKey())
                .joinType(type)
                .build()
                .spec();
    }

    /** The {@link Row}s a harness emitted since the last call, printed. */
    private static List<String> printed(
            KeyedTwoInputStreamOperatorTestHarness<?, ?, ?, Row> harness) {
        List<String> out = new ArrayList<>();
        for (Object o : drain(harness)) {
            out.add(((StreamRecord<?>) o).getValue().toString());
        }
        return out;
    }

    /** Hands a record to a harness's left or right input. */
    private static <IN> void feed(
            KeyedTwoInputStreamOperatorTestHarness<?, IN, IN, ?> harness,
            boolean right,
            StreamRecord<IN> record)
            throws Exception {
        if (right) {
            harness.processElement2(record);
        } else {
            harness.processElement1(record);
        }
    }

    /** Takes what a harness emitted since the last call. */
    private static List<Object> drain(KeyedTwoInputStreamOperatorTestHarness<?, ?, ?, ?> harness) {
        List<Object> out = new ArrayList<>(harness.getOutput());
        harness.getOutput().clear();
        return out;
    }

    /**
     * One INT column of a row as a one-field {@code BinaryRowData}: the join key (Flink's null
     * filter reads the current key as {@code BinaryRowData}) or the unique key.
     */
    static final class Projection implements KeySelector<RowData, RowData> {
        private static final long serialVersionUID = 1L;
        private final RowData.FieldGetter field;
        private final RowDataSerializer serializer = new RowDataSerializer(new IntType());

        Projection(RowType type, int column) {
            this.field = RowData.createFieldGetter(type.getTypeAt(column), column);
        }

        @Override
        public RowData getKey(RowData row) {
            return serializer.toBinaryRow(GenericRowData.of(field.getFieldOrNull(row))).copy();
        }
    }

    /**
     * A join condition given as an instance instead of generated code: the operators under test
     * take a {@link GeneratedJoinCondition}, and this one's {@code newInstance} makes a new {@code
     * make.get()}.
     */
    static final class GivenCondition extends GeneratedJoinCondition {
        private static final long serialVersionUID = 1L;
        private final SerializableSupplier<JoinCondition> make;

        GivenCondition(String name, SerializableSupplier<JoinCondition> make) {
            super(name, "", new Object[0]);
            this.make = make;
        }

        @Override
        public JoinCondition newInstance(ClassLoader classLoader) {
            return make.get();
        }
    }

    /**
     * The join condition beyond the equi-join key: none (every row under the key matches, the null
     * filter aside).
     */
    static final class True extends AbstractRichFunction implements JoinCondition {
        private static final long serialVersionUID = 1L;

        @Override
        public boolean apply(RowData left, RowData right) {
            return true;
        }
    }

    private FidelityJoins() {}
}
