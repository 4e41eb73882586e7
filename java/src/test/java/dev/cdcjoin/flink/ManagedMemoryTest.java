package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The native state is accounted as Flink managed memory: on a TaskManager whose slot has less
 * managed memory than the state needs, the job fails saying so and what to configure, instead of
 * using memory Flink does not know about. (Every other MiniCluster test runs with the default
 * managed memory, so there the accounting reserves and releases without failing.)
 */
class ManagedMemoryTest {

    private static final MemorySize SLOT_MANAGED_MEMORY = MemorySize.parse("2m");

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setConfiguration(tinyManagedMemory())
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(1)
                            .build());

    private static Configuration tinyManagedMemory() {
        Configuration c = MiniClusters.configuration();
        c.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, SLOT_MANAGED_MEMORY);
        return c;
    }

    @Test
    void aStateBeyondTheManagedMemoryFailsTheJobSayingWhatToConfigure() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        List<String> users = new ArrayList<>();
        // ~60k rows of ~70 bytes each in state: more than 2 MiB. An inner join with an empty
        // right side emits nothing, so collecting waits for the job to end.
        for (int i = 0; i < 60_000; i++) {
            users.add(CdcJoinJobTest.user("c", i, "user number " + i));
        }
        CdcJoin.Result result =
                CdcJoinJobTest.usersDomains()
                        .joinType(JoinType.INNER)
                        .build()
                        .joinStrings(env.fromData(users), env.fromData(List.of("null")));
        Exception e = assertThrows(Exception.class, () -> result.rows().executeAndCollect(1));
        String chain = ExceptionUtils.stringifyException(e);
        assertTrue(chain.contains("the native join state needs"), chain);
        assertTrue(chain.contains("more than the 2.0 MiB of Flink managed memory"), chain);
        assertTrue(chain.contains("taskmanager.memory.managed.size"), chain);
        // The failed job released its slot (and its managed memory) on a task manager still up.
        MiniClusters.awaitTaskManagerWithAllSlotsFree(MINI_CLUSTER, Duration.ofSeconds(30));
    }
}
