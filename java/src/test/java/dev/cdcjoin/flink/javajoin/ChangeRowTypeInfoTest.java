package dev.cdcjoin.flink.javajoin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;

/** Decoded changes keep their {@link Unavailable} columns through serialization and copies. */
class ChangeRowTypeInfoTest {

    @Test
    void unavailableColumnsSurviveSerializationAndCopy() throws Exception {
        CdcSchema schema =
                CdcSchema.of(
                        Column.notNull("id", "INT"),
                        Column.nullable("body", "STRING"),
                        Column.nullable("blob", "BYTES"));
        TypeSerializer<Row> s =
                new ChangeRowTypeInfo(schema.rowTypeInfo())
                        .createSerializer(new SerializerConfigImpl());
        Row row = Row.ofKind(RowKind.UPDATE_AFTER, 7, Unavailable.VALUE, null);
        DataOutputSerializer out = new DataOutputSerializer(64);
        s.serialize(row, out);
        Row read = s.deserialize(new DataInputDeserializer(out.getCopyOfBuffer()));
        assertEquals("+U[7, <unavailable>, null]", read.toString());
        assertSame(Unavailable.VALUE, read.getField(1));
        assertSame(Unavailable.VALUE, s.copy(row).getField(1));
        assertSame(Unavailable.VALUE, row.getField(1), "the original is left as it was");
        DataOutputSerializer copied = new DataOutputSerializer(64);
        s.copy(new DataInputDeserializer(out.getCopyOfBuffer()), copied);
        assertEquals(read, s.deserialize(new DataInputDeserializer(copied.getCopyOfBuffer())));
        Row plain = Row.ofKind(RowKind.INSERT, 1, "a", new byte[] {1});
        out.clear();
        s.serialize(plain, out);
        assertEquals(
                "+I[1, a, [1]]",
                s.deserialize(new DataInputDeserializer(out.getCopyOfBuffer())).toString());
    }
}
