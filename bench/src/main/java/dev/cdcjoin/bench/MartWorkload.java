package dev.cdcjoin.bench;

import dev.cdcjoin.bench.Workload.Table;
import dev.cdcjoin.bench.Workload.User;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SplittableRandom;

/**
 * The three-table mart workload (issue 15): a user with a profile and settings, every table on one
 * key, the user id, so the mart is a chain of two binary joins or one multi-way join:
 *
 * <pre>
 * users(id INT NOT NULL, firstname STRING, lastname STRING)          primary key id
 * profiles(user_id INT NOT NULL, city STRING, plan STRING)           primary key user_id (0..1 a user)
 * settings(id INT NOT NULL, user_id INT, setting_key STRING,
 *          setting_value STRING)                                     primary key id (0..4 a user)
 *
 * SELECT u.id, u.firstname, u.lastname, p.city, p.plan, s.id AS setting_id, s.setting_key,
 *        s.setting_value
 * FROM users u [LEFT] JOIN profiles p ON u.id = p.user_id [LEFT] JOIN settings s ON u.id = s.user_id
 * </pre>
 *
 * <p>A snapshot ({@code op = r}) of {@code users} users, a profile for {@value #PROFILE_SHARE} of
 * them and each of the {@value #SETTING_KEYS_COUNT} setting keys with probability {@value
 * #SETTING_SHARE} (so many users lack a profile or have no setting: the LEFT join's null-padded
 * rows matter), then changes drawn from {@link #DEFAULT_MIX} until {@code events} messages: user
 * inserts, renames, deletes (the user's settings and profile deleted first, as foreign keys would),
 * profile inserts, updates and deletes, setting inserts, value updates and deletes. No row changes
 * its user: the key never moves, as the user id of a profile or a setting does not in such a
 * schema. The files and {@code trace.properties} are as {@link Workload}'s ({@link TraceWriter}),
 * with the expected materialized mart per join type (the same join type at both steps).
 */
final class MartWorkload {

    /** The profiles table: one row per user at most, keyed by its user. */
    static final CdcSchema PROFILES =
            CdcSchema.of(
                    Column.notNull("user_id", "INT"),
                    Column.nullable("city", "STRING"),
                    Column.nullable("plan", "STRING"));

    /** The settings table: one row per (user, setting key). */
    static final CdcSchema SETTINGS =
            CdcSchema.of(
                    Column.notNull("id", "INT"),
                    Column.nullable("user_id", "INT"),
                    Column.nullable("setting_key", "STRING"),
                    Column.nullable("setting_value", "STRING"));

    /** Change kinds and their weights. */
    static final String DEFAULT_MIX =
            "insert_user=8,rename_user=12,delete_user=3,insert_profile=8,update_profile=15,"
                    + "delete_profile=4,insert_setting=15,update_setting=25,delete_setting=10";

    static final double PROFILE_SHARE = 0.6;
    static final double SETTING_SHARE = 0.5;
    static final int SETTING_KEYS_COUNT = 4;
    private static final String[] SETTING_KEYS = {"theme", "language", "timezone", "digest"};
    private static final String[] CITIES = {"Lyon", "Osaka", "Lagos", "Quito", "Oslo", "Pune"};
    private static final String[] PLANS = {"free", "pro", "team"};

    private static final int USERS = TraceFiles.topic("users");
    private static final int PROFILES_TOPIC = TraceFiles.topic("profiles");
    private static final int SETTINGS_TOPIC = TraceFiles.topic("settings");

    /** A profile row. */
    private record Profile(int userId, String city, String plan) {
        String json() {
            return "{\"user_id\":"
                    + userId
                    + ",\"city\":\""
                    + city
                    + "\",\"plan\":\""
                    + plan
                    + "\"}";
        }
    }

    /** A setting row. */
    private record Setting(int id, int userId, String key, String value) {
        String json() {
            return "{\"id\":"
                    + id
                    + ",\"user_id\":"
                    + userId
                    + ",\"setting_key\":\""
                    + key
                    + "\",\"setting_value\":\""
                    + value
                    + "\"}";
        }
    }

    private final Workload.Config cfg;
    private final SplittableRandom rng;
    private final Workload.Mix mix;
    private final TraceWriter out;
    private final Table<User> users = new Table<>();
    private final Table<Profile> profiles = new Table<>();
    private final Table<Setting> settings = new Table<>();
    private final Map<Integer, List<Setting>> settingsOf = new HashMap<>();
    private int nextUser = 1;
    private int nextSetting = 1;

    private MartWorkload(Workload.Config cfg, Path dir) throws IOException {
        this.cfg = cfg;
        this.rng = new SplittableRandom(cfg.seed);
        this.mix =
                new Workload.Mix(
                        cfg.mix,
                        Map.of(
                                "insert_user", () -> insertUser("c"),
                                "rename_user", this::renameUser,
                                "delete_user", this::deleteUser,
                                "insert_profile", this::insertMissingProfile,
                                "update_profile", this::updateProfile,
                                "delete_profile", this::deleteProfile,
                                "insert_setting", this::insertMissingSetting,
                                "update_setting", this::updateSetting,
                                "delete_setting", this::deleteSetting));
        this.out =
                new TraceWriter(
                        dir,
                        List.of(USERS, PROFILES_TOPIC, SETTINGS_TOPIC),
                        cfg.partitions,
                        cfg.tombstones);
    }

    /**
     * Generates the mart trace of {@code cfg} ({@code users}, {@code events}, {@code seed}, {@code
     * mix}, {@code partitions}, {@code tombstones}; no skew) into {@code dir} unless it exists.
     */
    static Properties generate(Workload.Config cfg, Path dir) throws IOException {
        return TraceWriter.generate(
                dir,
                d -> {
                    MartWorkload w = new MartWorkload(cfg, d);
                    w.run();
                    return w.finish();
                });
    }

    private void run() throws IOException {
        for (int i = 0; i < cfg.users && out.emitted() < cfg.events; i++) {
            User u = insertUser("r");
            if (rng.nextDouble() < PROFILE_SHARE) {
                insertProfile(u.id, "r");
            }
            for (String key : SETTING_KEYS) {
                if (rng.nextDouble() < SETTING_SHARE) {
                    insertSetting(u.id, key, "r");
                }
            }
        }
        while (out.emitted() < cfg.events) {
            mix.change(rng);
        }
    }

    private static <T> T pick(Table<T> t, SplittableRandom rng) {
        return t.rows.isEmpty() ? null : t.rows.get(rng.nextInt(t.rows.size()));
    }

    private String any(String[] values) {
        return values[rng.nextInt(values.length)];
    }

    private User insertUser(String op) throws IOException {
        User u = new User(nextUser++, any(Workload.FIRST), any(Workload.LAST));
        users.insert(u.id, u);
        out.emit(USERS, u.id, op, null, Workload.json(u));
        return u;
    }

    private void renameUser() throws IOException {
        User b = pick(users, rng);
        if (b == null) {
            return;
        }
        User a = new User(b.id, b.first, any(Workload.LAST));
        users.replace(b.id, a);
        out.emit(USERS, b.id, "u", Workload.json(b), Workload.json(a));
    }

    private void deleteUser() throws IOException {
        User u = pick(users, rng);
        if (u == null) {
            return;
        }
        for (Setting s : new ArrayList<>(settingsOf.getOrDefault(u.id, List.of()))) {
            deleteSetting(s);
        }
        Profile p = profileOf(u.id);
        if (p != null) {
            deleteProfile(p);
        }
        users.remove(u.id, x -> x.id);
        out.emit(USERS, u.id, "d", Workload.json(u), null);
    }

    /** The profile of a user, or null. */
    private Profile profileOf(int userId) {
        Integer at = profiles.pos.get(userId);
        return at == null ? null : profiles.rows.get(at);
    }

    private void insertProfile(int userId, String op) throws IOException {
        Profile p = new Profile(userId, any(CITIES), any(PLANS));
        profiles.insert(userId, p);
        out.emit(PROFILES_TOPIC, userId, op, null, p.json());
    }

    /** A profile for a user without one (nothing if the picked user has one). */
    private void insertMissingProfile() throws IOException {
        User u = pick(users, rng);
        if (u != null && !profiles.pos.containsKey(u.id)) {
            insertProfile(u.id, "c");
        }
    }

    private void updateProfile() throws IOException {
        Profile b = pick(profiles, rng);
        if (b == null) {
            return;
        }
        Profile a = new Profile(b.userId(), any(CITIES), b.plan());
        profiles.replace(b.userId(), a);
        out.emit(PROFILES_TOPIC, b.userId(), "u", b.json(), a.json());
    }

    private void deleteProfile() throws IOException {
        Profile p = pick(profiles, rng);
        if (p != null) {
            deleteProfile(p);
        }
    }

    private void deleteProfile(Profile p) throws IOException {
        profiles.remove(p.userId(), x -> x.userId());
        out.emit(PROFILES_TOPIC, p.userId(), "d", p.json(), null);
    }

    private void insertSetting(int userId, String key, String op) throws IOException {
        Setting s = new Setting(nextSetting++, userId, key, "v" + rng.nextInt(1000));
        settings.insert(s.id(), s);
        settingsOf.computeIfAbsent(userId, x -> new ArrayList<>()).add(s);
        out.emit(SETTINGS_TOPIC, s.id(), op, null, s.json());
    }

    /** A setting key the picked user does not have yet (nothing if it has them all). */
    private void insertMissingSetting() throws IOException {
        User u = pick(users, rng);
        if (u == null) {
            return;
        }
        List<Setting> has = settingsOf.getOrDefault(u.id, List.of());
        String key = any(SETTING_KEYS);
        if (has.stream().noneMatch(s -> s.key().equals(key))) {
            insertSetting(u.id, key, "c");
        }
    }

    private void updateSetting() throws IOException {
        Setting b = pick(settings, rng);
        if (b == null) {
            return;
        }
        Setting a = new Setting(b.id(), b.userId(), b.key(), "v" + rng.nextInt(1000));
        settings.replace(b.id(), a);
        List<Setting> of = settingsOf.get(b.userId());
        of.set(of.indexOf(b), a);
        out.emit(SETTINGS_TOPIC, b.id(), "u", b.json(), a.json());
    }

    private void deleteSetting() throws IOException {
        Setting s = pick(settings, rng);
        if (s != null) {
            deleteSetting(s);
        }
    }

    private void deleteSetting(Setting s) throws IOException {
        settings.remove(s.id(), x -> x.id());
        settingsOf.get(s.userId()).remove(s);
        out.emit(SETTINGS_TOPIC, s.id(), "d", s.json(), null);
    }

    private Properties finish() throws IOException {
        Properties p = new Properties();
        p.setProperty("shape", Workload.Shape.MART3.name());
        p.setProperty("users", "" + cfg.users);
        p.setProperty("events", "" + cfg.events);
        p.setProperty("seed", "" + cfg.seed);
        p.setProperty("skew", "1.0");
        p.setProperty("mix", cfg.mix);
        p.setProperty("partitions", "" + cfg.partitions);
        p.setProperty("tombstones", "" + cfg.tombstones);
        out.finish(p);
        p.setProperty("final.users", "" + users.rows.size());
        p.setProperty("final.profiles", "" + profiles.rows.size());
        p.setProperty("final.settings", "" + settings.rows.size());
        expected(p);
        return p;
    }

    /**
     * The expected materialized mart of the final tables, per join type: count and checksum of
     * {@code (id, firstname, lastname, city, plan, setting_id, setting_key, setting_value)} rows.
     */
    private void expected(Properties p) {
        long[] inner = new long[2];
        long[] left = new long[2];
        for (User u : users.rows) {
            Profile pr = profileOf(u.id);
            List<Setting> ss = settingsOf.getOrDefault(u.id, List.of());
            for (Setting s : ss.isEmpty() ? Arrays.asList((Setting) null) : ss) {
                long h =
                        RowHash.of(
                                u.id,
                                u.first,
                                u.last,
                                pr == null ? null : pr.city(),
                                pr == null ? null : pr.plan(),
                                s == null ? null : s.id(),
                                s == null ? null : s.key(),
                                s == null ? null : s.value());
                left[0]++;
                left[1] += h;
                if (pr != null && s != null) {
                    inner[0]++;
                    inner[1] += h;
                }
            }
        }
        p.setProperty("expected.INNER.count", "" + inner[0]);
        p.setProperty("expected.INNER.checksum", Long.toHexString(inner[1]));
        p.setProperty("expected.LEFT.count", "" + left[0]);
        p.setProperty("expected.LEFT.checksum", Long.toHexString(left[1]));
    }
}
