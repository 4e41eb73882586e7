package dev.cdcjoin.flink.serialization;

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

/** Serializes a {@link JoinKey} as {@code length i32 | bytes}. */
public final class JoinKeySerializer extends TypeSerializerSingleton<JoinKey> {

    private static final long serialVersionUID = 1L;

    /** The instance. */
    public static final JoinKeySerializer INSTANCE = new JoinKeySerializer();

    /** The type information of {@link JoinKey}. */
    public static final TypeInformation<JoinKey> TYPE_INFO =
            new OpaqueTypeInfo<>(JoinKey.class, INSTANCE);

    @Override
    public boolean isImmutableType() {
        return true;
    }

    @Override
    public JoinKey createInstance() {
        return new JoinKey(new byte[0]);
    }

    @Override
    public JoinKey copy(JoinKey from) {
        return from; // immutable
    }

    @Override
    public JoinKey copy(JoinKey from, JoinKey reuse) {
        return copy(from);
    }

    @Override
    public int getLength() {
        return -1;
    }

    @Override
    public void serialize(JoinKey key, DataOutputView target) throws IOException {
        writeBytes(key.bytes(), target);
    }

    @Override
    public JoinKey deserialize(DataInputView source) throws IOException {
        return new JoinKey(readBytes(source));
    }

    @Override
    public JoinKey deserialize(JoinKey reuse, DataInputView source) throws IOException {
        return deserialize(source);
    }

    @Override
    public void copy(DataInputView source, DataOutputView target) throws IOException {
        copyBytes(source, target);
    }

    @Override
    public TypeSerializerSnapshot<JoinKey> snapshotConfiguration() {
        return new Snapshot();
    }

    static void writeBytes(byte[] bytes, DataOutputView target) throws IOException {
        target.writeInt(bytes.length);
        target.write(bytes);
    }

    static byte[] readBytes(DataInputView source) throws IOException {
        int length = source.readInt();
        if (length < 0) {
            throw new IOException("corrupt serialized bytes: negative length " + length);
        }
        byte[] bytes = new byte[length];
        source.readFully(bytes);
        return bytes;
    }

    /**
     * Copies one length-prefixed array (through a {@code byte[]}: not every view grows on {@link
     * DataOutputView#write(DataInputView, int)}).
     */
    static void copyBytes(DataInputView source, DataOutputView target) throws IOException {
        writeBytes(readBytes(source), target);
    }

    /** The serializer's snapshot: it has no configuration. */
    public static final class Snapshot extends SimpleTypeSerializerSnapshot<JoinKey> {
        /** For Flink's reflection. */
        public Snapshot() {
            super(() -> INSTANCE);
        }
    }

    /** Gives {@link JoinKey} this serializer wherever Flink extracts its type. */
    public static final class Factory extends TypeInfoFactory<JoinKey> {
        @Override
        public TypeInformation<JoinKey> createTypeInfo(
                Type t, Map<String, TypeInformation<?>> genericParameters) {
            return TYPE_INFO;
        }
    }
}
