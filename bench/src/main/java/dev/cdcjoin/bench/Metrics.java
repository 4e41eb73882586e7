package dev.cdcjoin.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/** Process measurements: CPU time, heap, /proc/self/status. */
public final class Metrics {

    private Metrics() {}

    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    /** CPU time of the whole process (all threads, GC and JIT included). */
    public static long processCpuNanos() {
        return OS.getProcessCpuTime();
    }

    /** CPU nanos of every live Java thread, by thread id. */
    public static Map<Long, Long> threadCpuNanos() {
        Map<Long, Long> cpu = new HashMap<>();
        for (long id : THREADS.getAllThreadIds()) {
            long t = THREADS.getThreadCpuTime(id);
            if (t >= 0) {
                cpu.put(id, t);
            }
        }
        return cpu;
    }

    /**
     * The Java thread that used the most CPU between two {@link #threadCpuNanos()} snapshots: its
     * name (a Flink task thread's name names its operator chain) and its CPU nanos; null if none.
     */
    public static Map.Entry<String, Long> busiestThread(
            Map<Long, Long> before, Map<Long, Long> after) {
        long best = -1;
        long bestCpu = 0;
        for (Map.Entry<Long, Long> e : after.entrySet()) {
            long used = e.getValue() - before.getOrDefault(e.getKey(), 0L);
            if (used > bestCpu) {
                best = e.getKey();
                bestCpu = used;
            }
        }
        ThreadInfo info = best < 0 ? null : THREADS.getThreadInfo(best);
        return info == null ? null : Map.entry(info.getThreadName(), bestCpu);
    }

    /**
     * CPU nanos of every thread of this process, JVM threads (JIT compilers, GC) included, summed
     * by kind: the kernel's 15-character thread name with a trailing number ("#3", "-7") dropped,
     * so that the compiler, GC and each Flink task chain's threads add up. Empty where there is no
     * /proc (clock ticks of 10 ms).
     */
    public static Map<String, Long> cpuByThreadKind() {
        return byThreadKind(false);
    }

    /**
     * The part of {@link #cpuByThreadKind()} spent in the kernel (system time): page faults,
     * zeroing fresh pages, system calls. On a virtual machine whose memory the host backs lazily, a
     * thread's first touches of pages new to the host cost it several times more here than on bare
     * metal, and which runs get such pages is luck: this tells that cost apart from the work.
     */
    public static Map<String, Long> kernelCpuByThreadKind() {
        return byThreadKind(true);
    }

    private static Map<String, Long> byThreadKind(boolean kernelOnly) {
        Map<String, Long> cpu = new HashMap<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path task : tasks) {
                addTaskCpu(task.resolve("stat"), kernelOnly, cpu);
            }
        } catch (IOException e) {
            // not Linux: leave empty
        }
        return cpu;
    }

    private static void addTaskCpu(Path stat, boolean kernelOnly, Map<String, Long> cpu) {
        Stat st = Stat.read(stat);
        if (st == null) {
            return; // the thread ended meanwhile
        }
        // utime (field 14) and stime (15).
        long ticks = st.field(15) + (kernelOnly ? 0 : st.field(14));
        cpu.merge(st.kind, ticks * 10_000_000L, Long::sum);
    }

    /**
     * A /proc stat line: the name's kind (trailing number dropped) and the fields after the name.
     */
    private record Stat(String kind, String[] after) {
        /** The line of {@code stat}, or null if it cannot be read. */
        static Stat read(Path stat) {
            String line;
            try {
                line = Files.readString(stat);
            } catch (IOException e) {
                return null;
            }
            int open = line.indexOf('(');
            int close = line.lastIndexOf(')');
            String kind = line.substring(open + 1, close).replaceAll("[#-]?\\d+$", "").trim();
            return new Stat(kind, line.substring(close + 2).trim().split(" "));
        }

        /** Field {@code n}, numbered as proc(5) numbers them (the state is field 3). */
        long field(int n) {
            return Long.parseLong(after[n - 3]);
        }
    }

    /**
     * Minor page faults of this process so far (/proc/self/stat field 10: first touches of pages,
     * each zeroed by the kernel); -1 where there is no /proc.
     */
    public static long minorFaults() {
        Stat st = Stat.read(Path.of("/proc/self/stat"));
        return st == null ? -1 : st.field(10);
    }

    /** {@code after - before} per kind, in seconds, largest first, kinds under 10 ms left out. */
    public static Map<String, Double> cpuSecondsBetween(
            Map<String, Long> before, Map<String, Long> after) {
        Map<String, Double> used = new LinkedHashMap<>();
        after.entrySet().stream()
                .map(e -> Map.entry(e.getKey(), e.getValue() - before.getOrDefault(e.getKey(), 0L)))
                .filter(e -> e.getValue() >= 10_000_000L)
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .forEach(e -> used.put(e.getKey(), e.getValue() / 1e9));
        return used;
    }

    /** Heap bytes in use now (live and garbage). */
    public static long heapUsed() {
        return MEMORY.getHeapMemoryUsage().getUsed();
    }

    /** Heap bytes in use after full collections (System.gc() is a full GC with G1 by default). */
    public static long liveHeapAfterFullGc() {
        long best = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            System.gc();
            best = Math.min(best, heapUsed());
        }
        return best;
    }

    /**
     * The live heap once it has settled: a finished Flink task's objects stay reachable for a while
     * after its slot is free (up to seconds on a loaded machine), so this repeats the full GC every
     * half second until four readings in a row agree within 1 MB (at most 20 s).
     */
    public static long settledLiveHeap() throws InterruptedException {
        long[] last = new long[4];
        int n = 0;
        long t0 = System.nanoTime();
        while (true) {
            last[n % 4] = liveHeapAfterFullGc();
            n++;
            if (n >= 4) {
                long min = Long.MAX_VALUE;
                long max = Long.MIN_VALUE;
                for (long v : last) {
                    min = Math.min(min, v);
                    max = Math.max(max, v);
                }
                if (max - min < 1_000_000 || System.nanoTime() - t0 > 20_000_000_000L) {
                    return min;
                }
            }
            Thread.sleep(500);
        }
    }

    /** Fields of /proc/self/status in bytes (VmHWM, VmRSS, RssAnon, RssFile). */
    public static Map<String, Long> procStatus() {
        Map<String, Long> m = new HashMap<>();
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                String[] kv = line.split(":\\s+");
                if (kv.length == 2 && kv[1].endsWith(" kB")) {
                    m.put(
                            kv[0],
                            Long.parseLong(kv[1].substring(0, kv[1].length() - 3).trim()) * 1024);
                }
            }
        } catch (IOException | NumberFormatException e) {
            // not Linux: leave empty
        }
        return m;
    }

    /** Busy CPU time of the whole machine, in seconds (from /proc/stat; all processes). */
    public static double machineBusySeconds() {
        try {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            long busy = 0;
            for (int i = 1; i < f.length && i <= 8; i++) {
                if (i != 4 && i != 5) { // idle, iowait
                    busy += Long.parseLong(f[i]);
                }
            }
            return busy / 100.0;
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    /** The 1-minute load average. */
    public static double loadAverage() {
        return OS.getSystemLoadAverage();
    }

    /** Samples heap usage every 10 ms; {@link #takePeak()} returns and resets the maximum. */
    public static final class HeapSampler extends Thread {
        private volatile long peak;

        public HeapSampler() {
            super("bench-heap-sampler");
            setDaemon(true);
        }

        @Override
        public void run() {
            while (true) {
                long u = heapUsed();
                if (u > peak) {
                    peak = u;
                }
                try {
                    Thread.sleep(10);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        public long takePeak() {
            long p = Math.max(peak, heapUsed());
            peak = 0;
            return p;
        }
    }
}
