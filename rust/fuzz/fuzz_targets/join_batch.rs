//! Arbitrary bytes as a join input batch and as a snapshot section, for every join type: the
//! engine must apply or refuse them, never panic or abort, and a frozen state must write what a
//! snapshot written at its instant holds while the engine goes on. The first byte picks the join
//! type, whether the sides have a TTL and whether the bytes are restored as a snapshot first.
#![no_main]

use cdcjoin_join::{JoinEngine, JoinSpec, JoinType, KeyGroupRange, RetractionPolicy, SideSpec};
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
    let mut engine = JoinEngine::new(&spec(jt, mode & 4 != 0)).expect("valid spec");
    if mode & 8 != 0 {
        let _ = engine.restore_key_group(rest);
    }
    let mut out = Vec::new();
    let _ = engine.process_batch(rest, i64::from(mode), &mut out);
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
