package dev.cdcjoin.flink;

import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Json;
import java.io.Serializable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * One input of a join: the table's name, schema, join key columns, optional primary key and
 * optional state TTL. Immutable.
 */
public final class JoinSide implements Serializable {

    private static final long serialVersionUID = 1L;

    private final String name;
    private final CdcSchema schema;
    private final List<String> joinKey;
    private final List<String> primaryKey;
    private final Long ttlMs;

    /**
     * A join input.
     *
     * @param name the table's name (used in error messages and bad-record reports)
     * @param schema its columns
     * @param joinKey the equi-join key columns
     * @param primaryKey the primary key columns, or {@code null} if the table has none
     * @param ttl idle-state retention, or {@code null} to keep rows forever
     */
    public JoinSide(
            String name,
            CdcSchema schema,
            List<String> joinKey,
            List<String> primaryKey,
            Duration ttl) {
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
                primaryKey == null ? null : Collections.unmodifiableList(new ArrayList<>(primaryKey));
        this.ttlMs = ttl == null ? null : ttl.toMillis();
    }

    /**
     * This side with another TTL.
     *
     * @param ttl idle-state retention, or {@code null} for none
     * @return a copy
     */
    public JoinSide withTtl(Duration ttl) {
        return new JoinSide(name, schema, joinKey, primaryKey, ttl);
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
     * @param deleteInsertUpdates emit updates as {@code -D}/{@code +I} instead of {@code
     *     -U}/{@code +U}
     * @return JSON
     */
    public String decoderConfigJson(boolean deleteInsertUpdates) {
        return "{\"schema\":"
                + schema.toJson()
                + ",\"join_key\":"
                + Json.strings(joinKey)
                + ",\"source\":"
                + Json.quote(name)
                + ",\"update_mode\":"
                + (deleteInsertUpdates ? "\"DeleteInsert\"" : "\"Retract\"")
                + "}";
    }

    /**
     * This side as the native join spec's {@code SideSpec}.
     *
     * @return JSON
     */
    String specJson() {
        return "{\"schema\":"
                + schema.toJson()
                + ",\"join_key\":"
                + Json.strings(joinKey)
                + ",\"primary_key\":"
                + (primaryKey == null ? "null" : Json.strings(primaryKey))
                + ",\"ttl_ms\":"
                + (ttlMs == null ? "null" : ttlMs.toString())
                + "}";
    }

    @Override
    public String toString() {
        return name + schema + " join key " + joinKey + " primary key " + primaryKey;
    }
}
