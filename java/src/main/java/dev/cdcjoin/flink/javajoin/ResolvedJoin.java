package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.BadRecordPolicy;
import dev.cdcjoin.flink.JoinSpec;
import dev.cdcjoin.flink.JoinType;
import dev.cdcjoin.flink.SideSpec;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.ColumnType;
import java.io.Serializable;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.types.Row;

/** A {@link JoinSpec} resolved for the Java join: column indexes, layouts, types. */
final class ResolvedJoin implements Serializable {

    private static final long serialVersionUID = 1L;

    final ResolvedSide left;
    final ResolvedSide right;
    final JoinType joinType;
    final boolean failOnAbsentRetraction;

    /** Output columns as indexes into left-then-right columns; null for all of them. */
    final int[] projection;

    final RowTypeInfo outputType;

    /** Emit each output row as its native wire-format bytes (see {@link #withRawOutput()}). */
    final boolean rawOutput;

    /** The join key's type: a row of the key columns' types (the same for both sides). */
    final RowTypeInfo keyType;

    /** What becomes of a change the join rejects. */
    final BadRecordPolicy policy;

    private ResolvedJoin(
            ResolvedSide left,
            ResolvedSide right,
            JoinType joinType,
            boolean failOnAbsentRetraction,
            int[] projection,
            RowTypeInfo outputType,
            boolean rawOutput,
            BadRecordPolicy policy) {
        this.left = left;
        this.policy = policy;
        this.right = right;
        this.joinType = joinType;
        this.failOnAbsentRetraction = failOnAbsentRetraction;
        this.projection = projection;
        this.outputType = outputType;
        this.rawOutput = rawOutput;
        if (left.joinKey.length != right.joinKey.length) {
            throw new IllegalArgumentException(
                    "join keys differ in length: left has "
                            + left.joinKey.length
                            + ", right has "
                            + right.joinKey.length);
        }
        TypeInformation<?>[] keyTypes = new TypeInformation<?>[left.joinKey.length];
        String[] keyNames = new String[keyTypes.length];
        for (int i = 0; i < keyTypes.length; i++) {
            ColumnType lt = left.schema.columns().get(left.joinKey[i]).type();
            ColumnType rt = right.schema.columns().get(right.joinKey[i]).type();
            if (!lt.equals(rt)) {
                throw new IllegalArgumentException(
                        "join key column "
                                + i
                                + " differs in type: left "
                                + left.schema.columns().get(left.joinKey[i]).name()
                                + " ("
                                + lt
                                + ") vs right "
                                + right.schema.columns().get(right.joinKey[i]).name()
                                + " ("
                                + rt
                                + ")");
            }
            keyTypes[i] = lt.typeInformation();
            keyNames[i] = "k" + i;
        }
        this.keyType = new RowTypeInfo(keyTypes, keyNames);
    }

    /** Resolves a definition. */
    static ResolvedJoin of(JoinSpec def) {
        int[] projection = def.projection();
        int all = def.left().schema().size() + def.right().schema().size();
        boolean identity = projection.length == all;
        for (int i = 0; identity && i < projection.length; i++) {
            identity = projection[i] == i;
        }
        JoinType type = def.joinType();
        return new ResolvedJoin(
                ResolvedSide.of(def.left(), "left", outer(type, true), ttlMs(def.left())),
                ResolvedSide.of(def.right(), "right", outer(type, false), ttlMs(def.right())),
                type,
                def.failOnAbsentRetraction(),
                identity ? null : projection,
                def.rowTypeInfo(),
                false,
                BadRecordPolicy.FAIL);
    }

    /** This plan with another bad-record policy for the changes the join rejects. */
    ResolvedJoin withPolicy(BadRecordPolicy policy) {
        return new ResolvedJoin(
                left,
                right,
                joinType,
                failOnAbsentRetraction,
                projection,
                outputType,
                rawOutput,
                policy);
    }

    /**
     * This plan emitting raw output instead of rows: each output row as one {@code Row} of a single
     * {@code byte[]} field holding {@code kind | leftLen | left | rightLen | right} (the native
     * wire format, see {@link dev.cdcjoin.flink.RawJoinOutput}).
     */
    ResolvedJoin withRawOutput() {
        return new ResolvedJoin(
                left,
                right,
                joinType,
                failOnAbsentRetraction,
                null,
                new RowTypeInfo(
                        new TypeInformation<?>[] {
                            PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO
                        },
                        new String[] {"raw"}),
                true,
                policy);
    }

    private static long ttlMs(SideSpec side) {
        Duration ttl = side.ttl();
        return ttl == null ? 0 : ttl.toMillis();
    }

    /** Whether a side is outer (its unmatched rows are emitted null-padded). */
    static boolean outer(JoinType type, boolean left) {
        return type == JoinType.FULL || (left ? type == JoinType.LEFT : type == JoinType.RIGHT);
    }

    /** One side, resolved. */
    static final class ResolvedSide implements Serializable {

        private static final long serialVersionUID = 1L;

        final String name;

        /** The side as declared (its Debezium format is what its decoder reads). */
        final SideSpec side;

        /** {@code "left"} or {@code "right"}, for messages and state names. */
        final String label;

        final CdcSchema schema;
        final int[] joinKey;

        /** Primary key column indexes, or null. */
        final int[] primaryKey;

        final StateLayout layout;
        final boolean outer;

        /** State retention in milliseconds; 0 keeps rows forever. */
        final long ttlMs;

        final RowTypeInfo rowType;

        /** The type of decoded changes, whose columns may be {@link Unavailable}. */
        final RowTypeInfo changeType;

        /** The primary key's row type, or null. */
        final RowTypeInfo primaryKeyType;

        private ResolvedSide(
                SideSpec side,
                String label,
                CdcSchema schema,
                int[] joinKey,
                int[] primaryKey,
                boolean outer,
                long ttlMs) {
            this.name = side.name();
            this.side = side;
            this.label = label;
            this.schema = schema;
            this.joinKey = joinKey;
            this.primaryKey = primaryKey;
            this.outer = outer;
            this.ttlMs = ttlMs;
            this.rowType = schema.rowTypeInfo();
            this.changeType = new ChangeRowTypeInfo(rowType);
            if (primaryKey == null) {
                layout = StateLayout.NO_PRIMARY_KEY;
            } else if (Arrays.stream(primaryKey)
                    .allMatch(c -> Arrays.stream(joinKey).anyMatch(k -> k == c))) {
                layout = StateLayout.JOIN_KEY_CONTAINS_PRIMARY_KEY;
            } else {
                layout = StateLayout.HAS_PRIMARY_KEY;
            }
            if (primaryKey == null) {
                primaryKeyType = null;
            } else {
                TypeInformation<?>[] t = new TypeInformation<?>[primaryKey.length];
                String[] n = new String[primaryKey.length];
                for (int i = 0; i < t.length; i++) {
                    t[i] = rowType.getTypeAt(primaryKey[i]);
                    n[i] = rowType.getFieldNames()[primaryKey[i]];
                }
                primaryKeyType = new RowTypeInfo(t, n);
            }
        }

        static ResolvedSide of(SideSpec side, String label, boolean outer, long ttlMs) {
            CdcSchema schema = side.schema();
            int[] jk = indexes(schema, side.joinKey(), side.name());
            if (jk.length == 0) {
                throw new IllegalArgumentException(side.name() + ": the join key has no column");
            }
            List<String> pkNames = side.primaryKey();
            int[] pk = pkNames == null ? null : indexes(schema, pkNames, side.name());
            if (pk != null && pk.length == 0) {
                throw new IllegalArgumentException(side.name() + ": the primary key has no column");
            }
            return new ResolvedSide(side, label, schema, jk, pk, outer, ttlMs);
        }

        private static int[] indexes(CdcSchema schema, List<String> names, String table) {
            int[] out = new int[names.size()];
            for (int i = 0; i < out.length; i++) {
                try {
                    out[i] = schema.indexOf(names.get(i));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(table + ": " + e.getMessage(), e);
                }
            }
            return out;
        }

        int arity() {
            return schema.size();
        }

        /**
         * The join key of {@code row}, as a row of the key columns; an {@link Unavailable} column
         * keys as null (the join then rejects the change).
         */
        Row joinKey(Row row) {
            Row key = project(row, joinKey);
            for (int i = 0; i < key.getArity(); i++) {
                if (Unavailable.is(key.getField(i))) {
                    key.setField(i, null);
                }
            }
            return key;
        }

        /** The primary key of {@code row}. */
        Row primaryKey(Row row) {
            return project(row, primaryKey);
        }

        /** The primary key's values as messages print them: {@code [7]}. */
        String primaryKeyText(Row row) {
            StringBuilder b = new StringBuilder("[");
            for (int i = 0; i < primaryKey.length; i++) {
                b.append(i == 0 ? "" : ", ").append(row.getField(primaryKey[i]));
            }
            return b.append(']').toString();
        }

        boolean hasPrimaryKey() {
            return primaryKey != null;
        }

        /** Whether column {@code c} is in the join key. */
        boolean isJoinKeyColumn(int c) {
            return Arrays.stream(joinKey).anyMatch(k -> k == c);
        }

        /** Whether column {@code c} is in the primary key. */
        boolean isPrimaryKeyColumn(int c) {
            return primaryKey != null && Arrays.stream(primaryKey).anyMatch(k -> k == c);
        }

        String columnName(int c) {
            return schema.columns().get(c).name();
        }

        /** Whether a join key column of {@code row} is null (such a row never matches). */
        boolean hasNullKey(Row row) {
            for (int c : joinKey) {
                if (row.getField(c) == null) {
                    return true;
                }
            }
            return false;
        }

        private static Row project(Row row, int[] columns) {
            Row key = Row.withPositions(columns.length);
            for (int i = 0; i < columns.length; i++) {
                key.setField(i, row.getField(columns[i]));
            }
            return key;
        }
    }
}
