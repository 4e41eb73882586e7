package dev.cdcjoin.bench;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * JVM-wide state of the current benchmark run, shared by the sources, the sink and the harness (the
 * job runs in an embedded MiniCluster in the same JVM, whose user-code class loader delegates to
 * the application class loader, so these statics are the same everywhere).
 */
public final class RunControl {

    private RunControl() {}

    /** nanoTime of the first record any source emitted ({@code Long.MAX_VALUE} before). */
    public static final AtomicLong firstEmit = new AtomicLong(Long.MAX_VALUE);

    /** Process CPU nanos when the first record was emitted. */
    public static volatile long cpuAtFirstEmit;

    /** CPU nanos of each Java thread when the first record was emitted. */
    public static volatile Map<Long, Long> threadCpuAtFirstEmit = Map.of();

    /** CPU nanos of this process's threads by kind when the first record was emitted. */
    public static volatile Map<String, Long> cpuByKindAtFirstEmit = Map.of();

    /** The kernel's part of {@link #cpuByKindAtFirstEmit}, at the same instant. */
    public static volatile Map<String, Long> kernelCpuByKindAtFirstEmit = Map.of();

    /** Minor page faults of this process when the first record was emitted. */
    public static volatile long minorFaultsAtFirstEmit;

    /** Machine busy CPU seconds when the first record was emitted. */
    public static volatile double machineAtFirstEmit;

    /** Messages the sources emitted (trace messages; probes excluded). */
    public static final AtomicLong messagesEmitted = new AtomicLong();

    /** Probe messages the sources emitted. */
    public static final AtomicLong probesEmitted = new AtomicLong();

    /**
     * Messages in the input ({@code --source kafka}: {@link KafkaInput.Progress} marks the input
     * exhausted once its consumers have fetched this many).
     */
    public static volatile long expectedMessages = Long.MAX_VALUE;

    /** Source subtasks that reached the end of their splits. */
    public static final AtomicInteger exhausted = new AtomicInteger();

    /**
     * Source subtasks of the run ({@code --source kafka}: 1, the input that ends once): the input
     * has ended when {@link #exhausted} reaches it.
     */
    public static volatile int sources = 1;

    /** nanoTime when the last source subtask reached its end. */
    public static volatile long exhaustedAt;

    /** Completed to let paused sources end their input. */
    public static volatile CompletableFuture<Void> release = new CompletableFuture<>();

    /** Signed count of materialized rows (+1 for +I/+U, -1 for -U/-D). */
    public static final AtomicLong signedCount = new AtomicLong();

    /** Sum of row hashes, signed by kind (see {@link RowHash}). */
    public static final AtomicLong checksum = new AtomicLong();

    /** Output rows, all kinds. */
    public static final AtomicLong rowsOut = new AtomicLong();

    /** nanoTime of the last output row published by any sink writer. */
    public static final AtomicLong lastRow = new AtomicLong();

    /** Probe latencies in nanoseconds (after the warm-up). */
    public static volatile long[] latencies = new long[0];

    /** Number of latency samples written. */
    public static final AtomicInteger latencyCount = new AtomicInteger();

    /** Probes whose stamp is before this nanoTime are warm-up and not recorded. */
    public static volatile long warmupUntil = Long.MAX_VALUE;

    /**
     * Makes room for latency samples (latency runs only: 64 MB of heap, 8M samples, enough for 500
     * s of 16 probes every 2 ms).
     */
    public static void enableLatencySamples() {
        latencies = new long[1 << 23];
    }

    /** Resets everything for a new run. */
    public static void reset() {
        firstEmit.set(Long.MAX_VALUE);
        cpuAtFirstEmit = 0;
        threadCpuAtFirstEmit = Map.of();
        cpuByKindAtFirstEmit = Map.of();
        kernelCpuByKindAtFirstEmit = Map.of();
        messagesEmitted.set(0);
        probesEmitted.set(0);
        exhausted.set(0);
        exhaustedAt = 0;
        release = new CompletableFuture<>();
        signedCount.set(0);
        checksum.set(0);
        rowsOut.set(0);
        lastRow.set(0);
        latencyCount.set(0);
        latencies = new long[0];
        warmupUntil = Long.MAX_VALUE;
    }

    /** Called by a source before its first record. */
    static void markFirstEmit() {
        long now = System.nanoTime();
        if (firstEmit.compareAndSet(Long.MAX_VALUE, now)) {
            cpuAtFirstEmit = Metrics.processCpuNanos();
            threadCpuAtFirstEmit = Metrics.threadCpuNanos();
            cpuByKindAtFirstEmit = Metrics.cpuByThreadKind();
            kernelCpuByKindAtFirstEmit = Metrics.kernelCpuByThreadKind();
            minorFaultsAtFirstEmit = Metrics.minorFaults();
            machineAtFirstEmit = Metrics.machineBusySeconds();
        }
    }

    static void recordLatency(long nanos) {
        int i = latencyCount.getAndIncrement();
        long[] a = latencies;
        if (i < a.length) {
            a[i] = nanos;
        }
    }

    static void maxLastRow(long t) {
        long cur;
        while (t > (cur = lastRow.get()) && !lastRow.compareAndSet(cur, t)) {
            // retry
        }
    }
}
