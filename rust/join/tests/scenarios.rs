//! Hand-checked scenarios: the emission table row by row, Flink's documented sequences, every
//! deliberate difference from Flink, TTL, and errors.

mod support;

use cdcjoin_join::batch::{write_input, InputRecord};
use cdcjoin_join::{
    JoinEngine, JoinError, JoinSpec, JoinType, KeyGroupRange, OutputEntries, OutputEntry,
    RetractionPolicy, Side,
};
use cdcjoin_model::RowKind::{self, *};
use support::*;

const ALL: KeyGroupRange = KeyGroupRange {
    start: 0,
    end: MAX_KG - 1,
};

fn row(id: i32, k: i32, v: &str) -> Row {
    Row {
        id,
        k: Some(k),
        v: v.into(),
    }
}

fn l(kind: RowKind, r: Row) -> Change {
    Change::new(Side::Left, kind, r)
}

fn r(kind: RowKind, r: Row) -> Change {
    Change::new(Side::Right, kind, r)
}

/// Both sides keyed by a primary key and joined on `k`.
const PK: [Keys; 2] = [Keys::Pk, Keys::Pk];

/// The spec of a `jt` join of two [`PK`] sides over all key groups.
fn pk_spec(jt: JoinType) -> JoinSpec {
    spec(jt, PK[0], PK[1], ALL)
}

fn engine(jt: JoinType) -> (JoinEngine, [Keys; 2]) {
    (JoinEngine::new(&pk_spec(jt)).unwrap(), PK)
}

/// The printed output of each of `changes`, fed one batch each to a fresh `jt` join.
fn emitted(jt: JoinType, changes: &[Change]) -> Vec<Vec<String>> {
    let (mut e, k) = engine(jt);
    run(&mut e, k, changes)
}

/// The error of `engine` on one batch of all `changes`.
fn failure(engine: &mut JoinEngine, changes: &[Change]) -> JoinError {
    let mut batch = Vec::new();
    changes.iter().for_each(|c| c.batch(PK, &mut batch));
    engine
        .process_batch(&batch, 0, &mut Vec::new())
        .unwrap_err()
}

/// Seed 004: a left and a right row that match, then an update of each.
fn seed_004() -> [Change; 6] {
    [
        l(Insert, row(1, 1, "left1")),
        r(Insert, row(2, 1, "right1")),
        l(UpdateBefore, row(1, 1, "left1")),
        l(UpdateAfter, row(1, 1, "left2")),
        r(UpdateBefore, row(2, 1, "right1")),
        r(UpdateAfter, row(2, 1, "right2")),
    ]
}

/// Seed 004, inner join: only matched pairs; updates keep their -U/+U kinds.
#[test]
fn inner_join_forwards_update_kinds() {
    assert_eq!(
        emitted(JoinType::Inner, &seed_004()),
        vec![
            vec![],
            vec!["+I[1, 1, left1, 2, 1, right1]"],
            vec!["-U[1, 1, left1, 2, 1, right1]"],
            vec!["+U[1, 1, left2, 2, 1, right1]"],
            vec!["-U[1, 1, left2, 2, 1, right1]"],
            vec!["+U[1, 1, left2, 2, 1, right2]"],
        ]
    );
}

/// Seed 004, left join: the outer side emits +I/-D only; the inner side's retraction keeps its kind
/// and re-emits the null padding (FLINK-17337).
#[test]
fn left_join_sequence() {
    assert_eq!(
        emitted(JoinType::Left, &seed_004()),
        vec![
            vec!["+I[1, 1, left1, null, null, null]"],
            vec![
                "-D[1, 1, left1, null, null, null]",
                "+I[1, 1, left1, 2, 1, right1]"
            ],
            vec!["-D[1, 1, left1, 2, 1, right1]"],
            vec!["+I[1, 1, left2, 2, 1, right1]"],
            vec![
                "-U[1, 1, left2, 2, 1, right1]",
                "+I[1, 1, left2, null, null, null]"
            ],
            vec![
                "-D[1, 1, left2, null, null, null]",
                "+I[1, 1, left2, 2, 1, right2]"
            ],
        ]
    );
}

/// Seed 004, right join: the mirror image.
#[test]
fn right_join_sequence() {
    let [left1, right1, left1_before, left2, ..] = seed_004();
    assert_eq!(
        emitted(JoinType::Right, &[right1, left1, left1_before, left2]),
        vec![
            vec!["+I[null, null, null, 2, 1, right1]"],
            vec![
                "-D[null, null, null, 2, 1, right1]",
                "+I[1, 1, left1, 2, 1, right1]"
            ],
            vec![
                "-U[1, 1, left1, 2, 1, right1]",
                "+I[null, null, null, 2, 1, right1]"
            ],
            vec![
                "-D[null, null, null, 2, 1, right1]",
                "+I[1, 1, left2, 2, 1, right1]"
            ],
        ]
    );
}

/// Full join: a row matching two rows of an outer side retracts both paddings, and gives them
/// back when it goes.
#[test]
fn full_join_one_to_many() {
    let out = emitted(
        JoinType::Full,
        &[
            r(Insert, row(10, 1, "a")),
            r(Insert, row(11, 1, "b")),
            l(Insert, row(1, 1, "x")),
            l(Delete, row(1, 1, "x")),
        ],
    );
    assert_eq!(
        out[2],
        vec![
            "-D[null, null, null, 10, 1, a]",
            "+I[1, 1, x, 10, 1, a]",
            "-D[null, null, null, 11, 1, b]",
            "+I[1, 1, x, 11, 1, b]",
        ]
    );
    assert_eq!(
        out[3],
        vec![
            "-D[1, 1, x, 10, 1, a]",
            "+I[null, null, null, 10, 1, a]",
            "-D[1, 1, x, 11, 1, b]",
            "+I[null, null, null, 11, 1, b]",
        ]
    );
}

/// An engine for a `jt` join of sides keyed as `keys`, each with retention `ttl_ms`.
fn engine_of(jt: JoinType, keys: [Keys; 2], ttl_ms: Option<u64>) -> JoinEngine {
    let mut s = spec(jt, keys[0], keys[1], ALL);
    s.left.ttl_ms = ttl_ms;
    s.right.ttl_ms = ttl_ms;
    s.absent_retraction = RetractionPolicy::Ignore;
    JoinEngine::new(&s).unwrap()
}

/// A replacing `+U` then an identical re-delivery (`+I`) then a delete of a right row matching
/// one left row.
fn replacements() -> [Change; 5] {
    [
        l(Insert, row(1, 1, "l")),
        r(Insert, row(2, 1, "a")),
        r(UpdateAfter, row(2, 1, "b")),
        r(Insert, row(2, 1, "b")),
        r(Delete, row(2, 1, "b")),
    ]
}

/// A `+I`/`+U` for a stored primary key retracts the stored row as a `-U` would, then adds the new
/// row as a `+U` (Flink's join behind a ChangelogNormalize); an identical one emits nothing. The
/// outer match counters stay exact (FLINK-40681 loses the null padding of the LEFT join here).
#[test]
fn replacement_retracts_the_stored_row_first() {
    let (lb, l_null) = ("[1, 1, l, 2, 1, b]", "[1, 1, l, null, null, null]");
    let cases = [
        (
            JoinType::Inner,
            vec!["-U[1, 1, l, 2, 1, a]", "+U[1, 1, l, 2, 1, b]"],
            vec!["-D"],
        ),
        (
            JoinType::Left,
            vec![
                "-U[1, 1, l, 2, 1, a]",
                "+I[1, 1, l, null, null, null]",
                "-D[1, 1, l, null, null, null]",
                "+I[1, 1, l, 2, 1, b]",
            ],
            vec!["-D", "+I"],
        ),
        (
            JoinType::Right,
            vec!["-D[1, 1, l, 2, 1, a]", "+I[1, 1, l, 2, 1, b]"],
            vec!["-D"],
        ),
        (
            JoinType::Full,
            vec![
                "-D[1, 1, l, 2, 1, a]",
                "+I[1, 1, l, null, null, null]",
                "-D[1, 1, l, null, null, null]",
                "+I[1, 1, l, 2, 1, b]",
            ],
            vec!["-D", "+I"],
        ),
    ];
    for keys in [PK, [Keys::Pk, Keys::JoinOnPk]] {
        for (jt, replaced, deleted) in &cases {
            let mut e = engine_of(*jt, keys, None);
            let mut changes = replacements();
            if keys[1] == Keys::JoinOnPk {
                // Joined on the right's id: the left row joins on k = 2.
                changes[0].row.k = Some(2);
            }
            let out = run(&mut e, keys, &changes);
            let out: Vec<Vec<String>> = out
                .iter()
                .map(|o| {
                    o.iter()
                        .map(|r| r.replace("[1, 2, l", "[1, 1, l"))
                        .collect()
                })
                .collect();
            assert_eq!(&out[2], replaced, "{jt:?} {keys:?}");
            assert_eq!(out[3], Vec::<String>::new(), "{jt:?} {keys:?}: re-delivery");
            let deleted: Vec<String> = deleted
                .iter()
                .map(|k| format!("{k}{}", if *k == "-D" { lb } else { l_null }))
                .collect();
            assert_eq!(out[4], deleted, "{jt:?} {keys:?}");
            assert_eq!(e.stats().stored_rows, 1);
        }
    }
}

/// A replacement of an unmatched row retracts its null padding; on the join-key-contains-unique-key
/// layout the replacing row may change any other column.
#[test]
fn replacement_of_unmatched_and_of_join_key_rows() {
    let mut e = engine_of(JoinType::Left, PK, None);
    let out = run(
        &mut e,
        PK,
        &[l(Insert, row(1, 1, "x")), l(Insert, row(1, 1, "y"))],
    );
    assert_eq!(
        out[1],
        vec![
            "-D[1, 1, x, null, null, null]",
            "+I[1, 1, y, null, null, null]"
        ]
    );
    let keys = [Keys::JoinOnPk, Keys::JoinOnPk];
    let mut e = engine_of(JoinType::Inner, keys, None);
    let out = run(
        &mut e,
        keys,
        &[
            l(Insert, row(1, 5, "a")),
            r(Insert, row(1, 7, "r")),
            l(UpdateAfter, row(1, 6, "b")),
        ],
    );
    assert_eq!(out[2], vec!["-U[1, 5, a, 1, 7, r]", "+U[1, 6, b, 1, 7, r]"]);
    assert_eq!(e.stats().stored_rows, 2);
}

/// An identical re-delivery is a write: it refreshes the stored row's TTL.
#[test]
fn identical_replacement_refreshes_ttl() {
    let mut e = engine_of(JoinType::Inner, PK, Some(100));
    run_at(&mut e, PK, 0, &l(Insert, row(1, 1, "l")));
    assert!(run_at(&mut e, PK, 80, &l(UpdateAfter, row(1, 1, "l"))).is_empty());
    assert_eq!(
        run_at(&mut e, PK, 150, &r(Insert, row(2, 1, "r"))),
        vec!["+I[1, 1, l, 2, 1, r]"]
    );
    assert_eq!(e.stats().expired_rows, 0);
}

/// Retracting one copy of a duplicate row on a side without a primary key writes the remaining
/// copy's count: its TTL is refreshed, as Flink's state update refreshes it.
#[test]
fn retracting_a_duplicate_refreshes_ttl() {
    let keys = [Keys::Pk, Keys::NoPk];
    let mut e = engine_of(JoinType::Inner, keys, Some(100));
    run_at(&mut e, keys, 0, &r(Insert, row(5, 1, "dup")));
    run_at(&mut e, keys, 0, &r(Insert, row(5, 1, "dup")));
    run_at(&mut e, keys, 80, &r(Delete, row(5, 1, "dup")));
    assert_eq!(
        run_at(&mut e, keys, 150, &l(Insert, row(1, 1, "l"))),
        vec!["+I[1, 1, l, 5, 1, dup]"]
    );
    assert_eq!(
        run_at(&mut e, keys, 181, &r(Delete, row(5, 1, "dup"))),
        Vec::<String>::new(),
        "written at 80, expired at 180"
    );
    assert_eq!(e.stats().absent_retractions, 1);
}

/// On a side with a primary key, unavailable columns of a `+I`/`+U` are taken from the stored row
/// of the same primary key; a retraction retracts the stored row. Nothing unavailable is ever
/// emitted (`print_output` checks) or stored (a snapshot of it restores: restore refuses them).
#[test]
fn unavailable_columns_are_filled_from_the_stored_row() {
    for jt in [
        JoinType::Inner,
        JoinType::Left,
        JoinType::Right,
        JoinType::Full,
    ] {
        let keys = [Keys::JoinOnPk, Keys::Pk];
        let mut e = engine_of(jt, keys, None);
        let out = run(
            &mut e,
            keys,
            &[
                l(Insert, row(1, 5, "long")),
                r(Insert, row(2, 1, "r")),
                l(UpdateAfter, row(1, 5, "ignored")).without(&["v"]),
                l(UpdateAfter, row(1, 6, "ignored")).without(&["v"]),
            ],
        );
        assert_eq!(out[2], Vec::<String>::new(), "{jt:?}: same row again");
        let (old, new) = ("[1, 5, long, 2, 1, r]", "[1, 6, long, 2, 1, r]");
        let padding = "[null, null, null, 2, 1, r]";
        let want = match jt {
            JoinType::Inner => vec![format!("-U{old}"), format!("+U{new}")],
            JoinType::Left => vec![format!("-D{old}"), format!("+I{new}")],
            JoinType::Right => vec![
                format!("-U{old}"),
                format!("+I{padding}"),
                format!("-D{padding}"),
                format!("+I{new}"),
            ],
            JoinType::Full => vec![
                format!("-D{old}"),
                format!("+I{padding}"),
                format!("-D{padding}"),
                format!("+I{new}"),
            ],
        };
        assert_eq!(out[3], want, "{jt:?}");
        assert_eq!(e.stats().rejected, 0);
        let mut snapshot = Vec::new();
        e.snapshot_key_group(1, &mut snapshot).unwrap();
        let mut copy = engine_of(jt, keys, None);
        copy.restore_key_group(&snapshot).unwrap();
    }
}

/// A retraction with unavailable non-key columns (a delete by key) retracts the stored row.
#[test]
fn retraction_by_key_retracts_the_stored_row() {
    let mut e = engine_of(JoinType::Full, PK, None);
    let out = run(
        &mut e,
        PK,
        &[
            l(Insert, row(1, 1, "a")),
            r(Insert, row(2, 1, "r")),
            l(Delete, row(1, 1, "?")).without(&["v"]),
        ],
    );
    assert_eq!(
        out[2],
        vec!["-D[1, 1, a, 2, 1, r]", "+I[null, null, null, 2, 1, r]"]
    );
    let keys = [Keys::JoinOnPk, Keys::JoinOnPk];
    let mut e = engine_of(JoinType::Inner, keys, None);
    let out = run(
        &mut e,
        keys,
        &[
            l(Insert, row(1, 5, "a")),
            r(Insert, row(1, 7, "r")),
            l(Delete, row(1, 0, "?")).without(&["k", "v"]),
        ],
    );
    assert_eq!(out[2], vec!["-D[1, 5, a, 1, 7, r]"]);
    assert_eq!(e.stats().stored_rows, 1);
}

/// The rejection printed by `print_output` for the message `m`.
fn rejected(m: &str) -> Vec<String> {
    vec![format!("{REJECTED}{m}")]
}

/// What no stored row to fill from says after the row.
const NOT_STORED: &str = "column 'v' is unavailable (the change does not carry the value, e.g. \
    Debezium's placeholder for an unchanged TOASTed value, or a delete by key), and no row with \
    primary key [7] is stored to take it from (first sight of the key, or expired by TTL)";

/// A `+I`/`+U` with unavailable columns and no stored row of its primary key (first sight, another
/// primary key under the same join key, expired) is rejected: not applied, nothing emitted, no
/// state left, and the batch goes on.
#[test]
fn unfillable_rows_are_rejected() {
    let toast = |k| r(UpdateAfter, row(7, k, "x")).without(&["v"]);
    let msg = |k| format!("right row +U[7, {k}, <unavailable>]: {NOT_STORED}");
    for keys in [PK, [Keys::Pk, Keys::JoinOnPk]] {
        let mut e = engine_of(JoinType::Full, keys, Some(100));
        let k = if keys[1] == Keys::JoinOnPk { 7 } else { 1 };
        assert_eq!(
            run_at(&mut e, keys, 0, &toast(k)),
            rejected(&msg(k)),
            "{keys:?}"
        );
        assert!(e.key_groups_with_state().is_empty());
        run_at(&mut e, keys, 0, &r(Insert, row(8, 7, "other")));
        run_at(&mut e, keys, 0, &r(Insert, row(7, k, "x")));
        assert_eq!(
            run_at(&mut e, keys, 150, &toast(k)),
            rejected(&msg(k)),
            "{keys:?}: expired"
        );
        let s = e.stats();
        assert_eq!((s.rejected, s.records_in[1], s.rows_out), (2, 4, 2));
    }
    let mut e = engine_of(JoinType::Inner, PK, None);
    run(&mut e, PK, &[r(Insert, row(8, 1, "same join key"))]);
    assert_eq!(run(&mut e, PK, &[toast(1)])[0], rejected(&msg(1)));
    assert_eq!(e.stats().stored_rows, 1);
}

/// Unavailable join or primary key columns, or any unavailable column on a side without a primary
/// key, are rejected whatever the state holds.
#[test]
fn unavailable_keys_and_multisets_are_rejected() {
    let mut e = engine_of(JoinType::Left, [Keys::Pk, Keys::NoPk], None);
    let keys = [Keys::Pk, Keys::NoPk];
    let out = run(
        &mut e,
        keys,
        &[
            l(Insert, row(1, 1, "a")),
            l(UpdateBefore, row(1, 1, "a")).without(&["k"]),
            l(UpdateAfter, row(1, 1, "b")).without(&["id", "v"]),
            r(Insert, row(5, 1, "r")),
            r(Delete, row(5, 1, "r")).without(&["v"]),
        ],
    );
    assert_eq!(
        out[1],
        rejected(
            "left row -U[1, <unavailable>, a]: column 'k' of the join key is unavailable: the \
             row's join key, and so its state, is unknown"
        )
    );
    assert_eq!(
        out[2],
        rejected(
            "left row +U[<unavailable>, 1, <unavailable>]: column 'id' of the primary key is \
             unavailable: the stored row it changes cannot be found"
        )
    );
    assert_eq!(
        out[4],
        rejected(
            "right row -D[5, 1, <unavailable>]: column 'v' is unavailable (the change does not \
             carry the value, e.g. Debezium's placeholder for an unchanged TOASTed value, or a \
             delete by key), and a side without a primary key cannot fill unavailable columns: no \
             stored row is known to be the same row"
        )
    );
    assert_eq!((e.stats().rejected, e.stats().stored_rows), (3, 2));
}

/// A rejection is an output entry naming its input change's side and carrying its timestamp; the
/// changes after it are applied.
#[test]
fn rejection_does_not_fail_the_batch() {
    let mut e = engine_of(JoinType::Inner, PK, None);
    let mut batch = Vec::new();
    for (t, c) in [
        l(Insert, row(1, 1, "a")),
        r(UpdateAfter, row(7, 1, "x")).without(&["v"]),
        r(Insert, row(2, 1, "b")),
    ]
    .iter()
    .enumerate()
    {
        c.batch_at(PK, Some(t as i64 * 10), &mut batch);
    }
    let mut out = Vec::new();
    assert_eq!(e.process_batch(&batch, 0, &mut out).unwrap(), 1);
    let inputs: Vec<(Option<i64>, Option<Side>)> = OutputEntries::new(&out)
        .map(|entry| match entry {
            OutputEntry::Row(r) => (r.timestamp, None),
            OutputEntry::Rejected {
                timestamp, side, ..
            } => (timestamp, Some(side)),
        })
        .collect();
    assert_eq!(
        inputs,
        vec![(Some(10), Some(Side::Right)), (Some(20), None)]
    );
    assert_eq!(print_output(&out)[1], "+I[1, 1, a, 2, 1, b]");
}

/// A multiset side: a duplicate row is a second row, and counts as a second match.
#[test]
fn duplicate_rows_without_primary_key() {
    let mut e = JoinEngine::new(&spec(JoinType::Left, Keys::Pk, Keys::NoPk, ALL)).unwrap();
    let k = [Keys::Pk, Keys::NoPk];
    let out = run(
        &mut e,
        k,
        &[
            l(Insert, row(1, 1, "l")),
            r(Insert, row(5, 1, "dup")),
            r(Insert, row(5, 1, "dup")),
            r(Delete, row(5, 1, "dup")),
            r(Delete, row(5, 1, "dup")),
        ],
    );
    assert_eq!(out[2], vec!["+I[1, 1, l, 5, 1, dup]"]);
    assert_eq!(out[3], vec!["-D[1, 1, l, 5, 1, dup]"]);
    assert_eq!(
        out[4],
        vec!["-D[1, 1, l, 5, 1, dup]", "+I[1, 1, l, null, null, null]"]
    );
}

/// Null join keys never match but are stored, so outer padding is retracted.
#[test]
fn null_keys_never_match() {
    let nul = |id, v: &str| Row {
        id,
        k: None,
        v: v.into(),
    };
    let changes = [
        l(Insert, nul(1, "l")),
        r(Insert, nul(2, "r")),
        l(Delete, nul(1, "l")),
    ];
    assert_eq!(
        emitted(JoinType::Full, &changes),
        vec![
            vec!["+I[1, null, l, null, null, null]"],
            vec!["+I[null, null, null, 2, null, r]"],
            vec!["-D[1, null, l, null, null, null]"],
        ]
    );
}

/// Retractions of absent rows: ignored and counted, or an error naming the record.
#[test]
fn absent_retraction_policies() {
    let mut ignore = pk_spec(JoinType::Inner);
    ignore.absent_retraction = RetractionPolicy::Ignore;
    let mut e = JoinEngine::new(&ignore).unwrap();
    let out = run(
        &mut e,
        PK,
        &[r(Insert, row(2, 1, "r")), l(Delete, row(1, 1, "ghost"))],
    );
    assert_eq!(out[1], Vec::<String>::new());
    assert_eq!(e.stats().absent_retractions, 1);

    let mut e = engine(JoinType::Inner).0;
    let err = failure(
        &mut e,
        &[
            r(Insert, row(2, 1, "r")),
            l(UpdateBefore, row(1, 1, "ghost")),
        ],
    );
    assert!(matches!(err, JoinError::AbsentRetraction { index: 1, .. }));
    assert_eq!(
        err.to_string(),
        "batch record #1: -U of a Left row that is not in state (never inserted, already retracted, or expired): -U[1, 1, ghost]"
    );
    let err = failure(
        &mut engine(JoinType::Inner).0,
        &[l(Delete, row(1, 1, "?")).without(&["v"])],
    );
    assert!(
        err.to_string().ends_with("-D[1, 1, <unavailable>]"),
        "{err}"
    );
}

/// TTL: rows expire `ttl` after their last write, silently; other keys are swept.
#[test]
fn ttl_expires_rows_silently() {
    let mut s = pk_spec(JoinType::Left);
    s.left.ttl_ms = Some(100);
    s.right.ttl_ms = Some(100);
    s.absent_retraction = RetractionPolicy::Ignore;
    let mut e = JoinEngine::new(&s).unwrap();
    assert_eq!(
        run_at(&mut e, PK, 0, &l(Insert, row(1, 1, "l"))),
        vec!["+I[1, 1, l, null, null, null]"]
    );
    // A match at t=50 rewrites the left row's counter: it now expires at 150.
    assert_eq!(run_at(&mut e, PK, 50, &r(Insert, row(2, 1, "r"))).len(), 2);
    assert_eq!(
        run_at(&mut e, PK, 140, &r(Insert, row(3, 1, "s"))),
        vec!["+I[1, 1, l, 3, 1, s]"]
    );
    // At 245 every row of key 1 (last written at 50 and 140) is gone: the delete finds nothing.
    assert_eq!(
        run_at(&mut e, PK, 245, &r(Delete, row(2, 1, "r"))),
        Vec::<String>::new()
    );
    assert_eq!(e.stats().absent_retractions, 1);
    assert_eq!(e.stats().expired_rows, 3);
    // A key never touched again is freed by the sweep.
    run_at(&mut e, PK, 246, &l(Insert, row(7, 3, "other")));
    run_at(&mut e, PK, 1000, &l(Insert, row(8, 4, "later")));
    assert_eq!(e.stats().stored_rows, 1);
    assert_eq!(e.key_groups_with_state(), vec![4]);
}

/// TTL on a key of many rows (an indexed group) behaves as on a key of few: expired rows are
/// invisible at once, freed when a change finds them or by the sweep, and counted once.
#[test]
fn ttl_on_keys_of_few_and_many_rows() {
    for n in [10, 200] {
        let mut e = engine_of(JoinType::Left, PK, Some(100));
        for i in 0..n {
            run_at(&mut e, PK, 60 * (i % 2) as i64, &r(Insert, row(i, 1, "r")));
        }
        // At 120 the rows written at 0 (even ids) have expired, those written at 60 not.
        let mut got = run_at(&mut e, PK, 120, &l(Insert, row(1000, 1, "l")));
        got.sort();
        let mut want: Vec<String> = (0..n)
            .filter(|i| i % 2 == 1)
            .map(|i| format!("+I[1000, 1, l, {i}, 1, r]"))
            .collect();
        want.sort();
        assert_eq!(got, want, "{n} rows");
        let gone = run_at(&mut e, PK, 121, &r(Delete, row(0, 1, "r")));
        assert!(gone.is_empty(), "an expired row is absent: {gone:?}");
        assert_eq!(
            run_at(&mut e, PK, 121, &r(Delete, row(1, 1, "r"))),
            vec!["-D[1000, 1, l, 1, 1, r]"]
        );
        assert_eq!(e.stats().absent_retractions, 1);
        run_at(&mut e, PK, 1000, &l(Insert, row(7, 9, "later")));
        let stats = e.stats();
        assert_eq!(
            (stats.stored_rows, stats.expired_rows),
            (1, n as u64),
            "{n} rows"
        );
        assert_eq!(e.state_size().keys, 1);
        assert_eq!(stats.index_bytes, 0, "nothing left to index");
    }
}

#[test]
fn errors_name_the_record() {
    let (mut e, k) = engine(JoinType::Inner);
    let mut batch = Vec::new();
    l(Insert, row(1, 1, "ok")).batch(k, &mut batch);
    let too_short = InputRecord {
        side: Side::Left,
        kind: Insert,
        key_group: 0,
        timestamp: None,
        row: &[9],
    };
    write_input(&mut batch, &too_short);
    let err = e.process_batch(&batch, 0, &mut Vec::new()).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("batch record #1 (Left): invalid row"),
        "{err}"
    );
    let mut small = spec(
        JoinType::Inner,
        Keys::Pk,
        Keys::Pk,
        KeyGroupRange { start: 0, end: 0 },
    );
    small.absent_retraction = RetractionPolicy::Ignore;
    let mut e = JoinEngine::new(&small).unwrap();
    let err = failure(&mut e, &[l(Insert, row(1, 5, "x"))]);
    assert_eq!(
        err.to_string(),
        "batch record #0: key group 5 is outside this instance's range 0..=0"
    );
    let err = e.process_batch(&[1, 2], 0, &mut Vec::new()).unwrap_err();
    assert!(matches!(err, JoinError::Batch(_)));
}

#[test]
fn snapshot_errors() {
    let (mut e, k) = engine(JoinType::Left);
    run(&mut e, k, &[l(Insert, row(1, 1, "l"))]);
    let mut snap = Vec::new();
    e.snapshot_key_group(1, &mut snap).unwrap();
    // Restoring the same key group twice, a different declaration, or corrupt bytes all fail.
    assert!(e
        .restore_key_group(&snap)
        .unwrap_err()
        .to_string()
        .contains("restored twice"));
    let mut inner = engine(JoinType::Inner).0;
    assert!(inner
        .restore_key_group(&snap)
        .unwrap_err()
        .to_string()
        .contains("the snapshot was taken for join type LEFT, this job declares INNER"));
    let mut fresh = engine(JoinType::Left).0;
    for cut in 0..snap.len() {
        assert!(fresh.restore_key_group(&snap[..cut]).is_err());
    }
    let mut flipped = snap.clone();
    let n = flipped.len();
    flipped[n - 2] ^= 0x5a;
    assert!(fresh
        .restore_key_group(&flipped)
        .unwrap_err()
        .to_string()
        .contains("checksum mismatch"));
    assert_eq!(
        engine(JoinType::Left).0.restore_key_group(&snap).unwrap(),
        snap.len()
    );
}

/// A change on a key joined with many rows comes in pieces of about the output bound, within the
/// change: an insertion, a replacement filling an unavailable column (its `-U` and its `+U`
/// fan-outs), a retraction, on keys of many rows (an indexed group) and of few, for every join
/// type. The pieces are the unbounded output byte for byte, and the state ends the same.
#[test]
fn one_change_of_a_hot_key_comes_in_pieces() {
    const BOUND: usize = 300;
    for (jt, others) in [
        JoinType::Inner,
        JoinType::Left,
        JoinType::Right,
        JoinType::Full,
    ]
    .into_iter()
    .flat_map(|jt| [(jt, 200), (jt, 5)])
    {
        let keys = [Keys::Pk, Keys::Pk];
        let mut changes: Vec<Change> = (0..others)
            .map(|i| r(Insert, row(100 + i, 1, "right")))
            .collect();
        let head = changes.len();
        changes.extend([
            l(Insert, row(1, 1, "left")),
            l(UpdateAfter, row(1, 1, "ignored")).without(&["v"]),
            l(UpdateAfter, row(1, 1, "changed")),
            l(Delete, row(1, 1, "changed")),
        ]);
        let mut batch = Vec::new();
        changes[head..]
            .iter()
            .for_each(|c| c.batch(keys, &mut batch));
        let (mut whole, mut bounded) = (engine_of(jt, keys, None), engine_of(jt, keys, None));
        run(&mut whole, keys, &changes[..head]);
        run(&mut bounded, keys, &changes[..head]);
        let mut want = Vec::new();
        whole.process_batch(&batch, 0, &mut want).unwrap();

        bounded.set_output_bound(BOUND);
        let mut got = Vec::new();
        bounded.process_batch(&batch, 0, &mut got).unwrap();
        let mut calls = vec![got.len()];
        while bounded.has_pending() {
            let before = got.len();
            bounded.resume(&mut got).unwrap();
            calls.push(got.len() - before);
            assert!(calls.len() < 1000, "{jt:?}: no progress");
        }
        assert_eq!(print_output(&got), print_output(&want), "{jt:?}, {others}");
        assert_eq!(got, want);
        // A matched row emits two rows at most (an outer side's padding and the joined row).
        let most = 2 * print_output(&want)
            .iter()
            .map(|r| r.len() + 40)
            .max()
            .unwrap();
        let (last, stopped) = calls.split_last().unwrap();
        for &call in stopped.iter().chain([last]) {
            assert!(call < BOUND + most, "{jt:?}, {others}: calls {calls:?}");
        }
        if others == 200 {
            assert!(stopped.len() >= want.len() / (BOUND + most), "{calls:?}");
        }
        assert_eq!(bounded.stats(), whole.stats());
        let state = |e: &JoinEngine| {
            let mut s = Vec::new();
            e.snapshot_key_group(key_group(Some(1)), &mut s).unwrap();
            s
        };
        assert_eq!(state(&bounded), state(&whole), "{jt:?}, {others}");
    }
}
