//! Benchmarks timed by the CPU time of their thread instead of wall time.
//!
//! On a shared machine wall time also counts the time a benchmark waited for a core: here it
//! swung by 25% between runs of one binary, more than the changes being measured. The thread's
//! CPU-time clock counts only the time the thread ran; for single-threaded work on an idle
//! machine the two are the same. Shared by the decode, join and snapshot benches.

use criterion::measurement::WallTime;
use criterion::BenchmarkGroup;
use std::time::Duration;

/// CPU time this thread has run (nanoseconds), from `CLOCK_THREAD_CPUTIME_ID`: exact to the
/// nanosecond, where the scheduler statistics in `/proc` advance only at the scheduler's ticks
/// and so read no time at all for a step shorter than a tick.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant the kernel knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
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
