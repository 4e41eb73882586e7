package dev.cdcjoin.flink.nativelib;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Loading the bundled library, calling it, and mapping a Rust panic to a Java exception. */
class NativeLibraryTest {

    @BeforeAll
    static void loadLibrary() {
        NativeLibrary.load();
    }

    /** The workspace version from the root Cargo.toml ([workspace.package] version). */
    static String expectedCrateVersion() throws IOException {
        Path basedir = Paths.get(System.getProperty("cdcjoin.project.basedir", "."));
        String cargoToml = Files.readString(basedir.resolve("Cargo.toml"));
        Matcher m =
                Pattern.compile("(?ms)^\\[workspace\\.package\\].*?^version\\s*=\\s*\"([^\"]+)\"")
                        .matcher(cargoToml);
        assertTrue(m.find(), "no [workspace.package] version in Cargo.toml");
        return m.group(1);
    }

    @Test
    void loadsTheBundledLibrary() {
        assertTrue(NativeLibrary.isLoaded());
        String from = NativeLibrary.loadedFrom();
        assertNotNull(from);
        // Surefire does not put the library on java.library.path: the bundled copy is used.
        assertTrue(
                from.contains(NativeLibrary.TEMP_DIR_PREFIX + ProcessHandle.current().pid() + "-"),
                from);
        assertTrue(Files.isRegularFile(Paths.get(from)), from);
    }

    @Test
    void versionIsTheCrateVersion() throws IOException {
        assertEquals(expectedCrateVersion(), NativeLibrary.version());
    }

    @Test
    void loadIsIdempotentAndThreadSafe() throws Exception {
        String before = NativeLibrary.loadedFrom();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<String>> results = new ArrayList<>();
            for (int i = 0; i < 32; i++) {
                Callable<String> task =
                        () -> {
                            NativeLibrary.load();
                            return NativeLibrary.version() + "@" + NativeLibrary.loadedFrom();
                        };
                results.add(pool.submit(task));
            }
            String expected = NativeLibrary.version() + "@" + before;
            for (Future<String> r : results) {
                assertEquals(expected, r.get());
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(before, NativeLibrary.loadedFrom());
    }

    @Test
    void panicBecomesAJavaExceptionAndTheJvmSurvives() throws IOException {
        for (int i = 0; i < 3; i++) {
            IllegalStateException e =
                    assertThrows(IllegalStateException.class, NativeLibrary::panicForTest);
            assertTrue(
                    e.getMessage().startsWith("Rust panic in NativeLibrary.panicForTest: "),
                    e.getMessage());
            assertTrue(e.getMessage().contains("deliberate panic for test"), e.getMessage());
        }
        // Still alive, and the library still answers.
        assertEquals(expectedCrateVersion(), NativeLibrary.version());
    }

    @Test
    void missingPlatformFailsWithAClearError(@TempDir Path tmp) {
        UnsatisfiedLinkError e =
                assertThrows(
                        UnsatisfiedLinkError.class,
                        () -> NativeLibrary.extractBundled("plan9", "mips", tmp));
        String msg = e.getMessage();
        assertTrue(msg.contains("os.name=" + System.getProperty("os.name")), msg);
        assertTrue(msg.contains("os.arch=" + System.getProperty("os.arch")), msg);
        assertTrue(msg.contains("/dev/cdcjoin/flink/nativelib/plan9/mips/libcdcjoin_jni.so"), msg);
    }

    @Test
    void eachExtractionGetsItsOwnDirectory(@TempDir Path tmp) {
        String os = NativeLibrary.platformOs();
        String arch = NativeLibrary.platformArch();
        Path a = NativeLibrary.extractBundled(os, arch, tmp);
        Path b = NativeLibrary.extractBundled(os, arch, tmp);
        assertFalse(a.getParent().equals(b.getParent()), a + " vs " + b);
        assertTrue(Files.isRegularFile(a) && Files.isRegularFile(b));
        assertEquals("libcdcjoin_jni.so", a.getFileName().toString());
    }

    @Test
    void staleCopiesOfDeadProcessesAreRemoved(@TempDir Path tmp) throws Exception {
        Process p = new ProcessBuilder("true").start();
        p.waitFor();
        long deadPid = p.pid();
        long selfPid = ProcessHandle.current().pid();
        Path dead =
                Files.createDirectory(
                        tmp.resolve(NativeLibrary.TEMP_DIR_PREFIX + deadPid + "-123"));
        Files.writeString(dead.resolve("libcdcjoin_jni.so"), "stale");
        Path mine =
                Files.createDirectory(
                        tmp.resolve(NativeLibrary.TEMP_DIR_PREFIX + selfPid + "-456"));
        Path unrelated =
                Files.createDirectory(tmp.resolve(NativeLibrary.TEMP_DIR_PREFIX + "not-a-pid"));

        assertEquals(1, NativeLibrary.cleanStaleCopies(tmp));
        assertFalse(Files.exists(dead));
        assertTrue(Files.exists(mine));
        assertTrue(Files.exists(unrelated));
    }

    /**
     * Entry point of a child JVM: loads the library, prints where from and its version, or why not.
     */
    public static final class LoadOnce {
        public static void main(String[] args) {
            try {
                NativeLibrary.load();
                System.out.println(
                        "loaded=" + NativeLibrary.loadedFrom() + " " + NativeLibrary.version());
            } catch (UnsatisfiedLinkError e) {
                System.out.println("refused=" + e.getMessage());
            }
        }
    }

    /** A class-path folder whose version resource claims {@code version}, shadowing the JAR's. */
    static Path claimingVersion(Path dir, String version) throws IOException {
        Path resource = dir.resolve(NativeLibrary.PKGID_RESOURCE.substring(1));
        Files.createDirectories(resource.getParent());
        Files.writeString(resource, "path+file:///src/rust/jni#cdcjoin-jni@" + version + "\n");
        return dir;
    }

    /** Runs {@link LoadOnce} in a child JVM; returns its line starting with {@code prefix}. */
    static String loadInChild(String prefix, Path firstOnClasspath, String... jvmArgs)
            throws Exception {
        String out = LibraryPathTest.runJvm(LoadOnce.class, firstOnClasspath, jvmArgs);
        return out.lines()
                .filter(l -> l.startsWith(prefix))
                .findFirst()
                .orElseThrow(() -> new AssertionError(out));
    }

    static Path installCopy(Path dir) {
        return NativeLibrary.extractBundled(
                NativeLibrary.platformOs(), NativeLibrary.platformArch(), dir);
    }

    @Test
    void expectedVersionIsTheCrateVersion() throws IOException {
        assertEquals(expectedCrateVersion(), NativeLibrary.expectedVersion());
        assertEquals(
                "0.1.0",
                NativeLibrary.versionOfPkgid("path+file:///x/rust/jni#cdcjoin-jni@0.1.0\n"));
        assertEquals(
                "1.2.3-rc.1",
                NativeLibrary.versionOfPkgid("path+file:///x/cdcjoin-jni#1.2.3-rc.1"));
        UnsatisfiedLinkError e =
                assertThrows(
                        UnsatisfiedLinkError.class,
                        () -> NativeLibrary.versionOfPkgid("error: no such package"));
        assertTrue(e.getMessage().contains("\"error: no such package\""), e.getMessage());
    }

    @Test
    void staleLibraryOnTheLibraryPathIsRefused(@TempDir Path tmp) throws Exception {
        Path installed = installCopy(tmp.resolve("lib"));
        String refused =
                loadInChild(
                        "refused=",
                        claimingVersion(tmp.resolve("jar"), "9.9.9"),
                        "-Djava.library.path=" + installed.getParent());
        assertTrue(refused.contains("java.library.path (" + installed + ")"), refused);
        assertTrue(
                refused.contains(
                        "is version "
                                + expectedCrateVersion()
                                + ", but this JAR needs version 9.9.9"),
                refused);
        assertTrue(refused.contains("-D" + NativeLibrary.PATH_PROPERTY), refused);
    }

    @Test
    void explicitPathIsLoadedAndChecked(@TempDir Path tmp) throws Exception {
        Path file = installCopy(tmp.resolve("lib"));
        String version = expectedCrateVersion();
        String property = "-D" + NativeLibrary.PATH_PROPERTY + "=";
        assertEquals(
                "loaded=" + file + " " + version, loadInChild("loaded=", null, property + file));

        String refused =
                loadInChild(
                        "refused=", claimingVersion(tmp.resolve("jar"), "0.0.1"), property + file);
        assertTrue(
                refused.contains(
                        file
                                + " (named by "
                                + property.substring(0, property.length() - 1)
                                + ") is version "
                                + version
                                + ", but this JAR needs version 0.0.1"),
                refused);

        Path missing = tmp.resolve("nowhere").resolve(file.getFileName());
        String absent = loadInChild("refused=", null, property + missing);
        assertTrue(
                absent.startsWith(
                        "refused=cdcjoin: cannot load the native library "
                                + missing
                                + " named by -D"),
                absent);
    }

    @Test
    void platformNames() {
        assertEquals("linux", NativeLibrary.normalizeOs("Linux"));
        assertEquals("darwin", NativeLibrary.normalizeOs("Mac OS X"));
        assertEquals("windows", NativeLibrary.normalizeOs("Windows 11"));
        assertEquals("amd64", NativeLibrary.normalizeArch("amd64"));
        assertEquals("amd64", NativeLibrary.normalizeArch("x86_64"));
        assertEquals("aarch64", NativeLibrary.normalizeArch("arm64"));
        assertEquals(123L, NativeLibrary.ownerPid("cdcjoin-jni-123-4567"));
        assertEquals(-1L, NativeLibrary.ownerPid("cdcjoin-jni-x-4567"));
        assertEquals(-1L, NativeLibrary.ownerPid("other-123-4567"));
    }
}
