//! Join throughput and state size on the users/domains workload.
//!
//! The Debezium trace (200k users, 1M domains, then a mix of inserts, renames, domain moves,
//! renumbers and deletes) is decoded once, outside the measurement, into batches of 8192 input
//! records, the size the JNI bridge crosses with. The measurement is a LEFT join of users and
//! domains on `users.id = domains.user_id` from empty state, output rows encoded into a reused
//! buffer, timed by the CPU time of the benchmark's thread (so that other work on a shared machine
//! weighs less; the engine is dropped outside the measurement). Before criterion runs, a counting
//! allocator reports the bytes state holds per stored row; it counts during that report only, as
//! learning a block's size class is a lookup in jemalloc's radix tree that the library does not
//! pay.

mod common;

use cdcjoin_debezium::{ChangeSink, Decoded, Decoder, DecoderConfig};
use cdcjoin_join::batch::{write_input, InputRecord};
use cdcjoin_join::{JoinEngine, Side};
use cdcjoin_model::{KeyProjection, RowLayout, RowRef};
use cdcjoin_workload::{domains_schema, generate, users_schema, Topic, WorkloadConfig};
use common::{key_group, measure, spec};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering::Relaxed};
use tikv_jemallocator::Jemalloc;

/// Counts live heap bytes while [`COUNTING`]: as requested, and as the allocator's size classes,
/// which is what the process really pays. The allocator is jemalloc, as in the native library
/// (`cdcjoin-jni`).
struct Counting;
static COUNTING: AtomicBool = AtomicBool::new(false);
static REQUESTED: AtomicI64 = AtomicI64::new(0);
static CHUNKS: AtomicI64 = AtomicI64::new(0);

/// The size class of a live jemalloc allocation (0 for null).
fn chunk(p: *mut u8) -> i64 {
    if p.is_null() {
        0
    } else {
        // SAFETY: `p` is a live allocation of this allocator (callers pass nothing else).
        unsafe { tikv_jemallocator::usable_size(p) as i64 }
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { Jemalloc.alloc(l) };
        if !COUNTING.load(Relaxed) {
            return p;
        }
        REQUESTED.fetch_add(l.size() as i64, Relaxed);
        CHUNKS.fetch_add(chunk(p), Relaxed);
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        if !COUNTING.load(Relaxed) {
            return unsafe { Jemalloc.dealloc(p, l) };
        }
        REQUESTED.fetch_sub(l.size() as i64, Relaxed);
        CHUNKS.fetch_sub(chunk(p), Relaxed);
        unsafe { Jemalloc.dealloc(p, l) }
    }
    /// jemalloc's `realloc`, as the library uses it (the default would allocate, copy and free).
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        if !COUNTING.load(Relaxed) {
            return unsafe { Jemalloc.realloc(p, l, new_size) };
        }
        let before = chunk(p);
        let q = unsafe { Jemalloc.realloc(p, l, new_size) };
        if !q.is_null() {
            REQUESTED.fetch_add(new_size as i64 - l.size() as i64, Relaxed);
            CHUNKS.fetch_add(chunk(q) - before, Relaxed);
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const BATCH: usize = 8192;

/// Decodes the trace into join input batches; returns them and the number of input records.
fn batches(cfg: &WorkloadConfig) -> (Vec<Vec<u8>>, usize) {
    let mut decoders =
        [users_schema(), domains_schema()].map(|s| Decoder::new(DecoderConfig::new(s)).unwrap());
    let keys = [
        KeyProjection::new(&users_schema(), &[0]),
        KeyProjection::new(&domains_schema(), &[1]),
    ];
    let layouts = [
        RowLayout::new(&users_schema()),
        RowLayout::new(&domains_schema()),
    ];
    let (mut out, mut cur, mut n, mut in_batch) = (Vec::new(), Vec::new(), 0, 0);
    let (mut sink, mut key) = (ChangeSink::new(), Vec::new());
    for e in generate(cfg) {
        let (side, i) = if e.topic == Topic::Users {
            (Side::Left, 0)
        } else {
            (Side::Right, 1)
        };
        sink.clear();
        if decoders[i].decode(&e.json, &e.offset, &mut sink).unwrap() == Decoded::Tombstone {
            continue;
        }
        for (kind, row) in sink.iter() {
            key.clear();
            keys[i].write(&RowRef::new(&layouts[i], row), &mut key);
            let key_group = key_group(&key);
            write_input(
                &mut cur,
                &InputRecord {
                    side,
                    kind,
                    key_group,
                    timestamp: None,
                    row,
                },
            );
            n += 1;
            in_batch += 1;
            if in_batch == BATCH {
                out.push(std::mem::take(&mut cur));
                in_batch = 0;
            }
        }
    }
    out.push(cur);
    (out, n)
}

fn run(batches: &[Vec<u8>], out: &mut Vec<u8>) -> (JoinEngine, usize) {
    let mut engine = JoinEngine::new(&spec()).unwrap();
    let mut rows = 0;
    for b in batches {
        out.clear();
        rows += engine.process_batch(b, 0, out).unwrap();
    }
    (engine, rows)
}

fn report_state(batches: &[Vec<u8>]) {
    let mut out = Vec::with_capacity(1 << 20);
    COUNTING.store(true, Relaxed);
    let (req0, chunk0) = (REQUESTED.load(Relaxed), CHUNKS.load(Relaxed));
    let (engine, rows_out) = run(batches, &mut out);
    let (req, chunks) = (
        REQUESTED.load(Relaxed) - req0,
        CHUNKS.load(Relaxed) - chunk0,
    );
    COUNTING.store(false, Relaxed);
    let s = engine.state_size();
    let per = |x: i64| x as f64 / s.rows as f64;
    let payload = per(engine.payload_bytes() as i64);
    eprintln!(
        "state after the trace: {} rows under {} keys, {rows_out} rows emitted",
        s.rows, s.keys
    );
    eprintln!("  payload (encoded row)      {payload:>7.1} B/row");
    eprintln!(
        "  heap requested             {:>7.1} B/row  (overhead {:.1} B/row)",
        per(req),
        per(req) - payload
    );
    eprintln!(
        "  heap incl. size classes   {:>7.1} B/row  (overhead {:.1} B/row)",
        per(chunks),
        per(chunks) - payload
    );
}

fn bench(c: &mut Criterion) {
    // JOIN_BENCH_SCALE=N divides the workload by N (e.g. to see the join with state in cache).
    let scale = std::env::var("JOIN_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let cfg = WorkloadConfig {
        users: 200_000 / scale,
        domains: 1_000_000 / scale,
        events: 3_000_000 / scale,
        seed: 42,
    };
    let (batches, records) = batches(&cfg);
    eprintln!(
        "{} events -> {records} join input records in {} batches",
        cfg.events,
        batches.len()
    );
    report_state(&batches);
    let mut g = c.benchmark_group("join");
    g.sample_size(10);
    g.throughput(Throughput::Elements(records as u64));
    let mut out = Vec::with_capacity(1 << 20);
    measure(&mut g, "users_domains_left_join", || {
        run(&batches, &mut out)
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
