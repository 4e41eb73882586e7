//! The cost of one change under a key that holds n rows, for n from 1 to 100,000: the hot-key case
//! of skewed change streams (one customer with tens of thousands of orders).
//!
//! A LEFT join of users and domains on `users.id = domains.user_id`; user 0 holds n domains. Each
//! measured batch is two changes to one domain of user 0 on the side that emits one row per change
//! (the domain side: each domain matches the one user), and leaves the state as it found it:
//! - `insert_delete`: `+I` of a new domain, then its `-D`;
//! - `update`: `-U`/`+U` of a domain's name (the next batch changes it back);
//! - `key_move`: `-U`/`+U` moving a domain to user 1 (the next batch moves it back).
//!
//! The domain side is keyed by primary key (`pk`) or, without one, a multiset (`multiset`). The
//! changed domain is the middle one, so that a key of few rows is scanned half way. Criterion
//! reports the time per batch of two changes; the per-change cost should not grow with n.

use cdcjoin_join::batch::{write_input, InputRecord};
use cdcjoin_join::{
    JoinEngine, JoinSpec, JoinType, KeyGroupRange, RetractionPolicy, Side, SideSpec,
};
use cdcjoin_model::{RowKind, RowLayout, RowWriter};
use cdcjoin_workload::{domains_schema, users_schema};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::time::Duration;

fn spec(domain_pk: bool) -> JoinSpec {
    let side = |schema, jk: &str, pk: bool| SideSpec {
        schema,
        join_key: vec![jk.into()],
        primary_key: pk.then(|| vec!["id".into()]),
        ttl_ms: None,
        exact_retractions: false,
    };
    JoinSpec {
        left: side(users_schema(), "id", true),
        right: side(domains_schema(), "user_id", domain_pk),
        join_type: JoinType::Left,
        absent_retraction: RetractionPolicy::Fail,
        key_groups: KeyGroupRange { start: 0, end: 0 },
    }
}

/// Appends one change to `batch`: a user row when `domain` is `None`, else the domain
/// `(id, user_id, name)`.
fn change(batch: &mut Vec<u8>, kind: RowKind, user: i32, domain: Option<(i32, &str)>) {
    let (side, layout) = match domain {
        None => (Side::Left, RowLayout::new(&users_schema())),
        Some(_) => (Side::Right, RowLayout::new(&domains_schema())),
    };
    let mut row = Vec::new();
    let mut w = RowWriter::new(&layout, &mut row);
    match domain {
        None => {
            w.int(user);
            w.bytes(b"Ada");
            w.bytes(b"Lovelace");
        }
        Some((id, name)) => {
            w.int(id);
            w.int(user);
            w.bytes(name.as_bytes());
        }
    }
    w.finish();
    let rec = InputRecord {
        side,
        kind,
        key_group: 0,
        timestamp: None,
        row: &row,
    };
    write_input(batch, &rec);
}

/// An engine where user 0 holds `n` domains (and user 1 exists, without domains).
fn engine_with(n: i32, domain_pk: bool) -> JoinEngine {
    let mut engine = JoinEngine::new(&spec(domain_pk)).unwrap();
    let mut batch = Vec::new();
    for user in [0, 1] {
        change(&mut batch, RowKind::Insert, user, None);
    }
    for id in 0..n {
        change(
            &mut batch,
            RowKind::Insert,
            0,
            Some((id, &format!("domain-{id}.example"))),
        );
    }
    engine.process_batch(&batch, 0, &mut Vec::new()).unwrap();
    engine
}

/// The two batches a measurement alternates between, each undoing the other (or one batch that
/// undoes itself).
fn batches(what: &str, n: i32) -> Vec<Vec<u8>> {
    let mid = n / 2;
    let name = format!("domain-{mid}.example");
    let mut b = [Vec::new(), Vec::new()];
    match what {
        "insert_delete" => {
            let new = Some((n, "new.example"));
            change(&mut b[0], RowKind::Insert, 0, new);
            change(&mut b[0], RowKind::Delete, 0, new);
            return vec![b[0].clone()];
        }
        "update" => {
            let (old, new) = (Some((mid, name.as_str())), Some((mid, "renamed.example")));
            change(&mut b[0], RowKind::UpdateBefore, 0, old);
            change(&mut b[0], RowKind::UpdateAfter, 0, new);
            change(&mut b[1], RowKind::UpdateBefore, 0, new);
            change(&mut b[1], RowKind::UpdateAfter, 0, old);
        }
        _ => {
            let d = Some((mid, name.as_str()));
            change(&mut b[0], RowKind::UpdateBefore, 0, d);
            change(&mut b[0], RowKind::UpdateAfter, 1, d);
            change(&mut b[1], RowKind::UpdateBefore, 1, d);
            change(&mut b[1], RowKind::UpdateAfter, 0, d);
        }
    }
    b.to_vec()
}

fn bench(c: &mut Criterion) {
    for (layout, domain_pk) in [("pk", true), ("multiset", false)] {
        let mut g = c.benchmark_group(format!("hot_key/{layout}"));
        g.warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(1))
            .throughput(Throughput::Elements(2));
        for what in ["insert_delete", "update", "key_move"] {
            for n in [1, 10, 100, 1_000, 10_000, 100_000] {
                let mut engine = engine_with(n, domain_pk);
                let batches = batches(what, n);
                let (mut out, mut i) = (Vec::new(), 0);
                g.bench_function(BenchmarkId::new(what, n), |b| {
                    b.iter(|| {
                        out.clear();
                        let batch = &batches[i % batches.len()];
                        i += 1;
                        engine.process_batch(batch, 0, &mut out).unwrap()
                    })
                });
            }
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
