package dev.cdcjoin.flink;

import dev.cdcjoin.flink.codec.ByteBuffers;
import dev.cdcjoin.flink.nativelib.NativeDecoder;
import dev.cdcjoin.flink.runtime.BatchBuffer;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.types.RowKind;

/** Debezium JSON decoded by the native decoder into {@link ChangeRecord}s, outside a job. */
final class NativeChanges {

    /**
     * Decodes one message ({@code "null"} or {@code null} for a tombstone).
     *
     * @return its changes (none for a tombstone); fails on a bad record
     */
    static List<ChangeRecord> decode(NativeDecoder decoder, String json) {
        BatchBuffer batch = new BatchBuffer(1024);
        batch.putSized(json == null ? null : json.getBytes(StandardCharsets.UTF_8));
        ByteBuffer out = decoder.decodeJson(batch.buffer(), batch.length(), 0);
        List<ChangeRecord> changes = new ArrayList<>();
        int p = 12;
        while (p < out.limit()) {
            byte tag = out.get(p);
            p += 5;
            if (tag != 0) {
                byte[] reason = new byte[out.getInt(p)];
                ByteBuffers.read(out, p + 4, reason, 0, reason.length);
                throw new AssertionError(new String(reason, StandardCharsets.UTF_8));
            }
            RowKind kind = RowKind.fromByteValue(out.get(p));
            byte[] key = new byte[out.getInt(p + 1)];
            ByteBuffers.read(out, p + 5, key, 0, key.length);
            int rowAt = p + 5 + key.length;
            byte[] row = new byte[out.getInt(rowAt)];
            ByteBuffers.read(out, rowAt + 4, row, 0, row.length);
            changes.add(new ChangeRecord(kind, new JoinKey(key), row));
            p = rowAt + 4 + row.length;
        }
        return changes;
    }

    private NativeChanges() {}
}
