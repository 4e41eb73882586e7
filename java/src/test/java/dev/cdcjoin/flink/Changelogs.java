package dev.cdcjoin.flink;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Folding changelogs ({@code "+I[...]"} strings) into the multiset they materialize. */
final class Changelogs {

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

    private Changelogs() {}
}
