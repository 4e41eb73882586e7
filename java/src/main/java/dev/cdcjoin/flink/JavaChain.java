package dev.cdcjoin.flink;

import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import dev.cdcjoin.flink.codec.RowCodec;
import dev.cdcjoin.flink.javajoin.JavaJoin;
import dev.cdcjoin.flink.runtime.JoinBatches;
import java.io.Serializable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.types.Row;

/**
 * The Java engine of {@link CdcMultiJoin}: the left-deep chain of pure-Java binary joins that
 * defines the multi-way join's changelog. Step {@code j} joins the intermediate result of inputs
 * {@code 0..j-1} with input {@code j} (decoded by that step's {@link JavaJoin}); the intermediate
 * result is a side without a primary key whose columns are the inputs' columns and the {@code
 * USING} key, each key column the first non-null of the present inputs' (SQL's {@code COALESCE}),
 * so that rows padded by a RIGHT or FULL step keep the key of their present inputs. The last step's
 * rows are projected to the declared output.
 */
final class JavaChain {

    private final MultiJoinSpec definition;
    private final BadRecordPolicy policy;
    private final Duration ttl;

    JavaChain(MultiJoinSpec definition, BadRecordPolicy policy, Duration ttl) {
        this.definition = definition;
        this.policy = policy;
        this.ttl = ttl;
    }

    /**
     * The chain's output rows with the last step's rejections, the other bad records, and the last
     * step's rows before the projection (every input's columns), for {@link #raw}.
     */
    static final class Built {
        final Backend.Joined<Row> rows;
        final DataStream<BadRecord> badRecords;
        private final SingleOutputStreamOperator<Row> unprojected;
        private final int[] starts;

        Built(
                Backend.Joined<Row> rows,
                DataStream<BadRecord> badRecords,
                SingleOutputStreamOperator<Row> unprojected,
                int[] starts) {
            this.rows = rows;
            this.badRecords = badRecords;
            this.unprojected = unprojected;
            this.starts = starts;
        }
    }

    /**
     * The chain's output as the native multi-way join's raw records ({@code kind u8 | (len i32 |
     * row)*inputs}, {@link JoinBatches#joinedRow}), each input's row encoded by {@link RowCodec}:
     * the same bytes the native engine emits. An input is null-padded in a row when its first NOT
     * NULL column is null there (the decoders refuse a null in a NOT NULL column).
     *
     * @param built the chain
     * @return the records, with the last step's rejections
     * @throws UnsupportedOperationException if an input that can be null-padded has no NOT NULL
     *     column: a row of nulls of it would read as padding
     */
    Backend.Joined<byte[]> raw(Built built) {
        List<SideSpec> inputs = definition.inputs();
        int[] presence = new int[inputs.size()];
        for (int i = 0; i < presence.length; i++) {
            presence[i] = firstNotNull(inputs.get(i).schema());
            if (presence[i] < 0 && definition.padded(i)) {
                throw new UnsupportedOperationException(
                        "rawRows() of the Java multi-way join needs a NOT NULL column in input "
                                + inputs.get(i).name()
                                + ", which can be null-padded: without one a row of nulls reads as"
                                + " padding (Engine.NATIVE tells them apart)");
            }
        }
        SingleOutputStreamOperator<byte[]> raw =
                built.unprojected
                        .map(new RawRecord(definition, built.starts, presence))
                        .returns(PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO)
                        .name("CdcMultiJoin (Java chain, bytes): " + definition);
        int parallelism = built.unprojected.getParallelism();
        return new Backend.Joined<>(
                parallelism > 0 ? raw.setParallelism(parallelism) : raw, built.rows.rejected);
    }

    /** The index of the first NOT NULL column of {@code schema}, or -1 if it has none. */
    private static int firstNotNull(CdcSchema schema) {
        List<Column> columns = schema.columns();
        for (int c = 0; c < columns.size(); c++) {
            if (!columns.get(c).isNullable()) {
                return c;
            }
        }
        return -1;
    }

    /** A row of every input's columns as a raw record (see {@link #raw}). */
    static final class RawRecord implements MapFunction<Row, byte[]> {
        private static final long serialVersionUID = 1L;
        private final RowCodec[] codecs;
        private final int[] starts;
        private final int[] presence;

        RawRecord(MultiJoinSpec definition, int[] starts, int[] presence) {
            this.codecs =
                    definition.inputs().stream()
                            .map(s -> new RowCodec(s.schema()))
                            .toArray(RowCodec[]::new);
            this.starts = starts;
            this.presence = presence;
        }

        @Override
        public byte[] map(Row in) {
            byte[][] rows = new byte[codecs.length][];
            for (int i = 0; i < rows.length; i++) {
                if (presence[i] >= 0 && in.getField(starts[i] + presence[i]) == null) {
                    continue;
                }
                Object[] values = new Object[codecs[i].arity()];
                for (int c = 0; c < values.length; c++) {
                    values[c] = in.getField(starts[i] + c);
                }
                rows[i] = codecs[i].encode(values);
            }
            return JoinBatches.joinedRow(in.getKind().toByteValue(), rows);
        }
    }

    /** Wires the chain over the inputs' Debezium records (JSON messages or Kafka records). */
    <I> Built build(List<DataStream<I>> messages) {
        List<SideSpec> inputs = definition.inputs();
        int keyLength = inputs.get(0).joinKey().size();
        SideSpec left = inputs.get(0);
        DataStream<Row> leftRows = null;
        DataStream<BadRecord> bad = null;
        SingleOutputStreamOperator<Row> joined = null;
        for (int j = 1; j < inputs.size(); j++) {
            SideSpec right = inputs.get(j);
            JoinSpec step =
                    new JoinSpec(
                            left,
                            right,
                            definition.steps().get(j - 1),
                            definition.failOnAbsentRetraction(),
                            null,
                            null);
            JavaJoin java = JavaJoin.of(step).badRecordPolicy(policy);
            if (leftRows == null) {
                SingleOutputStreamOperator<Row> first = java.decodeLeft(messages.get(0));
                bad = first.getSideOutput(BadRecord.OUTPUT);
                leftRows = first;
            }
            SingleOutputStreamOperator<Row> rightRows = java.decodeRight(messages.get(j));
            joined = java.joinChanges(leftRows, rightRows);
            bad = bad.union(rightRows.getSideOutput(BadRecord.OUTPUT));
            if (j + 1 < inputs.size()) {
                bad = bad.union(joined.getSideOutput(BadRecord.OUTPUT));
                Reshape next = Reshape.next(left, right, j, keyLength);
                left = intermediate(j);
                leftRows =
                        joined.map(next)
                                .returns(left.schema().rowTypeInfo())
                                .name("USING key of inputs 0.." + j);
            }
        }
        int leftSize = left.schema().size();
        int[] starts = new int[inputs.size()];
        for (int i = 0; i < starts.length; i++) {
            starts[i] = i == inputs.size() - 1 ? leftSize : offset(i);
        }
        int[] take = new int[definition.outputNames().length];
        for (int i = 0; i < take.length; i++) {
            take[i] = starts[definition.inputOf(i)] + definition.columnOf(i);
        }
        SingleOutputStreamOperator<Row> out =
                joined.map(new Reshape(take, new int[0][]))
                        .returns(definition.rowTypeInfo())
                        .name("CdcMultiJoin (Java chain): " + definition);
        return new Built(
                new Backend.Joined<>(out, joined.getSideOutput(BadRecord.OUTPUT)),
                bad,
                joined,
                starts);
    }

    /** Where input {@code i}'s columns start in an intermediate row. */
    private int offset(int i) {
        int at = 0;
        for (int k = 0; k < i; k++) {
            at += definition.inputs().get(k).schema().size();
        }
        return at;
    }

    /**
     * The intermediate result of inputs {@code 0..j}: their columns (nullable, named {@code
     * i<input>_<column>} so that names stay unique) then the {@code USING} key ({@code using_<c>}),
     * its join key, no primary key.
     */
    private SideSpec intermediate(int j) {
        List<Column> columns = new ArrayList<>();
        for (int i = 0; i <= j; i++) {
            for (Column c : definition.inputs().get(i).schema().columns()) {
                columns.add(new Column("i" + i + "_" + c.name(), c.type(), true));
            }
        }
        SideSpec first = definition.inputs().get(0);
        List<String> key = new ArrayList<>();
        for (int c = 0; c < first.joinKey().size(); c++) {
            Column k = first.schema().columns().get(first.schema().indexOf(first.joinKey().get(c)));
            key.add("using_" + c);
            columns.add(new Column("using_" + c, k.type(), true));
        }
        return new SideSpec("inputs 0.." + j, CdcSchema.of(columns), key, null, ttl);
    }

    /**
     * A row reshaped: the columns at {@code take}, then per key column the first non-null of the
     * columns at {@code coalesce[c]}; the kind kept.
     */
    static final class Reshape implements MapFunction<Row, Row>, Serializable {
        private static final long serialVersionUID = 1L;
        private final int[] take;
        private final int[][] coalesce;

        Reshape(int[] take, int[][] coalesce) {
            this.take = take;
            this.coalesce = coalesce;
        }

        /**
         * The next intermediate row from step {@code j}'s output, whose left side is {@code left}
         * (input 0 when {@code j} is 1, else the intermediate result with its key at its end) and
         * right side {@code right}.
         */
        static Reshape next(SideSpec left, SideSpec right, int j, int keyLength) {
            int leftSize = left.schema().size();
            int keep = j == 1 ? leftSize : leftSize - keyLength;
            int[] take = new int[keep + right.schema().size()];
            for (int i = 0; i < take.length; i++) {
                take[i] = i < keep ? i : leftSize + (i - keep);
            }
            int[][] coalesce = new int[keyLength][];
            for (int c = 0; c < keyLength; c++) {
                int leftKey = j == 1 ? left.schema().indexOf(left.joinKey().get(c)) : keep + c;
                int rightKey = leftSize + right.schema().indexOf(right.joinKey().get(c));
                coalesce[c] = new int[] {leftKey, rightKey};
            }
            return new Reshape(take, coalesce);
        }

        @Override
        public Row map(Row in) {
            Object[] values = new Object[take.length + coalesce.length];
            for (int i = 0; i < take.length; i++) {
                values[i] = in.getField(take[i]);
            }
            for (int c = 0; c < coalesce.length; c++) {
                for (int at : coalesce[c]) {
                    if (values[take.length + c] == null) {
                        values[take.length + c] = in.getField(at);
                    }
                }
            }
            return Row.ofKind(in.getKind(), values);
        }
    }
}
