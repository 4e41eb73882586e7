package dev.cdcjoin.flink.nativelib;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A library installed on {@code java.library.path} (e.g. Flink's {@code lib/}) is preferred; a
 * second class loader, which the JVM will not give that same path, falls back to the bundled copy.
 * Runs in a child JVM, since java.library.path is read once per JVM.
 */
class LibraryPathTest {

    /** Entry point of the child JVM: prints where each of two class loaders loaded from. */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            NativeLibrary.load();
            System.out.println("app=" + NativeLibrary.loadedFrom() + " " + NativeLibrary.version());
            URL classes = NativeLibrary.class.getProtectionDomain().getCodeSource().getLocation();
            try (URLClassLoader job =
                    new URLClassLoader(new URL[] {classes}, ClassLoader.getPlatformClassLoader())) {
                Class<?> c = Class.forName(NativeLibrary.class.getName(), true, job);
                c.getMethod("load").invoke(null);
                Method from = c.getMethod("loadedFrom");
                Method version = c.getMethod("version");
                System.out.println("job=" + from.invoke(null) + " " + version.invoke(null));
            }
        }
    }

    /**
     * Runs {@code main} in a child JVM with the test classpath, after {@code firstOnClasspath} when
     * given, and returns its output; fails unless it exits with 0 within a minute.
     */
    static String runJvm(Class<?> main, Path firstOnClasspath, String... jvmArgs) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-cp");
        command.add(
                (firstOnClasspath == null ? "" : firstOnClasspath + File.pathSeparator)
                        + codeSource(NativeLibrary.class)
                        + File.pathSeparator
                        + codeSource(main));
        command.addAll(List.of(jvmArgs));
        command.add(main.getName());
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "child JVM timed out");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), out);
        return out;
    }

    private static Path codeSource(Class<?> c) throws Exception {
        return Paths.get(c.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    @Test
    void installedLibraryIsPreferredAndASecondLoaderFallsBack(@TempDir Path tmp) throws Exception {
        // Install a copy in a directory used as java.library.path.
        Path installed =
                NativeLibrary.extractBundled(
                        NativeLibrary.platformOs(),
                        NativeLibrary.platformArch(),
                        tmp.resolve("lib"));
        String version = NativeLibraryTest.expectedCrateVersion();

        String out =
                runJvm(
                        Child.class,
                        null,
                        "-Djava.library.path=" + installed.getParent(),
                        "-D" + NativeLibrary.TMPDIR_PROPERTY + "=" + tmp.resolve("extract"));

        List<String> lines =
                out.lines()
                        .filter(l -> l.startsWith("app=") || l.startsWith("job="))
                        .collect(Collectors.toList());
        assertEquals(2, lines.size(), out);
        assertEquals("app=java.library.path " + version, lines.get(0));
        assertTrue(lines.get(1).startsWith("job=" + tmp.resolve("extract")), out);
        assertTrue(lines.get(1).endsWith(" " + version), out);
    }
}
