package dev.cdcjoin.flink.serialization;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.ChangeRecord;
import dev.cdcjoin.flink.JoinKey;
import dev.cdcjoin.flink.runtime.ChangeBatch;
import java.io.IOException;
import java.util.List;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.InstantiationUtil;
import org.junit.jupiter.api.Test;

/** The serializers of the records crossing the {@code keyBy}. */
class SerializersTest {

    static final List<ChangeRecord> RECORDS =
            List.of(
                    new ChangeRecord(
                            RowKind.INSERT, new JoinKey(new byte[] {1, 2, 3}), new byte[] {9}),
                    new ChangeRecord(RowKind.UPDATE_BEFORE, new JoinKey(new byte[0]), new byte[0]),
                    new ChangeRecord(RowKind.DELETE, new JoinKey(new byte[300]), new byte[70_000]));

    @Test
    void flinkExtractsTheOwnTypeInformationNotAPojo() {
        assertSame(ChangeRecordSerializer.TYPE_INFO, TypeInformation.of(ChangeRecord.class));
        assertSame(JoinKeySerializer.TYPE_INFO, TypeInformation.of(JoinKey.class));
        assertTrue(JoinKeySerializer.TYPE_INFO.isKeyType());
        assertSame(
                ChangeRecordSerializer.INSTANCE,
                TypeInformation.of(ChangeRecord.class)
                        .createSerializer(new SerializerConfigImpl()));
    }

    @Test
    void recordsRoundTripAndCopyThroughTheStream() throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(16);
        for (ChangeRecord r : RECORDS) {
            ChangeRecordSerializer.INSTANCE.serialize(r, out);
        }
        DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
        DataOutputSerializer copied = new DataOutputSerializer(16);
        for (int i = 0; i < RECORDS.size(); i++) {
            ChangeRecordSerializer.INSTANCE.copy(in, copied);
        }
        assertArrayEquals(out.getCopyOfBuffer(), copied.getCopyOfBuffer());
        DataInputDeserializer again = new DataInputDeserializer(copied.getCopyOfBuffer());
        for (ChangeRecord r : RECORDS) {
            ChangeRecord back = ChangeRecordSerializer.INSTANCE.deserialize(again);
            assertEquals(r, back);
            assertEquals(r, ChangeRecordSerializer.INSTANCE.copy(r));
            assertEquals(r.key.hashCode(), back.key.hashCode());
        }
        assertEquals(0, again.available());
    }

    @Test
    void batchesRoundTripAndCopyThroughTheStream() throws IOException {
        assertSame(ChangeBatchSerializer.TYPE_INFO, TypeInformation.of(ChangeBatch.class));
        List<ChangeBatch> batches =
                List.of(
                        new ChangeBatch(5, 128, 2, new byte[] {1, 2, 3}),
                        new ChangeBatch(32767, 32768, 1, new byte[70_000]));
        DataOutputSerializer out = new DataOutputSerializer(16);
        for (ChangeBatch b : batches) {
            ChangeBatchSerializer.INSTANCE.serialize(b, out);
        }
        DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
        DataOutputSerializer copied = new DataOutputSerializer(16);
        for (int i = 0; i < batches.size(); i++) {
            ChangeBatchSerializer.INSTANCE.copy(in, copied);
        }
        assertArrayEquals(out.getCopyOfBuffer(), copied.getCopyOfBuffer());
        DataInputDeserializer again = new DataInputDeserializer(copied.getCopyOfBuffer());
        for (ChangeBatch b : batches) {
            assertEquals(b, ChangeBatchSerializer.INSTANCE.deserialize(again));
            assertEquals(b, ChangeBatchSerializer.INSTANCE.copy(b));
        }
        assertEquals(0, again.available());
    }

    @Test
    void aNegativeLengthIsACorruptStreamNotAnAllocation() throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(16);
        out.writeInt(-5);
        IOException e =
                assertThrows(
                        IOException.class,
                        () ->
                                JoinKeySerializer.INSTANCE.deserialize(
                                        new DataInputDeserializer(out.getCopyOfBuffer())));
        assertTrue(e.getMessage().contains("negative length"), e.getMessage());
    }

    @Test
    void snapshotsRestoreTheSameSerializerAsCompatible() throws Exception {
        for (TypeSerializer<?> s :
                List.of(
                        ChangeRecordSerializer.INSTANCE,
                        JoinKeySerializer.INSTANCE,
                        ChangeBatchSerializer.INSTANCE)) {
            assertCompatibleAfterRoundTrip(s);
        }
    }

    private static <T> void assertCompatibleAfterRoundTrip(TypeSerializer<T> serializer)
            throws Exception {
        TypeSerializerSnapshot<T> snapshot = serializer.snapshotConfiguration();
        DataOutputSerializer out = new DataOutputSerializer(64);
        TypeSerializerSnapshot.writeVersionedSnapshot(out, snapshot);
        TypeSerializerSnapshot<T> restored =
                TypeSerializerSnapshot.readVersionedSnapshot(
                        new DataInputDeserializer(out.getCopyOfBuffer()),
                        SerializersTest.class.getClassLoader());
        assertSame(serializer, restored.restoreSerializer());
        TypeSerializerSchemaCompatibility<T> c =
                serializer.snapshotConfiguration().resolveSchemaCompatibility(restored);
        assertTrue(c.isCompatibleAsIs(), c.toString());
        assertEquals(serializer, InstantiationUtil.clone(serializer));
    }
}
