package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.cdcjoin.flink.FidelityJoins.FlinkOperator;
import dev.cdcjoin.flink.FidelityJoins.JavaOperator;
import dev.cdcjoin.flink.FidelityJoins.NativeOperator;
import dev.cdcjoin.flink.FidelityJoins.RecordJoin;
import dev.cdcjoin.flink.FidelityTrace.Case;
import dev.cdcjoin.flink.FidelityTrace.Change;
import dev.cdcjoin.flink.FidelityTrace.Layout;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Per-record fidelity against Flink's own join: Flink's {@code StreamingJoinOperator} (from
 * flink-table-runtime, in Flink's keyed two-input operator harness) and cdcjoin's join, in both
 * engines (the native operator and the pure-Java function), are fed the same random changelog
 * record by record, for every join type and every pair of state layouts, and for each input record
 * they must emit the same multiset of rows and kinds.
 *
 * <p>The inputs on which cdcjoin deliberately differs ({@link Case}) are generated on purpose, and
 * checked on cdcjoin's side:
 *
 * <ul>
 *   <li>{@link Case#ABSENT_RETRACTION}: cdcjoin emits nothing. Flink is fed the record too when
 *       that leaves its state as it was (the other side is inner: no match counts to corrupt), to
 *       show that it emits retractions of rows it never emitted.
 *   <li>{@link Case#REPLACEMENT} and {@link Case#UPSERT_FLINK_40681}: cdcjoin's output equals
 *       Flink's for the normalized pair {@code -U(stored), +U(new)}, which is what Flink is fed (as
 *       a ChangelogNormalize would); every later record then checks that the match counts stayed
 *       exact.
 *   <li>{@link Case#REPLACEMENT_IDENTICAL}: cdcjoin emits nothing, and Flink is fed nothing (a
 *       ChangelogNormalize drops it).
 *   <li>{@link Case#RETRACTION_BY_KEY}: cdcjoin's output equals Flink's for a retraction of the
 *       stored row, which is what Flink is fed.
 * </ul>
 *
 * <p>{@link Case#DUPLICATE} rows on a side without a primary key count one match each in Flink 2.3
 * too, so they must match exactly. The scenario tests at the end show each difference on Flink's
 * raw operator.
 */
@SuppressWarnings("try") // RecordJoin#close may throw InterruptedException
class FlinkFidelityTest {

    /** Records per combination. */
    private static final int RECORDS = 300;

    /** Mismatches printed in a failure message. */
    private static final int SHOWN = 12;

    static Stream<Arguments> combinations() {
        List<Arguments> all = new ArrayList<>();
        for (JoinType type : JoinType.values()) {
            for (Layout left : Layout.values()) {
                for (Layout right : Layout.values()) {
                    for (Engine engine : Engine.values()) {
                        all.add(Arguments.of(type, left, right, engine));
                    }
                }
            }
        }
        return all.stream();
    }

    @ParameterizedTest(name = "{0} join, left {1}, right {2}, {3} engine")
    @MethodSource("combinations")
    void everyRecordEmitsWhatFlinksOwnJoinEmits(
            JoinType type, Layout left, Layout right, Engine engine) throws Exception {
        long seed = 1 + type.ordinal() * 9L + left.ordinal() * 3L + right.ordinal();
        List<Change> trace = FidelityTrace.generate(left, right, seed, RECORDS);
        String what =
                type
                        + " join, left "
                        + left
                        + ", right "
                        + right
                        + ", "
                        + engine
                        + " engine, seed "
                        + seed;
        List<String> mismatches = new ArrayList<>();
        Comparison comparison;
        try (RecordJoin flink = new FlinkOperator(left, right, type);
                RecordJoin ours = ours(engine, left, right, type)) {
            comparison = new Comparison(type, flink);
            for (int i = 0; i < trace.size(); i++) {
                Change c = trace.get(i);
                List<String> mine = ours.process(c);
                List<List<String>> expected = comparison.expected(c);
                if (!matches(expected, mine)) {
                    mismatches.add(mismatch(i, c, expected, mine));
                }
            }
        }
        if (!mismatches.isEmpty()) {
            fail(
                    mismatches.size()
                            + " of "
                            + trace.size()
                            + " records differ from Flink's "
                            + "StreamingJoinOperator ("
                            + what
                            + "); the first "
                            + SHOWN
                            + ":\n"
                            + String.join(
                                    "\n",
                                    mismatches.subList(0, Math.min(SHOWN, mismatches.size()))));
        }
        assertGeneratedOnPurpose(comparison.generated, left, right, what);
        if (type != JoinType.FULL) {
            assertTrue(
                    comparison.absentShownOnFlink > 0,
                    "no absent retraction made Flink emit rows it never emitted: " + what);
        }
    }

    /** What cdcjoin must emit per record, from Flink's operator fed the record or its stand-in. */
    private static final class Comparison {
        private final JoinType type;
        private final RecordJoin flink;

        /** How many records of each case were seen. */
        final Map<Case, Integer> generated = new EnumMap<>(Case.class);

        /** Absent retractions that Flink (fed them) answered with rows it never emitted. */
        int absentShownOnFlink;

        Comparison(JoinType type, RecordJoin flink) {
            this.type = type;
            this.flink = flink;
        }

        /**
         * The rows cdcjoin must emit for {@code c}, in parts that must come in this order (each a
         * multiset); feeds Flink what stands for {@code c}.
         */
        List<List<String>> expected(Change c) throws Exception {
            generated.merge(c.why, 1, Integer::sum);
            switch (c.why) {
                case PLAIN:
                case DUPLICATE:
                    return List.of(flink.process(c));
                case REPLACEMENT:
                case UPSERT_FLINK_40681:
                    return normalized(c);
                case REPLACEMENT_IDENTICAL:
                    return List.of();
                case RETRACTION_BY_KEY:
                    return List.of(
                            flink.process(new Change(c.right, c.kind, c.stored, c.why, null)));
                case ABSENT_RETRACTION:
                    if (!otherSideOuter(type, c) && !flink.process(c).isEmpty()) {
                        absentShownOnFlink++;
                    }
                    return List.of();
                default:
                    throw new AssertionError(c.why);
            }
        }

        /**
         * What Flink emits for the pair a ChangelogNormalize makes of a replacement: the stored
         * row's retractions first, then the new row's rows.
         */
        private List<List<String>> normalized(Change c) throws Exception {
            return List.of(
                    flink.process(
                            new Change(c.right, RowKind.UPDATE_BEFORE, c.stored, c.why, null)),
                    flink.process(new Change(c.right, RowKind.UPDATE_AFTER, c.row, c.why, null)));
        }
    }

    /** Whether {@code mine} is the parts one after the other, each in any order. */
    private static boolean matches(List<List<String>> parts, List<String> mine) {
        int at = 0;
        for (List<String> part : parts) {
            int end = at + part.size();
            if (end > mine.size() || !sorted(part).equals(sorted(mine.subList(at, end)))) {
                return false;
            }
            at = end;
        }
        return at == mine.size();
    }

    private static List<String> sorted(List<String> rows) {
        List<String> out = new ArrayList<>(rows);
        Collections.sort(out);
        return out;
    }

    /** Whether the side a record does not come from is outer (it keeps match counts). */
    private static boolean otherSideOuter(JoinType type, Change c) {
        return type == JoinType.FULL || type == (c.right ? JoinType.LEFT : JoinType.RIGHT);
    }

    /** One record's diff: the record, Flink's parts, ours in emission order, what only one has. */
    private static String mismatch(
            int index, Change c, List<List<String>> parts, List<String> ours) {
        List<String> flink = parts.stream().flatMap(List::stream).collect(Collectors.toList());
        List<String> onlyFlink = new ArrayList<>(flink);
        ours.forEach(onlyFlink::remove);
        List<String> onlyOurs = new ArrayList<>(ours);
        flink.forEach(onlyOurs::remove);
        String expected =
                parts.stream().map(p -> sorted(p).toString()).collect(Collectors.joining(" then "));
        return "  #"
                + index
                + " "
                + c.why
                + " "
                + c
                + "\n"
                + "      Flink: "
                + (parts.isEmpty() ? "[]" : expected)
                + "\n"
                + "      ours:  "
                + ours
                + "\n"
                + "      only in Flink's: "
                + onlyFlink
                + ", only in ours: "
                + onlyOurs;
    }

    /** Each deliberate difference that the layouts allow was generated, several times. */
    private static void assertGeneratedOnPurpose(
            Map<Case, Integer> generated, Layout left, Layout right, String what) {
        List<Case> expected = new ArrayList<>(List.of(Case.PLAIN, Case.ABSENT_RETRACTION));
        if (left.hasPrimaryKey() || right.hasPrimaryKey()) {
            expected.addAll(
                    List.of(
                            Case.REPLACEMENT,
                            Case.UPSERT_FLINK_40681,
                            Case.REPLACEMENT_IDENTICAL,
                            Case.RETRACTION_BY_KEY));
        }
        if (!left.hasPrimaryKey() || !right.hasPrimaryKey()) {
            expected.add(Case.DUPLICATE);
        }
        for (Case c : expected) {
            assertTrue(
                    generated.getOrDefault(c, 0) >= 3,
                    c + " generated " + generated.get(c) + " times: " + what);
        }
    }

    // Each difference on Flink's raw operator (fed exactly what cdcjoin is fed), in small
    // scenarios.

    /** A retraction of a row never inserted: Flink retracts a joined row it never emitted. */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void absentRetraction(Engine engine) throws Exception {
        List<Change> records =
                List.of(left(RowKind.INSERT, 1, "a"), right(RowKind.DELETE, 7, 1, "x"));
        Layout l = Layout.JOIN_KEY_CONTAINS_UNIQUE_KEY;
        Layout r = Layout.HAS_UNIQUE_KEY;
        assertEquals(
                List.of(List.of(), List.of("-D[1, a, 7, 1, x]")),
                run(new FlinkOperator(l, r, JoinType.INNER), records));
        assertEquals(
                List.of(List.of(), List.of()), run(ours(engine, l, r, JoinType.INNER), records));
    }

    /**
     * FLINK-40681: an upsert ({@code +U} with no {@code -U}) on the inner side of a LEFT join
     * counts a second match for the left row, so deleting the right row leaves Flink's result with
     * the replaced (stale) joined row and without the null-padded row; cdcjoin's result is exact.
     */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void upsertOnAnOuterJoinFlink40681(Engine engine) throws Exception {
        List<Change> records =
                List.of(
                        left(RowKind.INSERT, 1, "a"),
                        right(RowKind.INSERT, 7, 1, "x"),
                        right(RowKind.UPDATE_AFTER, 7, 1, "y"),
                        right(RowKind.DELETE, 7, 1, "y"));
        Layout l = Layout.JOIN_KEY_CONTAINS_UNIQUE_KEY;
        Layout r = Layout.HAS_UNIQUE_KEY;
        assertEquals(
                Map.of("[1, a, 7, 1, x]", 1),
                materialize(run(new FlinkOperator(l, r, JoinType.LEFT), records)));
        assertEquals(
                Map.of("[1, a, null, null, null]", 1),
                materialize(run(ours(engine, l, r, JoinType.LEFT), records)));
    }

    /**
     * Re-delivered inserts (identical, then a snapshot read of a changed row): Flink duplicates the
     * joined row and keeps the stale one; cdcjoin replaces.
     */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void replacementsOfAStoredPrimaryKey(Engine engine) throws Exception {
        List<Change> records =
                List.of(
                        left(RowKind.INSERT, 1, "a"),
                        right(RowKind.INSERT, 1, "x"),
                        right(RowKind.INSERT, 1, "x"),
                        right(RowKind.INSERT, 1, "y"));
        Layout pk = Layout.JOIN_KEY_CONTAINS_UNIQUE_KEY;
        assertEquals(
                Map.of("[1, a, 1, x]", 2, "[1, a, 1, y]", 1),
                materialize(run(new FlinkOperator(pk, pk, JoinType.INNER), records)));
        List<List<String>> mine = run(ours(engine, pk, pk, JoinType.INNER), records);
        assertEquals(
                List.of(
                        List.of(),
                        List.of("+I[1, a, 1, x]"),
                        List.of(),
                        List.of("-U[1, a, 1, x]", "+U[1, a, 1, y]")),
                mine);
    }

    /**
     * Duplicate rows on a side without a primary key count one match each in Flink 2.3 as in
     * cdcjoin: the null-padded row comes back only when the last copy goes.
     */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void duplicateRowsCountAMatchEach(Engine engine) throws Exception {
        List<Change> records =
                List.of(
                        left(RowKind.INSERT, 1, "a"),
                        right(RowKind.INSERT, 1, "x"),
                        right(RowKind.INSERT, 1, "x"),
                        right(RowKind.DELETE, 1, "x"),
                        right(RowKind.DELETE, 1, "x"));
        Layout l = Layout.JOIN_KEY_CONTAINS_UNIQUE_KEY;
        Layout r = Layout.NO_UNIQUE_KEY;
        List<List<String>> flink = run(new FlinkOperator(l, r, JoinType.LEFT), records);
        assertEquals(List.of("-D[1, a, 1, x]"), flink.get(3));
        assertEquals(List.of("-D[1, a, 1, x]", "+I[1, a, null, null]"), flink.get(4));
        assertEquals(flink, run(ours(engine, l, r, JoinType.LEFT), records));
    }

    /** cdcjoin's join in the given engine. */
    private static RecordJoin ours(Engine engine, Layout left, Layout right, JoinType type)
            throws Exception {
        return engine == Engine.NATIVE
                ? new NativeOperator(left, right, type)
                : new JavaOperator(left, right, type);
    }

    private static Change left(RowKind kind, Object... row) {
        return new Change(false, kind, row, Case.PLAIN, null);
    }

    private static Change right(RowKind kind, Object... row) {
        return new Change(true, kind, row, Case.PLAIN, null);
    }

    /** Feeds the records one by one; the rows each caused, in emission order. */
    private static List<List<String>> run(RecordJoin join, List<Change> records) throws Exception {
        try (join) {
            List<List<String>> out = new ArrayList<>();
            for (Change c : records) {
                out.add(join.process(c));
            }
            return out;
        }
    }

    private static Map<String, Integer> materialize(List<List<String>> perRecord) {
        return Changelogs.materialize(
                perRecord.stream().flatMap(List::stream).collect(Collectors.toList()));
    }
}
