package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.javajoin.ResolvedJoin.ResolvedSide;
import dev.cdcjoin.flink.javajoin.SideStore.Match;
import dev.cdcjoin.flink.javajoin.SideStore.Matches;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.typeutils.TupleTypeInfo;
import org.apache.flink.types.Row;

/**
 * The side stores of layout {@link StateLayout#JOIN_KEY_CONTAINS_PRIMARY_KEY} (Flink's {@code
 * JoinKeyContainsUniqueKey}): at most one row under a join key, so one {@code ValueState}, with the
 * row's match count on an outer side.
 */
final class ValueStores {

    private ValueStores() {}

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
}
