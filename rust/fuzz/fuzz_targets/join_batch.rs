//! Arbitrary bytes as a join input batch and as a snapshot section, for every join type: the
//! engine must apply or refuse them, never panic or abort, and a frozen state must write what a
//! snapshot written at its instant holds while the engine goes on; an engine whose output per call
//! is bounded must write the same bytes and end with the same error, in pieces. The first byte
//! picks the join type, whether the sides have a TTL and whether the bytes are restored as a
//! snapshot first; its top three bits the bound (1 to 449 bytes).
#![no_main]

use cdcjoin_join::{
    JoinEngine, JoinError, JoinSpec, JoinType, KeyGroupRange, RetractionPolicy, SideSpec,
};
use cdcjoin_workload::{domains_schema, users_schema};
use libfuzzer_sys::fuzz_target;

mod common;
use common::{frozen_writes, sections, JOIN_TYPES};

fn spec(join_type: JoinType, ttl: bool) -> JoinSpec {
    let side = |schema, jk: &str, pk: Option<&str>| SideSpec {
        schema,
        join_key: vec![jk.into()],
        primary_key: pk.map(|p| vec![p.into()]),
        ttl_ms: ttl.then_some(1000),
        exact_retractions: false,
    };
    JoinSpec {
        left: side(users_schema(), "id", Some("id")),
        right: side(domains_schema(), "user_id", None),
        join_type,
        absent_retraction: RetractionPolicy::Ignore,
        key_groups: KeyGroupRange { start: 0, end: 127 },
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let jt = JOIN_TYPES[(mode & 3) as usize];
    let fresh = || {
        let mut engine = JoinEngine::new(&spec(jt, mode & 4 != 0)).expect("valid spec");
        if mode & 8 != 0 {
            let _ = engine.restore_key_group(rest);
        }
        engine
    };
    let (mut engine, mut bounded) = (fresh(), fresh());
    bounded.set_output_bound(usize::from(mode >> 5) * 64 + 1);
    let mut out = Vec::new();
    let whole = engine.process_batch(rest, i64::from(mode), &mut out);
    let mut pieces = Vec::new();
    let mut last = bounded.process_batch(rest, i64::from(mode), &mut pieces);
    while last.is_ok() && bounded.has_pending() {
        last = bounded.resume(&mut pieces);
    }
    assert_eq!(pieces, out, "the pieces are the whole output");
    let outcome = |r: Result<usize, _>| r.map(drop).map_err(|e: JoinError| e.to_string());
    assert_eq!(outcome(last), outcome(whole), "the same outcome");
    let before = sections(engine.key_groups_with_state(), |kg, out| {
        engine.snapshot_key_group(kg, out)
    });
    let frozen = engine.freeze();
    let _ = engine.process_batch(rest, i64::from(mode) * 1000, &mut out);
    frozen_writes(&before, frozen);
    engine.settle();
    sections(engine.key_groups_with_state(), |kg, out| {
        engine.snapshot_key_group(kg, out)
    });
});
