package dev.cdcjoin.flink.codec;

import java.io.Serializable;
import java.util.Objects;

/** One column of a {@link CdcSchema}: name, type and nullability. */
public final class Column implements Serializable {

    private static final long serialVersionUID = 1L;

    private final String name;
    private final ColumnType type;
    private final boolean nullable;

    /**
     * A column.
     *
     * @param name the name, as in the Debezium {@code before}/{@code after} objects
     * @param type the type
     * @param nullable whether it may be null
     */
    public Column(String name, ColumnType type, boolean nullable) {
        this.name = Objects.requireNonNull(name, "name");
        this.type = Objects.requireNonNull(type, "type");
        this.nullable = nullable;
    }

    /**
     * A nullable column.
     *
     * @param name the name
     * @param type the type, in Flink SQL spelling ({@code BIGINT}, {@code DECIMAL(10, 2)})
     * @return the column
     */
    public static Column nullable(String name, String type) {
        return new Column(name, ColumnType.parse(type), true);
    }

    /**
     * A {@code NOT NULL} column.
     *
     * @param name the name
     * @param type the type, in Flink SQL spelling
     * @return the column
     */
    public static Column notNull(String name, String type) {
        return new Column(name, ColumnType.parse(type), false);
    }

    /**
     * The name.
     *
     * @return the name
     */
    public String name() {
        return name;
    }

    /**
     * The type.
     *
     * @return the type
     */
    public ColumnType type() {
        return type;
    }

    /**
     * Whether the column may be null.
     *
     * @return nullability
     */
    public boolean isNullable() {
        return nullable;
    }

    @Override
    public String toString() {
        return name + " " + type + (nullable ? "" : " NOT NULL");
    }
}
