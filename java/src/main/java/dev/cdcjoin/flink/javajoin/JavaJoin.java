package dev.cdcjoin.flink.javajoin;

import dev.cdcjoin.flink.BadRecord;
import dev.cdcjoin.flink.BadRecordPolicy;
import dev.cdcjoin.flink.JoinSpec;
import dev.cdcjoin.flink.KafkaMessage;
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
 * The Java engine's job graph: the same decoding and the same changelog as the native operator,
 * with Jackson and Flink keyed state only. It is the fallback where the native library is not
 * available, and the baseline the benchmark compares the native operator with. Jobs reach it
 * through the one public API, {@link dev.cdcjoin.flink.CdcJoin} with {@code engine(Engine.JAVA)},
 * which builds it from this class's steps; the steps are public for tests and tools (the ordered
 * join, the key selectors, the readers).
 *
 * <p>The steps: each input is decoded at its own parallelism, chained to its source ({@link
 * JavaDecodeFunction}: {@code c}/{@code r} → {@code +I}, {@code u} → {@code -U(before)} + {@code
 * +U(after)}, {@code d} → {@code -D}); both are keyed by their join key (a {@link Row} of the key
 * columns); {@link JavaJoinFunction} joins them. Output rows are the left columns then the right
 * columns (or the definition's projection), typed by {@link #rowTypeInfo()}, with their {@link
 * org.apache.flink.types.RowKind}.
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
 * counted (metric {@link dev.cdcjoin.flink.CdcJoinMetrics#ABSENT_RETRACTIONS}) or failed;
 * retractions emitting the stored row; null join keys that never match but are stored; changes the
 * join cannot apply without guessing (an unavailable column with no stored row to take it from, or
 * in a key) go to the bad-record policy. State per side follows its keys ({@link StateLayout});
 * per-side TTL uses {@code StateTtlConfig} ({@code OnCreateAndWrite}, {@code NeverReturnExpired}),
 * and expiry emits nothing.
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
     * A reader of the left table's messages (for tools and benchmarks; one per thread).
     *
     * @return a new reader
     */
    public DebeziumJsonReader leftReader() {
        return json(plan.left).jsonReader();
    }

    /**
     * A reader of the right table's messages (for tools and benchmarks; one per thread).
     *
     * @return a new reader
     */
    public DebeziumJsonReader rightReader() {
        return json(plan.right).jsonReader();
    }

    /** A side's Debezium JSON input, as decode steps take it. */
    private TableInput json(ResolvedSide side) {
        return new TableInput(side.side, deleteInsertUpdates, TableInput.Records.DEBEZIUM_JSON);
    }

    /**
     * Decodes the left table's messages, at the input's parallelism.
     *
     * @param messages Debezium JSON as {@code byte[]}, {@code String} or {@link KafkaMessage}s'
     *     values, or {@link dev.cdcjoin.flink.UpsertRecord}s
     * @param <T> {@code byte[]}, {@code String}, {@code KafkaMessage} or {@code UpsertRecord}
     * @return the changes; bad records are in the side output {@link BadRecord#OUTPUT}
     */
    public <T> SingleOutputStreamOperator<Row> decodeLeft(DataStream<T> messages) {
        return decode(plan.left, messages);
    }

    /**
     * Decodes the right table's messages, at the input's parallelism.
     *
     * @param messages as for {@link #decodeLeft}
     * @param <T> {@code byte[]}, {@code String}, {@code KafkaMessage} or {@code UpsertRecord}
     * @return the changes; bad records are in the side output {@link BadRecord#OUTPUT}
     */
    public <T> SingleOutputStreamOperator<Row> decodeRight(DataStream<T> messages) {
        return decode(plan.right, messages);
    }

    /**
     * Decodes the left table's Kafka records of an upsert-kafka shaped topic (key and value, a null
     * value deleting), at the input's parallelism.
     *
     * @param records the records
     * @return the changes; bad records are in the side output {@link BadRecord#OUTPUT}
     */
    public SingleOutputStreamOperator<Row> decodeLeftKafkaUpsert(DataStream<KafkaMessage> records) {
        return decode(plan.left, records, TableInput.Records.KAFKA_UPSERT);
    }

    /**
     * Decodes the right table's Kafka records of an upsert-kafka shaped topic, at the input's
     * parallelism.
     *
     * @param records the records
     * @return the changes; bad records are in the side output {@link BadRecord#OUTPUT}
     */
    public SingleOutputStreamOperator<Row> decodeRightKafkaUpsert(
            DataStream<KafkaMessage> records) {
        return decode(plan.right, records, TableInput.Records.KAFKA_UPSERT);
    }

    private <T> SingleOutputStreamOperator<Row> decode(ResolvedSide side, DataStream<T> messages) {
        return decode(side, messages, TableInput.Records.DEBEZIUM_JSON);
    }

    private <T> SingleOutputStreamOperator<Row> decode(
            ResolvedSide side, DataStream<T> messages, TableInput.Records records) {
        TableInput input = new TableInput(side.side, deleteInsertUpdates, records);
        return atInputParallelism(
                messages,
                messages.process(new JavaDecodeFunction<T>(input, policy), side.changeType)
                        .name("JavaJoin decode " + side.name));
    }

    /** A decode step at its input's parallelism: chained, so a row's changes stay in order. */
    private static <T> SingleOutputStreamOperator<T> atInputParallelism(
            DataStream<?> input, SingleOutputStreamOperator<T> decoded) {
        return input.getParallelism() > 0
                ? decoded.setParallelism(input.getParallelism())
                : decoded;
    }

    /**
     * Decodes the left table's {@code Row(before, op, after)} envelopes, at the input's parallelism
     * ({@link RowEnvelopeReader}).
     *
     * @param envelopes the envelopes
     * @return the changes; bad records are in the side output {@link BadRecord#OUTPUT}
     */
    public SingleOutputStreamOperator<Row> decodeLeftRows(DataStream<Row> envelopes) {
        return decodeRows(plan.left, envelopes);
    }

    /**
     * Decodes the right table's {@code Row(before, op, after)} envelopes, at the input's
     * parallelism ({@link RowEnvelopeReader}).
     *
     * @param envelopes the envelopes
     * @return the changes; bad records are in the side output {@link BadRecord#OUTPUT}
     */
    public SingleOutputStreamOperator<Row> decodeRightRows(DataStream<Row> envelopes) {
        return decodeRows(plan.right, envelopes);
    }

    private SingleOutputStreamOperator<Row> decodeRows(
            ResolvedSide side, DataStream<Row> envelopes) {
        TableInput input =
                new TableInput(side.side, deleteInsertUpdates, TableInput.Records.ROW_ENVELOPES);
        return atInputParallelism(
                envelopes,
                envelopes
                        .process(new JavaDecodeFunction<Row>(input, policy), side.rowType)
                        .name("JavaJoin decode " + side.name));
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
     * Joins two decoded change streams into the native operator's wire format, before its rows
     * become bytes ({@link #rawBytes}): each output row holds, in its only field, {@code kind u8 |
     * leftLen i32 | left | rightLen i32 | right} with both sides whole in the compact row encoding
     * (read with {@link dev.cdcjoin.flink.RawJoinOutput}); the projection is not applied. Its side
     * output {@link BadRecord#OUTPUT} holds the changes the join rejected.
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
     * Decodes both tables' messages given in ONE ordered stream ({@link Either#Left} for the left
     * table's messages) into one stream of both tables' changes in that order, at the input's
     * parallelism; {@link #joinChangesInOrder} then joins them in the stream's order, so the
     * changelog is deterministic.
     *
     * @param messages both tables' Debezium JSON, {@code byte[]} or {@code String}
     * @param <T> {@code byte[]} or {@code String}
     * @return the changes; bad records are in the side output {@link BadRecord#OUTPUT}
     */
    public <T> SingleOutputStreamOperator<Either<Row, Row>> decodeInOrder(
            DataStream<Either<T, T>> messages) {
        return atInputParallelism(
                messages,
                messages.process(
                                new OrderedJavaDecodeFunction<T>(
                                        json(plan.left), json(plan.right), policy),
                                new EitherTypeInfo<>(plan.left.changeType, plan.right.changeType))
                        .name("JavaJoin decode " + plan.left.name + " + " + plan.right.name));
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
}
