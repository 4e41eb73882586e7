package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.BadRecord;
import dev.cdcjoin.flink.BadRecordPolicy;
import dev.cdcjoin.flink.JoinSpec;
import dev.cdcjoin.flink.javajoin.ResolvedJoin.ResolvedSide;
import java.util.Objects;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.typeutils.EitherTypeInfo;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.types.Either;
import org.apache.flink.types.Row;

/**
 * The pure-Java join of two Debezium change streams: the same decoding and the same changelog as
 * the native operator ({@link dev.cdcjoin.flink.CdcJoin}), with Jackson and Flink keyed state only.
 * It is the fallback where the native library is not available, and the baseline the benchmark
 * compares the native operator with.
 *
 * <pre>{@code
 * JoinSpec def = CdcJoin.builder()
 *     .left("users", usersSchema, List.of("id"), List.of("id"))
 *     .right("domains", domainsSchema, List.of("user_id"), List.of("id"))
 *     .joinType(JoinType.LEFT)
 *     .build()
 *     .spec();
 * DataStream<Row> joined = JavaJoin.join(usersBytes, domainsBytes, def);
 * tableEnv.fromChangelogStream(joined);
 * }</pre>
 *
 * <p>The pipeline: each input is decoded at its own parallelism, chained to its source ({@link
 * DebeziumDecodeFunction}: {@code c}/{@code r} → {@code +I}, {@code u} → {@code -U(before)} +
 * {@code +U(after)}, {@code d} → {@code -D}); both are keyed by their join key (a {@link Row} of
 * the key columns); {@link JavaJoinFunction} joins them. Output rows are the left columns then the
 * right columns (or the definition's projection), typed by {@link #rowTypeInfo()}, with their
 * {@link org.apache.flink.types.RowKind}.
 *
 * <p>Decoding reads each side's values in the encodings its {@link
 * dev.cdcjoin.flink.DebeziumFormat} declares (a schema-wrapped message's Connect schema decides for
 * itself), never guessing; a Debezium placeholder for an unchanged TOASTed value becomes {@link
 * Unavailable}, which the join fills from its state or rejects.
 *
 * <p>Semantics (identical to the native join; see the README and {@link JoinCore}): Flink SQL's
 * regular-join emission rules (inner joins forward {@code -U}/{@code +U}; outer joins emit {@code
 * +I}/{@code -D} except the inner side's retraction, FLINK-17337); on primary-key sides a {@code
 * +I}/{@code +U} for a stored primary key replaces the stored row (identical: nothing emitted;
 * otherwise its joined rows retracted first), so match counts always equal the number of matching
 * rows (unlike FLINK-40681) and re-deliveries leave no stale row; retractions of absent rows
 * counted (metric {@code absentRetractions}) or failed; retractions emitting the stored row; null
 * join keys that never match but are stored; changes the join cannot apply without guessing (an
 * unavailable column with no stored row to take it from, or in a key) go to the bad-record policy.
 * State per side follows its keys ({@link StateLayout}); per-side TTL uses {@code StateTtlConfig}
 * ({@code OnCreateAndWrite}, {@code NeverReturnExpired}), and expiry emits nothing.
 *
 * <p>The state TTL of each side and the absent-retraction policy are taken from the definition.
 * Instances are immutable; the {@code with}-style setters return copies.
 */
public final class JavaJoin {

    private final JoinSpec definition;
    private final ResolvedJoin plan;
    private final BadRecordPolicy policy;
    private final boolean deleteInsertUpdates;

    private JavaJoin(
            JoinSpec definition,
            ResolvedJoin plan,
            BadRecordPolicy policy,
            boolean deleteInsertUpdates) {
        this.definition = definition;
        this.plan = plan;
        this.policy = policy;
        this.deleteInsertUpdates = deleteInsertUpdates;
    }

    /**
     * A Java join of a definition (bad records fail the job; updates are {@code -U}/{@code +U}).
     *
     * @param definition the join, e.g. {@code CdcJoin.builder()...build().spec()}
     * @return the join
     * @throws IllegalArgumentException if the join keys differ in length or type
     */
    public static JavaJoin of(JoinSpec definition) {
        return new JavaJoin(
                Objects.requireNonNull(definition, "definition"),
                ResolvedJoin.of(definition),
                BadRecordPolicy.FAIL,
                false);
    }

    /**
     * Joins two streams of Debezium JSON messages given as bytes (e.g. Kafka record values); bad
     * records fail the job.
     *
     * @param left the left table's messages
     * @param right the right table's messages
     * @param definition the join
     * @return the joined changelog
     */
    public static SingleOutputStreamOperator<Row> join(
            DataStream<byte[]> left, DataStream<byte[]> right, JoinSpec definition) {
        return of(definition).joinJson(left, right).rows();
    }

    /**
     * This join with another bad-record policy (default {@link BadRecordPolicy#FAIL}).
     *
     * @param policy fail the job, or send bad records to {@link BadRecord#OUTPUT}
     * @return a copy
     */
    public JavaJoin badRecordPolicy(BadRecordPolicy policy) {
        return new JavaJoin(
                definition,
                plan.withPolicy(Objects.requireNonNull(policy)),
                policy,
                deleteInsertUpdates);
    }

    /**
     * This join decoding updates as {@code -D}/{@code +I} pairs instead of {@code -U}/{@code +U}.
     *
     * @param on whether to
     * @return a copy
     */
    public JavaJoin deleteInsertUpdates(boolean on) {
        return new JavaJoin(definition, plan, policy, on);
    }

    /**
     * The definition.
     *
     * @return the join definition
     */
    public JoinSpec spec() {
        return definition;
    }

    /**
     * The output's type: left columns then right columns (or the projection).
     *
     * @return the row type information
     */
    public RowTypeInfo rowTypeInfo() {
        return plan.outputType;
    }

    /**
     * The type of the left table's decoded rows.
     *
     * @return the row type information
     */
    public RowTypeInfo leftRowTypeInfo() {
        return plan.left.changeType;
    }

    /**
     * The type of the right table's decoded rows.
     *
     * @return the row type information
     */
    public RowTypeInfo rightRowTypeInfo() {
        return plan.right.changeType;
    }

    /**
     * The join key's type (a row of the key columns' types), the key type of the join's state.
     *
     * @return the row type information
     */
    public RowTypeInfo keyTypeInfo() {
        return plan.keyType;
    }

    /**
     * How the left side's rows are stored.
     *
     * @return the layout its keys allow
     */
    public StateLayout leftLayout() {
        return plan.left.layout;
    }

    /**
     * How the right side's rows are stored.
     *
     * @return the layout its keys allow
     */
    public StateLayout rightLayout() {
        return plan.right.layout;
    }

    /**
     * Selects a left change's join key.
     *
     * @return the key selector
     */
    public KeySelector<Row, Row> leftKeySelector() {
        return new JoinKeySelector(plan.left);
    }

    /**
     * Selects a right change's join key.
     *
     * @return the key selector
     */
    public KeySelector<Row, Row> rightKeySelector() {
        return new JoinKeySelector(plan.right);
    }

    /**
     * A decoder of the left table's messages (for tools and benchmarks; one per thread).
     *
     * @return a new decoder
     */
    public DebeziumJsonDecoder leftDecoder() {
        return input(plan.left).jsonDecoder();
    }

    /**
     * A decoder of the right table's messages (for tools and benchmarks; one per thread).
     *
     * @return a new decoder
     */
    public DebeziumJsonDecoder rightDecoder() {
        return input(plan.right).jsonDecoder();
    }

    /** A side's table as decode functions take it. */
    private TableInput input(ResolvedSide side) {
        return new TableInput(side.side, deleteInsertUpdates);
    }

    /**
     * Decodes the left table's messages, at the input's parallelism.
     *
     * @param messages Debezium JSON as {@code byte[]} or {@code String}
     * @param <T> {@code byte[]} or {@code String}
     * @return the changes; bad records are in the side output {@link BadRecord#OUTPUT}
     */
    public <T> SingleOutputStreamOperator<Row> decodeLeft(DataStream<T> messages) {
        return decode(plan.left, messages);
    }

    /**
     * Decodes the right table's messages, at the input's parallelism.
     *
     * @param messages Debezium JSON as {@code byte[]} or {@code String}
     * @param <T> {@code byte[]} or {@code String}
     * @return the changes; bad records are in the side output {@link BadRecord#OUTPUT}
     */
    public <T> SingleOutputStreamOperator<Row> decodeRight(DataStream<T> messages) {
        return decode(plan.right, messages);
    }

    private <T> SingleOutputStreamOperator<Row> decode(ResolvedSide side, DataStream<T> messages) {
        SingleOutputStreamOperator<Row> out =
                messages.process(
                                new DebeziumDecodeFunction<T>(
                                        side.side, deleteInsertUpdates, policy),
                                side.changeType)
                        .name("JavaJoin decode " + side.name);
        if (messages.getParallelism() > 0) {
            out.setParallelism(messages.getParallelism()); // chained: a row's changes stay in order
        }
        return out;
    }

    /**
     * Splits the left table's {@code Row(before, op, after)} envelopes into changes, at the input's
     * parallelism ({@link RowEnvelopeDecodeFunction}).
     *
     * @param envelopes the envelopes
     * @return the changes; bad records are in the side output {@link BadRecord#OUTPUT}
     */
    public SingleOutputStreamOperator<Row> decodeLeftRows(DataStream<Row> envelopes) {
        return decodeRows(plan.left, envelopes);
    }

    /**
     * Splits the right table's {@code Row(before, op, after)} envelopes into changes, at the
     * input's parallelism ({@link RowEnvelopeDecodeFunction}).
     *
     * @param envelopes the envelopes
     * @return the changes; bad records are in the side output {@link BadRecord#OUTPUT}
     */
    public SingleOutputStreamOperator<Row> decodeRightRows(DataStream<Row> envelopes) {
        return decodeRows(plan.right, envelopes);
    }

    private SingleOutputStreamOperator<Row> decodeRows(
            ResolvedSide side, DataStream<Row> envelopes) {
        SingleOutputStreamOperator<Row> out =
                envelopes
                        .process(
                                new RowEnvelopeDecodeFunction(
                                        side.side, deleteInsertUpdates, policy),
                                side.rowType)
                        .name("JavaJoin split " + side.name);
        if (envelopes.getParallelism() > 0) {
            out.setParallelism(envelopes.getParallelism());
        }
        return out;
    }

    /**
     * Joins two streams of {@code Row(before, op, after)} envelopes.
     *
     * @param left the left table's envelopes
     * @param right the right table's envelopes
     * @return the joined changelog and the bad records
     */
    public Result joinRows(DataStream<Row> left, DataStream<Row> right) {
        return joinDecoded(decodeLeftRows(left), decodeRightRows(right));
    }

    /**
     * Joins two streams of Debezium JSON messages given as bytes.
     *
     * @param left the left table's messages
     * @param right the right table's messages
     * @return the joined changelog and the bad records
     */
    public Result joinJson(DataStream<byte[]> left, DataStream<byte[]> right) {
        return joinDecoded(decodeLeft(left), decodeRight(right));
    }

    /**
     * Joins two streams of Debezium JSON messages given as strings.
     *
     * @param left the left table's messages
     * @param right the right table's messages
     * @return the joined changelog and the bad records
     */
    public Result joinStrings(DataStream<String> left, DataStream<String> right) {
        return joinDecoded(decodeLeft(left), decodeRight(right));
    }

    private Result joinDecoded(
            SingleOutputStreamOperator<Row> left, SingleOutputStreamOperator<Row> right) {
        SingleOutputStreamOperator<Row> joined = joinChanges(left, right);
        return new Result(
                joined,
                left.getSideOutput(BadRecord.OUTPUT)
                        .union(
                                right.getSideOutput(BadRecord.OUTPUT),
                                joined.getSideOutput(BadRecord.OUTPUT)));
    }

    /**
     * Joins two decoded change streams (rows of each table's schema, with their {@code RowKind}):
     * {@code keyBy} join key, then {@link JavaJoinFunction}.
     *
     * @param left the left table's changes
     * @param right the right table's changes
     * @return the joined changelog
     */
    public SingleOutputStreamOperator<Row> joinChanges(
            DataStream<Row> left, DataStream<Row> right) {
        return left.connect(right)
                .keyBy(
                        new JoinKeySelector(plan.left),
                        new JoinKeySelector(plan.right),
                        plan.keyType)
                .process(new JavaJoinFunction(plan), plan.outputType)
                .name(operatorName());
    }

    /**
     * Joins two decoded change streams into the byte-encoded output: as {@link #joinChanges}, but
     * each output row is emitted as {@code kind u8 | leftLen i32 | left | rightLen i32 | right}
     * with both sides whole in the compact row encoding (the native operator's wire format, read
     * with {@link dev.cdcjoin.flink.RawJoinOutput}); the projection is not applied.
     *
     * @param left the left table's changes
     * @param right the right table's changes
     * @return one {@code byte[]} per output row
     */
    public SingleOutputStreamOperator<byte[]> joinChangesRaw(
            DataStream<Row> left, DataStream<Row> right) {
        return rawBytes(joinRawRows(left, right));
    }

    /**
     * The join of {@link #joinChangesRaw} before its rows become bytes: each output row holds the
     * raw record in its only field. Its side output {@link BadRecord#OUTPUT} holds the changes the
     * join rejected.
     *
     * @param left the left table's changes
     * @param right the right table's changes
     * @return the join operator's output
     */
    public SingleOutputStreamOperator<Row> joinRawRows(
            DataStream<Row> left, DataStream<Row> right) {
        ResolvedJoin raw = plan.withRawOutput();
        return left.connect(right)
                .keyBy(new JoinKeySelector(raw.left), new JoinKeySelector(raw.right), raw.keyType)
                .process(new JavaJoinFunction(raw), raw.outputType)
                .name(operatorName() + " (bytes)");
    }

    /**
     * The raw records of {@link #joinRawRows}, as {@code byte[]}.
     *
     * @param rows the join's output
     * @return one {@code byte[]} per output row
     */
    public static SingleOutputStreamOperator<byte[]> rawBytes(
            SingleOutputStreamOperator<Row> rows) {
        return rows.map(new RawField())
                .returns(PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO)
                .setParallelism(rows.getParallelism())
                .name("JavaJoin raw output");
    }

    /** The single {@code byte[]} field of a raw output row. */
    static final class RawField implements MapFunction<Row, byte[]> {
        private static final long serialVersionUID = 1L;

        @Override
        public byte[] map(Row row) {
            return (byte[]) row.getField(0);
        }
    }

    /**
     * Joins both tables' messages given in ONE ordered stream ({@link Either#Left} for the left
     * table's messages), so the join sees the changes in the stream's order and the changelog is
     * deterministic: see {@link OrderedJavaJoinFunction}. Decoding runs at the input's parallelism.
     *
     * @param messages both tables' Debezium JSON, {@code byte[]} or {@code String}
     * @param <T> {@code byte[]} or {@code String}
     * @return the joined changelog and the bad records
     */
    public <T> Result joinInOrder(DataStream<Either<T, T>> messages) {
        SingleOutputStreamOperator<Either<Row, Row>> changes =
                messages.process(
                                new OrderedDecodeFunction<T>(
                                        input(plan.left), input(plan.right), policy),
                                new EitherTypeInfo<>(plan.left.changeType, plan.right.changeType))
                        .name("JavaJoin decode " + plan.left.name + " + " + plan.right.name);
        if (messages.getParallelism() > 0) {
            changes.setParallelism(messages.getParallelism());
        }
        SingleOutputStreamOperator<Row> joined = joinChangesInOrder(changes);
        return new Result(
                joined,
                changes.getSideOutput(BadRecord.OUTPUT)
                        .union(joined.getSideOutput(BadRecord.OUTPUT)));
    }

    /**
     * Joins both tables' decoded changes given in one ordered stream ({@link Either#Left} for the
     * left table's): {@code keyBy} join key, then {@link OrderedJavaJoinFunction}.
     *
     * @param changes both tables' changes
     * @return the joined changelog
     */
    public SingleOutputStreamOperator<Row> joinChangesInOrder(
            DataStream<Either<Row, Row>> changes) {
        return changes.keyBy(new EitherKeySelector(plan.left, plan.right), plan.keyType)
                .process(new OrderedJavaJoinFunction(plan), plan.outputType)
                .name(operatorName() + " (ordered)");
    }

    private String operatorName() {
        return "JavaJoin " + plan.joinType + ": " + plan.left.name + " ⋈ " + plan.right.name;
    }

    /** Selects a change's join key: a row of the key columns. */
    static final class JoinKeySelector implements KeySelector<Row, Row> {
        private static final long serialVersionUID = 1L;
        private final ResolvedSide side;

        JoinKeySelector(ResolvedSide side) {
            this.side = side;
        }

        @Override
        public Row getKey(Row change) {
            return side.joinKey(change);
        }
    }

    /** Selects the join key of either side's change. */
    static final class EitherKeySelector implements KeySelector<Either<Row, Row>, Row> {
        private static final long serialVersionUID = 1L;
        private final ResolvedSide left;
        private final ResolvedSide right;

        EitherKeySelector(ResolvedSide left, ResolvedSide right) {
            this.left = left;
            this.right = right;
        }

        @Override
        public Row getKey(Either<Row, Row> change) {
            return change.isLeft() ? left.joinKey(change.left()) : right.joinKey(change.right());
        }
    }

    /** The outputs of a join: the changelog and the records that could not be decoded. */
    public static final class Result {
        private final SingleOutputStreamOperator<Row> rows;
        private final DataStream<BadRecord> badRecords;

        Result(SingleOutputStreamOperator<Row> rows, DataStream<BadRecord> badRecords) {
            this.rows = rows;
            this.badRecords = badRecords;
        }

        /**
         * The joined changelog.
         *
         * @return rows with their {@code RowKind}
         */
        public SingleOutputStreamOperator<Row> rows() {
            return rows;
        }

        /**
         * Records of either input that could not be decoded, and changes the join rejected (empty
         * under {@link BadRecordPolicy#FAIL}).
         *
         * @return the bad records
         */
        public DataStream<BadRecord> badRecords() {
            return badRecords;
        }
    }
}
