package dev.cdcjoin.flink.serialization;

import dev.cdcjoin.flink.ChangeRecord;
import dev.cdcjoin.flink.JoinKey;
import java.io.IOException;
import java.lang.reflect.Type;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.TypeInfoFactory;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Serializes a {@link ChangeRecord} as {@code kind u8 | keyLength i32 | key | rowLength i32 | row}.
 */
public final class ChangeRecordSerializer extends TypeSerializerSingleton<ChangeRecord> {

    private static final long serialVersionUID = 1L;

    /** The instance. */
    public static final ChangeRecordSerializer INSTANCE = new ChangeRecordSerializer();

    /** The type information of {@link ChangeRecord}. */
    public static final TypeInformation<ChangeRecord> TYPE_INFO =
            new OpaqueTypeInfo<>(ChangeRecord.class, INSTANCE);

    @Override
    public boolean isImmutableType() {
        return false;
    }

    @Override
    public ChangeRecord createInstance() {
        return new ChangeRecord();
    }

    @Override
    public ChangeRecord copy(ChangeRecord from) {
        ChangeRecord c = new ChangeRecord();
        c.kind = from.kind;
        c.key = from.key;
        c.row = from.row == null ? null : from.row.clone();
        return c;
    }

    @Override
    public ChangeRecord copy(ChangeRecord from, ChangeRecord reuse) {
        return copy(from);
    }

    @Override
    public int getLength() {
        return -1;
    }

    @Override
    public void serialize(ChangeRecord record, DataOutputView target) throws IOException {
        target.writeByte(record.kind);
        JoinKeySerializer.writeBytes(record.key.bytes(), target);
        JoinKeySerializer.writeBytes(record.row, target);
    }

    @Override
    public ChangeRecord deserialize(DataInputView source) throws IOException {
        ChangeRecord c = new ChangeRecord();
        c.kind = source.readByte();
        c.key = new JoinKey(JoinKeySerializer.readBytes(source));
        c.row = JoinKeySerializer.readBytes(source);
        return c;
    }

    @Override
    public ChangeRecord deserialize(ChangeRecord reuse, DataInputView source) throws IOException {
        return deserialize(source);
    }

    @Override
    public void copy(DataInputView source, DataOutputView target) throws IOException {
        target.writeByte(source.readByte());
        JoinKeySerializer.copyBytes(source, target);
        JoinKeySerializer.copyBytes(source, target);
    }

    @Override
    public TypeSerializerSnapshot<ChangeRecord> snapshotConfiguration() {
        return new Snapshot();
    }

    /** The serializer's snapshot: it has no configuration. */
    public static final class Snapshot extends SimpleTypeSerializerSnapshot<ChangeRecord> {
        /** For Flink's reflection. */
        public Snapshot() {
            super(() -> INSTANCE);
        }
    }

    /** Gives {@link ChangeRecord} this serializer wherever Flink extracts its type. */
    public static final class Factory extends TypeInfoFactory<ChangeRecord> {
        @Override
        public TypeInformation<ChangeRecord> createTypeInfo(
                Type t, Map<String, TypeInformation<?>> genericParameters) {
            return TYPE_INFO;
        }
    }
}
