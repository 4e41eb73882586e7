package dev.cdcjoin.bench.jmh;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.FileInputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Messages taken from a generated trace for the micro-benchmarks. */
public final class Samples {

    private Samples() {}

    /**
     * {@code n} messages of {@code domains-0.bin} (or users), taken evenly over the file so the op
     * mix (snapshot reads, inserts, updates, deletes) is the trace's.
     */
    public static List<byte[]> read(String dir, String topic, int n) throws IOException {
        Path file = Path.of(dir, topic + "-0.bin");
        List<byte[]> all = new ArrayList<>();
        try (DataInputStream in =
                new DataInputStream(
                        new BufferedInputStream(new FileInputStream(file.toFile()), 1 << 20))) {
            while (in.available() > 0) {
                int len = in.readInt();
                if (len < 0) {
                    continue;
                }
                byte[] b = new byte[len];
                in.readFully(b);
                all.add(b);
            }
        }
        List<byte[]> out = new ArrayList<>(n);
        double step = (double) all.size() / n;
        for (int i = 0; i < n; i++) {
            out.add(all.get((int) (i * step)));
        }
        return out;
    }

    static String trace() {
        String t = System.getProperty("cdcjoin.bench.trace");
        if (t == null) {
            throw new IllegalStateException("-Dcdcjoin.bench.trace=<trace dir> is required");
        }
        return t;
    }
}
