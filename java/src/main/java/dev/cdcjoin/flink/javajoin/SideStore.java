package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.javajoin.ResolvedJoin.ResolvedSide;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.types.Row;

/**
 * Where the Java join keeps one side's rows: Flink keyed state (keyed by the join key) in the
 * layout the side's keys allow ({@link StateLayout}), with the side's TTL. Kept apart from the
 * emission rules ({@link JoinCore}) so that each reads on its own: the rules ask "which stored row
 * does this change replace or retract" and "which rows does it match", and the stores answer in
 * their layout ({@link ValueStores} when the join key contains the primary key, {@link MapStores}
 * otherwise).
 *
 * <p>As the input side a store is used through a cursor ({@link #locate}, then {@link #store} or
 * {@link #unstore}); as the other side through {@link #matches} and {@link #setMatches}.
 */
abstract class SideStore {
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
                        ? new ValueStores.OuterValueStore(plan, ctx, name)
                        : new ValueStores.ValueStore(plan, ctx, name);
            case HAS_PRIMARY_KEY:
                return new MapStores.PrimaryKeyStore(plan, ctx, name, core);
            default:
                return new MapStores.MultisetStore(plan, ctx, name, core);
        }
    }

    /** Applies the side's TTL ({@code OnCreateAndWrite}, {@code NeverReturnExpired}). */
    static <S extends StateDescriptor<?, ?>> S withTtl(S descriptor, ResolvedSide plan) {
        if (plan.ttlMs > 0) {
            descriptor.enableTimeToLive(
                    StateTtlConfig.newBuilder(Duration.ofMillis(plan.ttlMs))
                            .setUpdateType(StateTtlConfig.UpdateType.OnCreateAndWrite)
                            .setStateVisibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
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
}
