package dev.cdcjoin.flink;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import dev.cdcjoin.flink.codec.ColumnType;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.apache.flink.types.Row;

/**
 * Deterministic random Debezium traces of two tables (snapshot reads, inserts, updates of non-key
 * columns, join-key and primary-key changes, deletes with and without tombstones, schema-wrapped
 * envelopes, null join keys, duplicate rows where a table has no primary key), and the reference
 * join of the tables they leave behind.
 */
final class RandomCdc {

    static final ObjectMapper JSON = new ObjectMapper();

    /**
     * How {@link #image} writes temporal values: Debezium's adaptive mode (DATE as epoch days; the
     * TIMESTAMP(3) columns, declared with source precision 3, as epoch millis). Decimals are
     * decimal strings, which the default decimal handling reads.
     */
    static final DebeziumFormat EPOCH_TIMES =
            DebeziumFormat.defaults().withTimePrecision(DebeziumFormat.TimePrecision.ADAPTIVE);

    /** The two tables of a trace, how they are joined, and how their rows change. */
    enum Shape {
        /**
         * users(id INT NOT NULL, name, balance DECIMAL(10, 2)) PK id ⋈ domains(id INT NOT NULL,
         * user_id INT, domain) PK id, on users.id = domains.user_id.
         */
        USERS_DOMAINS(
                new SideSpec(
                        "users",
                        CdcSchema.of(
                                Column.notNull("id", "INT"),
                                Column.nullable("name", "STRING"),
                                Column.nullable("balance", "DECIMAL(10, 2)")),
                        List.of("id"),
                        List.of("id"),
                        null),
                new SideSpec(
                        "domains",
                        CdcSchema.of(
                                Column.notNull("id", "INT"),
                                Column.nullable("user_id", "INT"),
                                Column.nullable("domain", "STRING")),
                        List.of("user_id"),
                        List.of("id"),
                        null),
                rnd -> new Object[] {rnd.nextInt(40), "user" + rnd.nextInt(100), money(rnd, 6)},
                (rnd, u) -> {
                    switch (rnd.nextInt(5)) {
                        case 0:
                            return new Object[] {rnd.nextInt(40), u[1], u[2]}; // renumbered
                        case 1:
                        case 2:
                            return new Object[] {u[0], "user" + rnd.nextInt(100), u[2]};
                        default:
                            return new Object[] {u[0], u[1], money(rnd, 6)};
                    }
                },
                rnd -> new Object[] {rnd.nextInt(150), userId(rnd), domain(rnd)},
                (rnd, d) -> {
                    switch (rnd.nextInt(4)) {
                        case 0:
                            return new Object[] {rnd.nextInt(150), d[1], d[2]}; // renumbered
                        case 1:
                            return new Object[] {d[0], d[1], domain(rnd)};
                        default:
                            return new Object[] {d[0], userId(rnd), d[2]}; // moves
                    }
                }),

        /**
         * accounts(region STRING NOT NULL, acct BIGINT NOT NULL, owner, opened DATE, credit
         * DECIMAL(12, 2)) PK (region, acct) ⋈ lines(region, acct BIGINT, sku, qty INT, at
         * TIMESTAMP(3)) without a primary key (duplicate rows), on (region, acct).
         */
        COMPOSITE(
                new SideSpec(
                                "accounts",
                                CdcSchema.of(
                                        Column.notNull("region", "STRING"),
                                        Column.notNull("acct", "BIGINT"),
                                        Column.nullable("owner", "STRING"),
                                        Column.nullable("opened", "DATE"),
                                        Column.nullable("credit", "DECIMAL(12, 2)")),
                                List.of("region", "acct"),
                                List.of("region", "acct"),
                                null)
                        .withFormat(EPOCH_TIMES),
                new SideSpec(
                                "lines",
                                CdcSchema.of(
                                        Column.nullable("region", "STRING"),
                                        Column.nullable("acct", "BIGINT"),
                                        Column.nullable("sku", "STRING"),
                                        Column.nullable("qty", "INT"),
                                        Column.nullable("at", "TIMESTAMP(3)")),
                                List.of("region", "acct"),
                                null,
                                null)
                        .withFormat(EPOCH_TIMES.withSourcePrecision("at", 3)),
                rnd ->
                        new Object[] {
                            region(rnd),
                            (long) rnd.nextInt(12),
                            "owner" + rnd.nextInt(50),
                            LocalDate.ofEpochDay(19_000 + rnd.nextInt(400)),
                            money(rnd, 8)
                        },
                (rnd, a) -> {
                    switch (rnd.nextInt(5)) {
                        case 0:
                            return new Object[] {
                                region(rnd), (long) rnd.nextInt(12), a[2], a[3], a[4]
                            };
                        case 1:
                            return new Object[] {a[0], a[1], "owner" + rnd.nextInt(50), a[3], a[4]};
                        case 2:
                            return new Object[] {a[0], a[1], a[2], null, a[4]};
                        default:
                            return new Object[] {a[0], a[1], a[2], a[3], money(rnd, 8)};
                    }
                },
                rnd ->
                        new Object[] {
                            rnd.nextInt(25) == 0 ? null : region(rnd),
                            rnd.nextInt(25) == 0 ? null : (long) rnd.nextInt(14),
                            "sku" + rnd.nextInt(5),
                            rnd.nextInt(4),
                            at(rnd)
                        },
                (rnd, l) -> {
                    switch (rnd.nextInt(3)) {
                        case 0:
                            return new Object[] {
                                region(rnd), (long) rnd.nextInt(14), l[2], l[3], l[4]
                            };
                        case 1:
                            return new Object[] {l[0], l[1], l[2], rnd.nextInt(4), l[4]};
                        default:
                            return new Object[] {l[0], l[1], "sku" + rnd.nextInt(5), l[3], at(rnd)};
                    }
                });

        final SideSpec left;
        final SideSpec right;
        final Function<Random, Object[]> newLeft;
        final BiFunction<Random, Object[], Object[]> changeLeft;
        final Function<Random, Object[]> newRight;
        final BiFunction<Random, Object[], Object[]> changeRight;

        Shape(
                SideSpec left,
                SideSpec right,
                Function<Random, Object[]> newLeft,
                BiFunction<Random, Object[], Object[]> changeLeft,
                Function<Random, Object[]> newRight,
                BiFunction<Random, Object[], Object[]> changeRight) {
            this.left = left;
            this.right = right;
            this.newLeft = newLeft;
            this.changeLeft = changeLeft;
            this.newRight = newRight;
            this.changeRight = changeRight;
        }

        /** The join of this shape's tables. */
        CdcJoin.Builder join(JoinType type) {
            return CdcJoin.builder()
                    .left(left.name(), left.schema(), left.joinKey(), left.primaryKey())
                    .right(right.name(), right.schema(), right.joinKey(), right.primaryKey())
                    .format(left.format(), right.format())
                    .joinType(type);
        }
    }

    static BigDecimal money(Random rnd, int digits) {
        long bound = (long) Math.pow(10, digits);
        return BigDecimal.valueOf(nextLong(rnd, 2 * bound) - bound, 2);
    }

    /**
     * {@code rnd.nextLong(bound)} of Java 17 ({@code RandomGenerator}'s default, which {@link
     * Random} keeps), for Java 11: the same draws from the same seed.
     */
    private static long nextLong(Random rnd, long bound) {
        long m = bound - 1;
        long r = rnd.nextLong();
        if ((bound & m) == 0L) {
            return r & m; // a power of two
        }
        for (long u = r >>> 1; u + m - (r = u % bound) < 0L; u = rnd.nextLong() >>> 1) {
            // rejects the over-represented candidates
        }
        return r;
    }

    static Integer userId(Random rnd) {
        return rnd.nextInt(20) == 0 ? null : rnd.nextInt(48); // some users never exist
    }

    static String domain(Random rnd) {
        return new String[] {"a.com", "b.org", "c.net", "d.io"}[rnd.nextInt(4)];
    }

    static String region(Random rnd) {
        return new String[] {"eu", "us", "ap"}[rnd.nextInt(3)];
    }

    static LocalDateTime at(Random rnd) {
        return LocalDateTime.ofEpochSecond(1_700_000_000L + rnd.nextInt(100_000), 0, ZoneOffset.UTC)
                .plusNanos(rnd.nextInt(1000) * 1_000_000L);
    }

    /** One table's rows, in insertion order (a multiset when it has no primary key). */
    static final class Table {
        final SideSpec side;
        final int[] primaryKey;
        final List<Object[]> rows = new ArrayList<>();

        Table(SideSpec side) {
            this.side = side;
            this.primaryKey =
                    side.primaryKey() == null
                            ? null
                            : side.primaryKey().stream().mapToInt(side.schema()::indexOf).toArray();
        }

        boolean hasKeyOf(Object[] row, Object[] except) {
            if (primaryKey == null) {
                return false;
            }
            for (Object[] r : rows) {
                if (r != except && samePrimaryKey(r, row)) {
                    return true;
                }
            }
            return false;
        }

        private boolean samePrimaryKey(Object[] a, Object[] b) {
            for (int c : primaryKey) {
                if (!Objects.equals(a[c], b[c])) {
                    return false;
                }
            }
            return true;
        }
    }

    /** A trace: messages {@code "L|json"} / {@code "R|json"} and the final tables. */
    static final class Trace {
        final Shape shape;
        final List<String> events = new ArrayList<>();
        final Table left;
        final Table right;

        Trace(Shape shape) {
            this.shape = shape;
            this.left = new Table(shape.left);
            this.right = new Table(shape.right);
        }

        /** The materialized join of the final tables: row body ({@code [...]}) to count. */
        Map<String, Integer> expected(JoinType type) {
            int[] lk = keyColumns(shape.left);
            int[] rk = keyColumns(shape.right);
            int la = shape.left.schema().size();
            int ra = shape.right.schema().size();
            Map<String, Integer> out = new TreeMap<>();
            boolean[] rightMatched = new boolean[right.rows.size()];
            for (Object[] l : left.rows) {
                boolean matched = false;
                for (int j = 0; j < right.rows.size(); j++) {
                    Object[] r = right.rows.get(j);
                    if (matches(l, lk, r, rk)) {
                        matched = true;
                        rightMatched[j] = true;
                        add(out, l, r, la, ra);
                    }
                }
                if (!matched && (type == JoinType.LEFT || type == JoinType.FULL)) {
                    add(out, l, null, la, ra);
                }
            }
            if (type == JoinType.RIGHT || type == JoinType.FULL) {
                for (int j = 0; j < right.rows.size(); j++) {
                    if (!rightMatched[j]) {
                        add(out, null, right.rows.get(j), la, ra);
                    }
                }
            }
            return out;
        }

        private static int[] keyColumns(SideSpec side) {
            return side.joinKey().stream().mapToInt(side.schema()::indexOf).toArray();
        }

        private static boolean matches(Object[] l, int[] lk, Object[] r, int[] rk) {
            for (int i = 0; i < lk.length; i++) {
                if (l[lk[i]] == null || !l[lk[i]].equals(r[rk[i]])) {
                    return false;
                }
            }
            return true;
        }

        private static void add(Map<String, Integer> out, Object[] l, Object[] r, int la, int ra) {
            Object[] all = new Object[la + ra];
            if (l != null) {
                System.arraycopy(l, 0, all, 0, la);
            }
            if (r != null) {
                System.arraycopy(r, 0, all, la, ra);
            }
            out.merge(Row.of(all).toString().substring(2), 1, Integer::sum);
        }
    }

    /**
     * A trace of about {@code steps} changes; the first {@code snapshot} are snapshot reads.
     *
     * @param shape the tables
     * @param seed the random seed
     * @param steps changes
     * @param snapshot snapshot reads first
     * @return the trace
     */
    static Trace generate(Shape shape, long seed, int steps, int snapshot) {
        Random rnd = new Random(seed);
        Trace t = new Trace(shape);
        for (int step = 0; step < steps; step++) {
            boolean onLeft = rnd.nextInt(5) < 2;
            Table table = onLeft ? t.left : t.right;
            String tag = onLeft ? "L|" : "R|";
            int choice = step < snapshot ? 0 : rnd.nextInt(100);
            if (choice < 45) { // insert (a copy of an existing row now and then, without a PK)
                Object[] row =
                        table.primaryKey == null && !table.rows.isEmpty() && rnd.nextInt(6) == 0
                                ? table.rows.get(rnd.nextInt(table.rows.size())).clone()
                                : (onLeft ? shape.newLeft : shape.newRight).apply(rnd);
                if (table.hasKeyOf(row, null)) {
                    continue;
                }
                table.rows.add(row);
                t.events.add(
                        tag + envelope(rnd, table.side, step < snapshot ? "r" : "c", null, row));
            } else if (choice < 80) { // update
                if (table.rows.isEmpty()) {
                    continue;
                }
                int i = rnd.nextInt(table.rows.size());
                Object[] old = table.rows.get(i);
                Object[] row = (onLeft ? shape.changeLeft : shape.changeRight).apply(rnd, old);
                if (Arrays.equals(old, row) || table.hasKeyOf(row, old)) {
                    continue;
                }
                table.rows.set(i, row);
                t.events.add(tag + envelope(rnd, table.side, "u", old, row));
            } else { // delete
                if (table.rows.isEmpty()) {
                    continue;
                }
                Object[] old = table.rows.remove(rnd.nextInt(table.rows.size()));
                t.events.add(tag + envelope(rnd, table.side, "d", old, null));
                if (rnd.nextInt(3) == 0) {
                    t.events.add(tag + "null"); // the Kafka tombstone after a delete
                }
            }
        }
        return t;
    }

    private static String envelope(
            Random rnd, SideSpec side, String op, Object[] before, Object[] after) {
        ObjectNode env = JSON.createObjectNode();
        env.set("before", before == null ? null : image(side, before));
        env.set("after", after == null ? null : image(side, after));
        env.putObject("source").put("connector", "postgresql").put("table", side.name());
        env.put("op", op);
        env.put("ts_ms", 1_706_696_130_123L);
        ObjectNode message = env;
        if (rnd.nextInt(5) == 0) {
            message = JSON.createObjectNode();
            message.putObject("schema").put("type", "struct");
            message.set("payload", env);
        }
        return message.toString();
    }

    /** A row image as Debezium writes it (DATE as epoch days, TIMESTAMP(3) as epoch millis). */
    private static ObjectNode image(SideSpec side, Object[] row) {
        ObjectNode n = JSON.createObjectNode();
        List<Column> columns = side.schema().columns();
        for (int i = 0; i < columns.size(); i++) {
            String name = columns.get(i).name();
            Object v = row[i];
            ColumnType.Kind kind = columns.get(i).type().kind();
            if (v == null) {
                n.putNull(name);
            } else if (kind == ColumnType.Kind.INT) {
                n.put(name, (Integer) v);
            } else if (kind == ColumnType.Kind.BIGINT) {
                n.put(name, (Long) v);
            } else if (kind == ColumnType.Kind.DECIMAL) {
                n.put(name, ((BigDecimal) v).toPlainString());
            } else if (kind == ColumnType.Kind.DATE) {
                n.put(name, ((LocalDate) v).toEpochDay());
            } else if (kind == ColumnType.Kind.TIMESTAMP) {
                n.put(name, ((LocalDateTime) v).toInstant(ZoneOffset.UTC).toEpochMilli());
            } else {
                n.put(name, (String) v);
            }
        }
        return n;
    }

    private RandomCdc() {}
}
