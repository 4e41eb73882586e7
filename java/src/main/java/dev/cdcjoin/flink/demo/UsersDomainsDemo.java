package dev.cdcjoin.flink.demo;

import dev.cdcjoin.flink.BadRecordPolicy;
import dev.cdcjoin.flink.CdcJoin;
import dev.cdcjoin.flink.JoinType;
import dev.cdcjoin.flink.runtime.NativeJoinOperator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;

/**
 * The demo: joins a generated users/domains Debezium trace in an embedded Flink MiniCluster,
 * printing the changelog as it comes and a summary at the end.
 *
 * <pre>
 * mvn -q -B package -DskipTests exec:exec -Ddemo.args="--join-type LEFT --changes 20000"
 * </pre>
 *
 * Options: {@code --join-type INNER|LEFT|RIGHT|FULL} (default LEFT), {@code --changes N} (default
 * 20000), {@code --users N} (user id space, default 1000), {@code --seed N}, {@code --parallelism
 * N} (default 2), {@code --print N} (rows printed, default 50; -1 for all).
 */
public final class UsersDomainsDemo {

    private UsersDomainsDemo() {}

    /** Parsed command line. */
    static final class Options {
        JoinType joinType = JoinType.LEFT;
        int changes = 20_000;
        int users = 1_000;
        long seed = 1;
        int parallelism = 2;
        long print = 50;

        static Options parse(String[] given) {
            // Maven passes -Ddemo.args as one argument: split on blanks.
            String[] args = String.join(" ", given).trim().split("\\s+");
            if (args.length == 1 && args[0].isEmpty()) {
                args = new String[0];
            }
            Options o = new Options();
            for (int i = 0; i + 1 < args.length; i += 2) {
                String v = args[i + 1];
                switch (args[i]) {
                    case "--join-type":
                        o.joinType = JoinType.valueOf(v.toUpperCase(Locale.ROOT));
                        break;
                    case "--changes":
                        o.changes = Integer.parseInt(v);
                        break;
                    case "--users":
                        o.users = Integer.parseInt(v);
                        break;
                    case "--seed":
                        o.seed = Long.parseLong(v);
                        break;
                    case "--parallelism":
                        o.parallelism = Integer.parseInt(v);
                        break;
                    case "--print":
                        o.print = Long.parseLong(v);
                        break;
                    default:
                        throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (args.length % 2 != 0) {
                throw new IllegalArgumentException("options come in pairs: --name value");
            }
            return o;
        }
    }

    /** Picks one table's messages out of the trace. */
    static final class Pick implements MapFunction<Long, String> {
        private static final long serialVersionUID = 1L;
        private final String[] json;

        Pick(List<String> json) {
            this.json = json.toArray(new String[0]);
        }

        @Override
        public String map(Long i) {
            return json[i.intValue()];
        }
    }

    /**
     * Runs the demo.
     *
     * @param args options (see the class documentation)
     * @throws Exception if the job fails
     */
    @SuppressWarnings("try") // CloseableIterator#close may throw InterruptedException
    public static void main(String[] args) throws Exception {
        Options o = Options.parse(args);
        UsersDomainsTrace trace = UsersDomainsTrace.generate(o.seed, o.changes, o.users);
        List<String> users = new ArrayList<>();
        List<String> domains = new ArrayList<>();
        trace.events().forEach(e -> (e.users ? users : domains).add(e.json));
        System.out.printf("cdcjoin demo: %s JOIN of users (%d messages) and domains (%d messages),"
                + " parallelism %d%n", o.joinType, users.size(), domains.size(), o.parallelism);

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(o.parallelism);
        CdcJoin join = CdcJoin.builder()
                .left("users", UsersDomainsTrace.USERS, List.of("id"), List.of("id"))
                .right("domains", UsersDomainsTrace.DOMAINS, List.of("user_id"), List.of("id"))
                .joinType(o.joinType)
                .badRecordPolicy(BadRecordPolicy.SIDE_OUTPUT)
                .maxFlushDelay(Duration.ofMillis(50))
                .build();
        CdcJoin.Result result = join.joinStrings(source(env, users), source(env, domains));
        CloseableIterator<Row> rows = result.rows().collectAsync();
        long start = System.nanoTime();
        JobClient client = env.executeAsync("cdcjoin users/domains demo");
        long out = 0;
        try (CloseableIterator<Row> it = rows) {
            while (it.hasNext()) {
                Row row = it.next();
                if (o.print < 0 || out < o.print) {
                    System.out.println(row);
                } else if (out == o.print) {
                    System.out.println("... (use --print -1 to see every row)");
                }
                out++;
            }
        }
        JobExecutionResult done = client.getJobExecutionResult().get();
        summary(trace.events().size(), out, System.nanoTime() - start, done);
    }

    private static DataStream<String> source(StreamExecutionEnvironment env, List<String> json) {
        return env.fromSequence(0, json.size() - 1).setParallelism(1)
                .map(new Pick(json)).setParallelism(1);
    }

    private static void summary(long in, long out, long nanos, JobExecutionResult r) {
        double seconds = nanos / 1e9;
        System.out.println("---- summary ----");
        System.out.printf("events in:            %,d%n", in);
        System.out.printf("rows out:             %,d%n", out);
        System.out.printf("wall time:            %.2f s (job start included)%n", seconds);
        System.out.printf("throughput:           %,.0f events/s%n", in / seconds);
        System.out.printf("native state rows:    %,d%n", acc(r, NativeJoinOperator.ACC_STATE_ROWS));
        System.out.printf("native state bytes:   %,d heap (%,d bytes of encoded rows)%n",
                acc(r, NativeJoinOperator.ACC_STATE_HEAP_BYTES),
                acc(r, NativeJoinOperator.ACC_STATE_ROW_BYTES));
        System.out.printf("absent retractions:   %,d%n",
                acc(r, NativeJoinOperator.ACC_ABSENT_RETRACTIONS));
    }

    private static long acc(JobExecutionResult r, String name) {
        Object v = r.getAccumulatorResult(name);
        return v instanceof Long ? (Long) v : 0L;
    }
}
