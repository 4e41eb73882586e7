package dev.cdcjoin.flink.serialization;

import dev.cdcjoin.flink.runtime.ChangeBatch;
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
 * Serializes a {@link ChangeBatch} as {@code keyGroup i32 | maxParallelism i32 | count i32 |
 * payloadLength i32 | payload}: one record and one array copy per key group's changes.
 */
public final class ChangeBatchSerializer extends TypeSerializerSingleton<ChangeBatch> {

    private static final long serialVersionUID = 1L;

    /** The instance. */
    public static final ChangeBatchSerializer INSTANCE = new ChangeBatchSerializer();

    /** The type information of {@link ChangeBatch}. */
    public static final TypeInformation<ChangeBatch> TYPE_INFO =
            new OpaqueTypeInfo<>(ChangeBatch.class, INSTANCE);

    @Override
    public boolean isImmutableType() {
        return false;
    }

    @Override
    public ChangeBatch createInstance() {
        return new ChangeBatch();
    }

    @Override
    public ChangeBatch copy(ChangeBatch from) {
        byte[] payload = from.payload == null ? null : from.payload.clone();
        return new ChangeBatch(from.keyGroup, from.maxParallelism, from.count, payload);
    }

    @Override
    public ChangeBatch copy(ChangeBatch from, ChangeBatch reuse) {
        return copy(from);
    }

    @Override
    public int getLength() {
        return -1;
    }

    @Override
    public void serialize(ChangeBatch batch, DataOutputView target) throws IOException {
        target.writeInt(batch.keyGroup);
        target.writeInt(batch.maxParallelism);
        target.writeInt(batch.count);
        JoinKeySerializer.writeBytes(batch.payload, target);
    }

    @Override
    public ChangeBatch deserialize(DataInputView source) throws IOException {
        int keyGroup = source.readInt();
        int maxParallelism = source.readInt();
        int count = source.readInt();
        return new ChangeBatch(
                keyGroup, maxParallelism, count, JoinKeySerializer.readBytes(source));
    }

    @Override
    public ChangeBatch deserialize(ChangeBatch reuse, DataInputView source) throws IOException {
        return deserialize(source);
    }

    @Override
    public void copy(DataInputView source, DataOutputView target) throws IOException {
        target.writeInt(source.readInt());
        target.writeInt(source.readInt());
        target.writeInt(source.readInt());
        JoinKeySerializer.copyBytes(source, target);
    }

    @Override
    public TypeSerializerSnapshot<ChangeBatch> snapshotConfiguration() {
        return new Snapshot();
    }

    /** The serializer's snapshot: it has no configuration. */
    public static final class Snapshot extends SimpleTypeSerializerSnapshot<ChangeBatch> {
        /** For Flink's reflection. */
        public Snapshot() {
            super(() -> INSTANCE);
        }
    }

    /** Gives {@link ChangeBatch} this serializer wherever Flink extracts its type. */
    public static final class Factory extends TypeInfoFactory<ChangeBatch> {
        @Override
        public TypeInformation<ChangeBatch> createTypeInfo(
                Type t, Map<String, TypeInformation<?>> genericParameters) {
            return TYPE_INFO;
        }
    }
}
