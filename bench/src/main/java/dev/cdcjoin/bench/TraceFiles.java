package dev.cdcjoin.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/** A generated trace directory. */
public final class TraceFiles {

    private TraceFiles() {}

    /** Reads {@code dir/trace.properties}. */
    public static Properties load(Path dir) throws IOException {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(dir.resolve("trace.properties"))) {
            p.load(in);
        }
        return p;
    }
}
