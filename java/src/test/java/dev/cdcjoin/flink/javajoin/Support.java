package dev.cdcjoin.flink.javajoin;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.cdcjoin.flink.JoinSpec;
import dev.cdcjoin.flink.JoinType;
import dev.cdcjoin.flink.SideSpec;
import dev.cdcjoin.flink.TestVectors;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.flink.api.common.functions.FilterFunction;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.typeutils.EitherTypeInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.types.Either;
import org.apache.flink.types.Row;

/** Shared test helpers: the shared vectors as bytes, job inputs, changelog materialization. */
final class Support {

    static final ObjectMapper JSON = new ObjectMapper();

    static final TypeInformation<byte[]> BYTES =
            PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO;

    static final TypeInformation<Either<byte[], byte[]>> EITHER_BYTES =
            new EitherTypeInfo<>(BYTES, BYTES);

    private Support() {}

    /**
     * The Java engine's job over two streams of Debezium JSON, as {@code CdcJoin} with {@code
     * Engine.JAVA} builds it: each decoded, then keyed and joined.
     */
    static <T> SingleOutputStreamOperator<Row> join(
            JavaJoin join, DataStream<T> left, DataStream<T> right) {
        return join.joinChanges(join.decodeLeft(left), join.decodeRight(right));
    }

    /** The Java engine's job over one stream of both tables' messages, joined in its order. */
    static SingleOutputStreamOperator<Row> joinInOrder(
            JavaJoin join, DataStream<Either<byte[], byte[]>> messages) {
        return join.joinChangesInOrder(join.decodeInOrder(messages));
    }

    /** One message of a trace: which table, and its bytes (empty for a tombstone). */
    static final class Event {
        final boolean left;
        final byte[] json;

        Event(boolean left, byte[] json) {
            this.left = left;
            this.json = json;
        }

        Either<byte[], byte[]> either() {
            return left ? Either.Left(json) : Either.Right(json);
        }
    }

    /** A shared test vector ({@link TestVectors}) with its messages as bytes. */
    static final class Vector {
        final String file;
        final SideSpec left;
        final SideSpec right;
        final List<Event> events = new ArrayList<>();
        final Map<JoinType, List<String>> expected;

        Vector(TestVectors.Vector v) {
            this.file = v.file;
            this.left = v.left;
            this.right = v.right;
            for (String e : v.events) {
                String json = e.substring(2);
                byte[] bytes =
                        json.equals("null") ? new byte[0] : json.getBytes(StandardCharsets.UTF_8);
                events.add(new Event(e.startsWith("L|"), bytes));
            }
            this.expected = v.expected;
        }

        JoinSpec definition(JoinType type) {
            return new JoinSpec(left, right, type, false, null, null);
        }

        List<Either<byte[], byte[]>> messages() {
            return events.stream().map(Event::either).collect(Collectors.toList());
        }

        @Override
        public String toString() {
            return file;
        }
    }

    static List<Vector> vectors() throws IOException {
        return TestVectors.all().stream().map(Vector::new).collect(Collectors.toList());
    }

    /** An environment of a parallelism and state backend ({@code hashmap} or {@code rocksdb}). */
    static StreamExecutionEnvironment env(int parallelism, String backend) {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, backend);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(parallelism);
        return env;
    }

    /** One table's messages of a mixed stream, in their order (picked at parallelism 1). */
    static DataStream<byte[]> side(DataStream<Either<byte[], byte[]>> messages, boolean left) {
        return messages.filter(new PickSide(left))
                .setParallelism(1)
                .map(new Unwrap())
                .returns(BYTES)
                .setParallelism(1);
    }

    /**
     * Applies a changelog ({@code +I}/{@code +U} add one, {@code -U}/{@code -D} remove one) and
     * returns the resulting multiset of rows; fails if a row would go negative.
     */
    static Map<String, Integer> materialize(List<String> changelog) {
        Map<String, Integer> rows = new TreeMap<>();
        for (String change : changelog) {
            String kind = change.substring(0, 2);
            String row = change.substring(2);
            int delta = kind.equals("+I") || kind.equals("+U") ? 1 : -1;
            int n = rows.getOrDefault(row, 0) + delta;
            if (n < 0) {
                throw new AssertionError("retraction of a row not in the result: " + change);
            }
            if (n == 0) {
                rows.remove(row);
            } else {
                rows.put(row, n);
            }
        }
        return rows;
    }

    /** A multiset of row strings ({@code [..]}, no kind) from rows. */
    static Map<String, Integer> multiset(List<Row> rows) {
        Map<String, Integer> out = new TreeMap<>();
        for (Row r : rows) {
            out.merge(r.toString().substring(2), 1, Integer::sum);
        }
        return out;
    }

    /** Keeps one side's messages of a mixed stream. */
    static final class PickSide implements FilterFunction<Either<byte[], byte[]>> {
        private static final long serialVersionUID = 1L;
        private final boolean left;

        PickSide(boolean left) {
            this.left = left;
        }

        @Override
        public boolean filter(Either<byte[], byte[]> e) {
            return e.isLeft() == left;
        }
    }

    /** Unwraps a message of a mixed stream. */
    static final class Unwrap implements MapFunction<Either<byte[], byte[]>, byte[]> {
        private static final long serialVersionUID = 1L;

        @Override
        public byte[] map(Either<byte[], byte[]> e) {
            return e.isLeft() ? e.left() : e.right();
        }
    }
}
