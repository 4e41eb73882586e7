package dev.cdcjoin.flink.runtime;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The golden wire-format files of {@code tests/wire/}, which the Rust tests write and check too.
 */
public final class GoldenFiles {

    private GoldenFiles() {}

    /**
     * The contents of golden file {@code name}.
     *
     * @param name the file's name in {@code tests/wire/}
     * @return its bytes
     * @throws IOException if it cannot be read
     */
    public static byte[] read(String name) throws IOException {
        return Files.readAllBytes(
                Path.of(System.getProperty("cdcjoin.project.basedir", "."), "tests", "wire", name));
    }
}
