package dev.cdcjoin.bench;

import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * The deterministic users/domains Debezium workload (the shape of {@code rust/workload}): {@code
 * users(id INT, firstname STRING, lastname STRING)} and {@code domains(id INT, user_id INT,
 * domain_name STRING)} joined on {@code users.id = domains.user_id}.
 *
 * <p>A snapshot ({@code op = r}) of {@code users} users and {@code domains} domains, then changes
 * drawn from a mix until {@code events} messages: user inserts, user renames (non-key column), user
 * deletes (their domains deleted first, as a foreign key would), domain inserts, renames (non-key),
 * moves to another user (join-key change), renumbering (primary-key change: an update whose before
 * and after ids differ) and deletes. Envelopes carry a full Postgres {@code source} block (about
 * 550 bytes a message), as the Rust workload's do.
 *
 * <p>Written once per trace directory: one file per topic and partition ({@code users-0.bin},
 * {@code domains-1.bin}, ...), each a sequence of {@code int32 big-endian length | UTF-8 JSON}
 * ({@code -1} for a Kafka tombstone), and {@code trace.properties} with the sizes and the expected
 * materialized join result (count and checksum per join type, see {@link RowHash}) computed from
 * the generator's final tables. A row goes to partition {@code hash(lineage) % partitions}, where a
 * domain's lineage is the id it was created with, so every change of a row (its renumbering
 * included) stays in one partition, in order, as in a Kafka topic keyed by the row.
 *
 * <p>Key skew ({@code skew} X above 1) picks users at index {@code floor(n * U^X)}, so low indexes
 * (the oldest users) are hot. It applies to every user pick ({@code skewPicks = all}) or only to
 * the user a domain is inserted under or moved to ({@code owners}): user renames and deletes then
 * pick uniformly, so a hot user keeps its domains instead of losing them to its own frequent
 * deletes. How skewed a trace came out is measured, not assumed: {@code trace.properties} records
 * the rows of the hottest join key (domains under one user) at its peak and at the end, and how
 * many keys held more than {@value #BIG_KEY_ROWS} rows.
 */
public final class Workload {

    /**
     * The users table the workload writes: {@code users(id INT NOT NULL, firstname STRING, lastname
     * STRING)}.
     */
    public static final CdcSchema USERS =
            CdcSchema.of(
                    Column.notNull("id", "INT"),
                    Column.nullable("firstname", "STRING"),
                    Column.nullable("lastname", "STRING"));

    /**
     * The domains table the workload writes: {@code domains(id INT NOT NULL, user_id INT,
     * domain_name STRING)}.
     */
    public static final CdcSchema DOMAINS =
            CdcSchema.of(
                    Column.notNull("id", "INT"),
                    Column.nullable("user_id", "INT"),
                    Column.nullable("domain_name", "STRING"));

    /** Change kinds of the mix, with their default weights (those of rust/workload). */
    static final String DEFAULT_MIX =
            "insert_user=10,insert_domain=20,rename_user=15,rename_domain=15,move_domain=15,"
                    + "renumber_domain=5,delete_domain=15,delete_user=5";

    static final String[] FIRST = {"Ana", "Bo", "Chen", "Dara", "Eli", "Farah", "Goran", "Hiro"};
    static final String[] LAST = {
        "Garcia", "Kim", "Novak", "Okafor", "Park", "Rossi", "Silva", "Weber"
    };
    private static final String[] TLD = {"com", "org", "net", "io"};

    /** A join key holding more rows than this counts as big in the trace's skew figures. */
    static final int BIG_KEY_ROWS = 1000;

    /** The user picks that key skew applies to (see the class comment). */
    enum SkewPicks {
        /** Every user pick: domain inserts and moves, user renames and deletes. */
        ALL,
        /** Only the user a domain is inserted under or moved to. */
        OWNERS;

        static SkewPicks parse(String v) {
            switch (v) {
                case "all":
                    return ALL;
                case "owners":
                    return OWNERS;
                default:
                    throw new IllegalArgumentException(
                            "--skew-picks must be all or owners, not '" + v + "'");
            }
        }

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** The tables a trace holds and how they join. */
    enum Shape {
        /** users and domains, joined on {@code users.id = domains.user_id} (this class). */
        USERS_DOMAINS,
        /** users, profiles and settings on one key, the user id ({@link MartWorkload}). */
        MART3
    }

    /** Generator options. */
    public static final class Config {
        Shape shape = Shape.USERS_DOMAINS;
        int users = 200_000;
        int domains = 1_000_000;
        long events = 5_000_000;
        long seed = 42;
        double skew = 1.0;
        SkewPicks skewPicks = SkewPicks.ALL;
        String mix = DEFAULT_MIX;
        int partitions = 4;
        boolean tombstones = false;

        static Config parse(List<String> args) {
            Config c = new Config();
            for (int i = 0; i < args.size(); i += 2) {
                String v = args.get(i + 1);
                switch (args.get(i)) {
                    case "--users":
                        c.users = Integer.parseInt(v);
                        break;
                    case "--domains":
                        c.domains = Integer.parseInt(v);
                        break;
                    case "--events":
                        c.events = Long.parseLong(v);
                        break;
                    case "--seed":
                        c.seed = Long.parseLong(v);
                        break;
                    case "--skew":
                        c.skew = Double.parseDouble(v);
                        break;
                    case "--skew-picks":
                        c.skewPicks = SkewPicks.parse(v);
                        break;
                    case "--mix":
                        c.mix = v;
                        break;
                    case "--partitions":
                        c.partitions = Integer.parseInt(v);
                        break;
                    case "--tombstones":
                        c.tombstones = Boolean.parseBoolean(v);
                        break;
                    default:
                        throw new IllegalArgumentException("unknown option " + args.get(i));
                }
            }
            return c;
        }

        /** A directory name that identifies the trace. */
        String id() {
            return (shape == Shape.MART3 ? "mart3-" : "")
                    + "u"
                    + users
                    + "-d"
                    + domains
                    + "-e"
                    + events
                    + "-s"
                    + seed
                    + "-k"
                    + skew
                    + (skewPicks == SkewPicks.ALL ? "" : "-" + skewPicks)
                    + "-p"
                    + partitions
                    + (tombstones ? "-t" : "")
                    + (mix.equals(DEFAULT_MIX) ? "" : "-m" + Integer.toHexString(mix.hashCode()));
        }
    }

    static final class User {
        final int id;
        final String first;
        final String last;

        User(int id, String first, String last) {
            this.id = id;
            this.first = first;
            this.last = last;
        }
    }

    private static final class Domain {
        final int id;
        final int lineage;
        final int userId;
        final String name;

        Domain(int id, int lineage, int userId, String name) {
            this.id = id;
            this.lineage = lineage;
            this.userId = userId;
            this.name = name;
        }
    }

    /** Rows by position (uniform or skewed picks) and by id. */
    static final class Table<T> {
        final List<T> rows = new ArrayList<>();
        final Map<Integer, Integer> pos = new HashMap<>();

        void insert(int id, T row) {
            pos.put(id, rows.size());
            rows.add(row);
        }

        void replace(int id, T row) {
            rows.set(pos.get(id), row);
        }

        T remove(int id, java.util.function.ToIntFunction<T> idOf) {
            Integer at = pos.remove(id);
            if (at == null) {
                return null;
            }
            T last = rows.remove(rows.size() - 1);
            if (at < rows.size()) {
                T row = rows.set(at, last);
                pos.put(idOf.applyAsInt(last), at);
                return row;
            }
            return last;
        }
    }

    /** One change of a mix: writes its messages (none when it does not apply). */
    interface Change {
        void apply() throws IOException;
    }

    /** Change kinds drawn by weight ({@code kind=weight,…}), each with the change it makes. */
    static final class Mix {
        private final Change[] changes;
        private final int[] cumulative;

        Mix(String mix, Map<String, Change> byKind) {
            String[] parts = mix.split(",");
            changes = new Change[parts.length];
            cumulative = new int[parts.length];
            int sum = 0;
            for (int i = 0; i < parts.length; i++) {
                String[] kv = parts[i].trim().split("=");
                changes[i] = byKind.get(kv[0]);
                if (changes[i] == null) {
                    throw new IllegalArgumentException(
                            "unknown change kind " + kv[0] + ", not in " + byKind.keySet());
                }
                sum += Integer.parseInt(kv[1]);
                cumulative[i] = sum;
            }
        }

        /** Makes one change, each with the probability of its weight. */
        void change(SplittableRandom rng) throws IOException {
            int dice = rng.nextInt(cumulative[cumulative.length - 1]);
            int k = 0;
            while (dice >= cumulative[k]) {
                k++;
            }
            changes[k].apply();
        }
    }

    private final Config cfg;
    private final SplittableRandom rng;
    private final Mix mix;
    private final Table<User> users = new Table<>();
    private final Table<Domain> domains = new Table<>();
    private final Map<Integer, List<Integer>> byUser = new HashMap<>();
    private final KeySizes keySizes = new KeySizes();
    private int nextUser = 1;
    private int nextDomain = 1;
    private final TraceWriter out;

    private Workload(Config cfg, Path dir) throws IOException {
        this.cfg = cfg;
        this.rng = new SplittableRandom(cfg.seed);
        this.mix =
                new Mix(
                        cfg.mix,
                        Map.of(
                                "insert_user", () -> insertUser("c"),
                                "insert_domain", () -> insertDomain("c"),
                                "rename_user", this::renameUser,
                                "rename_domain", this::renameDomain,
                                "move_domain", this::moveDomain,
                                "renumber_domain", this::renumberDomain,
                                "delete_domain", this::deleteDomain,
                                "delete_user", this::deleteUser));
        out = new TraceWriter(dir, List.of(0, 1), cfg.partitions, cfg.tombstones);
    }

    /**
     * Generates a trace of {@code cfg}'s shape into {@code dir} unless {@code dir/trace.properties}
     * exists.
     *
     * @return the trace's properties
     */
    public static Properties generate(Config cfg, Path dir) throws IOException {
        if (cfg.shape == Shape.MART3) {
            return MartWorkload.generate(cfg, dir);
        }
        return TraceWriter.generate(
                dir,
                d -> {
                    Workload w = new Workload(cfg, d);
                    w.run();
                    return w.finish();
                });
    }

    private void run() throws IOException {
        for (int i = 0; i < Math.min(cfg.users, cfg.events); i++) {
            insertUser("r");
        }
        while (out.emitted() < Math.min(cfg.events, (long) cfg.users + cfg.domains)) {
            insertDomain("r");
        }
        while (out.emitted() < cfg.events) {
            mix.change(rng);
        }
    }

    /** A position in {@code [0, n)}: uniform for skew 1, biased toward 0 above. */
    private int pickIndex(int n, double skew) {
        double u = rng.nextDouble();
        int i = (int) (n * (skew == 1.0 ? u : Math.pow(u, skew)));
        return Math.min(i, n - 1);
    }

    /** A user a domain is inserted under or moved to. */
    private User pickOwner() {
        return pickUser(cfg.skew);
    }

    /** A user to rename or delete. */
    private User pickChangedUser() {
        return pickUser(cfg.skewPicks == SkewPicks.ALL ? cfg.skew : 1.0);
    }

    private User pickUser(double skew) {
        return users.rows.isEmpty() ? null : users.rows.get(pickIndex(users.rows.size(), skew));
    }

    private Domain pickDomain() {
        return domains.rows.isEmpty()
                ? null
                : domains.rows.get(pickIndex(domains.rows.size(), 1.0));
    }

    private void insertUser(String op) throws IOException {
        User u = new User(nextUser++, FIRST[rng.nextInt(8)], LAST[rng.nextInt(8)]);
        users.insert(u.id, u);
        out.emit(0, u.id, op, null, json(u));
    }

    private void insertDomain(String op) throws IOException {
        User u = pickOwner();
        if (u == null) {
            insertUser(op);
            return;
        }
        int id = nextDomain++;
        Domain d = new Domain(id, id, u.id, "site" + id + "." + TLD[id % 4]);
        domains.insert(id, d);
        link(u.id, id);
        out.emit(1, d.lineage, op, null, json(d));
    }

    private void renameUser() throws IOException {
        User before = pickChangedUser();
        if (before == null) {
            return;
        }
        User after = new User(before.id, before.first, LAST[rng.nextInt(8)]);
        users.replace(before.id, after);
        out.emit(0, before.id, "u", json(before), json(after));
    }

    private void updateDomain(Domain before, Domain after) throws IOException {
        domains.remove(before.id, d -> d.id);
        unlink(before.userId, before.id);
        link(after.userId, after.id);
        domains.insert(after.id, after);
        out.emit(1, before.lineage, "u", json(before), json(after));
    }

    private void link(int userId, int domainId) {
        List<Integer> l = byUser.computeIfAbsent(userId, x -> new ArrayList<>());
        l.add(domainId);
        keySizes.grew(userId, l.size());
    }

    private void unlink(int userId, int domainId) {
        List<Integer> l = byUser.get(userId);
        if (l != null) {
            l.remove(Integer.valueOf(domainId));
        }
    }

    private void renameDomain() throws IOException {
        Domain b = pickDomain();
        if (b == null) {
            return;
        }
        String name = b.name.startsWith("www.") ? b.name.substring(4) : "www." + b.name;
        updateDomain(b, new Domain(b.id, b.lineage, b.userId, name));
    }

    private void moveDomain() throws IOException {
        Domain b = pickDomain();
        User to = pickOwner();
        if (b == null || to == null) {
            return;
        }
        updateDomain(b, new Domain(b.id, b.lineage, to.id, b.name));
    }

    private void renumberDomain() throws IOException {
        Domain b = pickDomain();
        if (b == null) {
            return;
        }
        updateDomain(b, new Domain(nextDomain++, b.lineage, b.userId, b.name));
    }

    private void deleteDomain() throws IOException {
        Domain d = pickDomain();
        if (d == null) {
            return;
        }
        domains.remove(d.id, x -> x.id);
        unlink(d.userId, d.id);
        out.emit(1, d.lineage, "d", json(d), null);
    }

    private void deleteUser() throws IOException {
        User u = pickChangedUser();
        if (u == null) {
            return;
        }
        List<Integer> owned = byUser.remove(u.id);
        if (owned != null) {
            for (int id : owned) {
                Domain d = domains.remove(id, x -> x.id);
                if (d != null) {
                    out.emit(1, d.lineage, "d", json(d), null);
                }
            }
        }
        users.remove(u.id, x -> x.id);
        out.emit(0, u.id, "d", json(u), null);
    }

    static String json(User u) {
        return "{\"id\":"
                + u.id
                + ",\"firstname\":\""
                + u.first
                + "\",\"lastname\":\""
                + u.last
                + "\"}";
    }

    private static String json(Domain d) {
        return "{\"id\":"
                + d.id
                + ",\"user_id\":"
                + d.userId
                + ",\"domain_name\":\""
                + d.name
                + "\"}";
    }

    /**
     * How many rows the join's hot keys hold: domains under one user, at the peak over the whole
     * trace and in the final tables.
     */
    private static final class KeySizes {
        private int peakRows;
        private int peakUser;
        private final Set<Integer> everBig = new HashSet<>();

        /** Notes that {@code user} now holds {@code rows} domains. */
        void grew(int user, int rows) {
            if (rows > peakRows) {
                peakRows = rows;
                peakUser = user;
            }
            if (rows > BIG_KEY_ROWS) {
                everBig.add(user);
            }
        }

        /** Writes the peak figures and those of the final tables {@code byUser}. */
        void write(Properties p, Map<Integer, List<Integer>> byUser) {
            int finalRows = 0;
            int finalUser = 0;
            int finalBig = 0;
            for (Map.Entry<Integer, List<Integer>> e : byUser.entrySet()) {
                int n = e.getValue().size();
                if (n > finalRows) {
                    finalRows = n;
                    finalUser = e.getKey();
                }
                finalBig += n > BIG_KEY_ROWS ? 1 : 0;
            }
            p.setProperty("hottest.peak.rows", "" + peakRows);
            p.setProperty("hottest.peak.user", "" + peakUser);
            p.setProperty("hottest.final.rows", "" + finalRows);
            p.setProperty("hottest.final.user", "" + finalUser);
            p.setProperty("keys.over" + BIG_KEY_ROWS + ".ever", "" + everBig.size());
            p.setProperty("keys.over" + BIG_KEY_ROWS + ".final", "" + finalBig);
        }
    }

    /** The partition of a row lineage (a Kafka-style hash of the key). */
    static int partition(long lineage, int partitions) {
        return (int) Long.remainderUnsigned(RowHash.fmix(lineage), partitions);
    }

    private Properties finish() throws IOException {
        Properties p = new Properties();
        p.setProperty("users", "" + cfg.users);
        p.setProperty("domains", "" + cfg.domains);
        p.setProperty("events", "" + cfg.events);
        p.setProperty("seed", "" + cfg.seed);
        p.setProperty("skew", "" + cfg.skew);
        p.setProperty("skew.picks", cfg.skewPicks.toString());
        p.setProperty("mix", cfg.mix);
        p.setProperty("partitions", "" + cfg.partitions);
        p.setProperty("tombstones", "" + cfg.tombstones);
        out.finish(p);
        p.setProperty("final.users", "" + users.rows.size());
        p.setProperty("final.domains", "" + domains.rows.size());
        keySizes.write(p, byUser);
        // The expected materialized join of the final tables.
        Map<Integer, User> byId = new HashMap<>();
        for (User u : users.rows) {
            byId.put(u.id, u);
        }
        Map<Integer, Integer> matched = new HashMap<>();
        long innerCount = 0;
        long innerSum = 0;
        for (Domain d : domains.rows) {
            User u = byId.get(d.userId);
            if (u != null) {
                innerCount++;
                innerSum += RowHash.of(u.id, u.first, u.last, d.id, d.userId, d.name);
                matched.merge(u.id, 1, Integer::sum);
            }
        }
        long leftCount = innerCount;
        long leftSum = innerSum;
        for (User u : users.rows) {
            if (!matched.containsKey(u.id)) {
                leftCount++;
                leftSum += RowHash.of(u.id, u.first, u.last, null, null, null);
            }
        }
        p.setProperty("expected.INNER.count", "" + innerCount);
        p.setProperty("expected.INNER.checksum", Long.toHexString(innerSum));
        p.setProperty("expected.LEFT.count", "" + leftCount);
        p.setProperty("expected.LEFT.checksum", Long.toHexString(leftSum));
        return p;
    }

    /**
     * {@code generate --dir D [--users N --domains N --events N --seed N --skew X --skew-picks P
     * --mix M --partitions N --tombstones B]}
     */
    public static void main(String[] args) throws IOException {
        List<String> a = new ArrayList<>(List.of(args));
        Path root = Path.of("/tmp/cdcjoin-bench/traces");
        int d = a.indexOf("--root");
        if (d >= 0) {
            root = Path.of(a.get(d + 1));
            a.remove(d + 1);
            a.remove(d);
        }
        Config cfg = Config.parse(a);
        Path dir = root.resolve(cfg.id());
        Properties p = generate(cfg, dir);
        System.out.println(dir);
        p.stringPropertyNames().stream()
                .sorted()
                .forEach(k -> System.out.println("  " + k + " = " + p.getProperty(k)));
    }
}
