package dev.cdcjoin.flink.nativelib;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Loader of, and entry points into, the native library {@code cdcjoin_jni} (Rust crate {@code
 * cdcjoin-jni}).
 *
 * <p>Call {@link #load()} before any native method, typically from an operator's {@code open()}. A
 * library file named by the system property {@value #PATH_PROPERTY} is loaded if set. Otherwise it
 * tries {@link System#loadLibrary(String)} so a library installed in Flink's {@code lib/} or on
 * {@code java.library.path} wins. Otherwise it extracts the copy bundled in the JAR at {@code
 * /dev/cdcjoin/flink/nativelib/<os>/<arch>/libcdcjoin_jni.so} into a fresh temporary directory and
 * loads it from there.
 *
 * <p>Whichever library is loaded must report (through {@link #version()}) the version the JAR was
 * built for, recorded at build time in {@value #PKGID_RESOURCE} (the crate's {@code cargo pkgid}).
 * A library of another version is refused with an {@link UnsatisfiedLinkError} naming both versions
 * and where it was found: a stale library left on {@code java.library.path} would otherwise be
 * bound to Java code whose native signatures and state formats it does not share.
 *
 * <p>Why a fresh directory per load: the JVM refuses to load one library path from two class
 * loaders, and Flink gives every job (and a TaskManager that lost all of a job's slots) a new
 * user-code class loader, each with its own copy of this class and so its own call to {@link
 * #load()}. Each copy is extracted to {@code <tmp>/cdcjoin-jni-<pid>-<random>/}, marked
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

    /**
     * System property naming a library file to load instead of searching {@code java.library.path}
     * and the JAR; its version is checked all the same.
     */
    public static final String PATH_PROPERTY = "cdcjoin.native.path";

    /** Classpath resource holding the {@code cargo pkgid} of the library the JAR was built for. */
    static final String PKGID_RESOURCE = "/dev/cdcjoin/flink/nativelib/cdcjoin_jni.pkgid";

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
     * @throws UnsatisfiedLinkError if the library is neither named by {@value #PATH_PROPERTY},
     *     installed ({@code java.library.path}) nor bundled for this platform, cannot be loaded, or
     *     is not of the JAR's version; the message names what was looked for, or both versions and
     *     where the library was found
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
     * Describes where the library was loaded from, for logs: {@code "java.library.path"}, or the
     * path of the file named by {@value #PATH_PROPERTY}, or the absolute path of the extracted
     * file.
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
        String expected = expectedVersion();
        String override = System.getProperty(PATH_PROPERTY);
        if (override != null && !override.isBlank()) {
            return loadOverride(Paths.get(override).toAbsolutePath(), expected);
        }
        UnsatisfiedLinkError notInstalled = loadInstalled();
        if (notInstalled == null) {
            requireVersion(expected, "java.library.path (" + foundOnLibraryPath() + ")");
            return "java.library.path";
        }
        return loadBundled(expected, notInstalled);
    }

    /**
     * Loads the library from {@code java.library.path}.
     *
     * @return {@code null} once loaded, else why not (not installed, or already loaded from that
     *     path by another class loader)
     */
    private static UnsatisfiedLinkError loadInstalled() {
        try {
            System.loadLibrary(LIBRARY_NAME);
            return null;
        } catch (UnsatisfiedLinkError e) {
            return e;
        }
    }

    /** Extracts the bundled copy, loads it and checks its version. */
    private static String loadBundled(String expected, UnsatisfiedLinkError fromLibraryPath) {
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
        requireVersion(expected, "the copy bundled in the JAR, extracted to " + file);
        return file.toString();
    }

    /** Loads the file named by {@value #PATH_PROPERTY} and checks its version. */
    private static String loadOverride(Path file, String expected) {
        try {
            System.load(file.toString());
        } catch (UnsatisfiedLinkError e) {
            UnsatisfiedLinkError error =
                    new UnsatisfiedLinkError(
                            "cdcjoin: cannot load the native library "
                                    + file
                                    + " named by -D"
                                    + PATH_PROPERTY
                                    + " ("
                                    + platformDescription()
                                    + "): "
                                    + e.getMessage());
            error.initCause(e);
            throw error;
        }
        requireVersion(expected, file + " (named by -D" + PATH_PROPERTY + ")");
        return file.toString();
    }

    /**
     * Fails unless the library just loaded reports version {@code expected}.
     *
     * @param where where the library was found, for the message
     */
    private static void requireVersion(String expected, String where) {
        String actual;
        try {
            actual = version();
        } catch (UnsatisfiedLinkError e) {
            actual = "unknown (it has no version(): " + e.getMessage() + ")";
        }
        checkVersion(expected, actual, where);
    }

    /** Throws an {@link UnsatisfiedLinkError} unless {@code actual} equals {@code expected}. */
    static void checkVersion(String expected, String actual, String where) {
        if (!expected.equals(actual)) {
            throw new UnsatisfiedLinkError(
                    "cdcjoin: the native library found at "
                            + where
                            + " is version "
                            + actual
                            + ", but this JAR needs version "
                            + expected
                            + ". Remove the stale library, or point -D"
                            + PATH_PROPERTY
                            + " at a "
                            + expected
                            + " build of "
                            + System.mapLibraryName(LIBRARY_NAME)
                            + ".");
        }
    }

    /** The version the JAR was built for, from {@value #PKGID_RESOURCE}. */
    static String expectedVersion() {
        try (InputStream in = NativeLibrary.class.getResourceAsStream(PKGID_RESOURCE)) {
            if (in == null) {
                throw new UnsatisfiedLinkError(
                        "cdcjoin: the JAR has no " + PKGID_RESOURCE + " (a broken build)");
            }
            return versionOfPkgid(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            UnsatisfiedLinkError error =
                    new UnsatisfiedLinkError("cdcjoin: cannot read " + PKGID_RESOURCE + ": " + e);
            error.initCause(e);
            throw error;
        }
    }

    /**
     * The version in a {@code cargo pkgid}: {@code path+file:///…/jni#cdcjoin-jni@0.1.0} or {@code
     * …#0.1.0}.
     */
    static String versionOfPkgid(String pkgid) {
        String id = pkgid.strip();
        int hash = id.lastIndexOf('#');
        String fragment = id.substring(hash + 1);
        String version = fragment.substring(fragment.lastIndexOf('@') + 1);
        if (hash < 0 || !version.matches("[0-9]+\\.[0-9]+\\.[0-9]+([-+][0-9A-Za-z.+-]*)?")) {
            throw new UnsatisfiedLinkError(
                    "cdcjoin: " + PKGID_RESOURCE + " holds no cargo package id: \"" + id + "\"");
        }
        return version;
    }

    /** The first {@code java.library.path} entry holding the library file, for messages. */
    private static String foundOnLibraryPath() {
        String name = System.mapLibraryName(LIBRARY_NAME);
        for (String dir : System.getProperty("java.library.path", "").split(File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isRegularFile(Paths.get(dir, name))) {
                return Paths.get(dir, name).toAbsolutePath().toString();
            }
        }
        return name + " on java.library.path=" + System.getProperty("java.library.path");
    }

    /**
     * Copies the bundled library for {@code os}/{@code arch} into a new directory {@code
     * cdcjoin-jni-<pid>-<random>} under {@code tempRoot}, marked delete-on-exit, after removing the
     * directories of dead processes there.
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

    /**
     * This JVM's {@code os.name} normalised: {@code linux}, {@code darwin}, {@code windows}, ...
     */
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
