package dev.cdcjoin.flink.nativelib;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.MiniClusters;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The native library loads and runs inside Flink tasks on a real MiniCluster. */
class MiniClusterSmokeTest {

    private static final int PARALLELISM = 2;

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.withSlots(PARALLELISM);

    /** Loads the library in open(), as an operator would, and tags each record with its version. */
    static final class NativeVersionMap extends RichMapFunction<Integer, String> {
        private static final long serialVersionUID = 1L;

        @Override
        public void open(OpenContext openContext) {
            NativeLibrary.load();
        }

        @Override
        public String map(Integer x) {
            return NativeLibrary.version() + ":" + x;
        }
    }

    /** Panics in Rust for every record. */
    static final class PanickingMap extends RichMapFunction<Integer, Integer> {
        private static final long serialVersionUID = 1L;

        @Override
        public void open(OpenContext openContext) {
            NativeLibrary.load();
        }

        @Override
        public Integer map(Integer x) {
            NativeLibrary.panicForTest();
            return x;
        }
    }

    @Test
    void nativeCallsRunInsideFlinkTasks() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(PARALLELISM);

        List<String> out = env.fromData(1, 2, 3).map(new NativeVersionMap()).executeAndCollect(10);

        String version = NativeLibraryTest.expectedCrateVersion();
        List<String> sorted = new ArrayList<>(out);
        sorted.sort(null);
        assertEquals(List.of(version + ":1", version + ":2", version + ":3"), sorted);
    }

    @Test
    void aRustPanicFailsTheJobNotTheCluster() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        Exception e =
                assertThrows(
                        Exception.class,
                        () -> env.fromData(1, 2, 3).map(new PanickingMap()).executeAndCollect(10));
        assertTrue(
                ExceptionUtils.findThrowableWithMessage(
                                e, "Rust panic in NativeLibrary.panicForTest")
                        .isPresent(),
                () -> ExceptionUtils.stringifyException(e));

        // The TaskManager (this JVM) survived: the cluster still runs jobs.
        assertTrue(MINI_CLUSTER.isRunning());
        StreamExecutionEnvironment again = StreamExecutionEnvironment.getExecutionEnvironment();
        List<String> out = again.fromData(7).map(new NativeVersionMap()).executeAndCollect(10);
        assertEquals(List.of(NativeLibraryTest.expectedCrateVersion() + ":7"), out);
    }
}
