package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.BadRecord;
import dev.cdcjoin.flink.CdcJoinMetrics;
import dev.cdcjoin.flink.codec.RowCodec;
import dev.cdcjoin.flink.javajoin.ResolvedJoin.ResolvedSide;
import dev.cdcjoin.flink.javajoin.SideStore.Match;
import dev.cdcjoin.flink.javajoin.SideStore.Matches;
import dev.cdcjoin.flink.runtime.JoinBatches;
import java.io.Serializable;
import java.util.Collections;
import java.util.Objects;
import java.util.function.Consumer;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;

/**
 * The join's emission rules over Flink keyed state ({@link SideStore}), shared by {@link
 * JavaJoinFunction} and {@link OrderedJavaJoinFunction}: the rules of the native engine ({@code
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
 * <p>With the native join's deliberate differences from Flink 2.3:
 *
 * <ul>
 *   <li><b>Replacement.</b> On a side with a primary key, a {@code +I}/{@code +U} whose primary key
 *       is stored replaces the stored row: identical to it, nothing is emitted (the entry is
 *       written again, which refreshes its TTL); otherwise the stored row is retracted as a {@code
 *       -U} of it would be (rows 5-8), then the new row accumulated as a {@code +U} (rows 1-4),
 *       last in the key's order. So the changelog is Flink's after a ChangelogNormalize
 *       (re-deliveries, snapshots of existing rows and upserts leave no stale joined row), and
 *       match counts always equal the number of matching rows (FLINK-40681).
 *   <li><b>Unavailable columns</b> ({@link Unavailable}): an accumulation on a primary-key side
 *       takes them from the stored row with the same primary key, then replaces it; a retraction on
 *       a primary-key side retracts the stored row found by primary key. A change that cannot be
 *       resolved (no stored row to fill from, an unavailable join or primary key column, any
 *       unavailable column on a side without primary key) is rejected: it changes nothing, emits
 *       nothing, and goes to the bad-record policy. Unavailable values are never stored or emitted.
 *   <li>A retraction of a row not in state emits nothing and is counted (or fails); a retraction
 *       emits the stored row; a row whose join key has a null column never matches but is stored.
 * </ul>
 *
 * A key's matches are visited in insertion order, which makes the changelog identical to the native
 * one, not only equivalent.
 */
final class JoinCore implements Serializable {

    private static final long serialVersionUID = 1L;

    private final ResolvedJoin plan;
    private final int leftArity;
    private final int rightArity;

    /** Encoders of the two sides' rows, for raw output ({@link ResolvedJoin#rawOutput}). */
    private final RowCodec leftCodec;

    private final RowCodec rightCodec;

    private final BadRecords rejections;

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

    JoinCore(ResolvedJoin plan) {
        this.plan = plan;
        this.leftArity = plan.left.arity();
        this.rightArity = plan.right.arity();
        this.leftCodec = plan.rawOutput ? new RowCodec(plan.left.schema) : null;
        this.rightCodec = plan.rawOutput ? new RowCodec(plan.right.schema) : null;
        this.rejections = new BadRecords(plan.policy, CdcJoinMetrics.REJECTED);
    }

    ResolvedJoin plan() {
        return plan;
    }

    // ---------------------------------------------------------------------------------------
    // Lifecycle

    void initializeState(FunctionInitializationContext context) throws Exception {
        seqState =
                context.getOperatorStateStore()
                        .getUnionListState(
                                new ListStateDescriptor<>("javajoin-next-seq", Types.LONG));
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
        absentRetractions = ctx.getMetricGroup().counter(CdcJoinMetrics.ABSENT_RETRACTIONS);
        recordsLeft = ctx.getMetricGroup().counter(CdcJoinMetrics.RECORDS_IN_LEFT);
        recordsRight = ctx.getMetricGroup().counter(CdcJoinMetrics.RECORDS_IN_RIGHT);
        rejections.open(ctx);
    }

    long takeSeq() {
        return nextSeq++;
    }

    // ---------------------------------------------------------------------------------------
    // Records

    /**
     * Processes one change of the left ({@code inputLeft}) or right input; the current key must be
     * its join key. Takes ownership of {@code row}. A change the join cannot resolve goes to {@code
     * badRecords} (or fails, by the bad-record policy).
     */
    void process(boolean inputLeft, Row row, Collector<Row> out, Consumer<BadRecord> badRecords)
            throws Exception {
        SideStore me = inputLeft ? left : right;
        SideStore other = inputLeft ? right : left;
        long index = inputLeft ? leftChanges++ : rightChanges++;
        (inputLeft ? recordsLeft : recordsRight).inc();
        RowKind kind = row.getKind();
        boolean accumulation = kind == RowKind.INSERT || kind == RowKind.UPDATE_AFTER;
        String rejected = Unresolved.check(me.plan, row);
        if (rejected == null && accumulation) {
            rejected = accumulate(me, other, inputLeft, row, out);
        } else if (rejected == null && !retract(me, other, inputLeft, row, out)) {
            absentRetraction(me, kind, row, index);
        }
        if (rejected != null) {
            reject(me.plan, rejected, badRecords);
        }
    }

    /** A change the join cannot apply: fail, or report it with the side's table as source. */
    private void reject(ResolvedSide side, String reason, Consumer<BadRecord> badRecords) {
        rejections.reject(
                new RejectedChangeException(reason),
                badRecords,
                () -> new BadRecord(side.name, -1, null, reason));
    }

    private void absentRetraction(SideStore me, RowKind kind, Row row, long index) {
        absentRetractions.inc();
        if (plan.failOnAbsentRetraction) {
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

    /**
     * {@code +I}/{@code +U}: fills unavailable columns and replaces a stored row with the same
     * primary key, then rows 1-4 of the table. Returns why it was rejected, or null.
     */
    private String accumulate(
            SideStore me, SideStore other, boolean inputLeft, Row row, Collector<Row> out)
            throws Exception {
        RowKind kind = row.getKind();
        me.locate(withoutKind(row));
        boolean replaces = me.found() && me.plan.hasPrimaryKey();
        if (Unresolved.any(row)) {
            if (!replaces) {
                row.setKind(kind);
                return Unresolved.noStoredRow(me.plan, row);
            }
            Unresolved.fill(row, me.storedRow());
        }
        if (replaces) {
            Row stored = me.storedRow();
            if (stored.equals(row)) {
                me.rewrite();
                return null;
            }
            emitRetraction(me, other, inputLeft, RowKind.UPDATE_BEFORE, stored, out);
            me.unstore();
            kind = RowKind.UPDATE_AFTER;
        }
        boolean nullKey = me.plan.hasNullKey(row);
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
                if (otherOuter) {
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
        return null;
    }

    /** {@code -U}/{@code -D}: rows 5-8 of the table. False when the row is not in state. */
    private boolean retract(
            SideStore me, SideStore other, boolean inputLeft, Row row, Collector<Row> out)
            throws Exception {
        RowKind kind = row.getKind();
        me.locate(withoutKind(row));
        if (!me.found() || (me.plan.side.exactRetractions() && !sameValues(me.storedRow(), row))) {
            row.setKind(kind);
            return false;
        }
        emitRetraction(me, other, inputLeft, kind, me.storedRow(), out);
        me.unstore();
        return true;
    }

    /** Whether two rows hold the same values (whatever their kinds). */
    private static boolean sameValues(Row a, Row b) {
        for (int i = 0; i < a.getArity(); i++) {
            if (!Objects.deepEquals(a.getField(i), b.getField(i))) {
                return false;
            }
        }
        return true;
    }

    /** Rows 5-8 for a stored row: the emissions and the match counts (the caller unstores it). */
    private void emitRetraction(
            SideStore me,
            SideStore other,
            boolean inputLeft,
            RowKind kind,
            Row stored,
            Collector<Row> out)
            throws Exception {
        boolean otherOuter = other.plan.outer;
        RowKind outKind = me.plan.outer ? RowKind.DELETE : kind;
        int total = 0;
        if (!me.plan.hasNullKey(stored)) {
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
    }

    /** Stored rows (and multiset map keys) are kind-neutral. */
    private static Row withoutKind(Row row) {
        row.setKind(RowKind.INSERT);
        return row;
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
        return JoinBatches.joinedRow(
                kind.toByteValue(),
                l == null ? null : leftCodec.encode(l),
                r == null ? null : rightCodec.encode(r));
    }
}
