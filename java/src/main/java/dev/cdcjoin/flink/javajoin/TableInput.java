package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.SideSpec;
import java.io.Serializable;
import java.util.Objects;

/** One table's input to a decode function: the join side and how updates are emitted. */
final class TableInput implements Serializable {

    private static final long serialVersionUID = 1L;

    /** The table: name, columns, primary key, Debezium format. */
    final SideSpec side;

    /** The table's name (in error messages and bad records). */
    final String source;

    /** Updates as {@code -D}/{@code +I} instead of {@code -U}/{@code +U}. */
    final boolean deleteInsertUpdates;

    TableInput(SideSpec side, boolean deleteInsertUpdates) {
        this.side = Objects.requireNonNull(side, "side");
        this.source = side.name();
        this.deleteInsertUpdates = deleteInsertUpdates;
    }

    /** A new Debezium JSON decoder of the table's messages. */
    DebeziumJsonDecoder jsonDecoder() {
        return new DebeziumJsonDecoder(side, deleteInsertUpdates);
    }
}
