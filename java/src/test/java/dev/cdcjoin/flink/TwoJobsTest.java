package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.demo.UsersDomainsTrace;
import dev.cdcjoin.flink.nativelib.NativeLibrary;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two jobs, one after the other, in the same MiniCluster (one TaskManager JVM), each submitted with
 * the cdcjoin classes in a JAR attached to its JobGraph ({@code pipeline.jars}): Flink gives each
 * job its own child-first user-code class loader, which defines its own {@code NativeLibrary}; both
 * load the native library (each from its own extracted copy) and join correctly.
 */
@SuppressWarnings("try") // CloseableIterator#close may throw InterruptedException
class TwoJobsTest {

    static MiniCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        Configuration conf = MiniClusters.configuration();
        conf.set(CoreOptions.CLASSLOADER_RESOLVE_ORDER, "child-first");
        cluster =
                new MiniCluster(
                        new MiniClusterConfiguration.Builder()
                                .setConfiguration(conf)
                                .setNumTaskManagers(1)
                                .setNumSlotsPerTaskManager(4)
                                .build());
        cluster.start();
    }

    @AfterAll
    static void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    /**
     * A JAR of the built main classes (the native library included) and test classes, as a user
     * would submit the job's fat JAR.
     */
    static Path jobJar(Path dir) throws IOException {
        Path jar = dir.resolve("cdcjoin-job.jar");
        Set<String> seen = new HashSet<>();
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
            for (Class<?> fromDir : List.of(NativeLibrary.class, TwoJobsTest.class)) {
                Path root =
                        Paths.get(
                                fromDir.getProtectionDomain()
                                        .getCodeSource()
                                        .getLocation()
                                        .getPath());
                assertTrue(Files.isDirectory(root), "expected a classes directory: " + root);
                try (Stream<Path> files = Files.walk(root)) {
                    for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
                        String name = root.relativize(f).toString().replace('\\', '/');
                        if (seen.add(name)) {
                            out.putNextEntry(new JarEntry(name));
                            Files.copy(f, (OutputStream) out);
                            out.closeEntry();
                        }
                    }
                }
            }
        }
        assertTrue(
                seen.stream()
                        .anyMatch(
                                n ->
                                        n.startsWith("dev/cdcjoin/flink/nativelib/")
                                                && n.contains("libcdcjoin_jni")),
                "the native library is not in the job JAR");
        return jar;
    }

    /**
     * Passes rows on as strings and, once per subtask, says which class loader defined the cdcjoin
     * classes of this job and where its native library was loaded from.
     */
    static final class Describe extends RichFlatMapFunction<Row, String> {
        private static final long serialVersionUID = 1L;
        private transient boolean described;

        @Override
        public void flatMap(Row row, Collector<String> out) {
            if (!described) {
                described = true;
                ClassLoader loader = NativeLibrary.class.getClassLoader();
                out.collect(
                        "loader|"
                                + loader.getClass().getName()
                                + "@"
                                + Integer.toHexString(System.identityHashCode(loader))
                                + "|"
                                + NativeLibrary.isLoaded()
                                + "|"
                                + NativeLibrary.loadedFrom());
            }
            out.collect("row|" + row);
        }
    }

    /** What one job reported. */
    static final class JobReport {
        final Set<String> loaders;
        final Set<String> libraries;
        final List<String> rows;

        JobReport(Set<String> loaders, Set<String> libraries, List<String> rows) {
            this.loaders = loaders;
            this.libraries = libraries;
            this.rows = rows;
        }

        /** As a record prints itself (the assertions' messages). */
        @Override
        public String toString() {
            return "JobReport[loaders="
                    + loaders
                    + ", libraries="
                    + libraries
                    + ", rows="
                    + rows
                    + "]";
        }
    }

    static JobReport runJob(Path jar, long seed, JoinType type) throws Exception {
        StreamExecutionEnvironment env =
                new TestStreamEnvironment(
                        cluster,
                        new Configuration(),
                        2,
                        List.of(new org.apache.flink.core.fs.Path(jar.toUri())),
                        List.of());
        UsersDomainsTrace trace = UsersDomainsTrace.generate(seed, 1500, 100);
        List<String> users = new ArrayList<>();
        List<String> domains = new ArrayList<>();
        trace.events().forEach(e -> (e.users ? users : domains).add(e.json));
        CdcJoin join =
                CdcJoin.builder()
                        .left("users", UsersDomainsTrace.USERS, List.of("id"), List.of("id"))
                        .right(
                                "domains",
                                UsersDomainsTrace.DOMAINS,
                                List.of("user_id"),
                                List.of("id"))
                        .joinType(type)
                        .batchSize(64)
                        .build();
        DataStream<String> out =
                join.joinStrings(
                                env.fromData(users).setParallelism(1),
                                env.fromData(domains).setParallelism(1))
                        .rows()
                        .flatMap(new Describe());
        Set<String> loaders = new TreeSet<>();
        Set<String> libraries = new TreeSet<>();
        List<String> rows = new ArrayList<>();
        try (CloseableIterator<String> it = out.executeAndCollect("job with seed " + seed)) {
            it.forEachRemaining(
                    s -> {
                        String[] parts = s.split("\\|", 4);
                        if (parts[0].equals("loader")) {
                            loaders.add(parts[1]);
                            assertEquals("true", parts[2], s);
                            libraries.add(parts[3]);
                        } else {
                            rows.add(s.substring(4));
                        }
                    });
        }
        assertEquals(
                ReferenceJoin.usersDomains(trace, type),
                Changelogs.materialize(rows),
                "job with seed " + seed);
        return new JobReport(loaders, libraries, rows);
    }

    @Test
    void twoJobsWithUserClassLoadersBothLoadTheLibrary(@TempDir Path dir) throws Exception {
        Path jar = jobJar(dir);
        JobReport first = runJob(jar, 1, JoinType.LEFT);
        JobReport second = runJob(jar, 2, JoinType.FULL);
        for (JobReport r : List.of(first, second)) {
            // One job, one user class loader (shared by its subtasks), one library copy.
            assertEquals(1, r.loaders.size(), r.toString());
            assertEquals(1, r.libraries.size(), r.toString());
            String loader = r.loaders.iterator().next();
            assertTrue(loader.contains("ChildFirstClassLoader"), loader);
            assertNotEquals(
                    NativeLibrary.class.getClassLoader().getClass().getName()
                            + "@"
                            + Integer.toHexString(
                                    System.identityHashCode(NativeLibrary.class.getClassLoader())),
                    loader);
            assertTrue(r.rows.size() > 100, "rows: " + r.rows.size());
        }
        assertNotEquals(first.loaders, second.loaders, "each job has its own class loader");
        assertNotEquals(first.libraries, second.libraries, "each loader has its own copy");
    }
}
