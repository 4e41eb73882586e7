package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.cdcjoin.flink.FidelityJoins.GivenCondition;
import dev.cdcjoin.flink.FidelityTrace.Layout;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.RowCodec;
import dev.cdcjoin.flink.runtime.ChangeBatch;
import dev.cdcjoin.flink.runtime.KeyGroupRoutes;
import dev.cdcjoin.flink.runtime.NativeMultiJoinOperator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
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
 * <p>The traces stay where the two joins are meant to agree: three or four inputs {@code (id, k,
 * v)} keyed on {@code k} with primary key {@code id}, INNER and LEFT steps (what Flink's operator
 * runs; RIGHT ones the planner turns into LEFT), each step's condition {@code input_j.k =
 * input_0.k} (the {@code USING} key: input 0 is in every row of such a chain), inserts of new or
 * expired ids, and deletes and updates ({@code -U}/{@code +U}) of rows that have not expired. A
 * retraction of an expired row is left out: Flink's operator emits the retraction of the joined
 * rows of the change's row whether it is in state or not, the native join counts it absent and
 * emits nothing (as its two-table join does, README "Semantics"). Each record's output is compared
 * as a multiset of rows with their sign: the native join emits the chain's kinds ({@code +I}/{@code
 * -D} through outer steps), Flink's multi-way join the input's kind.
 */
@SuppressWarnings("try") // the harnesses' close() may throw InterruptedException
class MultiJoinFlinkFidelityTest {

    static final Layout LAYOUT = Layout.HAS_UNIQUE_KEY;

    /** Each input's TTL in ms, or 0 for none (Flink's retention of 0: no TTL). */
    static final long[] TTLS = {0, 5, 10, 20};

    /** One record of the trace: a change of one input at a processing time. */
    record Record(int input, RowKind kind, Object[] row, long now) {}

    /** A multi-way join fed record by record. */
    interface MultiJoin extends AutoCloseable {
        /** The rows {@code r} caused, printed, each with its sign only ({@code +[...]}). */
        List<String> process(Record r) throws Exception;
    }

    @Test
    void perInputTtlGivesFlinksMultiWayJoinRecordByRecord() throws Exception {
        int compared = 0;
        for (long seed = 0; seed < 150; seed++) {
            Random rnd = new Random(seed);
            int n = 3 + rnd.nextInt(2);
            List<FlinkJoinType> steps = new ArrayList<>();
            long[] ttls = new long[n];
            for (int i = 0; i < n; i++) {
                steps.add(rnd.nextBoolean() ? FlinkJoinType.INNER : FlinkJoinType.LEFT);
                ttls[i] = TTLS[rnd.nextInt(TTLS.length)];
            }
            List<Record> trace = trace(rnd, n, ttls, 80);
            String what =
                    "seed " + seed + " " + steps.subList(1, n) + " ttls " + Arrays.toString(ttls);
            try (MultiJoin flink = new FlinkMultiJoin(steps, ttls);
                    MultiJoin cdcjoin = new CdcMultiJoinOperator(steps, ttls)) {
                for (Record r : trace) {
                    String at = what + ", input " + r.input + " " + r.kind + List.of(r.row);
                    assertEquals(counts(flink.process(r)), counts(cdcjoin.process(r)), at);
                    compared++;
                }
            }
        }
        assertEquals(150 * 80, compared);
    }

    /**
     * A trace of {@code length} records over {@code n} inputs with TTLs {@code ttls}, the clock
     * moving 0 to 5 ms per record: inserts of ids not live (never written, deleted, or expired),
     * and deletes and updates of live rows only.
     */
    static List<Record> trace(Random rnd, int n, long[] ttls, int length) {
        List<Map<Integer, Object[]>> rows = new ArrayList<>();
        List<Map<Integer, Long>> written = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            rows.add(new HashMap<>());
            written.add(new HashMap<>());
        }
        List<Record> out = new ArrayList<>();
        long now = 1000;
        while (out.size() < length) {
            now += rnd.nextInt(6);
            int i = rnd.nextInt(n);
            int id = rnd.nextInt(6);
            Object[] row = {id, rnd.nextInt(3), "v" + rnd.nextInt(3)};
            Object[] old = rows.get(i).get(id);
            long at = written.get(i).getOrDefault(id, Long.MIN_VALUE);
            boolean live = old != null && (ttls[i] == 0 || at > now - ttls[i]);
            if (!live) {
                out.add(new Record(i, RowKind.INSERT, row, now));
            } else if (rnd.nextInt(3) == 0) {
                out.add(new Record(i, RowKind.DELETE, old, now));
                row = null;
            } else if (out.size() + 2 <= length) {
                out.add(new Record(i, RowKind.UPDATE_BEFORE, old, now));
                out.add(new Record(i, RowKind.UPDATE_AFTER, row, now));
            } else {
                continue;
            }
            rows.get(i).put(id, row);
            written.get(i).put(id, now);
        }
        return out;
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

        FlinkMultiJoin(List<FlinkJoinType> steps, long[] ttls) throws Exception {
            int n = steps.size();
            RowType type = LAYOUT.rowType();
            List<RowType> types = new ArrayList<>();
            List<InternalTypeInfo<RowData>> infos = new ArrayList<>();
            List<JoinInputSideSpec> specs = new ArrayList<>();
            Map<Integer, List<ConditionAttributeRef>> attributes = new HashMap<>();
            GeneratedJoinCondition[] conditions = new GeneratedJoinCondition[n];
            List<LogicalType> out = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                types.add(type);
                infos.add(InternalTypeInfo.of(type));
                specs.add(TestLine.sideSpec(LAYOUT, type));
                if (i > 0) {
                    attributes.put(i, List.of(new ConditionAttributeRef(0, LAYOUT.k, i, LAYOUT.k)));
                    conditions[i] = new GivenCondition("SameKey", SameKey::new);
                }
                out.addAll(type.getChildren());
            }
            JoinKeyExtractor keys = new AttributeBasedJoinKeyExtractor(attributes, types);
            StreamingMultiJoinOperatorFactory factory =
                    new StreamingMultiJoinOperatorFactory(
                            infos, specs, steps, null, ttls, conditions, keys, attributes);
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
                if (values[i] instanceof String s) {
                    values[i] = StringData.fromString(s);
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
                    fields[i] = v instanceof StringData s ? s.toString() : v;
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
     * joined (input 0's {@code k} at its own index), a null key matches nothing.
     */
    static final class SameKey extends AbstractRichFunction implements JoinCondition {
        private static final long serialVersionUID = 1L;

        @Override
        public boolean apply(RowData left, RowData right) {
            int k = LAYOUT.k;
            return !left.isNullAt(k) && !right.isNullAt(k) && left.getInt(k) == right.getInt(k);
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
        private final RowCodec rows = new RowCodec(LAYOUT.schema());
        private final RowCodec keys =
                new RowCodec(CdcSchema.of(LAYOUT.schema().columns().get(LAYOUT.k)));

        CdcMultiJoinOperator(List<FlinkJoinType> steps, long[] ttls) throws Exception {
            List<String> key = List.of(LAYOUT.columns[LAYOUT.k]);
            CdcMultiJoin.Builder b =
                    CdcMultiJoin.builder().input("in0", LAYOUT.schema(), key, LAYOUT.primaryKey());
            for (int i = 1; i < steps.size(); i++) {
                JoinType type = steps.get(i) == FlinkJoinType.LEFT ? JoinType.LEFT : JoinType.INNER;
                b.input("in" + i, LAYOUT.schema(), key, LAYOUT.primaryKey(), type);
            }
            Map<String, Duration> own = new LinkedHashMap<>();
            for (int i = 0; i < ttls.length; i++) {
                own.put("in" + i, ttls[i] == 0 ? null : Duration.ofMillis(ttls[i]));
            }
            own.forEach(b::ttl);
            MultiJoinSpec spec = b.build().spec();
            NativeMultiJoinOperator<Row> op =
                    NativeMultiJoinOperator.rows(spec, 1, 1000, BadRecordPolicy.FAIL);
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
            JoinKey key = new JoinKey(keys.encode(new Object[] {r.row[LAYOUT.k]}));
            ChangeRecord change = new ChangeRecord(r.kind, key, rows.encode(r.row));
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
