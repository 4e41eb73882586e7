//! Benchmarks timed by the CPU time of their thread instead of wall time.
//!
//! On a shared machine wall time also counts the time a benchmark waited for a core: here it
//! swung by 25% between runs of one binary, more than the changes being measured. The kernel's
//! per-thread scheduler statistics count only the time the thread ran; for single-threaded work
//! on an idle machine the two are the same. Shared by the decode, join and snapshot benches.

use criterion::measurement::WallTime;
use criterion::BenchmarkGroup;
use std::time::Duration;

/// CPU time this thread has run, from the kernel's scheduler statistics (nanoseconds).
pub fn thread_cpu_ns() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
    stat.split_whitespace().next().unwrap().parse().unwrap()
}

/// Benchmarks `f` by the CPU time of this thread (what `f` returns is dropped outside the
/// measurement).
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
