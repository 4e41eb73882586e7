package dev.cdcjoin.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/** A generated trace directory. */
public final class TraceFiles {

    private TraceFiles() {}

    /**
     * The topics a trace can hold, by index (a {@link TraceSource.Spec#topic}): the users/domains
     * trace ({@link Workload}) has 0 and 1, the three-table mart ({@link MartWorkload}) 0, 2 and 3.
     */
    public static final List<String> TOPICS = List.of("users", "domains", "profiles", "settings");

    /** The file of one partition of a topic. */
    static String file(int topic, int partition) {
        return TOPICS.get(topic) + "-" + partition + ".bin";
    }

    /** The index in {@link #TOPICS} of the topic named {@code name}. */
    static int topic(String name) {
        int t = TOPICS.indexOf(name);
        if (t < 0) {
            throw new IllegalArgumentException("unknown topic '" + name + "', not in " + TOPICS);
        }
        return t;
    }

    /**
     * The topics of a trace's properties, as indexes of {@link #TOPICS} (traces written before the
     * property existed are users/domains ones).
     */
    static List<Integer> topics(Properties trace) {
        List<Integer> l = new ArrayList<>();
        for (String name : trace.getProperty("topics", "users,domains").split(",")) {
            l.add(topic(name));
        }
        return l;
    }

    /** Reads {@code dir/trace.properties}. */
    public static Properties load(Path dir) throws IOException {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(dir.resolve("trace.properties"))) {
            p.load(in);
        }
        return p;
    }
}
