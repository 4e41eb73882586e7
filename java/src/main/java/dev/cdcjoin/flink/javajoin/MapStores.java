package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.javajoin.ResolvedJoin.ResolvedSide;
import dev.cdcjoin.flink.javajoin.SideStore.Match;
import dev.cdcjoin.flink.javajoin.SideStore.Matches;
import java.util.Map;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.api.java.typeutils.TupleTypeInfo;
import org.apache.flink.types.Row;

/**
 * The side stores of layouts {@link StateLayout#HAS_PRIMARY_KEY} and {@link
 * StateLayout#NO_PRIMARY_KEY} (Flink's {@code InputSideHasUniqueKey} and {@code
 * InputSideHasNoUniqueKey}): many rows under a join key, in a {@code MapState} keyed by primary key
 * or by the row itself.
 */
final class MapStores {

    private MapStores() {}

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
