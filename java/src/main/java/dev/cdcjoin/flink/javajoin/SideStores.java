package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.javajoin.ResolvedJoin.ResolvedSide;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Map;
import org.apache.flink.api.common.functions.RuntimeContext;
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
import org.apache.flink.types.Row;

/**
 * Where the Java join keeps each side's rows: Flink keyed state (keyed by the join key) in the
 * layout the side's keys allow ({@link StateLayout}), with the side's TTL. Kept apart from the
 * emission rules ({@link JoinCore}) so that each reads on its own: the rules ask "which stored row
 * does this change replace or retract" and "which rows does it match", and the stores answer in
 * their layout.
 */
final class SideStores {

    private SideStores() {}

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
        final ResolvedSide plan;
        final Matches matches = new Matches();

        SideStore(ResolvedSide plan) {
            this.plan = plan;
        }

        static SideStore create(ResolvedSide plan, RuntimeContext ctx, JoinCore core) {
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
        static <S extends StateDescriptor<?, ?>> S withTtl(S descriptor, ResolvedSide plan) {
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

        /** Removes one copy of the located row; {@link #store} may then add a new one. */
        abstract void unstore() throws Exception;

        /** Writes the located entry back unchanged: a write, so it refreshes the TTL. */
        abstract void rewrite() throws Exception;

        /** The rows under the current key, in insertion order (reused list; clear it after). */
        abstract Matches matches() throws Exception;

        /** Sets the match count of {@code m} (outer sides only); a write, so it refreshes TTL. */
        abstract void setMatches(Match m, int matchCount) throws Exception;
    }

    /**
     * A side with at most one row under the join key (the join key contains the primary key), in a
     * {@code ValueState}: see {@link ValueStore} and {@link OuterValueStore}.
     *
     * @param <V> the state's value
     */
    abstract static class SingleValueStore<V> extends SideStore {
        final ValueState<V> state;
        V current;

        SingleValueStore(
                ResolvedSide plan, RuntimeContext ctx, ValueStateDescriptor<V> descriptor) {
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

        @Override
        void rewrite() throws Exception {
            state.update(current);
            current = null;
        }
    }

    /** Join key contains the primary key, inner side: {@code ValueState<Row>}. */
    static final class ValueStore extends SingleValueStore<Row> {

        ValueStore(ResolvedSide plan, RuntimeContext ctx, String name) {
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

        OuterValueStore(ResolvedSide plan, RuntimeContext ctx, String name) {
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
                ResolvedSide plan,
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

        /** The first field once one copy is removed from {@code stored}; null if none is left. */
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
            current = null; // the key stays located: a replacement stores its new row next
        }

        @Override
        void rewrite() throws Exception {
            state.put(currentKey, current);
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

        PrimaryKeyStore(ResolvedSide plan, RuntimeContext ctx, String name, JoinCore core) {
            super(plan, ctx, name, core, plan.primaryKeyType, plan.rowType);
        }

        @Override
        Row mapKey(Row row) {
            return plan.primaryKey(row);
        }

        @Override
        Row added(Row row, Row stored) {
            return row; // a replaced row was unstored first
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

        MultisetStore(ResolvedSide plan, RuntimeContext ctx, String name, JoinCore core) {
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
