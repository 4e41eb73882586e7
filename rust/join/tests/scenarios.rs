//! Hand-checked scenarios: the emission table row by row, Flink's documented sequences, every
//! deliberate difference from Flink, TTL, and errors.

mod support;

use cdcjoin_join::{
    JoinEngine, JoinError, JoinSpec, JoinType, KeyGroupRange, RetractionPolicy, Side,
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
    Change {
        side: Side::Left,
        kind,
        row: r,
    }
}

fn r(kind: RowKind, r: Row) -> Change {
    Change {
        side: Side::Right,
        kind,
        row: r,
    }
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

/// FLINK-40681: an upsert (+U replacing a stored row, no -U before it) must not count a new match,
/// or the null-padded row is lost when the replacing row goes.
#[test]
fn upsert_does_not_count_a_new_match() {
    let (mut e, k) = engine(JoinType::Left);
    let out = run(
        &mut e,
        k,
        &[
            l(Insert, row(1, 1, "l")),
            r(Insert, row(2, 1, "a")),
            r(UpdateAfter, row(2, 1, "b")),
            r(Delete, row(2, 1, "b")),
        ],
    );
    assert_eq!(out[2], vec!["+I[1, 1, l, 2, 1, b]"]);
    assert_eq!(
        out[3],
        vec!["-D[1, 1, l, 2, 1, b]", "+I[1, 1, l, null, null, null]"]
    );
    assert_eq!(e.stats().stored_rows, 1);
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

#[test]
fn errors_name_the_record() {
    let (mut e, k) = engine(JoinType::Inner);
    let mut batch = Vec::new();
    l(Insert, row(1, 1, "ok")).batch(k, &mut batch);
    let mut bad = batch.clone();
    bad[8] = 0xff; // null bitmap sets the NOT NULL id... and garbage
    let len = bad.len();
    bad[len - 1] ^= 0xff;
    batch.extend_from_slice(&[0, 0, 0, 0, 1, 0, 0, 0, 9]); // one byte row: too short
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
