package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.DebeziumFormat;
import dev.cdcjoin.flink.SideSpec;
import dev.cdcjoin.flink.codec.Column;
import dev.cdcjoin.flink.codec.ColumnType;
import java.util.List;
import java.util.Objects;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;

/**
 * The changes of one parsed envelope: the op rules of Flink's {@code debezium-json} format and the
 * native decoder, plus what a declared {@link DebeziumFormat} adds.
 *
 * <table>
 *   <caption>op rules</caption>
 *   <tr><th>op</th><th>emits</th></tr>
 *   <tr><td>{@code c}, {@code r}</td><td>{@code +I(after)}</td></tr>
 *   <tr><td>{@code u}</td><td>{@code -U(before)}, {@code +U(after)} (or {@code -D}, {@code +I}
 *       with {@code deleteInsertUpdates}); in upsert mode with a null {@code before}, only
 *       {@code +U(after)} (or {@code +I}); only that too when {@code after} keeps unavailable
 *       columns, its primary key and its join key (see {@link #replacesStored})</td></tr>
 *   <tr><td>{@code d}</td><td>{@code -D(before)}</td></tr>
 * </table>
 *
 * <p>In upsert mode a {@code before} holding only the primary key (Postgres' {@code REPLICA
 * IDENTITY DEFAULT} sends that for a delete, and for an update that changes the key) retracts the
 * key with every other column {@link Unavailable}: the join retracts the row it stores under that
 * primary key.
 *
 * <p>Splitting an update into a retraction of {@code before} and an insertion of {@code after} is
 * what lets a join clean the old key when a join key or primary key changes.
 *
 * <p>A value equal to Debezium's placeholder for an unchanged TOASTed column was read as {@link
 * Unavailable}; in {@code after} it takes the value the same message's {@code before} carries
 * (Postgres' {@code REPLICA IDENTITY FULL}), else it stays unavailable for the join to fill from
 * its state or reject. A null {@code before} value never stands in for it: Postgres only TOASTs
 * values that are not null.
 */
final class ChangeRules {

    private final String source;
    private final String[] names;
    private final boolean[] nullable;

    /** Whether each column is in the primary key. */
    private final boolean[] inPrimaryKey;

    /** Whether each column is in the primary key or the join key. */
    private final boolean[] inKeys;

    private final boolean hasPrimaryKey;

    private final boolean upsert;
    private final boolean deleteInsertUpdates;

    ChangeRules(SideSpec side, boolean deleteInsertUpdates) {
        List<Column> columns = side.schema().columns();
        int n = columns.size();
        this.source = side.name();
        this.names = new String[n];
        this.nullable = new boolean[n];
        this.inPrimaryKey = new boolean[n];
        this.inKeys = new boolean[n];
        for (int i = 0; i < n; i++) {
            names[i] = columns.get(i).name();
            nullable[i] = columns.get(i).isNullable();
            inPrimaryKey[i] = side.primaryKey() != null && side.primaryKey().contains(names[i]);
            inKeys[i] = inPrimaryKey[i] || side.joinKey().contains(names[i]);
        }
        this.hasPrimaryKey = side.primaryKey() != null && !side.primaryKey().isEmpty();
        this.upsert = side.format().upsert();
        this.deleteInsertUpdates = deleteInsertUpdates;
    }

    /** How messages name a column: {@code column "c" (INT) of the "after" row}. */
    static String column(String name, ColumnType type, String side) {
        return "column \"" + name + "\" (" + type + ") of the \"" + side + "\" row";
    }

    /**
     * Why a message cannot be applied without its {@code before} or {@code after} image, worded as
     * Flink's {@code debezium-json} format and the native decoder word it.
     */
    static String missingImage(String side, String opName) {
        if (side.equals("before")) {
            return "The \"before\" field of "
                    + opName
                    + " message is null, if you are using Debezium Postgres Connector, please check"
                    + " the Postgres table has been set REPLICA IDENTITY to FULL level.";
        }
        return "The \"after\" field of " + opName + " message is null.";
    }

    /**
     * The changes of a parsed envelope, after checking the op and the images it needs; nothing is
     * emitted on error.
     */
    int emit(Envelope env, long index, Collector<Row> out) {
        char op = op(env, index);
        boolean accumulate = op != 'd';
        boolean upsertUpdate = op == 'u' && upsert && env.before.state != RowImage.OBJECT;
        boolean retract = (op == 'u' || op == 'd') && !upsertUpdate;
        String opName = op == 'c' ? "INSERT" : op == 'r' ? "READ" : op == 'u' ? "UPDATE" : "DELETE";
        if (retract && env.before.state != RowImage.OBJECT) {
            throw new DebeziumDecodeException(source, index, missingImage("before", opName));
        }
        if (accumulate && env.after.state != RowImage.OBJECT) {
            throw new DebeziumDecodeException(source, index, missingImage("after", opName));
        }
        if (retract && upsert && keyOnly(env.before)) {
            byKey(env.before, index);
        }
        if (retract) {
            check(env.before, "before", index);
        }
        if (accumulate) {
            fillFromBefore(env.after, env.before);
            check(env.after, "after", index);
        }
        int n = 0;
        if (retract && !(accumulate && replacesStored(env))) {
            Row before = env.before.row;
            boolean update = accumulate && !deleteInsertUpdates;
            before.setKind(update ? RowKind.UPDATE_BEFORE : RowKind.DELETE);
            out.collect(before);
            n++;
        }
        if (accumulate) {
            Row after = env.after.row;
            boolean update = op == 'u' && !deleteInsertUpdates;
            after.setKind(update ? RowKind.UPDATE_AFTER : RowKind.INSERT);
            out.collect(after);
            n++;
        }
        env.before.row = null;
        env.after.row = null;
        return n;
    }

    /**
     * Whether an update is the replacement of the stored row of its primary key, its retraction
     * left out: its new row still has unavailable columns (its {@code before} lacked them too, as
     * Oracle's unchanged LOBs always are) and it keeps its primary key and its join key. The join
     * fills the new row from the stored one and retracts and emits as the pair would; with the
     * retraction first, it would remove the row the update is to be filled from. The native decode
     * step does the same ({@code BatchDecoder::unfillable_retraction}).
     */
    private boolean replacesStored(Envelope env) {
        Row before = env.before.row;
        Row after = env.after.row;
        boolean unavailable = false;
        for (int i = 0; hasPrimaryKey && i < names.length; i++) {
            unavailable |= Unavailable.is(after.getField(i));
            if (inKeys[i] && !Objects.deepEquals(before.getField(i), after.getField(i))) {
                return false;
            }
        }
        return unavailable;
    }

    /** The op, checked. */
    private char op(Envelope env, long index) {
        if (!env.hasOp) {
            throw new DebeziumDecodeException(source, index, "missing \"op\" field");
        }
        char op = env.badOp != null ? 0 : env.op;
        if (op == 'c' || op == 'r' || op == 'u' || op == 'd') {
            return op;
        }
        String text =
                env.badOp != null
                        ? env.badOp
                        : op > 0x20 && op < 0x7f
                                ? "\"" + op + "\""
                                : String.format("byte 0x%02x", (int) op);
        throw new DebeziumDecodeException(
                source,
                index,
                "unknown \"op\" value " + text + " (expected \"c\", \"r\", \"u\" or \"d\")");
    }

    /**
     * Whether a {@code before} holds only the primary key (every other column absent or null,
     * without errors), as Postgres sends at {@code REPLICA IDENTITY DEFAULT}.
     */
    private boolean keyOnly(RowImage before) {
        for (int i = 0; i < names.length; i++) {
            if (!inPrimaryKey[i] && (before.row.getField(i) != null || before.error(i) != null)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Makes {@code before} a retraction by primary key: every other column unavailable, every key
     * column there.
     */
    private void byKey(RowImage before, long index) {
        String missing = missingKeyColumn(before);
        if (missing != null) {
            throw new DebeziumDecodeException(
                    source,
                    index,
                    "the \"before\" row holds only"
                            + " key columns (upsert mode: a delete by key) but its primary key column \""
                            + missing
                            + "\" is missing or null");
        }
        for (int i = 0; i < names.length; i++) {
            if (!inPrimaryKey[i]) {
                before.set(i, Unavailable.VALUE);
            }
        }
    }

    /**
     * The first primary key column {@code img} lacks (absent or null, without an error), or null.
     */
    private String missingKeyColumn(RowImage img) {
        for (int i = 0; i < names.length; i++) {
            if (inPrimaryKey[i] && img.row.getField(i) == null && img.error(i) == null) {
                return names[i];
            }
        }
        return null;
    }

    /**
     * The change of an upsert-kafka record parsed into {@code env}: {@code -D} by the key in its
     * {@code before} ({@code delete}), else {@code +I} of its {@code after}.
     */
    int emitUpsert(Envelope env, boolean delete, long index, Collector<Row> out) {
        RowImage img = delete ? env.before : env.after;
        if (delete) {
            byKey(img, index);
        } else {
            valueKey(img, index);
        }
        check(img, delete ? "before" : "after", index);
        img.row.setKind(delete ? RowKind.DELETE : RowKind.INSERT);
        out.collect(img.row);
        img.row = null;
        return 1;
    }

    /**
     * That an upsert record's value holds its primary key: a row without one has no identity, and a
     * value wrapped by Kafka Connect ({@code {"schema", "payload"}}) would otherwise read as a row
     * of nulls.
     */
    private void valueKey(RowImage value, long index) {
        String missing = missingKeyColumn(value);
        if (missing != null) {
            throw new DebeziumDecodeException(
                    source,
                    index,
                    "the value's primary key column \""
                            + missing
                            + "\" is missing or null (a value wrapped by Kafka Connect's"
                            + " JsonConverter needs schemas.enable=false; values written"
                            + " with value.fields-include=EXCEPT_KEY are not read)");
        }
    }

    /** Unavailable columns of {@code after} take the value {@code before} carries, if it does. */
    private static void fillFromBefore(RowImage after, RowImage before) {
        Row row = after.row;
        for (int i = 0; i < row.getArity(); i++) {
            if (Unavailable.is(row.getField(i)) && before.carries(i)) {
                row.setField(i, before.row.getField(i));
            }
        }
    }

    /** Fails with the first problem of the image, in column order. */
    private void check(RowImage img, String side, long index) {
        for (int i = 0; i < names.length; i++) {
            if (img.error(i) != null) {
                throw new DebeziumDecodeException(source, index, img.error(i));
            }
            if (!nullable[i] && img.row.getField(i) == null) {
                throw new DebeziumDecodeException(
                        source,
                        index,
                        "column \""
                                + names[i]
                                + "\" of the \""
                                + side
                                + "\" row is declared NOT NULL but is missing or null");
            }
        }
    }
}
