package dev.cdcjoin.flink.javajoin;

import java.io.IOException;
import java.util.Arrays;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.CompositeTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.types.Row;

/**
 * The type of decoded changes: a table's rows whose columns may hold {@link Unavailable#VALUE}.
 *
 * <p>Flink's row serializer writes each field with its column's serializer, which cannot write the
 * sentinel. Changes cross the {@code keyBy} between decoder and join, so this type's serializer
 * writes the positions of unavailable columns first, then the row with those columns null, and puts
 * the sentinel back when reading. The join never stores such a row, so the join's state keeps the
 * plain {@link RowTypeInfo}.
 */
final class ChangeRowTypeInfo extends RowTypeInfo {

    private static final long serialVersionUID = 1L;

    ChangeRowTypeInfo(RowTypeInfo rows) {
        super(types(rows), rows.getFieldNames());
    }

    private static TypeInformation<?>[] types(RowTypeInfo rows) {
        TypeInformation<?>[] out = new TypeInformation<?>[rows.getArity()];
        for (int i = 0; i < out.length; i++) {
            out[i] = rows.getTypeAt(i);
        }
        return out;
    }

    @Override
    public TypeSerializer<Row> createSerializer(SerializerConfig config) {
        return new ChangeRowSerializer(super.createSerializer(config));
    }

    @Override
    public boolean canEqual(Object obj) {
        return obj instanceof ChangeRowTypeInfo;
    }

    @Override
    public boolean equals(Object obj) {
        return obj instanceof ChangeRowTypeInfo && super.equals(obj);
    }

    @Override
    public int hashCode() {
        return 31 * super.hashCode() + 1;
    }

    /** A row serializer that carries {@link Unavailable} columns as a list of positions. */
    static final class ChangeRowSerializer extends TypeSerializer<Row> {

        private static final long serialVersionUID = 1L;

        private final TypeSerializer<Row> rows;

        ChangeRowSerializer(TypeSerializer<Row> rows) {
            this.rows = rows;
        }

        /** Positions of the row's unavailable columns. */
        private static int[] unavailable(Row row) {
            int[] at = new int[0];
            for (int i = 0; i < row.getArity(); i++) {
                if (Unavailable.is(row.getField(i))) {
                    at = Arrays.copyOf(at, at.length + 1);
                    at[at.length - 1] = i;
                }
            }
            return at;
        }

        /** {@code row}, or a copy of it with the given columns null. */
        private static Row nulled(Row row, int[] at) {
            if (at.length == 0) {
                return row;
            }
            Row copy = Row.copy(row);
            for (int i : at) {
                copy.setField(i, null);
            }
            return copy;
        }

        private static Row marked(Row row, int[] at) {
            for (int i : at) {
                row.setField(i, Unavailable.VALUE);
            }
            return row;
        }

        private static int[] readPositions(DataInputView in) throws IOException {
            int[] at = new int[in.readUnsignedShort()];
            for (int i = 0; i < at.length; i++) {
                at[i] = in.readUnsignedShort();
            }
            return at;
        }

        private static void writePositions(int[] at, DataOutputView out) throws IOException {
            out.writeShort(at.length);
            for (int i : at) {
                out.writeShort(i);
            }
        }

        @Override
        public boolean isImmutableType() {
            return false;
        }

        @Override
        public TypeSerializer<Row> duplicate() {
            return new ChangeRowSerializer(rows.duplicate());
        }

        @Override
        public Row createInstance() {
            return rows.createInstance();
        }

        @Override
        public Row copy(Row from) {
            int[] at = unavailable(from);
            return marked(rows.copy(nulled(from, at)), at);
        }

        @Override
        public Row copy(Row from, Row reuse) {
            return copy(from);
        }

        @Override
        public int getLength() {
            return -1;
        }

        @Override
        public void serialize(Row row, DataOutputView out) throws IOException {
            int[] at = unavailable(row);
            writePositions(at, out);
            rows.serialize(nulled(row, at), out);
        }

        @Override
        public Row deserialize(DataInputView in) throws IOException {
            int[] at = readPositions(in);
            return marked(rows.deserialize(in), at);
        }

        @Override
        public Row deserialize(Row reuse, DataInputView in) throws IOException {
            return deserialize(in);
        }

        @Override
        public void copy(DataInputView in, DataOutputView out) throws IOException {
            writePositions(readPositions(in), out);
            rows.copy(in, out);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof ChangeRowSerializer && rows.equals(((ChangeRowSerializer) o).rows);
        }

        @Override
        public int hashCode() {
            return rows.hashCode() + 1;
        }

        @Override
        public TypeSerializerSnapshot<Row> snapshotConfiguration() {
            return new Snapshot(this);
        }
    }

    /** The serializer's snapshot: the row serializer's, nested. */
    public static final class Snapshot
            extends CompositeTypeSerializerSnapshot<Row, ChangeRowSerializer> {

        /** For reading a snapshot. */
        public Snapshot() {}

        Snapshot(ChangeRowSerializer serializer) {
            super(serializer);
        }

        @Override
        protected int getCurrentOuterSnapshotVersion() {
            return 1;
        }

        @Override
        protected TypeSerializer<?>[] getNestedSerializers(ChangeRowSerializer outer) {
            return new TypeSerializer<?>[] {outer.rows};
        }

        @Override
        @SuppressWarnings("unchecked")
        protected ChangeRowSerializer createOuterSerializerWithNestedSerializers(
                TypeSerializer<?>[] nested) {
            return new ChangeRowSerializer((TypeSerializer<Row>) nested[0]);
        }
    }
}
