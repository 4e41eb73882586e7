package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.codec.CdcSchema;
import java.io.Serializable;
import java.util.Objects;

/** One table's input to a decode function: its name, its columns and how updates are emitted. */
final class TableInput implements Serializable {

    private static final long serialVersionUID = 1L;

    /** The table's name (in error messages and bad records). */
    final String source;

    /** Its columns. */
    final CdcSchema schema;

    /** Updates as {@code -D}/{@code +I} instead of {@code -U}/{@code +U}. */
    final boolean deleteInsertUpdates;

    TableInput(String source, CdcSchema schema, boolean deleteInsertUpdates) {
        this.source = Objects.requireNonNull(source, "source");
        this.schema = Objects.requireNonNull(schema, "schema");
        this.deleteInsertUpdates = deleteInsertUpdates;
    }

    /** A new Debezium JSON decoder of the table's messages. */
    DebeziumJsonDecoder jsonDecoder() {
        return new DebeziumJsonDecoder(source, schema, deleteInsertUpdates);
    }
}
