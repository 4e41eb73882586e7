package dev.cdcjoin.flink.serialization;

import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;

/**
 * The type information of a class with a serializer of its own and no fields Flink needs to see: an
 * atomic type that can be a key (its {@code equals} and {@code hashCode} work on content).
 *
 * @param <T> the type
 */
public final class OpaqueTypeInfo<T> extends TypeInformation<T> {

    private static final long serialVersionUID = 1L;

    private final Class<T> type;
    private final TypeSerializer<T> serializer;

    /**
     * The type information of {@code type}.
     *
     * @param type the class
     * @param serializer its serializer
     */
    public OpaqueTypeInfo(Class<T> type, TypeSerializer<T> serializer) {
        this.type = type;
        this.serializer = serializer;
    }

    @Override
    public boolean isBasicType() {
        return false;
    }

    @Override
    public boolean isTupleType() {
        return false;
    }

    @Override
    public int getArity() {
        return 1;
    }

    @Override
    public int getTotalFields() {
        return 1;
    }

    @Override
    public Class<T> getTypeClass() {
        return type;
    }

    @Override
    public boolean isKeyType() {
        return true;
    }

    @Override
    public TypeSerializer<T> createSerializer(SerializerConfig config) {
        return serializer.duplicate();
    }

    /**
     * The serializer, for Flink 1.20, where this overload is the abstract one ({@code
     * TypeInformation.java:179-201} of 1.20.3; 2.0 removed it). No {@code @Override}, so that the
     * same source compiles against both lines.
     *
     * @param config unused: the serializer is fixed
     * @return a duplicate of the serializer
     */
    @SuppressWarnings("deprecation")
    public TypeSerializer<T> createSerializer(ExecutionConfig config) {
        return serializer.duplicate();
    }

    @Override
    public String toString() {
        return type.getSimpleName();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof OpaqueTypeInfo && ((OpaqueTypeInfo<?>) o).type == type;
    }

    @Override
    public int hashCode() {
        return type.hashCode();
    }

    @Override
    public boolean canEqual(Object o) {
        return o instanceof OpaqueTypeInfo;
    }
}
