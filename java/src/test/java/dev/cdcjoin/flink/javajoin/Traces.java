package dev.cdcjoin.flink.javajoin;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cdcjoin.flink.DebeziumFormat;
import dev.cdcjoin.flink.DebeziumFormat.DecimalHandling;
import dev.cdcjoin.flink.JoinSpec;
import dev.cdcjoin.flink.JoinType;
import dev.cdcjoin.flink.SideSpec;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import dev.cdcjoin.flink.javajoin.Support.Event;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.apache.flink.types.Row;

/**
 * Deterministic random Debezium traces of the seeds' users/domains shape, and a reference join of
 * their final tables.
 *
 * <p>users(id INT NOT NULL, name STRING, balance DECIMAL(10, 2)), domains(id INT NOT NULL, user_id
 * INT, domain STRING). The trace has snapshot reads, inserts, updates of non-key columns, domains
 * moving to another user (join-key change), domain renumbering (primary-key change), deletes
 * (sometimes followed by a tombstone), domains of users that do not exist (yet) and with a null
 * user, and schema-wrapped envelopes. Users and domains come and go, ids are reused.
 */
final class Traces {

    /** Which declaration of the two tables a trace is joined with. */
    enum Keys {
        /** users: primary key id (join key contains it); domains: primary key id. */
        PRIMARY_KEYS,
        /**
         * No primary keys; domains declared as (user_id, domain) only, so duplicate rows occur (the
         * multiset layout on both sides).
         */
        NO_PRIMARY_KEYS
    }

    static final CdcSchema USERS =
            CdcSchema.of(
                    Column.notNull("id", "INT"),
                    Column.nullable("name", "STRING"),
                    Column.nullable("balance", "DECIMAL(10, 2)"));
    static final CdcSchema DOMAINS =
            CdcSchema.of(
                    Column.notNull("id", "INT"),
                    Column.nullable("user_id", "INT"),
                    Column.nullable("domain", "STRING"));
    static final CdcSchema DOMAINS_NO_ID =
            CdcSchema.of(Column.nullable("user_id", "INT"), Column.nullable("domain", "STRING"));

    static JoinSpec definition(Keys keys, JoinType type) {
        boolean pk = keys == Keys.PRIMARY_KEYS;
        return new JoinSpec(
                new SideSpec(
                        "users",
                        USERS,
                        List.of("id"),
                        pk ? List.of("id") : null,
                        null,
                        DebeziumFormat.defaults().withDecimalHandling(DecimalHandling.PRECISE)),
                new SideSpec(
                        "domains",
                        pk ? DOMAINS : DOMAINS_NO_ID,
                        List.of("user_id"),
                        pk ? List.of("id") : null,
                        null),
                type,
                false,
                null,
                null);
    }

    /** A user row: id, name, balance. */
    static final class User {
        final int id;
        final String name;
        final BigDecimal balance;

        User(int id, String name, BigDecimal balance) {
            this.id = id;
            this.name = name;
            this.balance = balance;
        }
    }

    /** A domain row: id, user_id (nullable), domain. */
    static final class Domain {
        final int id;
        final Integer userId;
        final String domain;

        Domain(int id, Integer userId, String domain) {
            this.id = id;
            this.userId = userId;
            this.domain = domain;
        }
    }

    /** A trace and the tables it leaves behind. */
    static final class Trace {
        final List<Event> events = new ArrayList<>();
        final Map<Integer, User> users = new TreeMap<>();
        final Map<Integer, Domain> domains = new TreeMap<>();

        /** The materialized result of joining the final tables: row string → multiplicity. */
        Map<String, Integer> expected(Keys keys, JoinType type) {
            boolean pk = keys == Keys.PRIMARY_KEYS;
            List<Row> out = new ArrayList<>();
            Map<Integer, Boolean> userMatched = new LinkedHashMap<>();
            for (User u : users.values()) {
                userMatched.put(u.id, false);
            }
            for (Domain d : domains.values()) {
                Object[] dCols =
                        pk
                                ? new Object[] {d.id, d.userId, d.domain}
                                : new Object[] {d.userId, d.domain};
                User u = d.userId == null ? null : users.get(d.userId);
                if (u != null) {
                    userMatched.put(u.id, true);
                    out.add(concat(new Object[] {u.id, u.name, u.balance}, dCols));
                } else if (type == JoinType.RIGHT || type == JoinType.FULL) {
                    out.add(concat(new Object[] {null, null, null}, dCols));
                }
            }
            if (type == JoinType.LEFT || type == JoinType.FULL) {
                for (User u : users.values()) {
                    if (!userMatched.get(u.id)) {
                        out.add(
                                concat(
                                        new Object[] {u.id, u.name, u.balance},
                                        pk
                                                ? new Object[] {null, null, null}
                                                : new Object[] {null, null}));
                    }
                }
            }
            return Support.multiset(out);
        }

        private static Row concat(Object[] a, Object[] b) {
            Object[] all = new Object[a.length + b.length];
            System.arraycopy(a, 0, all, 0, a.length);
            System.arraycopy(b, 0, all, a.length, b.length);
            return Row.of(all);
        }
    }

    /**
     * A trace of {@code steps} changes over user ids {@code [0, userIds)} and domain ids {@code [0,
     * domainIds)}; the first {@code snapshot} steps are snapshot reads.
     */
    static Trace generate(long seed, int steps, int userIds, int domainIds, int snapshot) {
        return generate(seed, steps, userIds, domainIds, snapshot, false);
    }

    /**
     * As {@link #generate(long, int, int, int, int)}, with {@code redeliveries}: rows that exist
     * are sent again as {@code r} (an incremental snapshot, or Kafka Connect replaying after a
     * restart) or {@code c} with other non-key values (a replacement), which only a side with a
     * primary key can tell from a new row.
     */
    static Trace generate(
            long seed, int steps, int userIds, int domainIds, int snapshot, boolean redeliveries) {
        Random rnd = new Random(seed);
        Trace t = new Trace();
        String[] names = {"a.com", "b.org", "c.net", "d.io"};
        for (int step = 0; step < steps; step++) {
            boolean reading = step < snapshot;
            if (redeliveries && rnd.nextInt(8) == 0) {
                redeliver(rnd, t, names);
                continue;
            }
            int choice = reading ? rnd.nextInt(2) * 50 : rnd.nextInt(100);
            if (choice < 20) { // a user appears
                int id = rnd.nextInt(userIds);
                if (t.users.containsKey(id)) {
                    continue;
                }
                User u = new User(id, "user" + rnd.nextInt(1000), balance(rnd));
                t.users.put(id, u);
                t.events.add(event(rnd, true, null, user(u), reading ? "r" : "c"));
            } else if (choice < 30) { // a user changes name or balance
                User old = pick(rnd, t.users);
                if (old == null) {
                    continue;
                }
                User u =
                        rnd.nextBoolean()
                                ? new User(old.id, "user" + rnd.nextInt(1000), old.balance)
                                : new User(old.id, old.name, balance(rnd));
                t.users.put(u.id, u);
                t.events.add(event(rnd, true, user(old), user(u), "u"));
            } else if (choice < 37) { // a user goes
                User old = pick(rnd, t.users);
                if (old == null) {
                    continue;
                }
                t.users.remove(old.id);
                t.events.add(event(rnd, true, user(old), null, "d"));
                if (rnd.nextInt(3) == 0) {
                    t.events.add(new Event(true, new byte[0]));
                }
            } else if (choice < 70) { // a domain appears
                int id = rnd.nextInt(domainIds);
                if (t.domains.containsKey(id)) {
                    continue;
                }
                Domain d = new Domain(id, userId(rnd, userIds), names[rnd.nextInt(names.length)]);
                t.domains.put(id, d);
                t.events.add(event(rnd, false, null, domain(d), reading ? "r" : "c"));
            } else if (choice < 78) { // a domain is renamed
                Domain old = pick(rnd, t.domains);
                if (old == null) {
                    continue;
                }
                Domain d = new Domain(old.id, old.userId, names[rnd.nextInt(names.length)]);
                t.domains.put(d.id, d);
                t.events.add(event(rnd, false, domain(old), domain(d), "u"));
            } else if (choice < 88) { // a domain moves to another user
                Domain old = pick(rnd, t.domains);
                if (old == null) {
                    continue;
                }
                Domain d = new Domain(old.id, userId(rnd, userIds), old.domain);
                t.domains.put(d.id, d);
                t.events.add(event(rnd, false, domain(old), domain(d), "u"));
            } else if (choice < 93) { // a domain is renumbered
                Domain old = pick(rnd, t.domains);
                int id = rnd.nextInt(domainIds);
                if (old == null || t.domains.containsKey(id)) {
                    continue;
                }
                Domain d = new Domain(id, old.userId, old.domain);
                t.domains.remove(old.id);
                t.domains.put(id, d);
                t.events.add(event(rnd, false, domain(old), domain(d), "u"));
            } else { // a domain goes
                Domain old = pick(rnd, t.domains);
                if (old == null) {
                    continue;
                }
                t.domains.remove(old.id);
                t.events.add(event(rnd, false, domain(old), null, "d"));
                if (rnd.nextInt(3) == 0) {
                    t.events.add(new Event(false, new byte[0]));
                }
            }
        }
        return t;
    }

    /**
     * Sends a stored user or domain again: the same row as {@code r}, or a new version as {@code
     * c}.
     */
    private static void redeliver(Random rnd, Trace t, String[] names) {
        boolean same = rnd.nextBoolean();
        String op = same ? "r" : "c";
        if (rnd.nextBoolean()) {
            User old = pick(rnd, t.users);
            if (old != null) {
                User u = same ? old : new User(old.id, "user" + rnd.nextInt(1000), balance(rnd));
                t.users.put(u.id, u);
                t.events.add(event(rnd, true, null, user(u), op));
            }
        } else {
            Domain old = pick(rnd, t.domains);
            if (old != null) { // the same join key: a replacement never moves a row
                Domain d =
                        same
                                ? old
                                : new Domain(old.id, old.userId, names[rnd.nextInt(names.length)]);
                t.domains.put(d.id, d);
                t.events.add(event(rnd, false, null, domain(d), op));
            }
        }
    }

    private static BigDecimal balance(Random rnd) {
        return BigDecimal.valueOf(rnd.nextInt(2_000_000) - 1_000_000, 2);
    }

    private static Integer userId(Random rnd, int userIds) {
        return rnd.nextInt(20) == 0 ? null : rnd.nextInt(userIds + userIds / 5); // some never exist
    }

    private static <T> T pick(Random rnd, Map<Integer, T> table) {
        if (table.isEmpty()) {
            return null;
        }
        int skip = rnd.nextInt(table.size());
        for (T v : table.values()) {
            if (skip-- == 0) {
                return v;
            }
        }
        throw new AssertionError();
    }

    private static ObjectNode user(User u) {
        ObjectNode n = Support.JSON.createObjectNode();
        n.put("id", u.id);
        n.put("name", u.name);
        // Debezium's precise mode (the users topic's declared format): base64 of the unscaled
        // value.
        n.put(
                "balance",
                Base64.getEncoder().encodeToString(u.balance.unscaledValue().toByteArray()));
        return n;
    }

    private static ObjectNode domain(Domain d) {
        ObjectNode n = Support.JSON.createObjectNode();
        n.put("domain", d.domain); // columns need not come in table order
        n.put("id", d.id);
        if (d.userId == null) {
            n.putNull("user_id");
        } else {
            n.put("user_id", d.userId);
        }
        return n;
    }

    private static Event event(
            Random rnd, boolean left, ObjectNode before, ObjectNode after, String op) {
        ObjectNode env = Support.JSON.createObjectNode();
        env.set("before", before);
        env.set("after", after);
        ObjectNode source = env.putObject("source");
        source.put("version", "2.7.3.Final");
        source.put("connector", "postgresql");
        source.put("db", "shop");
        source.put("table", left ? "users" : "domains");
        source.put("lsn", rnd.nextInt(1 << 30));
        env.put("op", op);
        env.put("ts_ms", 1706696130123L);
        ObjectNode message = env;
        if (rnd.nextInt(5) == 0) {
            message = Support.JSON.createObjectNode();
            message.putObject("schema").put("type", "struct").put("name", "shop.Envelope");
            message.set("payload", env);
        }
        try {
            return new Event(left, Support.JSON.writeValueAsBytes(message));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
