package dev.cdcjoin.flink;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;

/**
 * Changelogs ({@code "+I[...]"} strings): folding them into the multiset they materialize, and
 * collecting those of several joins run in one job.
 */
public final class Changelogs {

    /**
     * The rows a changelog leaves, with multiplicities; retracting an absent row is an error.
     *
     * @param changelog rows as {@code Row#toString}
     * @return row body ({@code [...]}) to count
     */
    static Map<String, Integer> materialize(List<String> changelog) {
        Map<String, Integer> rows = new TreeMap<>();
        List<String> problems = new ArrayList<>();
        for (String change : changelog) {
            String kind = change.substring(0, 2);
            String body = change.substring(2);
            boolean add = kind.equals("+I") || kind.equals("+U");
            int n = rows.getOrDefault(body, 0) + (add ? 1 : -1);
            if (n < 0) {
                problems.add("retraction of absent row: " + change);
            }
            if (n == 0) {
                rows.remove(body);
            } else {
                rows.put(body, n);
            }
        }
        if (!problems.isEmpty()) {
            throw new AssertionError(problems + " in changelog " + changelog);
        }
        return rows;
    }

    /** Prefixes each row with its join type ({@code "INNER|+I[...]"}): several joins, one job. */
    public static final class Tag implements MapFunction<Row, String> {
        private static final long serialVersionUID = 1L;
        private final JoinType type;

        /**
         * A tagger.
         *
         * @param type the join type of the rows it maps
         */
        public Tag(JoinType type) {
            this.type = type;
        }

        @Override
        public String map(Row row) {
            return type + "|" + row;
        }
    }

    /**
     * Runs the job of a stream of {@link Tag}ged rows and splits its output by join type.
     *
     * @param tagged the union of the joins' tagged rows
     * @param jobName the job's name
     * @return the changelog of each join type, in emission order (empty if it emitted nothing)
     * @throws Exception if the job fails
     */
    @SuppressWarnings("try") // CloseableIterator#close may throw InterruptedException
    public static Map<JoinType, List<String>> collectByType(
            DataStream<String> tagged, String jobName) throws Exception {
        Map<JoinType, List<String>> out = new EnumMap<>(JoinType.class);
        for (JoinType type : JoinType.values()) {
            out.put(type, new ArrayList<>());
        }
        try (CloseableIterator<String> it = tagged.executeAndCollect(jobName)) {
            it.forEachRemaining(
                    s -> {
                        int bar = s.indexOf('|');
                        out.get(JoinType.valueOf(s.substring(0, bar))).add(s.substring(bar + 1));
                    });
        }
        return out;
    }

    private Changelogs() {}
}
