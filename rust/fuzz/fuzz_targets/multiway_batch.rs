//! Arbitrary bytes as a multi-way join's input batch and as a snapshot section: the join must
//! apply or refuse them, never panic or abort, and a frozen state must write what a snapshot
//! written at its instant holds while the join goes on; a join whose output per call is bounded
//! must write the same bytes and end with the same error, in pieces. The first byte picks the two
//! join types, whether the inputs have a TTL and whether the bytes are restored as a snapshot
//! first; its top two bits the bound (1 to 193 bytes).
#![no_main]

use cdcjoin_join::{
    KeyGroupRange, MultiwayError, MultiwayJoin, MultiwaySpec, RetractionPolicy, SideSpec,
};
use cdcjoin_workload::{domains_schema, users_schema};
use libfuzzer_sys::fuzz_target;

mod common;
use common::{frozen_writes, sections, JOIN_TYPES};

/// Users keyed by id, their domains, and the domains again without a primary key: the three
/// state layouts on one join key.
fn spec(mode: u8) -> MultiwaySpec {
    let input = |schema, jk: &str, pk: Option<&str>| SideSpec {
        schema,
        join_key: vec![jk.into()],
        primary_key: pk.map(|p| vec![p.into()]),
        ttl_ms: (mode & 16 != 0).then_some(1000),
        exact_retractions: false,
    };
    MultiwaySpec {
        inputs: vec![
            input(users_schema(), "id", Some("id")),
            input(domains_schema(), "user_id", Some("id")),
            input(domains_schema(), "user_id", None),
        ],
        steps: vec![
            JOIN_TYPES[(mode & 3) as usize],
            JOIN_TYPES[(mode >> 2 & 3) as usize],
        ],
        absent_retraction: RetractionPolicy::Ignore,
        key_groups: KeyGroupRange { start: 0, end: 127 },
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let fresh = || {
        let mut join = MultiwayJoin::new(&spec(mode)).expect("valid spec");
        if mode & 32 != 0 {
            let _ = join.restore_key_group(rest);
        }
        join
    };
    let (mut join, mut bounded) = (fresh(), fresh());
    bounded.set_output_bound(usize::from(mode >> 6) * 64 + 1);
    let mut out = Vec::new();
    let whole = join.process_batch(rest, i64::from(mode), &mut out);
    let mut pieces = Vec::new();
    let mut last = bounded.process_batch(rest, i64::from(mode), &mut pieces);
    while last.is_ok() && bounded.has_pending() {
        last = bounded.resume(&mut pieces);
    }
    assert_eq!(pieces, out, "the pieces are the whole output");
    let outcome = |r: Result<usize, _>| r.map(drop).map_err(|e: MultiwayError| e.to_string());
    assert_eq!(outcome(last), outcome(whole), "the same outcome");
    let before = sections(join.key_groups_with_state(), |kg, out| {
        join.snapshot_key_group(kg, out)
    });
    let frozen = join.freeze();
    let _ = join.process_batch(rest, i64::from(mode) * 1000, &mut out);
    frozen_writes(&before, frozen);
    join.settle();
    sections(join.key_groups_with_state(), |kg, out| {
        join.snapshot_key_group(kg, out)
    });
});
