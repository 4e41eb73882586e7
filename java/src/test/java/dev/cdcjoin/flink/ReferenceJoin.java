package dev.cdcjoin.flink;

import dev.cdcjoin.flink.demo.UsersDomainsTrace;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/** The expected materialized join of a trace's final tables, computed directly. */
final class ReferenceJoin {

    static Map<String, Integer> usersDomains(UsersDomainsTrace trace, JoinType type) {
        Map<String, Integer> rows = new TreeMap<>();
        Map<Long, String> users = trace.finalUsers();
        Map<Long, Object[]> domains = trace.finalDomains();
        for (Map.Entry<Long, String> u : users.entrySet()) {
            boolean matched = false;
            for (Map.Entry<Long, Object[]> d : domains.entrySet()) {
                if (Objects.equals(d.getValue()[0], u.getKey())) {
                    matched = true;
                    add(rows, u.getKey(), u.getValue(), d.getKey(), d.getValue());
                }
            }
            if (!matched && (type == JoinType.LEFT || type == JoinType.FULL)) {
                add(rows, u.getKey(), u.getValue(), null, null);
            }
        }
        if (type == JoinType.RIGHT || type == JoinType.FULL) {
            for (Map.Entry<Long, Object[]> d : domains.entrySet()) {
                if (!users.containsKey((Long) d.getValue()[0])) {
                    add(rows, null, null, d.getKey(), d.getValue());
                }
            }
        }
        return rows;
    }

    private static void add(
            Map<String, Integer> rows, Long uid, String name, Long did, Object[] d) {
        String row =
                "["
                        + uid
                        + ", "
                        + name
                        + ", "
                        + did
                        + ", "
                        + (d == null ? null : d[0])
                        + ", "
                        + (d == null ? null : d[1])
                        + "]";
        rows.merge(row, 1, Integer::sum);
    }

    private ReferenceJoin() {}
}
