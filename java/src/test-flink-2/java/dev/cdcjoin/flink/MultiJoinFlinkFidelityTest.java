package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.cdcjoin.flink.FidelityJoins.GivenCondition;
import dev.cdcjoin.flink.FidelityTrace.Layout;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.RowCodec;
import dev.cdcjoin.flink.runtime.ChangeBatch;
import dev.cdcjoin.flink.runtime.JoinOutput;
import dev.cdcjoin.flink.runtime.KeyGroupRoutes;
import dev.cdcjoin.flink.runtime.NativeMultiJoinOperator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.apache.flink.api.common.functions.AbstractRichFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedMultiInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.runtime.generated.GeneratedJoinCondition;
import org.apache.flink.table.runtime.generated.JoinCondition;
import org.apache.flink.table.runtime.operators.join.FlinkJoinType;
import org.apache.flink.table.runtime.operators.join.stream.StreamingMultiJoinOperatorFactory;
import org.apache.flink.table.runtime.operators.join.stream.keyselector.AttributeBasedJoinKeyExtractor;
import org.apache.flink.table.runtime.operators.join.stream.keyselector.AttributeBasedJoinKeyExtractor.ConditionAttributeRef;
import org.apache.flink.table.runtime.operators.join.stream.keyselector.JoinKeyExtractor;
import org.apache.flink.table.runtime.operators.join.stream.utils.JoinInputSideSpec;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;

/**
 * The native multi-way join ({@link NativeMultiJoinOperator}) against Flink 2.x's own multi-way
 * join, {@code StreamingMultiJoinOperator}, with a state retention per input: both driven record by
 * record through Flink's operator test harnesses on the same random trace with the same clock moves
 * (Flink's TTL clock, {@code setStateTtlProcessingTime}; the native operator's processing time,
 * {@code setProcessingTime}), each record's output compared.
 *
 * <p>The traces stay where the two joins are meant to agree: three or four inputs keyed on {@code
 * k}, each of one of Flink's three state layouts ({@link Layout}: {@code (k, v)} with primary key
 * {@code k}, {@code (id, k, v)} with primary key {@code id}, {@code (k, v)} without one), INNER and
 * LEFT steps (what Flink's operator runs; RIGHT ones the planner turns into LEFT), each step's
 * condition {@code input_j.k = input_0.k} (the {@code USING} key: input 0 is in every row of such a
 * chain), inserts of rows not stored or expired (and copies of stored rows on an input without a
 * primary key), and deletes and updates ({@code -U}/{@code +U}) of rows that have not expired. A
 * retraction of an expired row is left out: Flink's operator emits the retraction of the joined
 * rows of the change's row whether it is in state or not, the native join counts it absent and
 * emits nothing (as its two-table join does, README "Semantics"). Each record's output is compared
 * as a multiset of rows with their sign: the native join emits the chain's kinds ({@code +I}/{@code
 * -D} through outer steps), Flink's multi-way join the input's kind.
 */
@SuppressWarnings("try") // the harnesses' close() may throw InterruptedException
class MultiJoinFlinkFidelityTest {

    /** Each input's TTL in ms, or 0 for none (Flink's retention of 0: no TTL). */
    static final long[] TTLS = {0, 5, 10, 20};

    /** One record of the trace: a change of one input at a processing time. */
    static final class Record {
        final int input;
        final RowKind kind;
        final Object[] row;
        final long now;

        Record(int input, RowKind kind, Object[] row, long now) {
            this.input = input;
            this.kind = kind;
            this.row = row;
            this.now = now;
        }
    }

    /** A multi-way join fed record by record. */
    interface MultiJoin extends AutoCloseable {
        /** The rows {@code r} caused, printed, each with its sign only ({@code +[...]}). */
        List<String> process(Record r) throws Exception;
    }

    /**
     * A join's declaration: per input its layout, its TTL in ms (0 for none) and, after the first,
     * its step's join type ({@code steps.get(0)} unused, as in Flink's operator).
     */
    static final class Shape {
        final Layout[] layouts;
        final long[] ttls;
        final List<FlinkJoinType> steps;

        Shape(Layout[] layouts, long[] ttls, List<FlinkJoinType> steps) {
            this.layouts = layouts;
            this.ttls = ttls;
            this.steps = steps;
        }

        int n() {
            return layouts.length;
        }

        /** Input {@code i}'s join key column. */
        int k(int i) {
            return layouts[i].k;
        }

        @Override
        public String toString() {
            return Arrays.toString(layouts)
                    + " "
                    + steps.subList(1, n())
                    + " ttls "
                    + Arrays.toString(ttls);
        }
    }

    @Test
    void perInputTtlGivesFlinksMultiWayJoinRecordByRecord() throws Exception {
        int compared = 0;
        Layout[] layouts = Layout.values();
        for (long seed = 0; seed < 150; seed++) {
            Random rnd = new Random(seed);
            int n = 3 + rnd.nextInt(2);
            Shape shape = new Shape(new Layout[n], new long[n], new ArrayList<>());
            for (int i = 0; i < n; i++) {
                shape.layouts[i] = layouts[rnd.nextInt(layouts.length)];
                shape.ttls[i] = TTLS[rnd.nextInt(TTLS.length)];
                shape.steps.add(rnd.nextBoolean() ? FlinkJoinType.INNER : FlinkJoinType.LEFT);
            }
            List<Record> trace = trace(rnd, shape, 80);
            String what = "seed " + seed + " " + shape;
            try (MultiJoin flink = new FlinkMultiJoin(shape);
                    MultiJoin cdcjoin = new CdcMultiJoinOperator(shape)) {
                for (Record r : trace) {
                    String at = what + ", input " + r.input + " " + r.kind + List.of(r.row);
                    assertEquals(counts(flink.process(r)), counts(cdcjoin.process(r)), at);
                    compared++;
                }
            }
        }
        assertEquals(150 * 80, compared);
    }

    /** A distinct stored row of an input in the trace's model: its copies, its last write. */
    static final class Held {
        final Object[] row;
        int copies = 1;
        long writtenAt;

        Held(Object[] row, long writtenAt) {
            this.row = row;
            this.writtenAt = writtenAt;
        }
    }

    /**
     * A trace of {@code length} records over the inputs of {@code shape}, the clock moving 0 to 5
     * ms per record: inserts of rows not stored or expired, or of one more copy of a stored row
     * (input without a primary key), and deletes and updates of rows that have not expired. Rows
     * are told apart as the join tells them apart: by primary key, or by value without one.
     */
    static List<Record> trace(Random rnd, Shape shape, int length) {
        List<Map<List<Object>, Held>> held = new ArrayList<>();
        for (int i = 0; i < shape.n(); i++) {
            held.add(new HashMap<>());
        }
        List<Record> out = new ArrayList<>();
        long now = 1000;
        while (out.size() < length) {
            now += rnd.nextInt(6);
            int i = rnd.nextInt(shape.n());
            Layout layout = shape.layouts[i];
            Object[] row = row(rnd, layout);
            Held h = held.get(i).get(identity(layout, row));
            long ttl = shape.ttls[i];
            if (h == null || (ttl > 0 && h.writtenAt <= now - ttl)) {
                out.add(new Record(i, RowKind.INSERT, row, now));
                held.get(i).put(identity(layout, row), new Held(row, now));
                continue;
            }
            int what = rnd.nextInt(3);
            if (what == 0 && !layout.hasPrimaryKey()) {
                out.add(new Record(i, RowKind.INSERT, h.row, now));
                h.copies++;
                h.writtenAt = now;
                continue;
            }
            boolean room = out.size() + 2 <= length;
            RowKind kind = what == 0 || !room ? RowKind.DELETE : RowKind.UPDATE_BEFORE;
            out.add(new Record(i, kind, h.row, now));
            h.writtenAt = now;
            if (--h.copies == 0) {
                held.get(i).remove(identity(layout, h.row));
            }
            if (kind == RowKind.UPDATE_BEFORE) {
                Object[] next = row(rnd, layout);
                if (layout.hasPrimaryKey()) {
                    next[layout.pk] = h.row[layout.pk];
                }
                out.add(new Record(i, RowKind.UPDATE_AFTER, next, now));
                Held there = held.get(i).get(identity(layout, next));
                boolean live = there != null && (ttl == 0 || there.writtenAt > now - ttl);
                if (live) {
                    there.copies++;
                    there.writtenAt = now;
                } else {
                    held.get(i).put(identity(layout, next), new Held(next, now));
                }
            }
        }
        return out;
    }

    /** A random row of {@code layout}: small ids and keys, so rows meet. */
    static Object[] row(Random rnd, Layout layout) {
        Object[] row = new Object[layout.columns.length];
        for (int c = 0; c < row.length; c++) {
            row[c] =
                    c == layout.payload()
                            ? "v" + rnd.nextInt(3)
                            : (Object) rnd.nextInt(c == layout.k ? 3 : 6);
        }
        return row;
    }

    /** What tells a row of {@code layout} apart: its primary key, or its value. */
    static List<Object> identity(Layout layout, Object[] row) {
        return layout.hasPrimaryKey() ? List.of(row[layout.pk]) : Arrays.asList(row);
    }

    /** The rows with their sign, counted. */
    static Map<String, Integer> counts(List<String> rows) {
        Map<String, Integer> m = new TreeMap<>();
        rows.forEach(r -> m.merge(r, 1, Integer::sum));
        return m;
    }

    /** A printed row ({@code +I[...]}) with its sign only. */
    static String signed(String row) {
        return row.charAt(0) + row.substring(2);
    }

    /**
     * Flink's {@code StreamingMultiJoinOperator} as the planner builds it for {@code in0 <step1>
     * JOIN in1 ON in1.k = in0.k <step2> JOIN in2 ON in2.k = in0.k ...}, keyed by the common join
     * key ({@link AttributeBasedJoinKeyExtractor}), in a {@link
     * KeyedMultiInputStreamOperatorTestHarness} as Flink's own multi-way join tests drive it.
     */
    static final class FlinkMultiJoin implements MultiJoin {
        private final KeyedMultiInputStreamOperatorTestHarness<RowData, RowData> harness;
        private final RowData.FieldGetter[] outputFields;

        FlinkMultiJoin(Shape shape) throws Exception {
            int n = shape.n();
            List<RowType> types = new ArrayList<>();
            List<InternalTypeInfo<RowData>> infos = new ArrayList<>();
            List<JoinInputSideSpec> specs = new ArrayList<>();
            Map<Integer, List<ConditionAttributeRef>> attributes = new HashMap<>();
            GeneratedJoinCondition[] conditions = new GeneratedJoinCondition[n];
            List<LogicalType> out = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                RowType type = shape.layouts[i].rowType();
                types.add(type);
                infos.add(InternalTypeInfo.of(type));
                specs.add(TestLine.sideSpec(shape.layouts[i], type));
                if (i > 0) {
                    int left = shape.k(0);
                    int right = shape.k(i);
                    attributes.put(i, List.of(new ConditionAttributeRef(0, left, i, right)));
                    conditions[i] = new GivenCondition("SameKey", () -> new SameKey(left, right));
                }
                out.addAll(type.getChildren());
            }
            JoinKeyExtractor keys = new AttributeBasedJoinKeyExtractor(attributes, types);
            StreamingMultiJoinOperatorFactory factory =
                    new StreamingMultiJoinOperatorFactory(
                            infos,
                            specs,
                            shape.steps,
                            null,
                            shape.ttls,
                            conditions,
                            keys,
                            attributes);
            harness =
                    new KeyedMultiInputStreamOperatorTestHarness<>(
                            factory, InternalTypeInfo.of(keys.getCommonJoinKeyType()));
            for (int i = 0; i < n; i++) {
                harness.setKeySelector(i, new CommonKey(keys, i));
            }
            harness.setup(new RowDataSerializer(out.toArray(new LogicalType[0])));
            harness.open();
            outputFields = new RowData.FieldGetter[out.size()];
            for (int i = 0; i < outputFields.length; i++) {
                outputFields[i] = RowData.createFieldGetter(out.get(i).copy(true), i);
            }
        }

        @Override
        public List<String> process(Record r) throws Exception {
            Object[] values = r.row.clone();
            for (int i = 0; i < values.length; i++) {
                if (values[i] instanceof String) {
                    values[i] = StringData.fromString((String) values[i]);
                }
            }
            harness.setStateTtlProcessingTime(r.now);
            harness.processElement(
                    r.input, new StreamRecord<>(GenericRowData.ofKind(r.kind, values)));
            List<String> rows = new ArrayList<>();
            for (Object o : harness.getOutput()) {
                RowData row = (RowData) ((StreamRecord<?>) o).getValue();
                Object[] fields = new Object[outputFields.length];
                for (int i = 0; i < fields.length; i++) {
                    Object v = outputFields[i].getFieldOrNull(row);
                    fields[i] = v instanceof StringData ? v.toString() : v;
                }
                rows.add(signed(Row.ofKind(row.getRowKind(), fields).toString()));
            }
            harness.getOutput().clear();
            return rows;
        }

        @Override
        public void close() throws Exception {
            harness.close();
        }
    }

    /** An input's common join key, as Flink's multi-way join tests key their harness. */
    static final class CommonKey implements KeySelector<RowData, RowData> {
        private static final long serialVersionUID = 1L;
        private final JoinKeyExtractor keys;
        private final int input;

        CommonKey(JoinKeyExtractor keys, int input) {
            this.keys = keys;
            this.input = input;
        }

        @Override
        public RowData getKey(RowData row) {
            return keys.getCommonJoinKey(row, input);
        }
    }

    /**
     * Step {@code j}'s condition {@code in_j.k = in0.k}: the left row is the inputs {@code 0..j-1}
     * joined (input 0's {@code k} at its own index {@code left}), a null key matches nothing.
     */
    static final class SameKey extends AbstractRichFunction implements JoinCondition {
        private static final long serialVersionUID = 1L;
        private final int left;
        private final int right;

        SameKey(int left, int right) {
            this.left = left;
            this.right = right;
        }

        @Override
        public boolean apply(RowData l, RowData r) {
            return !l.isNullAt(left) && !r.isNullAt(right) && l.getInt(left) == r.getInt(right);
        }
    }

    /**
     * cdcjoin's {@link NativeMultiJoinOperator}, declared through {@link CdcMultiJoin.Builder} with
     * the same steps and per-input TTLs, with batches of one record (each flushed at once).
     */
    static final class CdcMultiJoinOperator implements MultiJoin {
        private final KeyedOneInputStreamOperatorTestHarness<
                        Integer, Tuple2<Integer, ChangeBatch>, Row>
                harness;
        private final Shape shape;
        private final List<RowCodec> rows = new ArrayList<>();
        private final List<RowCodec> keys = new ArrayList<>();

        CdcMultiJoinOperator(Shape shape) throws Exception {
            this.shape = shape;
            CdcMultiJoin.Builder b = CdcMultiJoin.builder();
            for (int i = 0; i < shape.n(); i++) {
                Layout l = shape.layouts[i];
                List<String> key = List.of(l.columns[l.k]);
                if (i == 0) {
                    b.input("in0", l.schema(), key, l.primaryKey());
                } else {
                    boolean left = shape.steps.get(i) == FlinkJoinType.LEFT;
                    JoinType type = left ? JoinType.LEFT : JoinType.INNER;
                    b.input("in" + i, l.schema(), key, l.primaryKey(), type);
                }
                long ttl = shape.ttls[i];
                b.ttl("in" + i, ttl == 0 ? null : Duration.ofMillis(ttl));
                rows.add(new RowCodec(l.schema()));
                keys.add(new RowCodec(CdcSchema.of(l.schema().columns().get(l.k))));
            }
            MultiJoinSpec spec = b.build().spec();
            NativeMultiJoinOperator<Row> op =
                    NativeMultiJoinOperator.of(
                            spec, JoinOutput.ROWS, 1, 1000, BadRecordPolicy.FAIL);
            KeyGroupRoutes routes = new KeyGroupRoutes();
            KeySelector<Tuple2<Integer, ChangeBatch>, Integer> byGroup = t -> routes.getKey(t.f1);
            harness =
                    JoinHarnesses.open(
                            new KeyedOneInputStreamOperatorTestHarness<>(op, byGroup, Types.INT),
                            null,
                            false);
        }

        @Override
        public List<String> process(Record r) throws Exception {
            Object k = r.row[shape.k(r.input)];
            JoinKey key = new JoinKey(keys.get(r.input).encode(new Object[] {k}));
            ChangeRecord change = new ChangeRecord(r.kind, key, rows.get(r.input).encode(r.row));
            ChangeBatch batch = JoinHarnesses.batch(change).getValue();
            harness.setProcessingTime(r.now);
            harness.processElement(new StreamRecord<>(Tuple2.of(r.input, batch)));
            List<String> out = new ArrayList<>();
            for (Object o : harness.getOutput()) {
                out.add(signed(((StreamRecord<?>) o).getValue().toString()));
            }
            harness.getOutput().clear();
            return out;
        }

        @Override
        public void close() throws Exception {
            harness.close();
        }
    }
}
