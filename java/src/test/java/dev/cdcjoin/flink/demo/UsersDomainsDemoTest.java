package dev.cdcjoin.flink.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.JoinType;
import dev.cdcjoin.flink.MiniClusters;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The demo: its options, its Kafka sources (without a broker), and a run on the built-in trace. */
class UsersDomainsDemoTest {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withSlots(2);

    @Test
    void parsesTheKafkaOptions() {
        UsersDomainsDemo.Options o =
                UsersDomainsDemo.Options.parse(
                        new String[] {
                            "--join-type full --kafka-bootstrap localhost:9092 --users-topic shop.public.users"
                                    + " --domains-topic shop.public.domains --kafka-group g1 --follow true"
                        });
        assertEquals(JoinType.FULL, o.joinType);
        assertEquals("localhost:9092", o.kafkaBootstrap);
        assertEquals("shop.public.users", o.usersTopic);
        assertEquals("shop.public.domains", o.domainsTopic);
        assertEquals("g1", o.kafkaGroup);
        assertTrue(o.follow);
        UsersDomainsDemo.Options defaults = UsersDomainsDemo.Options.parse(new String[0]);
        assertNull(defaults.kafkaBootstrap);
        assertEquals("users", defaults.usersTopic);
        assertEquals("domains", defaults.domainsTopic);
        assertThrows(
                IllegalArgumentException.class,
                () -> UsersDomainsDemo.Options.parse(new String[] {"--kafka-bootstrap"}));
        assertThrows(
                IllegalArgumentException.class,
                () -> UsersDomainsDemo.Options.parse(new String[] {"--kafka x"}));
    }

    @Test
    void kafkaSourcesAreBoundedUnlessFollowing() {
        UsersDomainsDemo.Options o =
                UsersDomainsDemo.Options.parse(new String[] {"--kafka-bootstrap localhost:9092"});
        assertEquals(
                Boundedness.BOUNDED, UsersDomainsDemo.kafkaSource(o, "users").getBoundedness());
        o.follow = true;
        assertEquals(
                Boundedness.CONTINUOUS_UNBOUNDED,
                UsersDomainsDemo.kafkaSource(o, "users").getBoundedness());
    }

    @Test
    void runsOnTheBuiltInTrace() throws Exception {
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream old = System.out;
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            UsersDomainsDemo.main(
                    new String[] {"--join-type LEFT --changes 500 --users 50 --print 5"});
        } finally {
            System.setOut(old);
        }
        String text = captured.toString(StandardCharsets.UTF_8);
        assertTrue(text.startsWith("cdcjoin demo: LEFT JOIN of users"), text);
        assertTrue(text.contains("---- summary ----"), text);
        assertTrue(text.contains("... (use --print -1 to see every row)"), text);
        assertTrue(text.lines().anyMatch(l -> l.startsWith("+I[")), text);
    }
}
