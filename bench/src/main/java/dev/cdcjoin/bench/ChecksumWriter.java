package dev.cdcjoin.bench;

import java.io.IOException;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.types.RowKind;

/**
 * The counting sink's writer: a signed count and the order-independent checksum ({@link RowHash})
 * of the changelog, the time of the last row, and (for rows joining two probe rows) the end-to-end
 * latency of the probe update that produced them.
 *
 * <p>A probe row is an insertion ({@code +I}/{@code +U}) whose user id and domain id are negative
 * ({@link TraceSource}); its latency is now minus the later of the two stamps in {@code firstname}
 * and {@code domain_name} (the newer side is the update that caused it). Retractions and rows with
 * a null side are not samples.
 *
 * <p>Rows are read through a {@link RowAccess}: {@link Row}s, or Flink's internal rows with the
 * same checksum. The sink around it, {@code ChecksumSink}, is the one bench class whose signature
 * differs between the Flink lines: one per line in {@code bench/src/flink-<line>/java}.
 *
 * @param <T> the row type
 */
final class ChecksumWriter<T> implements SinkWriter<T> {
    private final boolean probes;
    private final RowAccess<T> access;
    private long count;
    private long sum;
    private long rows;
    private long last;

    ChecksumWriter(boolean probes, RowAccess<T> access) {
        this.probes = probes;
        this.access = access;
    }

    @Override
    public void write(T row, Context context) {
        long h = access.hash(row);
        RowKind kind = access.kind(row);
        if (kind == RowKind.INSERT || kind == RowKind.UPDATE_AFTER) {
            sum += h;
            count++;
            if (probes) {
                probe(row);
            }
        } else {
            sum -= h;
            count--;
        }
        // The time of the last row ends the measured span, so every row is stamped once every
        // source has reached its end; before that, one in 256 (a clock read per row was a third
        // of this sink's cost, and the smaller topic's sources end long before the other's).
        if ((++rows & 255) == 0 || RunControl.exhausted.get() >= RunControl.sources) {
            last = System.nanoTime();
        }
        if ((rows & 4095) == 0) {
            publish();
        }
    }

    private void probe(T row) {
        Object user = access.field(row, 0);
        Object domain = access.field(row, 3);
        if (user instanceof Number
                && ((Number) user).longValue() < 0
                && domain instanceof Number
                && ((Number) domain).longValue() < 0) {
            long a = stamp(access.field(row, 1));
            long b = stamp(access.field(row, 5));
            long stamp = Math.max(a, b);
            if (stamp >= RunControl.warmupUntil) {
                RunControl.recordLatency(System.nanoTime() - stamp);
            }
        }
    }

    private static long stamp(Object name) {
        String s = String.valueOf(name);
        return s.startsWith("p") ? Long.parseLong(s.substring(1)) : Long.MIN_VALUE;
    }

    private void publish() {
        RunControl.signedCount.addAndGet(count);
        RunControl.checksum.addAndGet(sum);
        RunControl.rowsOut.addAndGet(rows);
        RunControl.maxLastRow(last);
        count = 0;
        sum = 0;
        rows = 0;
    }

    @Override
    public void flush(boolean endOfInput) {
        publish();
    }

    @Override
    public void close() throws IOException {
        publish();
    }
}
