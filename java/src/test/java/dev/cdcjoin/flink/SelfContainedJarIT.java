package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.demo.UsersDomainsTrace;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Test;

/**
 * The packaged JAR needs nothing beyond Flink: on a classpath of the JAR, Flink and its own
 * dependencies, with no Jackson other than Flink's relocated copy (as when the JAR sits in Flink's
 * {@code lib/} and the job's JAR does not bring Jackson), both engines run a join. Runs in a child
 * JVM on the JAR {@code mvn package} built (failsafe, in {@code mvn verify}).
 */
@SuppressWarnings("try") // CloseableIterator#close may throw InterruptedException
class SelfContainedJarIT {

    /** Entry point of the child JVM: a FULL join of a small trace with each engine. */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            try {
                Class.forName("com.fasterxml.jackson.core.JsonFactory");
                System.out.println("jackson=present");
            } catch (ClassNotFoundException e) {
                System.out.println("jackson=absent");
            }
            UsersDomainsTrace trace = UsersDomainsTrace.generate(3, 300, 30);
            for (Engine engine : Engine.values()) {
                boolean same =
                        ReferenceJoin.usersDomains(trace, JoinType.FULL)
                                .equals(Changelogs.materialize(run(trace, engine)));
                System.out.println("engine=" + engine + " " + (same ? "ok" : "wrong"));
            }
        }

        static List<String> run(UsersDomainsTrace trace, Engine engine) throws Exception {
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
            env.setParallelism(1);
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
                            .joinType(JoinType.FULL)
                            .engine(engine)
                            .build();
            List<String> changelog = new ArrayList<>();
            try (CloseableIterator<String> it =
                    join.joinStrings(env.fromData(users), env.fromData(domains))
                            .rows()
                            .map(Object::toString)
                            .executeAndCollect()) {
                it.forEachRemaining(changelog::add);
            }
            return changelog;
        }
    }

    /** The child's classpath: the JAR, then this JVM's without the project's classes or Jackson. */
    static String classpath(Path jar) {
        Path classes = jar.resolveSibling("classes");
        List<String> entries = new ArrayList<>(List.of(jar.toString()));
        Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> !Paths.get(e).equals(jar) && !Paths.get(e).equals(classes))
                .filter(e -> !e.contains("/com/fasterxml/jackson/"))
                .forEach(entries::add);
        return entries.stream().collect(Collectors.joining(File.pathSeparator));
    }

    @Test
    void bothEnginesRunWithoutJacksonOnTheClasspath() throws Exception {
        Path jar = Paths.get(System.getProperty("cdcjoin.jar"));
        assertTrue(Files.isRegularFile(jar), "no packaged JAR at " + jar);
        Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
        Process p =
                new ProcessBuilder(
                                java.toString(),
                                "-cp",
                                classpath(jar),
                                "-Dcdcjoin.test.log=" + jar.resolveSibling("flink-it-child.log"),
                                Child.class.getName())
                        .redirectErrorStream(true)
                        .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(5, TimeUnit.MINUTES), "child JVM timed out");
        assertEquals(0, p.exitValue(), out);
        List<String> lines =
                out.lines()
                        .filter(l -> l.startsWith("jackson=") || l.startsWith("engine="))
                        .collect(Collectors.toList());
        assertEquals(List.of("jackson=absent", "engine=NATIVE ok", "engine=JAVA ok"), lines, out);
    }
}
