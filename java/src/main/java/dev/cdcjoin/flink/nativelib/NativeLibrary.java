package dev.cdcjoin.flink.nativelib;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Loader of, and entry points into, the native library {@code cdcjoin_jni} (Rust crate
 * {@code cdcjoin-jni}).
 *
 * <p>Call {@link #load()} before any native method, typically from an operator's {@code open()}.
 * It first tries {@link System#loadLibrary(String)} so a library installed in Flink's {@code lib/}
 * or on {@code java.library.path} wins. Otherwise it extracts the copy bundled in the JAR at
 * {@code /dev/cdcjoin/flink/nativelib/<os>/<arch>/libcdcjoin_jni.so} into a fresh temporary
 * directory and loads it from there.
 *
 * <p>Why a fresh directory per load: the JVM refuses to load one library path from two class
 * loaders, and Flink gives every job (and a TaskManager that lost all of a job's slots) a new
 * user-code class loader, each with its own copy of this class and so its own call to
 * {@link #load()}. Each copy is extracted to {@code <tmp>/cdcjoin-jni-<pid>-<random>/}, marked
 * delete-on-exit, and directories left by processes that are no longer alive are removed on the
 * next extraction. The temporary root is {@code java.io.tmpdir}, or the system property {@value
 * #TMPDIR_PROPERTY} (for hosts whose {@code /tmp} is mounted {@code noexec}).
 *
 * <p>Native methods throw Java exceptions for Rust errors and panics (a panic becomes an {@link
 * IllegalStateException} whose message starts with {@code "Rust panic in"}); the JVM is never
 * brought down by a panic.
 */
public final class NativeLibrary {

    /** Name of the library as given to {@link System#loadLibrary(String)}. */
    public static final String LIBRARY_NAME = "cdcjoin_jni";

    /** System property naming the directory under which bundled copies are extracted. */
    public static final String TMPDIR_PROPERTY = "cdcjoin.native.tmpdir";

    /** Classpath folder holding one {@code <os>/<arch>/} folder per bundled platform. */
    static final String RESOURCE_ROOT = "/dev/cdcjoin/flink/nativelib";

    /** Name prefix of extraction directories: {@code cdcjoin-jni-<pid>-<random>}. */
    static final String TEMP_DIR_PREFIX = "cdcjoin-jni-";

    private static final Object LOCK = new Object();

    /** Where the library was loaded from in this class loader; {@code null} until loaded. */
    private static volatile String loadedFrom;

    private NativeLibrary() {}

    /**
     * Loads the native library into this class loader, once; later calls return at once. Safe to
     * call from several threads.
     *
     * @throws UnsatisfiedLinkError if the library is neither installed ({@code
     *     java.library.path}) nor bundled for this platform, or cannot be loaded; the message names
     *     {@code os.name}, {@code os.arch} and the resource path looked for
     */
    public static void load() {
        if (loadedFrom != null) {
            return;
        }
        synchronized (LOCK) {
            if (loadedFrom == null) {
                loadedFrom = doLoad();
            }
        }
    }

    /**
     * Tells whether {@link #load()} has succeeded in this class loader.
     *
     * @return {@code true} once the library is loaded
     */
    public static boolean isLoaded() {
        return loadedFrom != null;
    }

    /**
     * Describes where the library was loaded from, for logs: {@code "java.library.path"} or the
     * absolute path of the extracted file.
     *
     * @return the origin, or {@code null} if {@link #load()} has not succeeded yet
     */
    public static String loadedFrom() {
        return loadedFrom;
    }

    /**
     * Version of the native library (the Rust crate version). Requires {@link #load()}.
     *
     * @return the version, e.g. {@code "0.1.0"}
     */
    public static native String version();

    /**
     * Panics in Rust on purpose; used by tests to prove that a panic surfaces as a Java exception
     * (an {@link IllegalStateException} carrying the panic message) and leaves the JVM running.
     * Requires {@link #load()}.
     */
    static native void panicForTest();

    // ---------------------------------------------------------------------------------------
    // Loading

    private static String doLoad() {
        UnsatisfiedLinkError fromLibraryPath;
        try {
            System.loadLibrary(LIBRARY_NAME);
            return "java.library.path";
        } catch (UnsatisfiedLinkError e) {
            // Not installed, or already loaded from that path by another class loader.
            fromLibraryPath = e;
        }
        Path file;
        try {
            file = extractBundled(platformOs(), platformArch(), tempRoot());
        } catch (UnsatisfiedLinkError e) {
            e.addSuppressed(fromLibraryPath);
            throw e;
        }
        try {
            System.load(file.toString());
        } catch (UnsatisfiedLinkError e) {
            deleteRecursively(file.getParent());
            UnsatisfiedLinkError error =
                    new UnsatisfiedLinkError(
                            "cdcjoin: cannot load the native library extracted to "
                                    + file
                                    + " ("
                                    + platformDescription()
                                    + "): "
                                    + e.getMessage()
                                    + ". If the temporary directory is mounted noexec, set -D"
                                    + TMPDIR_PROPERTY
                                    + "=<dir>.");
            error.initCause(e);
            error.addSuppressed(fromLibraryPath);
            throw error;
        }
        return file.toString();
    }

    /**
     * Copies the bundled library for {@code os}/{@code arch} into a new directory {@code
     * cdcjoin-jni-<pid>-<random>} under {@code tempRoot}, marked delete-on-exit, after removing
     * the directories of dead processes there.
     */
    static Path extractBundled(String os, String arch, Path tempRoot) {
        String resource = resourcePath(os, arch);
        try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new UnsatisfiedLinkError(
                        "cdcjoin: no native library for this platform: "
                                + platformDescription()
                                + " maps to "
                                + os
                                + "/"
                                + arch
                                + ", but the JAR has no resource "
                                + resource
                                + ", and System.loadLibrary(\""
                                + LIBRARY_NAME
                                + "\") found none on java.library.path="
                                + System.getProperty("java.library.path"));
            }
            Files.createDirectories(tempRoot);
            cleanStaleCopies(tempRoot);
            Path dir =
                    Files.createTempDirectory(
                            tempRoot, TEMP_DIR_PREFIX + ProcessHandle.current().pid() + "-");
            dir.toFile().deleteOnExit(); // registered first, so runs after the file's
            Path file = dir.resolve(System.mapLibraryName(LIBRARY_NAME));
            file.toFile().deleteOnExit();
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            return file;
        } catch (IOException e) {
            UnsatisfiedLinkError error =
                    new UnsatisfiedLinkError(
                            "cdcjoin: cannot extract "
                                    + resource
                                    + " under "
                                    + tempRoot
                                    + " ("
                                    + platformDescription()
                                    + "): "
                                    + e);
            error.initCause(e);
            throw error;
        }
    }

    /**
     * Removes the extraction directories under {@code tempRoot} whose owning process (the pid in
     * the name) is no longer alive. Failures are ignored: another process may be removing the same
     * directory, or it may belong to another user.
     *
     * @return the number of directories removed
     */
    static int cleanStaleCopies(Path tempRoot) {
        long self = ProcessHandle.current().pid();
        int removed = 0;
        try (DirectoryStream<Path> dirs =
                Files.newDirectoryStream(tempRoot, TEMP_DIR_PREFIX + "*")) {
            for (Path dir : dirs) {
                long pid = ownerPid(dir.getFileName().toString());
                if (pid < 0 || pid == self || !Files.isDirectory(dir)) {
                    continue;
                }
                boolean alive = ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
                if (!alive && deleteRecursively(dir)) {
                    removed++;
                }
            }
        } catch (IOException | RuntimeException e) {
            // Best effort only.
        }
        return removed;
    }

    /** The pid in {@code cdcjoin-jni-<pid>-<random>}, or -1 if the name has another form. */
    static long ownerPid(String dirName) {
        if (!dirName.startsWith(TEMP_DIR_PREFIX)) {
            return -1;
        }
        String rest = dirName.substring(TEMP_DIR_PREFIX.length());
        int dash = rest.indexOf('-');
        if (dash <= 0) {
            return -1;
        }
        try {
            return Long.parseLong(rest.substring(0, dash));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static boolean deleteRecursively(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | RuntimeException e) {
            return false;
        }
        return !Files.exists(dir);
    }

    private static Path tempRoot() {
        String configured = System.getProperty(TMPDIR_PROPERTY);
        if (configured != null && !configured.isBlank()) {
            return Paths.get(configured);
        }
        return Paths.get(System.getProperty("java.io.tmpdir"));
    }

    // ---------------------------------------------------------------------------------------
    // Platform names (must match the <os>/<arch> folders that pom.xml bundles)

    /** Resource path of the bundled library for {@code os}/{@code arch}. */
    static String resourcePath(String os, String arch) {
        return RESOURCE_ROOT + "/" + os + "/" + arch + "/" + System.mapLibraryName(LIBRARY_NAME);
    }

    /** This JVM's {@code os.name} normalised: {@code linux}, {@code darwin}, {@code windows}, ... */
    static String platformOs() {
        return normalizeOs(System.getProperty("os.name", ""));
    }

    /** This JVM's {@code os.arch} normalised: {@code amd64}, {@code aarch64}, ... */
    static String platformArch() {
        return normalizeArch(System.getProperty("os.arch", ""));
    }

    static String normalizeOs(String osName) {
        String os = osName.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "");
        if (os.startsWith("linux")) {
            return "linux";
        }
        if (os.startsWith("mac") || os.startsWith("darwin") || os.startsWith("osx")) {
            return "darwin";
        }
        if (os.startsWith("windows")) {
            return "windows";
        }
        return os;
    }

    static String normalizeArch(String osArch) {
        String arch = osArch.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_]", "");
        switch (arch) {
            case "amd64":
            case "x8664":
            case "x86_64":
            case "x64":
                return "amd64";
            case "aarch64":
            case "arm64":
                return "aarch64";
            default:
                return arch;
        }
    }

    private static String platformDescription() {
        return "os.name="
                + System.getProperty("os.name")
                + ", os.arch="
                + System.getProperty("os.arch");
    }
}
