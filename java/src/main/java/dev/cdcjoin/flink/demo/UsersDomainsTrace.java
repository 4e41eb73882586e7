package dev.cdcjoin.flink.demo;

import dev.cdcjoin.flink.SideSpec;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;

/**
 * A deterministic Debezium trace of two tables, {@code users(id, name)} and {@code domains(id,
 * user_id, domain)}: snapshot reads, inserts, renames, domains moved between users (join-key
 * changes), deletes, domains of users that do not exist (yet), and Kafka tombstones after deletes.
 * The final tables are kept, so a test can compute the expected join.
 */
public final class UsersDomainsTrace implements Serializable {

    private static final long serialVersionUID = 1L;

    /** The users table: {@code id BIGINT NOT NULL, name STRING}, primary key {@code id}. */
    public static final CdcSchema USERS =
            CdcSchema.of(Column.notNull("id", "BIGINT"), Column.nullable("name", "STRING"));

    /** The domains table: {@code id BIGINT NOT NULL, user_id BIGINT, domain STRING}. */
    public static final CdcSchema DOMAINS =
            CdcSchema.of(
                    Column.notNull("id", "BIGINT"),
                    Column.nullable("user_id", "BIGINT"),
                    Column.nullable("domain", "STRING"));

    /** The users side: join key and primary key {@code id}. */
    public static final SideSpec USERS_SIDE =
            new SideSpec("users", USERS, List.of("id"), List.of("id"), null);

    /** The domains side: join key {@code user_id}, primary key {@code id}. */
    public static final SideSpec DOMAINS_SIDE =
            new SideSpec("domains", DOMAINS, List.of("user_id"), List.of("id"), null);

    /** One message: which table, and the JSON ({@code "null"} for a tombstone). */
    public static final class Event implements Serializable {
        private static final long serialVersionUID = 1L;

        /** True for a users message, false for a domains message. */
        public final boolean users;

        /** The Debezium JSON envelope. */
        public final String json;

        Event(boolean users, String json) {
            this.users = users;
            this.json = json;
        }
    }

    private final List<Event> events = new ArrayList<>();
    private final Map<Long, String> users = new TreeMap<>();
    private final Map<Long, Object[]> domains = new TreeMap<>();

    /** Ids of {@link #domains}, for picking one at random in O(1). */
    private final List<Long> domainIds = new ArrayList<>();

    private final Map<Long, Integer> domainIndex = new HashMap<>();
    private final SplittableRandom random;
    private final int userIds;
    private long nextDomain;
    private long ts = 1_706_696_130_000L;

    private UsersDomainsTrace(long seed, int userIds) {
        this.random = new SplittableRandom(seed);
        this.userIds = userIds;
    }

    /**
     * Generates a trace.
     *
     * @param seed the random seed (same seed, same trace)
     * @param changes number of changes after the snapshot (the trace has somewhat more messages)
     * @param userIds size of the user id space
     * @return the trace
     */
    public static UsersDomainsTrace generate(long seed, int changes, int userIds) {
        UsersDomainsTrace t = new UsersDomainsTrace(seed, userIds);
        t.snapshot();
        for (int i = 0; i < changes; i++) {
            t.change();
        }
        return t;
    }

    private void snapshot() {
        for (long id = 0; id < userIds / 2; id++) {
            upsertUser("r", id);
        }
        for (int i = 0; i < userIds / 2; i++) {
            insertDomain("r");
        }
    }

    private void change() {
        int dice = random.nextInt(100);
        if (dice < 15) {
            upsertUser(null, random.nextLong(userIds));
        } else if (dice < 22) {
            deleteUser(random.nextLong(userIds));
        } else if (dice < 45) {
            insertDomain("c");
        } else if (dice < 75) {
            moveDomain();
        } else if (dice < 88) {
            renameDomain();
        } else {
            deleteDomain();
        }
    }

    private void upsertUser(String op, long id) {
        String name = "user" + id + "_" + random.nextInt(1000);
        String before = users.containsKey(id) ? userJson(id, users.get(id)) : null;
        String kind = op != null ? op : before == null ? "c" : "u";
        users.put(id, name);
        emit(true, kind, before, userJson(id, name));
    }

    private void deleteUser(long id) {
        if (!users.containsKey(id)) {
            return;
        }
        emit(true, "d", userJson(id, users.remove(id)), null);
        events.add(new Event(true, "null"));
    }

    private void insertDomain(String op) {
        long id = nextDomain++;
        Object[] d = {random.nextLong(userIds), "site" + id + ".example"};
        domains.put(id, d);
        domainIndex.put(id, domainIds.size());
        domainIds.add(id);
        emit(false, op, null, domainJson(id, d));
    }

    private Long anyDomain() {
        if (domainIds.isEmpty()) {
            return null;
        }
        return domainIds.get(random.nextInt(domainIds.size()));
    }

    private void moveDomain() {
        Long id = anyDomain();
        if (id == null) {
            return;
        }
        Object[] old = domains.get(id);
        Object[] moved = {random.nextLong(userIds), old[1]};
        domains.put(id, moved);
        emit(false, "u", domainJson(id, old), domainJson(id, moved));
    }

    private void renameDomain() {
        Long id = anyDomain();
        if (id == null) {
            return;
        }
        Object[] old = domains.get(id);
        Object[] renamed = {old[0], "renamed" + random.nextInt(1000) + ".example"};
        domains.put(id, renamed);
        emit(false, "u", domainJson(id, old), domainJson(id, renamed));
    }

    private void deleteDomain() {
        Long id = anyDomain();
        if (id == null) {
            return;
        }
        int at = domainIndex.remove(id);
        long last = domainIds.remove(domainIds.size() - 1);
        if (last != id) {
            domainIds.set(at, last);
            domainIndex.put(last, at);
        }
        emit(false, "d", domainJson(id, domains.remove(id)), null);
    }

    private static String userJson(long id, String name) {
        return "{\"id\":" + id + ",\"name\":\"" + name + "\"}";
    }

    private static String domainJson(long id, Object[] d) {
        return "{\"id\":" + id + ",\"user_id\":" + d[0] + ",\"domain\":\"" + d[1] + "\"}";
    }

    private void emit(boolean isUsers, String op, String before, String after) {
        ts += 1 + random.nextInt(5);
        String table = isUsers ? "users" : "domains";
        events.add(
                new Event(
                        isUsers,
                        "{\"before\":"
                                + before
                                + ",\"after\":"
                                + after
                                + ",\"source\":{\"connector\":\"postgresql\",\"db\":\"demo\",\"table\":\""
                                + table
                                + "\",\"ts_ms\":"
                                + ts
                                + "},\"op\":\""
                                + op
                                + "\",\"ts_ms\":"
                                + ts
                                + "}"));
    }

    /**
     * The messages, in order.
     *
     * @return the events
     */
    public List<Event> events() {
        return Collections.unmodifiableList(events);
    }

    /**
     * The users table after the trace: id to name.
     *
     * @return the final users
     */
    public Map<Long, String> finalUsers() {
        return Collections.unmodifiableMap(users);
    }

    /**
     * The domains table after the trace: id to {@code {user_id, domain}}.
     *
     * @return the final domains
     */
    public Map<Long, Object[]> finalDomains() {
        return Collections.unmodifiableMap(domains);
    }
}
