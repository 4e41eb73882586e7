//! What the users/domains benchmarks share: the join's declaration, how records are spread over
//! key groups, and measuring by CPU time.

use cdcjoin_join::{JoinSpec, JoinType, KeyGroupRange, RetractionPolicy, SideSpec};
use cdcjoin_workload::{domains_schema, users_schema};
use criterion::measurement::WallTime;
use criterion::BenchmarkGroup;
use std::time::Duration;

/// Key groups of the benchmarks' engines: Flink's default maximum parallelism.
pub const MAX_KG: u16 = 128;

/// A LEFT join of users and domains on `users.id = domains.user_id`, both sides keyed by `id`,
/// owning all [`MAX_KG`] key groups.
pub fn spec() -> JoinSpec {
    let side = |schema, jk: &str| SideSpec {
        schema,
        join_key: vec![jk.into()],
        primary_key: Some(vec!["id".into()]),
        ttl_ms: None,
        exact_retractions: false,
    };
    JoinSpec {
        left: side(users_schema(), "id"),
        right: side(domains_schema(), "user_id"),
        join_type: JoinType::Left,
        absent_retraction: RetractionPolicy::Fail,
        key_groups: KeyGroupRange {
            start: 0,
            end: MAX_KG - 1,
        },
    }
}

/// A key group independent of the engine's table hash (Flink uses murmur of the key's hashCode).
pub fn key_group(key: &[u8]) -> u16 {
    let mut h = std::hash::DefaultHasher::new();
    std::hash::Hash::hash(key, &mut h);
    (std::hash::Hasher::finish(&h) % MAX_KG as u64) as u16
}

/// CPU time this thread has run, from the kernel's scheduler statistics (nanoseconds).
pub fn thread_cpu_ns() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
    stat.split_whitespace().next().unwrap().parse().unwrap()
}

/// Benchmarks `f` by the CPU time of this thread (what `f` returns is dropped outside the
/// measurement). On a machine shared with other work, wall time would also count the time `f`
/// waited for a core; on an idle one the two are the same for this single-threaded work.
pub fn measure<R>(g: &mut BenchmarkGroup<'_, WallTime>, name: &str, mut f: impl FnMut() -> R) {
    g.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut cpu_ns = 0;
            for _ in 0..iters {
                let start = thread_cpu_ns();
                let result = std::hint::black_box(f());
                cpu_ns += thread_cpu_ns() - start;
                drop(result);
            }
            Duration::from_nanos(cpu_ns)
        })
    });
}
