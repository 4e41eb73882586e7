package dev.cdcjoin.bench;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.LockSupport;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * Reads one topic of a generated trace ({@link Workload}) from its partition files: subtask {@code
 * s} of {@code p} reads partitions {@code k ≡ s (mod p)}, round-robin, each in order, as a Kafka
 * consumer reads its assigned partitions. Messages are read from the page cache through a memory
 * map, so the source costs a copy per message and no parsing ({@link Open}).
 *
 * <p>Options ({@link Spec}): an input rate (messages/s over both topics, split by each subtask's
 * share of the trace; 0 = as fast as possible), a time limit, latency probes (updates of probe rows
 * with negative ids whose name carries their scheduled emission time in {@code System.nanoTime()},
 * see {@link ChecksumSink}), and a pause at the end of the input until {@link RunControl#release}
 * completes, so the harness can checkpoint and measure the final state while the job is still
 * running.
 *
 * @param <T> what the {@link Emitter} turns messages into
 */
public final class TraceSource<T> implements Source<T, TraceSource.Split, Integer> {

    private static final long serialVersionUID = 1L;

    /** The run's source settings. */
    public static final class Spec implements Serializable {
        private static final long serialVersionUID = 1L;

        /** Trace directory. */
        public String dir;

        /** The topic: an index of {@link TraceFiles#TOPICS} (0 = users, 1 = domains). */
        public int topic;

        /** Messages per second over both topics; 0 = unlimited. */
        public double rate;

        /** Stop after this many seconds of schedule (rate-limited runs); 0 = the whole trace. */
        public double maxSeconds;

        /** Pause at the end of input until released. */
        public boolean pauseAtEnd;

        /** Probe rows per subtask; 0 = no probes. */
        public int probes;

        /** Interval between two probe updates of one subtask, in nanoseconds. */
        public long probeIntervalNanos = 2_000_000;

        /** Read only this fraction of each subtask's messages (a warm-up prefix); 1 = all. */
        public double fraction = 1.0;

        public Spec copyForTopic(int t) {
            Spec s = new Spec();
            s.dir = dir;
            s.topic = t;
            s.rate = rate;
            s.maxSeconds = maxSeconds;
            s.pauseAtEnd = pauseAtEnd;
            s.probes = probes;
            s.probeIntervalNanos = probeIntervalNanos;
            s.fraction = fraction;
            return s;
        }
    }

    /** Turns a message into output records. */
    public interface Emitter<T> extends Serializable {
        default void open(SourceReaderContext context) throws Exception {}

        /** {@code message} is null for a tombstone. */
        void emit(byte[] message, ReaderOutput<T> out) throws Exception;
    }

    private final Spec spec;
    private final Emitter<T> emitter;

    public TraceSource(Spec spec, Emitter<T> emitter) {
        this.spec = spec;
        this.emitter = emitter;
    }

    @Override
    public Boundedness getBoundedness() {
        return Boundedness.BOUNDED;
    }

    @Override
    public SplitEnumerator<Split, Integer> createEnumerator(SplitEnumeratorContext<Split> context)
            throws IOException {
        int partitions =
                Integer.parseInt(TraceFiles.load(Path.of(spec.dir)).getProperty("partitions"));
        return new Enumerator(context, spec.topic, partitions);
    }

    @Override
    public SplitEnumerator<Split, Integer> restoreEnumerator(
            SplitEnumeratorContext<Split> context, Integer checkpoint) throws IOException {
        return createEnumerator(context);
    }

    @Override
    public SimpleVersionedSerializer<Split> getSplitSerializer() {
        return new SplitSerializer();
    }

    @Override
    public SimpleVersionedSerializer<Integer> getEnumeratorCheckpointSerializer() {
        return new IntSerializer();
    }

    @Override
    public SourceReader<T, Split> createReader(SourceReaderContext context) throws Exception {
        emitter.open(context);
        return new Reader<>(spec, emitter, context);
    }

    /**
     * One partition file, how many of its messages were read and the byte position after them (a
     * restore seeks there, as a Kafka source does, instead of reading the file up to it).
     */
    public static final class Split implements SourceSplit, Serializable {
        private static final long serialVersionUID = 2L;
        final int topic;
        final int partition;
        final long offset;
        final long position;

        Split(int topic, int partition, long offset, long position) {
            this.topic = topic;
            this.partition = partition;
            this.offset = offset;
            this.position = position;
        }

        @Override
        public String splitId() {
            return TraceFiles.file(topic, partition);
        }
    }

    /** Assigns partition k to subtask k % parallelism, all at registration. */
    static final class Enumerator implements SplitEnumerator<Split, Integer> {
        private final SplitEnumeratorContext<Split> context;
        private final int topic;
        private final int partitions;

        Enumerator(SplitEnumeratorContext<Split> context, int topic, int partitions) {
            this.context = context;
            this.topic = topic;
            this.partitions = partitions;
        }

        @Override
        public void start() {}

        @Override
        public void handleSplitRequest(int subtask, String host) {}

        @Override
        public void addSplitsBack(List<Split> splits, int subtask) {
            for (Split s : splits) {
                context.assignSplit(s, subtask);
            }
        }

        @Override
        public void addReader(int subtask) {
            int p = context.currentParallelism();
            for (int k = subtask; k < partitions; k += p) {
                context.assignSplit(new Split(topic, k, 0, 0), subtask);
            }
            context.signalNoMoreSplits(subtask);
        }

        @Override
        public Integer snapshotState(long checkpointId) {
            return 0;
        }

        @Override
        public void close() {}
    }

    /** Reads its splits round-robin, at a rate or flat out. */
    static final class Reader<T> implements SourceReader<T, Split> {
        private final Spec spec;
        private final Emitter<T> emitter;
        private final SourceReaderContext context;
        private final List<Open> splits = new ArrayList<>();
        private boolean noMoreSplits;
        private CompletableFuture<Void> splitsArrived = new CompletableFuture<>();
        private int next;
        private boolean started;
        private boolean exhausted;
        private long t0;
        private long emitted;
        private double nanosPerMessage;
        private long limit = Long.MAX_VALUE;
        private long stopAt = Long.MAX_VALUE;
        // Probes.
        private long[] probeStamps;
        private int probeBase;
        private int probeNext;
        private long nextProbeDue;

        Reader(Spec spec, Emitter<T> emitter, SourceReaderContext context) {
            this.spec = spec;
            this.emitter = emitter;
            this.context = context;
        }

        @Override
        public void start() {}

        @Override
        public void addSplits(List<Split> added) {
            try {
                for (Split s : added) {
                    splits.add(new Open(spec.dir, s));
                }
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
            splitsArrived.complete(null);
        }

        @Override
        public void notifyNoMoreSplits() {
            noMoreSplits = true;
            splitsArrived.complete(null);
        }

        private void begin(ReaderOutput<T> out) throws Exception {
            started = true;
            Properties meta = TraceFiles.load(Path.of(spec.dir));
            long total = Long.parseLong(meta.getProperty("messages"));
            long mine = 0;
            for (Open o : splits) {
                mine += o.count;
            }
            if (spec.fraction < 1.0) {
                limit = (long) (mine * spec.fraction);
            }
            if (spec.rate > 0) {
                double myRate = spec.rate * mine / total;
                nanosPerMessage = 1e9 / myRate;
            }
            if (spec.maxSeconds > 0) {
                stopAt = System.nanoTime() + (long) (spec.maxSeconds * 1e9);
            }
            RunControl.markFirstEmit();
            t0 = System.nanoTime();
            if (spec.probes > 0) {
                probeStamps = new long[spec.probes];
                probeBase = context.getIndexOfSubtask() * spec.probes + 1;
                for (int i = 0; i < spec.probes; i++) {
                    probeStamps[i] = t0;
                    emitter.emit(Probes.insert(spec.topic, -(probeBase + i), t0), out);
                    RunControl.probesEmitted.incrementAndGet();
                }
                nextProbeDue = t0 + spec.probeIntervalNanos;
            }
        }

        @Override
        public InputStatus pollNext(ReaderOutput<T> out) throws Exception {
            if (!started) {
                if (!noMoreSplits) {
                    return InputStatus.NOTHING_AVAILABLE;
                }
                begin(out);
            }
            if (exhausted) {
                return RunControl.release.isDone()
                        ? InputStatus.END_OF_INPUT
                        : InputStatus.NOTHING_AVAILABLE;
            }
            for (int i = 0; i < 256; i++) {
                if (nanosPerMessage > 0) {
                    long due = t0 + (long) (emitted * nanosPerMessage);
                    long now = System.nanoTime();
                    if (probeStamps != null && nextProbeDue <= Math.min(now, due)) {
                        probe(out);
                        continue;
                    }
                    if (due > now + 100_000) {
                        LockSupport.parkNanos(Math.min(due - now, 1_000_000));
                        return InputStatus.MORE_AVAILABLE;
                    }
                }
                if (emitted >= limit
                        || (stopAt != Long.MAX_VALUE && System.nanoTime() >= stopAt)
                        || !emitOne(out)) {
                    return finished();
                }
            }
            return InputStatus.MORE_AVAILABLE;
        }

        private void probe(ReaderOutput<T> out) throws Exception {
            int i = probeNext;
            probeNext = (probeNext + 1) % probeStamps.length;
            long stamp = nextProbeDue;
            emitter.emit(Probes.update(spec.topic, -(probeBase + i), probeStamps[i], stamp), out);
            probeStamps[i] = stamp;
            nextProbeDue += spec.probeIntervalNanos;
            RunControl.probesEmitted.incrementAndGet();
        }

        /** Emits the next message of the next split with one left; false if none is left. */
        private boolean emitOne(ReaderOutput<T> out) throws Exception {
            for (int tries = 0; tries < splits.size(); tries++) {
                Open o = splits.get(next);
                next = (next + 1) % splits.size();
                if (o.read < o.count) {
                    byte[] message = o.readMessage();
                    emitter.emit(message, out);
                    emitted++;
                    RunControl.messagesEmitted.incrementAndGet();
                    return true;
                }
            }
            return false;
        }

        private InputStatus finished() throws IOException {
            exhausted = true;
            for (Open o : splits) {
                o.close();
            }
            if (RunControl.exhausted.incrementAndGet() > 0) {
                RunControl.exhaustedAt = System.nanoTime();
            }
            if (!spec.pauseAtEnd) {
                RunControl.release.complete(null);
            }
            return RunControl.release.isDone()
                    ? InputStatus.END_OF_INPUT
                    : InputStatus.NOTHING_AVAILABLE;
        }

        @Override
        public List<Split> snapshotState(long checkpointId) {
            List<Split> state = new ArrayList<>();
            for (Open o : splits) {
                state.add(new Split(o.split.topic, o.split.partition, o.read, o.position));
            }
            return state;
        }

        @Override
        public CompletableFuture<Void> isAvailable() {
            if (!started) {
                return splitsArrived;
            }
            if (exhausted) {
                return RunControl.release;
            }
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public void close() throws IOException {
            for (Open o : splits) {
                o.close();
            }
        }
    }

    /**
     * An open partition file, read from a memory map of the page cache (windows of {@value #WINDOW}
     * bytes, mapped in turn): each message costs one copy into its own array, as a Kafka consumer's
     * byte-array deserializer gives it, and no lock (a {@code DataInputStream} over a {@code
     * BufferedInputStream} took a monitor per byte of each length prefix). Reading the file into a
     * buffer first cost the kernel's copy out of the page cache too: a quarter of the {@code
     * domains} source task's CPU in a {@code perf} profile of the native join.
     */
    static final class Open {
        /**
         * Bytes mapped at a time; larger than any message, so one fits in a window mapped at it.
         */
        static final int WINDOW = 64 << 20;

        final Split split;
        final long count;
        private final FileChannel channel;
        private final long size;

        /** The mapped window, at file offset {@code position - window.position()}. */
        private ByteBuffer window = ByteBuffer.allocate(0);

        long read;
        long position;

        Open(String dir, Split split) throws IOException {
            this.split = split;
            String name = TraceFiles.file(split.topic, split.partition);
            this.count =
                    Long.parseLong(TraceFiles.load(Path.of(dir)).getProperty("messages." + name));
            this.channel = FileChannel.open(Path.of(dir, name), StandardOpenOption.READ);
            this.size = channel.size();
            this.read = split.offset;
            this.position = split.position;
        }

        /** The next message (its big-endian length, then its bytes); null for a tombstone. */
        byte[] readMessage() throws IOException {
            ensure(Integer.BYTES);
            int length = window.getInt();
            read++;
            position += Integer.BYTES;
            if (length < 0) {
                return null;
            }
            ensure(length);
            byte[] b = new byte[length];
            window.get(b);
            position += length;
            return b;
        }

        /** Makes the next {@code bytes} of the file readable from the window, mapping it anew. */
        private void ensure(int bytes) throws IOException {
            if (window.remaining() >= bytes) {
                return;
            }
            if (position + bytes > size) {
                throw new EOFException(
                        split.splitId() + " ends inside a message at byte " + position);
            }
            if (bytes > WINDOW) {
                throw new IOException(
                        split.splitId()
                                + ": a message of "
                                + bytes
                                + " bytes at byte "
                                + position
                                + " is larger than the map window ("
                                + WINDOW
                                + " bytes)");
            }
            long length = Math.min(WINDOW, size - position);
            window = channel.map(FileChannel.MapMode.READ_ONLY, position, length);
        }

        void close() throws IOException {
            channel.close();
        }
    }

    static final class SplitSerializer implements SimpleVersionedSerializer<Split> {
        @Override
        public int getVersion() {
            return 2;
        }

        @Override
        public byte[] serialize(Split s) throws IOException {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            try (DataOutputStream o = new DataOutputStream(b)) {
                o.writeInt(s.topic);
                o.writeInt(s.partition);
                o.writeLong(s.offset);
                o.writeLong(s.position);
            }
            return b.toByteArray();
        }

        @Override
        public Split deserialize(int version, byte[] bytes) throws IOException {
            try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
                return new Split(in.readInt(), in.readInt(), in.readLong(), in.readLong());
            } catch (EOFException e) {
                throw new IOException("truncated split", e);
            }
        }
    }

    static final class IntSerializer implements SimpleVersionedSerializer<Integer> {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(Integer v) {
            return new byte[0];
        }

        @Override
        public Integer deserialize(int version, byte[] bytes) {
            return 0;
        }
    }

    /** Probe rows: negative ids; the name column carries the scheduled emission time. */
    static final class Probes {
        private Probes() {}

        static byte[] insert(int topic, int id, long stamp) {
            return envelope(topic, "c", null, row(topic, id, stamp));
        }

        static byte[] update(int topic, int id, long before, long after) {
            return envelope(topic, "u", row(topic, id, before), row(topic, id, after));
        }

        private static String row(int topic, int id, long stamp) {
            return topic == 0
                    ? "{\"id\":" + id + ",\"firstname\":\"p" + stamp + "\",\"lastname\":\"probe\"}"
                    : "{\"id\":"
                            + id
                            + ",\"user_id\":"
                            + id
                            + ",\"domain_name\":\"p"
                            + stamp
                            + "\"}";
        }

        private static byte[] envelope(int topic, String op, String before, String after) {
            return ("{\"before\":"
                            + before
                            + ",\"after\":"
                            + after
                            + ",\"source\":{\"version\":\"2.7.3.Final\",\"connector\":\"postgresql\","
                            + "\"name\":\"shop\",\"ts_ms\":0,\"snapshot\":\"false\",\"db\":\"shop\","
                            + "\"schema\":\"public\",\"table\":\""
                            + (topic == 0 ? "users" : "domains")
                            + "\",\"txId\":0,\"lsn\":0,\"xmin\":null},\"op\":\""
                            + op
                            + "\",\"ts_ms\":0,\"transaction\":null}")
                    .getBytes(StandardCharsets.UTF_8);
        }
    }
}
