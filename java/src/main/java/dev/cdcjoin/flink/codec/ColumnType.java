package dev.cdcjoin.flink.codec;

import java.io.Serializable;
import java.util.Locale;
import java.util.Objects;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.TimeType;
import org.apache.flink.table.types.logical.TimestampType;

/**
 * A column type of the native row encoding, written as in Flink SQL ({@code INT}, {@code
 * DECIMAL(10, 2)}, {@code TIMESTAMP(3)}); the same set and spellings as the Rust {@code
 * cdcjoin_model::DataType}.
 *
 * <p>Java values use Flink's default conversion classes: {@code Boolean}, {@code Byte}, {@code
 * Short}, {@code Integer}, {@code Long}, {@code Float}, {@code Double}, {@code BigDecimal}, {@code
 * String}, {@code byte[]}, {@code LocalDate}, {@code LocalTime}, {@code LocalDateTime}, {@code
 * Instant}.
 */
public final class ColumnType implements Serializable {

    private static final long serialVersionUID = 1L;

    /** The type families of the encoding. */
    public enum Kind {
        /** {@code BOOLEAN}. */
        BOOLEAN,
        /** {@code TINYINT}. */
        TINYINT,
        /** {@code SMALLINT}. */
        SMALLINT,
        /** {@code INT}. */
        INT,
        /** {@code BIGINT}. */
        BIGINT,
        /** {@code FLOAT}. */
        FLOAT,
        /** {@code DOUBLE}. */
        DOUBLE,
        /** {@code DECIMAL(p, s)}. */
        DECIMAL,
        /** {@code STRING} (any VARCHAR/CHAR). */
        STRING,
        /** {@code BYTES} (any VARBINARY/BINARY). */
        BYTES,
        /** {@code DATE}. */
        DATE,
        /** {@code TIME(p)}: milliseconds of the day, as Flink's runtime holds it. */
        TIME,
        /** {@code TIMESTAMP(p)} without time zone. */
        TIMESTAMP,
        /** {@code TIMESTAMP_LTZ(p)}: an instant ({@code TIMESTAMP(p) WITH LOCAL TIME ZONE}). */
        TIMESTAMP_LTZ
    }

    private final Kind kind;
    private final int precision;
    private final int scale;

    private ColumnType(Kind kind, int precision, int scale) {
        this.kind = kind;
        this.precision = precision;
        this.scale = scale;
    }

    /**
     * A type without parameters.
     *
     * @param kind a kind; parameterized kinds get Flink's defaults ({@code DECIMAL(10, 0)}, {@code
     *     TIME(0)}, {@code TIMESTAMP(6)}, {@code TIMESTAMP_LTZ(6)})
     * @return the type
     */
    public static ColumnType of(Kind kind) {
        switch (kind) {
            case DECIMAL:
                return decimal(10, 0);
            case TIME:
                return temporal(Kind.TIME, 0);
            case TIMESTAMP:
            case TIMESTAMP_LTZ:
                return temporal(kind, 6);
            default:
                return new ColumnType(kind, 0, 0);
        }
    }

    /**
     * {@code DECIMAL(precision, scale)}.
     *
     * @param precision 1..38
     * @param scale 0..precision
     * @return the type
     */
    public static ColumnType decimal(int precision, int scale) {
        if (precision < 1 || precision > 38 || scale < 0 || scale > precision) {
            throw new IllegalArgumentException(
                    "invalid DECIMAL(" + precision + ", " + scale + "): 1 <= p <= 38, 0 <= s <= p");
        }
        return new ColumnType(Kind.DECIMAL, precision, scale);
    }

    /**
     * {@code TIMESTAMP(precision)}.
     *
     * @param precision 0..9
     * @return the type
     */
    public static ColumnType timestamp(int precision) {
        return temporal(Kind.TIMESTAMP, precision);
    }

    /**
     * {@code TIME(p)}, {@code TIMESTAMP(p)} or {@code TIMESTAMP_LTZ(p)}.
     *
     * @param kind TIME, TIMESTAMP or TIMESTAMP_LTZ
     * @param precision fractional-second digits, 0..9
     * @return the type
     */
    public static ColumnType temporal(Kind kind, int precision) {
        if (kind != Kind.TIME && kind != Kind.TIMESTAMP && kind != Kind.TIMESTAMP_LTZ) {
            throw new IllegalArgumentException(kind + " has no fractional-second precision");
        }
        if (precision < 0 || precision > 9) {
            throw new IllegalArgumentException(
                    "invalid " + kind + "(" + precision + "): 0 <= p <= 9");
        }
        return new ColumnType(kind, precision, 0);
    }

    /**
     * Parses a Flink SQL spelling: {@code INT}/{@code INTEGER}, {@code VARCHAR(n)}, {@code
     * DECIMAL(p, s)}, {@code TIMESTAMP(p)}, ...
     *
     * @param text the type
     * @return the type
     * @throws IllegalArgumentException for an unsupported or malformed type
     */
    public static ColumnType parse(String text) {
        String norm = text.trim().toUpperCase(Locale.ROOT);
        String ltzSuffix = "WITH LOCAL TIME ZONE";
        if (norm.startsWith("TIMESTAMP") && norm.endsWith(ltzSuffix)) {
            ColumnType t = parse(norm.substring(0, norm.length() - ltzSuffix.length()));
            return temporal(Kind.TIMESTAMP_LTZ, t.precision);
        }
        int open = norm.indexOf('(');
        String name = open < 0 ? norm : norm.substring(0, open).trim();
        int[] args = open < 0 ? new int[0] : args(norm, open, text);
        switch (name) {
            case "BOOLEAN":
                return noArgs(Kind.BOOLEAN, args, text);
            case "TINYINT":
                return noArgs(Kind.TINYINT, args, text);
            case "SMALLINT":
                return noArgs(Kind.SMALLINT, args, text);
            case "INT":
            case "INTEGER":
                return noArgs(Kind.INT, args, text);
            case "BIGINT":
                return noArgs(Kind.BIGINT, args, text);
            case "FLOAT":
                return noArgs(Kind.FLOAT, args, text);
            case "DOUBLE":
                return noArgs(Kind.DOUBLE, args, text);
            case "DATE":
                return noArgs(Kind.DATE, args, text);
            case "STRING":
            case "VARCHAR":
            case "CHAR":
                return lengthOnly(Kind.STRING, args, text);
            case "BYTES":
            case "VARBINARY":
            case "BINARY":
                return lengthOnly(Kind.BYTES, args, text);
            case "DECIMAL":
            case "NUMERIC":
                return args.length > 2
                        ? bad(text)
                        : decimal(args.length > 0 ? args[0] : 10, args.length > 1 ? args[1] : 0);
            case "TIME":
                return args.length > 1
                        ? bad(text)
                        : temporal(Kind.TIME, args.length > 0 ? args[0] : 0);
            case "TIMESTAMP":
            case "TIMESTAMP_LTZ":
                Kind kind = name.equals("TIMESTAMP") ? Kind.TIMESTAMP : Kind.TIMESTAMP_LTZ;
                return args.length > 1 ? bad(text) : temporal(kind, args.length > 0 ? args[0] : 6);
            default:
                throw new IllegalArgumentException("unsupported type '" + text + "'");
        }
    }

    private static int[] args(String norm, int open, String text) {
        if (!norm.endsWith(")")) {
            throw new IllegalArgumentException("unbalanced parentheses in type '" + text + "'");
        }
        String[] parts = norm.substring(open + 1, norm.length() - 1).split(",");
        int[] out = new int[parts.length];
        for (int i = 0; i < parts.length; i++) {
            try {
                out[i] = Integer.parseInt(parts[i].trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad type parameter in '" + text + "'", e);
            }
        }
        return out;
    }

    private static ColumnType noArgs(Kind kind, int[] args, String text) {
        return args.length == 0 ? of(kind) : bad(text);
    }

    private static ColumnType lengthOnly(Kind kind, int[] args, String text) {
        return args.length <= 1 ? of(kind) : bad(text);
    }

    private static ColumnType bad(String text) {
        throw new IllegalArgumentException("wrong number of parameters in type '" + text + "'");
    }

    /**
     * The encoding's type for a Flink logical type.
     *
     * @param type a Flink logical type
     * @return the column type
     * @throws IllegalArgumentException for a type the encoding has no slot for
     */
    public static ColumnType fromLogicalType(LogicalType type) {
        switch (type.getTypeRoot()) {
            case BOOLEAN:
                return of(Kind.BOOLEAN);
            case TINYINT:
                return of(Kind.TINYINT);
            case SMALLINT:
                return of(Kind.SMALLINT);
            case INTEGER:
                return of(Kind.INT);
            case BIGINT:
                return of(Kind.BIGINT);
            case FLOAT:
                return of(Kind.FLOAT);
            case DOUBLE:
                return of(Kind.DOUBLE);
            case DECIMAL:
                DecimalType d = (DecimalType) type;
                return decimal(d.getPrecision(), d.getScale());
            case CHAR:
            case VARCHAR:
                return of(Kind.STRING);
            case BINARY:
            case VARBINARY:
                return of(Kind.BYTES);
            case DATE:
                return of(Kind.DATE);
            case TIME_WITHOUT_TIME_ZONE:
                return temporal(Kind.TIME, ((TimeType) type).getPrecision());
            case TIMESTAMP_WITHOUT_TIME_ZONE:
                return timestamp(((TimestampType) type).getPrecision());
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                return temporal(
                        Kind.TIMESTAMP_LTZ, ((LocalZonedTimestampType) type).getPrecision());
            default:
                throw new IllegalArgumentException(
                        "unsupported column type " + type.asSummaryString());
        }
    }

    /**
     * The type family.
     *
     * @return the kind
     */
    public Kind kind() {
        return kind;
    }

    /**
     * Precision of DECIMAL, TIME, TIMESTAMP and TIMESTAMP_LTZ (0 otherwise).
     *
     * @return the precision
     */
    public int precision() {
        return precision;
    }

    /**
     * Scale of DECIMAL (0 otherwise).
     *
     * @return the scale
     */
    public int scale() {
        return scale;
    }

    /** Width in bytes of this type's fixed slot in the row encoding. */
    int slotWidth() {
        switch (kind) {
            case BOOLEAN:
            case TINYINT:
                return 1;
            case SMALLINT:
                return 2;
            case INT:
            case FLOAT:
            case DATE:
            case TIME:
                return 4;
            case DECIMAL:
                return precision <= 18 ? 8 : 16;
            default:
                return 8;
        }
    }

    /** Whether values live in the variable tail. */
    boolean isVariable() {
        return kind == Kind.STRING || kind == Kind.BYTES;
    }

    /**
     * The {@link TypeInformation} of this type's Java values (as used in {@code RowTypeInfo}).
     *
     * @return the type information
     */
    public TypeInformation<?> typeInformation() {
        switch (kind) {
            case BOOLEAN:
                return Types.BOOLEAN;
            case TINYINT:
                return Types.BYTE;
            case SMALLINT:
                return Types.SHORT;
            case INT:
                return Types.INT;
            case BIGINT:
                return Types.LONG;
            case FLOAT:
                return Types.FLOAT;
            case DOUBLE:
                return Types.DOUBLE;
            case DECIMAL:
                return Types.BIG_DEC;
            case STRING:
                return Types.STRING;
            case BYTES:
                return Types.PRIMITIVE_ARRAY(Types.BYTE);
            case DATE:
                return Types.LOCAL_DATE;
            case TIME:
                return Types.LOCAL_TIME;
            case TIMESTAMP_LTZ:
                return Types.INSTANT;
            default:
                return Types.LOCAL_DATE_TIME;
        }
    }

    /**
     * The Flink {@link DataType} of this type.
     *
     * @param nullable whether the column is nullable
     * @return the data type
     */
    public DataType dataType(boolean nullable) {
        DataType t;
        switch (kind) {
            case BOOLEAN:
                t = DataTypes.BOOLEAN();
                break;
            case TINYINT:
                t = DataTypes.TINYINT();
                break;
            case SMALLINT:
                t = DataTypes.SMALLINT();
                break;
            case INT:
                t = DataTypes.INT();
                break;
            case BIGINT:
                t = DataTypes.BIGINT();
                break;
            case FLOAT:
                t = DataTypes.FLOAT();
                break;
            case DOUBLE:
                t = DataTypes.DOUBLE();
                break;
            case DECIMAL:
                t = DataTypes.DECIMAL(precision, scale);
                break;
            case STRING:
                t = DataTypes.STRING();
                break;
            case BYTES:
                t = DataTypes.BYTES();
                break;
            case DATE:
                t = DataTypes.DATE();
                break;
            case TIME:
                t = DataTypes.TIME(precision);
                break;
            case TIMESTAMP_LTZ:
                t = DataTypes.TIMESTAMP_LTZ(precision);
                break;
            default:
                t = DataTypes.TIMESTAMP(precision);
        }
        return nullable ? t.nullable() : t.notNull();
    }

    /** The Flink SQL spelling, as the native library parses it. */
    @Override
    public String toString() {
        switch (kind) {
            case DECIMAL:
                return "DECIMAL(" + precision + ", " + scale + ")";
            case TIME:
            case TIMESTAMP:
            case TIMESTAMP_LTZ:
                return kind.name() + "(" + precision + ")";
            default:
                return kind.name();
        }
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ColumnType)) {
            return false;
        }
        ColumnType t = (ColumnType) o;
        return kind == t.kind && precision == t.precision && scale == t.scale;
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, precision, scale);
    }
}
