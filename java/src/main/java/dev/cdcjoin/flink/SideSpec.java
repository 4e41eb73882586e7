package dev.cdcjoin.flink;

import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.ColumnType;
import java.io.Serializable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * One input of a join: the table's name, schema, join key columns, optional primary key, optional
 * state TTL and the Debezium format of its topic. Immutable.
 */
public final class SideSpec implements Serializable {

    private static final long serialVersionUID = 1L;

    private final String name;
    private final CdcSchema schema;
    private final List<String> joinKey;
    private final List<String> primaryKey;
    private final Long ttlMs;
    private final DebeziumFormat format;
    private final boolean exactRetractions;

    /**
     * A join input.
     *
     * @param name the table's name (used in error messages and bad-record reports)
     * @param schema its columns
     * @param joinKey the equi-join key columns
     * @param primaryKey the primary key columns, or {@code null} if the table has none
     * @param ttl idle-state retention, or {@code null} to keep rows forever
     */
    public SideSpec(
            String name,
            CdcSchema schema,
            List<String> joinKey,
            List<String> primaryKey,
            Duration ttl) {
        this(name, schema, joinKey, primaryKey, ttl, DebeziumFormat.defaults());
    }

    /**
     * A join input whose topic has the given Debezium format.
     *
     * @param name the table's name (used in error messages and bad-record reports)
     * @param schema its columns
     * @param joinKey the equi-join key columns
     * @param primaryKey the primary key columns, or {@code null} if the table has none
     * @param ttl idle-state retention, or {@code null} to keep rows forever
     * @param format how its messages encode values
     * @throws IllegalArgumentException if the format does not fit the table (upsert mode without a
     *     primary key within the join key, a source precision for a non-temporal column)
     */
    public SideSpec(
            String name,
            CdcSchema schema,
            List<String> joinKey,
            List<String> primaryKey,
            Duration ttl,
            DebeziumFormat format) {
        this(name, schema, joinKey, primaryKey, ttl, format, false);
    }

    private SideSpec(
            String name,
            CdcSchema schema,
            List<String> joinKey,
            List<String> primaryKey,
            Duration ttl,
            DebeziumFormat format,
            boolean exactRetractions) {
        this.exactRetractions = exactRetractions;
        this.name = Objects.requireNonNull(name, "name");
        this.schema = Objects.requireNonNull(schema, "schema");
        if (joinKey == null || joinKey.isEmpty()) {
            throw new IllegalArgumentException(name + ": the join key needs at least one column");
        }
        joinKey.forEach(schema::indexOf);
        if (primaryKey != null) {
            primaryKey.forEach(schema::indexOf);
        }
        if (ttl != null && (ttl.isNegative() || ttl.isZero())) {
            throw new IllegalArgumentException(name + ": the TTL must be positive");
        }
        this.joinKey = Collections.unmodifiableList(new ArrayList<>(joinKey));
        this.primaryKey =
                primaryKey == null
                        ? null
                        : Collections.unmodifiableList(new ArrayList<>(primaryKey));
        this.ttlMs = ttl == null ? null : ttl.toMillis();
        this.format = Objects.requireNonNull(format, "format");
        checkFormat();
    }

    private void checkFormat() {
        for (String column : format.sourcePrecision().keySet()) {
            ColumnType.Kind kind = schema.columns().get(schema.indexOf(column)).type().kind();
            if (kind != ColumnType.Kind.TIME && kind != ColumnType.Kind.TIMESTAMP) {
                throw new IllegalArgumentException(
                        name
                                + ": a source precision is declared for column '"
                                + column
                                + "' of type "
                                + kind
                                + "; only TIME and TIMESTAMP have one");
            }
        }
        if (!format.upsert()) {
            return;
        }
        if (primaryKey == null) {
            throw new IllegalArgumentException(
                    name
                            + ": upsert mode needs a primary key: without one, a change that does "
                            + "not carry the old row cannot say which stored row it replaces");
        }
        if (!primaryKey.containsAll(joinKey)) {
            throw new IllegalArgumentException(
                    name
                            + ": upsert mode needs the join key "
                            + joinKey
                            + " within the primary key "
                            + primaryKey
                            + ": an update that "
                            + "changes a join key column outside the primary key, sent without "
                            + "its old row, would leave the old version joined under the old key. "
                            + "Set REPLICA IDENTITY FULL on the table so updates and deletes carry "
                            + "the whole old row, and leave upsert mode off");
        }
    }

    /**
     * This side with another TTL.
     *
     * @param ttl idle-state retention, or {@code null} for none
     * @return a copy
     */
    public SideSpec withTtl(Duration ttl) {
        return new SideSpec(name, schema, joinKey, primaryKey, ttl, format, exactRetractions);
    }

    /**
     * This side with another Debezium format.
     *
     * @param format how its messages encode values
     * @return a copy
     */
    public SideSpec withFormat(DebeziumFormat format) {
        return new SideSpec(name, schema, joinKey, primaryKey, ttl(), format, exactRetractions);
    }

    /**
     * This side as the input of a chained join, fed by another join's output: a retraction retracts
     * the stored row of its primary key only when it is that very row, else it counts as absent.
     * When a row moves between the upstream join's keys, its {@code -U} and {@code +U} come from
     * two upstream subtasks and may arrive in either order; a late {@code -U} of the old row must
     * not retract the new one (Rust {@code SideSpec::exact_retractions}).
     *
     * @return a copy
     */
    SideSpec fedByJoin() {
        return new SideSpec(name, schema, joinKey, primaryKey, ttl(), format, true);
    }

    /**
     * Whether a retraction must be the stored row of its primary key to retract it ({@link
     * #fedByJoin()}).
     *
     * @return true on a side fed by another join
     */
    public boolean exactRetractions() {
        return exactRetractions;
    }

    /**
     * How this table's messages encode values.
     *
     * @return the format
     */
    public DebeziumFormat format() {
        return format;
    }

    /**
     * The table's name.
     *
     * @return the name
     */
    public String name() {
        return name;
    }

    /**
     * The table's columns.
     *
     * @return the schema
     */
    public CdcSchema schema() {
        return schema;
    }

    /**
     * The join key columns.
     *
     * @return column names
     */
    public List<String> joinKey() {
        return joinKey;
    }

    /**
     * The primary key columns.
     *
     * @return column names, or {@code null}
     */
    public List<String> primaryKey() {
        return primaryKey;
    }

    /**
     * The state TTL: how long a row is kept after its last write ({@code table.exec.state.ttl}
     * semantics).
     *
     * @return the retention, or {@code null} when rows are kept forever
     */
    public Duration ttl() {
        return ttlMs == null ? null : Duration.ofMillis(ttlMs);
    }

    /**
     * The native decoder configuration for this table.
     *
     * @param deleteInsertUpdates emit updates as {@code -D}/{@code +I} instead of {@code -U}/{@code
     *     +U}
     * @return JSON
     */
    public String decoderConfigJson(boolean deleteInsertUpdates) {
        return NativeConfig.decoder(this, deleteInsertUpdates);
    }

    @Override
    public String toString() {
        return name + schema + " join key " + joinKey + " primary key " + primaryKey;
    }
}
