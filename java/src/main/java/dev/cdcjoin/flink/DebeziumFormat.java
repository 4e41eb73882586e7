package dev.cdcjoin.flink;

import java.io.Serializable;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * How one topic's Debezium messages encode their values: the connector settings that decide it
 * ({@code decimal.handling.mode}, {@code time.precision.mode}, {@code binary.handling.mode}, {@code
 * unavailable.value.placeholder}), declared rather than guessed, plus the upsert mode for tables
 * whose changes do not carry the whole old row (Postgres' {@code REPLICA IDENTITY DEFAULT}).
 *
 * <p>The defaults read what Flink's {@code debezium-json} format reads: decimals as JSON numbers or
 * decimal text, temporal values as SQL or ISO-8601 strings, bytes as base64. Schema-wrapped
 * messages ({@code {"schema", "payload"}}) carry each field's Connect schema, which then decides.
 * Immutable; the {@code with...} methods return copies.
 */
public final class DebeziumFormat implements Serializable {

    private static final long serialVersionUID = 1L;

    /** Debezium's default {@code unavailable.value.placeholder}. */
    public static final String DEFAULT_PLACEHOLDER = "__debezium_unavailable_value";

    /** The connector's {@code decimal.handling.mode}. */
    public enum DecimalHandling {
        /** What Flink's debezium-json reads: a JSON number or a string of decimal text. */
        FLINK,
        /** {@code precise}: base64 of the unscaled value, or {@code {"scale", "value"}}. */
        PRECISE,
        /** {@code string}: decimal text in a JSON string. */
        STRING,
        /** {@code double}: a JSON number. */
        DOUBLE
    }

    /** The connector's {@code time.precision.mode}. */
    public enum TimePrecision {
        /** What Flink's debezium-json reads: SQL or ISO-8601 strings. */
        FLINK,
        /** {@code adaptive}: epoch integers whose unit follows the source column's precision. */
        ADAPTIVE,
        /** {@code adaptive_time_microseconds}: as adaptive, TIME always in microseconds. */
        ADAPTIVE_TIME_MICROSECONDS,
        /** {@code connect}: Kafka Connect's Date, Time and Timestamp (days and milliseconds). */
        CONNECT,
        /** {@code isostring}: ISO-8601 strings. */
        ISOSTRING
    }

    /** The connector's {@code binary.handling.mode}. */
    public enum BinaryHandling {
        /** {@code bytes}: Connect bytes, which the JSON converter writes as base64. */
        BYTES,
        /** {@code base64}: a base64 string. */
        BASE64,
        /** {@code hex}: a hexadecimal string. */
        HEX
    }

    private static final DebeziumFormat DEFAULTS =
            new DebeziumFormat(
                    DecimalHandling.FLINK,
                    TimePrecision.FLINK,
                    BinaryHandling.BYTES,
                    new TreeMap<>(),
                    DEFAULT_PLACEHOLDER,
                    false);

    private final DecimalHandling decimalHandling;
    private final TimePrecision timePrecision;
    private final BinaryHandling binaryHandling;
    private final TreeMap<String, Integer> sourcePrecision;
    private final String placeholder;
    private final boolean upsert;

    private DebeziumFormat(
            DecimalHandling decimalHandling,
            TimePrecision timePrecision,
            BinaryHandling binaryHandling,
            TreeMap<String, Integer> sourcePrecision,
            String placeholder,
            boolean upsert) {
        this.decimalHandling = Objects.requireNonNull(decimalHandling, "decimalHandling");
        this.timePrecision = Objects.requireNonNull(timePrecision, "timePrecision");
        this.binaryHandling = Objects.requireNonNull(binaryHandling, "binaryHandling");
        this.sourcePrecision = sourcePrecision;
        this.placeholder = Objects.requireNonNull(placeholder, "placeholder");
        this.upsert = upsert;
    }

    /**
     * Every setting at its default (what Flink's {@code debezium-json} reads).
     *
     * @return the default format
     */
    public static DebeziumFormat defaults() {
        return DEFAULTS;
    }

    /**
     * The format of a Postgres, SQL Server or Oracle connector left at Debezium's own defaults:
     * {@code decimal.handling.mode=precise}, {@code time.precision.mode=adaptive}, {@code
     * binary.handling.mode=bytes}. The MySQL and MariaDB connectors default (and are limited) to
     * another time precision mode: see {@link #mysqlDefaults()}.
     *
     * @return that format
     */
    public static DebeziumFormat debeziumDefaults() {
        return DEFAULTS.withDecimalHandling(DecimalHandling.PRECISE)
                .withTimePrecision(TimePrecision.ADAPTIVE);
    }

    /**
     * The format of a MySQL or MariaDB connector left at Debezium's own defaults: {@code
     * decimal.handling.mode=precise}, {@code time.precision.mode=adaptive_time_microseconds} (their
     * default; they refuse {@code adaptive}: Debezium's {@code BinlogConnectorConfig}), {@code
     * binary.handling.mode=bytes}. TIME columns then come as microseconds of the day whatever their
     * precision; DATETIME columns as epoch integers in the unit their source precision gives
     * (declare it with {@link #withSourcePrecision} unless the messages are schema-wrapped).
     *
     * @return that format
     */
    public static DebeziumFormat mysqlDefaults() {
        return DEFAULTS.withDecimalHandling(DecimalHandling.PRECISE)
                .withTimePrecision(TimePrecision.ADAPTIVE_TIME_MICROSECONDS);
    }

    /**
     * This format with another {@code decimal.handling.mode}.
     *
     * @param mode the mode
     * @return a copy
     */
    public DebeziumFormat withDecimalHandling(DecimalHandling mode) {
        return new DebeziumFormat(
                mode, timePrecision, binaryHandling, sourcePrecision, placeholder, upsert);
    }

    /**
     * This format with another {@code time.precision.mode}.
     *
     * @param mode the mode
     * @return a copy
     */
    public DebeziumFormat withTimePrecision(TimePrecision mode) {
        return new DebeziumFormat(
                decimalHandling, mode, binaryHandling, sourcePrecision, placeholder, upsert);
    }

    /**
     * This format with another {@code binary.handling.mode}.
     *
     * @param mode the mode
     * @return a copy
     */
    public DebeziumFormat withBinaryHandling(BinaryHandling mode) {
        return new DebeziumFormat(
                decimalHandling, timePrecision, mode, sourcePrecision, placeholder, upsert);
    }

    /**
     * Declares the fractional-second precision of a TIME or TIMESTAMP column <em>at the source</em>
     * (e.g. 6 for a Postgres {@code timestamp}): in the adaptive modes Debezium sends such values
     * as epoch milliseconds, microseconds or nanoseconds by that precision, which the message does
     * not carry unless it is schema-wrapped. Without it such a value is a bad record, never a
     * guess.
     *
     * @param column the column
     * @param precision 0..9
     * @return a copy
     */
    public DebeziumFormat withSourcePrecision(String column, int precision) {
        if (precision < 0 || precision > 9) {
            throw new IllegalArgumentException(
                    "source precision of '" + column + "' must be 0..9, not " + precision);
        }
        TreeMap<String, Integer> copy = new TreeMap<>(sourcePrecision);
        copy.put(Objects.requireNonNull(column, "column"), precision);
        return new DebeziumFormat(
                decimalHandling, timePrecision, binaryHandling, copy, placeholder, upsert);
    }

    /**
     * This format with another {@code unavailable.value.placeholder}: the value Debezium sends for
     * an unchanged TOASTed column, which is never taken for the column's value.
     *
     * @param text the connector's placeholder
     * @return a copy
     */
    public DebeziumFormat withUnavailablePlaceholder(String text) {
        return new DebeziumFormat(
                decimalHandling, timePrecision, binaryHandling, sourcePrecision, text, upsert);
    }

    /**
     * Turns upsert mode on or off. In upsert mode an update without {@code before} replaces the
     * stored row with the same primary key, and a delete whose {@code before} holds only the key
     * columns deletes the stored row: what Postgres sends at {@code REPLICA IDENTITY DEFAULT}. The
     * side's join key must lie within its primary key, so that every change of a row reaches the
     * state holding its old version.
     *
     * @param on whether to
     * @return a copy
     */
    public DebeziumFormat withUpsert(boolean on) {
        return new DebeziumFormat(
                decimalHandling, timePrecision, binaryHandling, sourcePrecision, placeholder, on);
    }

    /**
     * The {@code decimal.handling.mode}.
     *
     * @return the mode
     */
    public DecimalHandling decimalHandling() {
        return decimalHandling;
    }

    /**
     * The {@code time.precision.mode}.
     *
     * @return the mode
     */
    public TimePrecision timePrecision() {
        return timePrecision;
    }

    /**
     * The {@code binary.handling.mode}.
     *
     * @return the mode
     */
    public BinaryHandling binaryHandling() {
        return binaryHandling;
    }

    /**
     * The declared source precisions, by column.
     *
     * @return an unmodifiable map
     */
    public Map<String, Integer> sourcePrecision() {
        return Collections.unmodifiableMap(sourcePrecision);
    }

    /**
     * The {@code unavailable.value.placeholder}.
     *
     * @return the placeholder text
     */
    public String unavailablePlaceholder() {
        return placeholder;
    }

    /**
     * Whether upsert mode is on.
     *
     * @return whether
     */
    public boolean upsert() {
        return upsert;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof DebeziumFormat)) {
            return false;
        }
        DebeziumFormat f = (DebeziumFormat) o;
        return decimalHandling == f.decimalHandling
                && timePrecision == f.timePrecision
                && binaryHandling == f.binaryHandling
                && sourcePrecision.equals(f.sourcePrecision)
                && placeholder.equals(f.placeholder)
                && upsert == f.upsert;
    }

    @Override
    public int hashCode() {
        return Objects.hash(
                decimalHandling,
                timePrecision,
                binaryHandling,
                sourcePrecision,
                placeholder,
                upsert);
    }

    @Override
    public String toString() {
        return "decimal.handling.mode="
                + decimalHandling
                + " time.precision.mode="
                + timePrecision
                + " binary.handling.mode="
                + binaryHandling
                + " source precision "
                + sourcePrecision
                + (upsert ? " upsert" : "");
    }
}
