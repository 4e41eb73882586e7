package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.codec.RowCodec;
import dev.cdcjoin.flink.javajoin.JoinPlan.SidePlan;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.Map;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.api.java.typeutils.TupleTypeInfo;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;

/**
 * The join's emission rules over Flink keyed state, shared by {@link JavaJoinFunction} and {@link
 * OrderedJavaJoinFunction}: a line-by-line port of the native engine ({@code
 * rust/join/src/engine.rs}).
 *
 * <p>For an input row {@code r} on side S with visible matches M on the other side O:
 *
 * <pre>
 * | r      | S outer | O outer | M empty    | for each m in M                                         | state        |
 * |--------|---------|---------|------------|---------------------------------------------------------|--------------|
 * | +I/+U  | no      | no      | -          | kind(r)[r,m]                                            | add r        |
 * | +I/+U  | no      | yes     | -          | if matches(m)=0: -D[null,m]; matches(m)+=1; +I[r,m]     | add r        |
 * | +I/+U  | yes     | no      | +I[r,null] | +I[r,m]                                                 | add r, |M|   |
 * | +I/+U  | yes     | yes     | +I[r,null] | as row 2                                                | add r, |M|   |
 * | -U/-D  | no      | no      | -          | kind(r)[r,m]                                            | retract r    |
 * | -U/-D  | no      | yes     | -          | kind(r)[r,m]; if matches(m)=1: +I[null,m]; matches(m)-=1 | retract r    |
 * | -U/-D  | yes     | no      | -D[r,null] | -D[r,m]                                                 | retract r    |
 * | -U/-D  | yes     | yes     | -D[r,null] | as row 6 but -D[r,m]                                    | retract r    |
 * </pre>
 *
 * <p>With the native join's deliberate differences from Flink 2.3: a match counter always equals
 * the number of matching rows (an upsert replacing a row by primary key does not count a new
 * match, a duplicate multiset row does); a retraction of a row not in state emits nothing and is
 * counted (or fails); a retraction emits the stored row; a row whose join key has a null column
 * never matches but is stored. A key's matches are visited in insertion order (a replaced row keeps
 * its place), which makes the changelog identical to the native one, not only equivalent.
 */
final class JoinCore implements Serializable {

    private static final long serialVersionUID = 1L;

    private final JoinPlan plan;
    private final int leftArity;
    private final int rightArity;

    /** Encoders of the two sides' rows, for raw output ({@link JoinPlan#rawOutput}). */
    private final RowCodec leftCodec;

    private final RowCodec rightCodec;

    private transient SideStore left;
    private transient SideStore right;
    private transient Counter absentRetractions;
    private transient Counter recordsLeft;
    private transient Counter recordsRight;
    private transient long leftChanges;
    private transient long rightChanges;
    /** Next insertion sequence number of a map entry; checkpointed (as the max over subtasks). */
    private transient long nextSeq;

    private transient ListState<Long> seqState;

    JoinCore(JoinPlan plan) {
        this.plan = plan;
        this.leftArity = plan.left.arity();
        this.rightArity = plan.right.arity();
        this.leftCodec = plan.rawOutput ? new RowCodec(plan.left.schema) : null;
        this.rightCodec = plan.rawOutput ? new RowCodec(plan.right.schema) : null;
    }

    JoinPlan plan() {
        return plan;
    }

    // ---------------------------------------------------------------------------------------
    // Lifecycle

    void initializeState(FunctionInitializationContext context) throws Exception {
        seqState =
                context.getOperatorStateStore()
                        .getUnionListState(new ListStateDescriptor<>("javajoin-next-seq", Types.LONG));
        long next = 0;
        if (context.isRestored()) {
            for (Long v : seqState.get()) {
                next = Math.max(next, v);
            }
        }
        nextSeq = next;
    }

    void snapshotState(FunctionSnapshotContext context) throws Exception {
        seqState.update(Collections.singletonList(nextSeq));
    }

    void open(RuntimeContext ctx) {
        left = SideStore.create(plan.left, ctx, this);
        right = SideStore.create(plan.right, ctx, this);
        absentRetractions = ctx.getMetricGroup().counter("absentRetractions");
        // The native operator's names, so dashboards and tests read both engines alike.
        recordsLeft = ctx.getMetricGroup().counter("cdcjoinRecordsInLeft");
        recordsRight = ctx.getMetricGroup().counter("cdcjoinRecordsInRight");
    }

    long takeSeq() {
        return nextSeq++;
    }

    // ---------------------------------------------------------------------------------------
    // Records

    /**
     * Processes one change of the left ({@code inputLeft}) or right input; the current key must
     * be its join key. Takes ownership of {@code row}.
     */
    void process(boolean inputLeft, Row row, Collector<Row> out) throws Exception {
        SideStore me = inputLeft ? left : right;
        SideStore other = inputLeft ? right : left;
        long index = inputLeft ? leftChanges++ : rightChanges++;
        (inputLeft ? recordsLeft : recordsRight).inc();
        RowKind kind = row.getKind();
        row.setKind(RowKind.INSERT); // stored rows (and multiset map keys) are kind-neutral
        boolean nullKey = me.plan.hasNullKey(row);
        if (kind == RowKind.INSERT || kind == RowKind.UPDATE_AFTER) {
            accumulate(me, other, inputLeft, kind, row, nullKey, out);
        } else if (!retract(me, other, inputLeft, kind, row, nullKey, out)) {
            absentRetractions.inc();
            if (plan.failOnAbsentRetraction) {
                row.setKind(kind);
                throw new AbsentRetractionException(
                        me.plan.name
                                + " ("
                                + me.plan.label
                                + " input) change #"
                                + index
                                + ": "
                                + kind.shortString()
                                + " of a "
                                + me.plan.label
                                + " row that is not in state (never inserted, already retracted,"
                                + " or expired): "
                                + row);
            }
        }
    }

    /** {@code +I}/{@code +U}: rows 1-4 of the table. */
    private void accumulate(
            SideStore me,
            SideStore other,
            boolean inputLeft,
            RowKind kind,
            Row row,
            boolean nullKey,
            Collector<Row> out)
            throws Exception {
        me.locate(row);
        boolean replaces = me.found() && me.plan.layout != StateLayout.NO_PRIMARY_KEY;
        boolean otherOuter = other.plan.outer;
        RowKind outKind = me.plan.outer || otherOuter ? RowKind.INSERT : kind;
        int total = 0;
        if (!nullKey) {
            Matches ms = other.matches();
            for (int i = 0; i < ms.size; i++) {
                Match m = ms.items[i];
                for (int c = 0; c < m.count; c++) {
                    if (otherOuter && m.matches == 0) {
                        emit(out, inputLeft, RowKind.DELETE, null, m.row);
                    }
                    emit(out, inputLeft, outKind, row, m.row);
                }
                if (otherOuter && (m.matches == 0 || !replaces)) {
                    other.setMatches(m, m.matches + 1);
                }
                total += m.count;
            }
            ms.clear();
        }
        if (me.plan.outer && total == 0) {
            emit(out, inputLeft, RowKind.INSERT, row, null);
        }
        me.store(row, total);
    }

    /** {@code -U}/{@code -D}: rows 5-8 of the table. False when the row is not in state. */
    private boolean retract(
            SideStore me,
            SideStore other,
            boolean inputLeft,
            RowKind kind,
            Row row,
            boolean nullKey,
            Collector<Row> out)
            throws Exception {
        me.locate(row);
        if (!me.found()) {
            return false;
        }
        Row stored = me.storedRow();
        boolean otherOuter = other.plan.outer;
        RowKind outKind = me.plan.outer ? RowKind.DELETE : kind;
        int total = 0;
        if (!nullKey) {
            Matches ms = other.matches();
            for (int i = 0; i < ms.size; i++) {
                Match m = ms.items[i];
                for (int c = 0; c < m.count; c++) {
                    emit(out, inputLeft, outKind, stored, m.row);
                    if (otherOuter && m.matches == 1) {
                        emit(out, inputLeft, RowKind.INSERT, null, m.row);
                    }
                }
                if (otherOuter) {
                    other.setMatches(m, Math.max(m.matches - 1, 0));
                }
                total += m.count;
            }
            ms.clear();
        }
        if (me.plan.outer && total == 0) {
            emit(out, inputLeft, RowKind.DELETE, stored, null);
        }
        me.unstore();
        return true;
    }

    /** Emits the input side's row and the other side's row in left/right order. */
    private void emit(Collector<Row> out, boolean inputLeft, RowKind kind, Row mine, Row theirs) {
        Row l = inputLeft ? mine : theirs;
        Row r = inputLeft ? theirs : mine;
        int[] projection = plan.projection;
        Row o;
        if (plan.rawOutput) {
            o = Row.of((Object) raw(kind, l, r));
        } else if (projection == null) {
            o = Row.withPositions(kind, leftArity + rightArity);
            if (l != null) {
                for (int i = 0; i < leftArity; i++) {
                    o.setField(i, l.getField(i));
                }
            }
            if (r != null) {
                for (int i = 0; i < rightArity; i++) {
                    o.setField(leftArity + i, r.getField(i));
                }
            }
        } else {
            o = Row.withPositions(kind, projection.length);
            for (int i = 0; i < projection.length; i++) {
                int p = projection[i];
                Row from = p < leftArity ? l : r;
                if (from != null) {
                    o.setField(i, from.getField(p < leftArity ? p : p - leftArity));
                }
            }
        }
        out.collect(o);
    }

    /** {@code kind u8 | leftLen i32 | left | rightLen i32 | right}, little-endian, -1 for null. */
    private byte[] raw(RowKind kind, Row l, Row r) {
        byte[] lb = l == null ? null : leftCodec.encode(l);
        byte[] rb = r == null ? null : rightCodec.encode(r);
        int length = 1 + 4 + (lb == null ? 0 : lb.length) + 4 + (rb == null ? 0 : rb.length);
        ByteBuffer buf = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        buf.put(kind.toByteValue());
        buf.putInt(lb == null ? -1 : lb.length);
        if (lb != null) {
            buf.put(lb);
        }
        buf.putInt(rb == null ? -1 : rb.length);
        if (rb != null) {
            buf.put(rb);
        }
        return buf.array();
    }

    // ---------------------------------------------------------------------------------------
    // State

    /** One stored row of the other side, as visited by a record. */
    static final class Match {
        Row row;
        int count;
        int matches;
        long seq;
        /** The map key (primary key or row), for write-back. */
        Row key;
        /** The state value, for write-back. */
        Object value;
    }

    /** A reusable list of matches. */
    static final class Matches {
        private static final Comparator<Match> BY_SEQ = Comparator.comparingLong(m -> m.seq);

        Match[] items = new Match[4];
        int size;

        Match add() {
            if (size == items.length) {
                items = Arrays.copyOf(items, size * 2);
            }
            Match m = items[size];
            if (m == null) {
                m = new Match();
                items[size] = m;
            }
            size++;
            return m;
        }

        void sortBySeq() {
            if (size > 1) {
                Arrays.sort(items, 0, size, BY_SEQ);
            }
        }

        void clear() {
            for (int i = 0; i < size; i++) {
                Match m = items[i];
                m.row = null;
                m.key = null;
                m.value = null;
            }
            size = 0;
        }
    }

    /**
     * One side's rows under the current join key, in the layout its keys allow. As the input side
     * it is used through a cursor ({@link #locate}, then {@link #store} or {@link #unstore}); as
     * the other side through {@link #matches} and {@link #setMatches}.
     */
    abstract static class SideStore {
        final SidePlan plan;
        final Matches matches = new Matches();

        SideStore(SidePlan plan) {
            this.plan = plan;
        }

        static SideStore create(SidePlan plan, RuntimeContext ctx, JoinCore core) {
            String name = plan.label + "-rows";
            switch (plan.layout) {
                case JOIN_KEY_CONTAINS_PRIMARY_KEY:
                    return plan.outer
                            ? new OuterValueStore(plan, ctx, name)
                            : new ValueStore(plan, ctx, name);
                case HAS_PRIMARY_KEY:
                    return new PrimaryKeyStore(plan, ctx, name, core);
                default:
                    return new MultisetStore(plan, ctx, name, core);
            }
        }

        /** Applies the side's TTL ({@code OnCreateAndWrite}, {@code NeverReturnExpired}). */
        static <S extends StateDescriptor<?, ?>> S withTtl(S descriptor, SidePlan plan) {
            if (plan.ttlMs > 0) {
                descriptor.enableTimeToLive(
                        StateTtlConfig.newBuilder(Duration.ofMillis(plan.ttlMs))
                                .setUpdateType(StateTtlConfig.UpdateType.OnCreateAndWrite)
                                .setStateVisibility(
                                        StateTtlConfig.StateVisibility.NeverReturnExpired)
                                .build());
            }
            return descriptor;
        }

        /** Finds the stored row that {@code row} would replace or retract. */
        abstract void locate(Row row) throws Exception;

        /** Whether {@link #locate} found one. */
        abstract boolean found();

        /** The row found. */
        abstract Row storedRow();

        /** Adds {@code row} (the located one) with its match count, replacing or counting up. */
        abstract void store(Row row, int matchCount) throws Exception;

        /** Removes one copy of the located row. */
        abstract void unstore() throws Exception;

        /** The rows under the current key, in insertion order (reused list; clear it after). */
        abstract Matches matches() throws Exception;

        /** Sets the match count of {@code m} (outer sides only); a write, so it refreshes TTL. */
        abstract void setMatches(Match m, int matchCount) throws Exception;
    }

    /**
     * A side with at most one row under the join key (the join key contains the primary key), in
     * a {@code ValueState}: see {@link ValueStore} and {@link OuterValueStore}.
     *
     * @param <V> the state's value
     */
    abstract static class SingleValueStore<V> extends SideStore {
        final ValueState<V> state;
        V current;

        SingleValueStore(SidePlan plan, RuntimeContext ctx, ValueStateDescriptor<V> descriptor) {
            super(plan);
            state = ctx.getState(withTtl(descriptor, plan));
        }

        @Override
        void locate(Row row) throws Exception {
            current = state.value();
        }

        @Override
        boolean found() {
            return current != null;
        }

        @Override
        void unstore() throws Exception {
            state.clear();
            current = null;
        }
    }

    /** Join key contains the primary key, inner side: {@code ValueState<Row>}. */
    static final class ValueStore extends SingleValueStore<Row> {

        ValueStore(SidePlan plan, RuntimeContext ctx, String name) {
            super(plan, ctx, new ValueStateDescriptor<>(name, plan.rowType));
        }

        @Override
        Row storedRow() {
            return current;
        }

        @Override
        void store(Row row, int matchCount) throws Exception {
            state.update(row);
            current = null;
        }

        @Override
        Matches matches() throws Exception {
            Row v = state.value();
            if (v != null) {
                Match m = matches.add();
                m.row = v;
                m.count = 1;
                m.matches = 0;
            }
            return matches;
        }

        @Override
        void setMatches(Match m, int matchCount) throws Exception {
            throw new IllegalStateException("an inner side keeps no match counts");
        }
    }

    /** Join key contains the primary key, outer side: {@code ValueState<Tuple2<row, matches>>}. */
    static final class OuterValueStore extends SingleValueStore<Tuple2<Row, Integer>> {

        OuterValueStore(SidePlan plan, RuntimeContext ctx, String name) {
            super(
                    plan,
                    ctx,
                    new ValueStateDescriptor<>(name, new TupleTypeInfo<>(plan.rowType, Types.INT)));
        }

        @Override
        Row storedRow() {
            return current.f0;
        }

        @Override
        void store(Row row, int matchCount) throws Exception {
            Tuple2<Row, Integer> v = current != null ? current : new Tuple2<>();
            v.f0 = row;
            v.f1 = matchCount;
            state.update(v);
            current = null;
        }

        @Override
        Matches matches() throws Exception {
            Tuple2<Row, Integer> v = state.value();
            if (v != null) {
                Match m = matches.add();
                m.row = v.f0;
                m.count = 1;
                m.matches = v.f1;
                m.value = v;
            }
            return matches;
        }

        @Override
        @SuppressWarnings("unchecked")
        void setMatches(Match m, int matchCount) throws Exception {
            Tuple2<Row, Integer> v = (Tuple2<Row, Integer>) m.value;
            v.f1 = matchCount;
            state.update(v);
        }
    }

    /**
     * A side whose rows sit in a {@code MapState<key, (first, matches, seq)>} under the join key,
     * visited in insertion order ({@code seq}). The two map layouts differ only in the map key and
     * in what the value's first field holds: see {@link PrimaryKeyStore} and {@link MultisetStore}.
     *
     * @param <T> the value's first field
     */
    abstract static class MapStore<T> extends SideStore {
        private final MapState<Row, Tuple3<T, Integer, Long>> state;
        private final JoinCore core;
        private Row currentKey;
        private Tuple3<T, Integer, Long> current;

        MapStore(
                SidePlan plan,
                RuntimeContext ctx,
                String name,
                JoinCore core,
                TypeInformation<Row> keyType,
                TypeInformation<T> firstType) {
            super(plan);
            this.core = core;
            state =
                    ctx.getMapState(
                            withTtl(
                                    new MapStateDescriptor<>(
                                            name,
                                            keyType,
                                            new TupleTypeInfo<>(firstType, Types.INT, Types.LONG)),
                                    plan));
        }

        /** The map key of {@code row}. */
        abstract Row mapKey(Row row);

        /** The first field once {@code row} is stored over {@code stored} (null if it is new). */
        abstract T added(Row row, T stored);

        /** The first field once one copy is removed from {@code stored}, or null if none is left. */
        abstract T removed(T stored);

        /** The row of a map entry. */
        abstract Row row(Row key, T first);

        /** How many copies of its row a map entry holds. */
        abstract int copies(T first);

        @Override
        void locate(Row row) throws Exception {
            currentKey = mapKey(row);
            current = state.get(currentKey);
        }

        @Override
        boolean found() {
            return current != null;
        }

        @Override
        Row storedRow() {
            return row(currentKey, current.f0);
        }

        @Override
        void store(Row row, int matchCount) throws Exception {
            Tuple3<T, Integer, Long> v = current;
            if (v == null) {
                v = new Tuple3<>(added(row, null), matchCount, core.takeSeq());
            } else {
                v.f0 = added(row, v.f0); // an existing entry keeps its place
                v.f1 = matchCount;
            }
            state.put(currentKey, v);
            current = null;
            currentKey = null;
        }

        @Override
        void unstore() throws Exception {
            Tuple3<T, Integer, Long> v = current;
            T rest = removed(v.f0);
            if (rest != null) {
                v.f0 = rest;
                state.put(currentKey, v);
            } else {
                state.remove(currentKey);
            }
            current = null;
            currentKey = null;
        }

        @Override
        Matches matches() throws Exception {
            for (Map.Entry<Row, Tuple3<T, Integer, Long>> e : state.entries()) {
                Tuple3<T, Integer, Long> v = e.getValue();
                Match m = matches.add();
                m.key = e.getKey();
                m.value = v;
                m.row = row(m.key, v.f0);
                m.count = copies(v.f0);
                m.matches = v.f1;
                m.seq = v.f2;
            }
            matches.sortBySeq();
            return matches;
        }

        @Override
        @SuppressWarnings("unchecked")
        void setMatches(Match m, int matchCount) throws Exception {
            Tuple3<T, Integer, Long> v = (Tuple3<T, Integer, Long>) m.value;
            v.f1 = matchCount;
            state.put(m.key, v);
        }
    }

    /** A primary key the join key does not contain: {@code MapState<pk, (row, matches, seq)>}. */
    static final class PrimaryKeyStore extends MapStore<Row> {

        PrimaryKeyStore(SidePlan plan, RuntimeContext ctx, String name, JoinCore core) {
            super(plan, ctx, name, core, plan.primaryKeyType, plan.rowType);
        }

        @Override
        Row mapKey(Row row) {
            return plan.primaryKey(row);
        }

        @Override
        Row added(Row row, Row stored) {
            return row; // an upsert replaces the row
        }

        @Override
        Row removed(Row stored) {
            return null;
        }

        @Override
        Row row(Row key, Row first) {
            return first;
        }

        @Override
        int copies(Row first) {
            return 1;
        }
    }

    /** No primary key: a multiset, {@code MapState<row, (count, matches, seq)>}. */
    static final class MultisetStore extends MapStore<Integer> {

        MultisetStore(SidePlan plan, RuntimeContext ctx, String name, JoinCore core) {
            super(plan, ctx, name, core, plan.rowType, Types.INT);
        }

        @Override
        Row mapKey(Row row) {
            return row;
        }

        @Override
        Integer added(Row row, Integer stored) {
            return stored == null ? 1 : stored + 1;
        }

        @Override
        Integer removed(Integer stored) {
            return stored > 1 ? stored - 1 : null;
        }

        @Override
        Row row(Row key, Integer first) {
            return key; // equal to the stored row
        }

        @Override
        int copies(Integer first) {
            return first;
        }
    }
}
