package dev.cdcjoin.flink;

import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.runtime.NativeJoinOperator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.Row;

/**
 * A join of two Debezium change streams, decoded and joined in native code, with Flink SQL's
 * regular-join changelog semantics.
 *
 * <pre>{@code
 * CdcJoin join = CdcJoin.builder()
 *     .left("users", CdcSchema.of(DataTypes.ROW(FIELD("id", BIGINT().notNull()), FIELD("name", STRING()))),
 *           List.of("id"), List.of("id"))
 *     .right("domains", domainsSchema, List.of("user_id"), List.of("id"))
 *     .joinType(JoinType.LEFT)
 *     .badRecordPolicy(BadRecordPolicy.SIDE_OUTPUT)
 *     .build();
 * CdcJoin.Result result = join.joinJson(usersBytes, domainsBytes);
 * tableEnv.fromChangelogStream(result.rows());      // or result.rowData(), result.rawRows()
 * }</pre>
 *
 * <p>The pipeline is: decode each input (at its parallelism) → {@code keyBy} join key → {@link
 * NativeJoinOperator}. Output rows are the left columns then the right columns (or a projection),
 * carrying their {@link org.apache.flink.types.RowKind}, typed by {@link #rowTypeInfo()}; or in
 * Flink's internal form ({@link Result#rowData()}); or, for sinks that take bytes, each output row
 * in the native wire format ({@link RawJoinOutput}).
 *
 * <p>A join's output can be the left input of another join (a chained join, see {@link
 * Builder#left(String, CdcJoin, List, List)} and {@link #joinJson(Result, DataStream)}; {@link
 * CdcStar} wires a star of them), and so can a multi-way join's ({@link Builder#left(String,
 * CdcMultiJoin, List, List)}): with the native engine the previous join re-keys its rows for the
 * next one in native code, and they cross the {@code keyBy} as key group batches.
 *
 * <p>With {@link Builder#engine(Engine) engine(Engine.JAVA)} the same calls build the pure-Java
 * join (package {@code javajoin}: Jackson decoding, Flink keyed state) instead, with the same
 * changelog and the same {@link Result}; no native code is loaded unless {@link #leftDecoder()} or
 * {@link #rightDecoder()} is used.
 */
public final class CdcJoin {

    private final JoinSpec definition;
    private final Engine engine;

    /**
     * The join ({@link CdcJoin} or {@link CdcMultiJoin}) whose output is the left input ({@link
     * Builder#left(String, CdcJoin, List, List)}), or {@code null}.
     */
    private final Object leftSource;

    /**
     * The join ({@link CdcJoin} or {@link CdcMultiJoin}) whose output is the right input ({@link
     * Builder#right(String, CdcJoin, List, List)}), or {@code null}.
     */
    private final Object rightSource;

    /** The settings the engines read ({@link NativeBackend}, {@link JavaBackend}). */
    final BadRecordPolicy policy;

    final int batchSize;
    final Duration maxFlushDelay;
    final boolean deleteInsertUpdates;

    /** The prefix of the uids of the operators this join adds ({@link JoinBuilder#uid}). */
    private final String uid;

    private CdcJoin(Builder b, JoinSpec definition) {
        this.definition = definition;
        this.policy = b.policy;
        this.batchSize = b.batchSize;
        this.maxFlushDelay = b.maxFlushDelay;
        this.uid = b.uid;
        this.deleteInsertUpdates = b.deleteInsertUpdates;
        this.engine = b.engine;
        this.leftSource = b.leftSource;
        this.rightSource = b.rightSource;
    }

    /**
     * Starts a declaration.
     *
     * @return a builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The declaration.
     *
     * @return the definition
     */
    public JoinSpec spec() {
        return definition;
    }

    /**
     * The engine that joins (and, for {@link #joinJson}, {@link #joinStrings} and {@link
     * #joinRows}, decodes).
     *
     * @return the engine
     */
    public Engine engine() {
        return engine;
    }

    /**
     * The output's type, accepted by {@code StreamTableEnvironment.fromChangelogStream}.
     *
     * @return the row type information
     */
    public RowTypeInfo rowTypeInfo() {
        return definition.rowTypeInfo();
    }

    /**
     * The native decoder of the left input, configured like this join (whatever the engine).
     *
     * @return a decoder
     */
    public DebeziumDecoder leftDecoder() {
        return decoder(definition.left());
    }

    /**
     * The native decoder of the right input, configured like this join (whatever the engine).
     *
     * @return a decoder
     */
    public DebeziumDecoder rightDecoder() {
        return decoder(definition.right());
    }

    /** The native decoder of a side, configured like this join. */
    DebeziumDecoder decoder(SideSpec side) {
        return DebeziumDecoder.of(side)
                .badRecordPolicy(policy)
                .batchSize(batchSize)
                .maxFlushDelay(maxFlushDelay)
                .deleteInsertUpdates(deleteInsertUpdates);
    }

    /**
     * Joins two streams of Debezium JSON messages given as bytes (e.g. Kafka record values).
     *
     * @param left the left table's messages
     * @param right the right table's messages
     * @return the joined changelog and the bad records
     */
    public Result joinJson(DataStream<byte[]> left, DataStream<byte[]> right) {
        return decodeAndJoin(backend(), InputKind.JSON_BYTES, left, right);
    }

    /**
     * Joins two streams of Kafka records of Debezium topics (from a {@code KafkaSource} with a
     * {@link KafkaMessageDeserializer}): their values decoded as {@link #joinJson(DataStream,
     * DataStream)} decodes messages, a record that cannot be decoded reported with its topic,
     * partition and offset ({@link BadRecord#topic}).
     *
     * @param left the left table's records
     * @param right the right table's records
     * @return the joined changelog and the bad records
     */
    public Result joinKafka(DataStream<KafkaMessage> left, DataStream<KafkaMessage> right) {
        return decodeAndJoin(backend(), InputKind.KAFKA_MESSAGES, left, right);
    }

    /**
     * Joins the output of another join (a chained join: the left input declared with {@link
     * Builder#left(String, CdcJoin, List, List)}) with a stream of Debezium JSON messages given as
     * bytes. With the native engine the output stays in the native encoding: the previous join
     * re-keys its rows for this join in native code.
     *
     * @param left the previous join's result, whose join was declared as this join's left input
     * @param right the right table's messages
     * @return the joined changelog, and the bad records of both joins
     * @throws IllegalArgumentException if {@code left} is not the output of the join declared as
     *     the left input, or was built with another engine
     */
    public Result joinJson(Result left, DataStream<byte[]> right) {
        return chainAndJoin(backend(), left, right, InputKind.JSON_BYTES);
    }

    /**
     * Joins the output of another join with a stream of Debezium JSON messages given as strings:
     * see {@link #joinJson(Result, DataStream)}.
     *
     * @param left the previous join's result, whose join was declared as this join's left input
     * @param right the right table's messages
     * @return the joined changelog, and the bad records of both joins
     */
    public Result joinStrings(Result left, DataStream<String> right) {
        return chainAndJoin(backend(), left, right, InputKind.JSON_STRINGS);
    }

    /**
     * Joins the output of another join with a stream of {@code Row(before, op, after)} envelopes:
     * see {@link #joinJson(Result, DataStream)}.
     *
     * @param left the previous join's result, whose join was declared as this join's left input
     * @param right the right table's envelopes
     * @return the joined changelog, and the bad records of both joins
     */
    public Result joinRows(Result left, DataStream<Row> right) {
        return chainAndJoin(backend(), left, right, InputKind.ROW_ENVELOPES);
    }

    /**
     * Joins the output of another join with a stream of Kafka records of a Debezium topic: see
     * {@link #joinJson(Result, DataStream)} and {@link #joinKafka(DataStream, DataStream)}.
     *
     * @param left the previous join's result, whose join was declared as this join's left input
     * @param right the right table's records
     * @return the joined changelog, and the bad records of both joins
     */
    public Result joinKafka(Result left, DataStream<KafkaMessage> right) {
        return chainAndJoin(backend(), left, right, InputKind.KAFKA_MESSAGES);
    }

    /**
     * Joins a stream of Debezium JSON messages given as bytes with the output of another join, fed
     * to the right side (declared with {@link Builder#right(String, CdcJoin, List, List)}): see
     * {@link #joinJson(Result, DataStream)}.
     *
     * @param left the left table's messages
     * @param right the previous join's result, whose join was declared as this join's right input
     * @return the joined changelog, and the bad records of both joins
     */
    public Result joinJson(DataStream<byte[]> left, Result right) {
        return joinChained(backend(), left, right, InputKind.JSON_BYTES);
    }

    /**
     * Joins a stream of Debezium JSON messages given as strings with the output of another join,
     * fed to the right side: see {@link #joinJson(DataStream, Result)}.
     *
     * @param left the left table's messages
     * @param right the previous join's result, whose join was declared as this join's right input
     * @return the joined changelog, and the bad records of both joins
     */
    public Result joinStrings(DataStream<String> left, Result right) {
        return joinChained(backend(), left, right, InputKind.JSON_STRINGS);
    }

    /**
     * Joins a stream of Kafka records of a Debezium topic with the output of another join, fed to
     * the right side: see {@link #joinJson(DataStream, Result)} and {@link #joinKafka(DataStream,
     * DataStream)}.
     *
     * @param left the left table's records
     * @param right the previous join's result, whose join was declared as this join's right input
     * @return the joined changelog, and the bad records of both joins
     */
    public Result joinKafka(DataStream<KafkaMessage> left, Result right) {
        return joinChained(backend(), left, right, InputKind.KAFKA_MESSAGES);
    }

    /**
     * Joins two streams of Debezium JSON messages given as strings.
     *
     * @param left the left table's messages
     * @param right the right table's messages
     * @return the joined changelog and the bad records
     */
    public Result joinStrings(DataStream<String> left, DataStream<String> right) {
        return decodeAndJoin(backend(), InputKind.JSON_STRINGS, left, right);
    }

    /**
     * Joins two streams of {@code Row(before, op, after)} envelopes.
     *
     * @param left the left table's envelopes
     * @param right the right table's envelopes
     * @return the joined changelog and the bad records
     */
    public Result joinRows(DataStream<Row> left, DataStream<Row> right) {
        return decodeAndJoin(backend(), InputKind.ROW_ENVELOPES, left, right);
    }

    /**
     * Joins two upsert-kafka shaped topics (record key = primary key as JSON, value = the row as
     * JSON, null value = delete), as Flink's {@code upsert-kafka} connector reads them; both sides
     * must be in upsert mode ({@link DebeziumFormat#withUpsert(boolean)}).
     *
     * @param left the left table's records
     * @param right the right table's records
     * @return the joined changelog and the bad records
     */
    public Result joinUpsert(DataStream<UpsertRecord> left, DataStream<UpsertRecord> right) {
        return decodeAndJoin(backend(), InputKind.UPSERT_RECORDS, left, right);
    }

    /**
     * Joins two upsert-kafka shaped topics read as Kafka records (from {@code KafkaSource}s with a
     * {@link KafkaMessageDeserializer}), as {@link #joinUpsert} joins {@link UpsertRecord}s: a bad
     * record is reported with its topic, partition and offset. Both sides must be in upsert mode.
     *
     * @param left the left table's records
     * @param right the right table's records
     * @return the joined changelog and the bad records
     */
    public Result joinKafkaUpsert(DataStream<KafkaMessage> left, DataStream<KafkaMessage> right) {
        return decodeAndJoin(backend(), InputKind.KAFKA_UPSERT_MESSAGES, left, right);
    }

    /**
     * Joins two decoded change streams (from {@link #leftDecoder()} and {@link #rightDecoder()})
     * with this join's engine.
     *
     * @param left the left table's changes
     * @param right the right table's changes
     * @return the joined changelog, and the decoders' bad records
     */
    public Result join(
            SingleOutputStreamOperator<ChangeRecord> left,
            SingleOutputStreamOperator<ChangeRecord> right) {
        return joinDecoded(backend(), left, right);
    }

    /**
     * Joins two change streams: {@code keyBy} join key, then the join operator ({@link
     * NativeJoinOperator}, or with {@link Engine#JAVA} the rows decoded in Java from their compact
     * encoding and joined by the Java engine).
     *
     * @param left the left table's changes
     * @param right the right table's changes
     * @return the joined changelog
     */
    public SingleOutputStreamOperator<Row> joinChanges(
            DataStream<ChangeRecord> left, DataStream<ChangeRecord> right) {
        Uids uids = uids(left, right);
        return uids.assign(rows(backend(), uids, left, right).output, "join");
    }

    /**
     * Joins two change streams into the byte-encoded output ({@link RawJoinOutput}): as {@link
     * #joinChanges}, but each output row is emitted as the native wire format's bytes.
     *
     * @param left the left table's changes
     * @param right the right table's changes
     * @return the joined changelog, one {@code byte[]} per output row
     */
    public SingleOutputStreamOperator<byte[]> joinChangesRaw(
            DataStream<ChangeRecord> left, DataStream<ChangeRecord> right) {
        Uids uids = uids(left, right);
        return uids.assign(raw(backend(), uids, left, right).output, "join-raw");
    }

    /** The operator IDs of this join over {@code inputs} ({@link Uids}). */
    private Uids uids(DataStream<?>... inputs) {
        return new Uids(uid, List.of(inputs));
    }

    /** The engine's backend: the one place where the engine is chosen. */
    private Backend<?> backend() {
        return engine == Engine.JAVA ? new JavaBackend(this) : new NativeBackend(this);
    }

    private <D> Backend.Joined<Row> rows(
            Backend<D> b,
            Uids uids,
            DataStream<ChangeRecord> left,
            DataStream<ChangeRecord> right) {
        return b.rows(
                changes(b, uids, definition.left(), left),
                changes(b, uids, definition.right(), right));
    }

    private <D> Backend.Joined<byte[]> raw(
            Backend<D> b,
            Uids uids,
            DataStream<ChangeRecord> left,
            DataStream<ChangeRecord> right) {
        return b.raw(
                changes(b, uids, definition.left(), left),
                changes(b, uids, definition.right(), right));
    }

    /** {@code side}'s natively decoded changes {@code in} as engine {@code b}'s, named. */
    private static <D> DataStream<D> changes(
            Backend<D> b, Uids uids, SideSpec side, DataStream<ChangeRecord> in) {
        return uids.assign(b.fromChanges(side, in), "changes-" + side.name());
    }

    /** {@code side}'s records {@code in} of {@code kind} decoded by engine {@code b}, named. */
    private static <D, I> SingleOutputStreamOperator<D> decode(
            Backend<D> b, Uids uids, SideSpec side, DataStream<I> in, InputKind<I> kind) {
        kind.checkReadableBy(side);
        return uids.assign(b.decode(side, in, kind), "decode-" + side.name());
    }

    /** Decodes both inputs, records of {@code kind}, and joins them (see {@link #lazily}). */
    private <D, I> Result decodeAndJoin(
            Backend<D> b, InputKind<I> kind, DataStream<I> left, DataStream<I> right) {
        Uids uids = uids(left, right);
        SingleOutputStreamOperator<D> l = decode(b, uids, definition.left(), left, kind);
        SingleOutputStreamOperator<D> r = decode(b, uids, definition.right(), right, kind);
        return lazily(b, l, r, badRecords(l, r), uids);
    }

    /**
     * The lazy {@link Result} of joining {@code l} and {@code r} with engine {@code b}, its
     * operators named by {@code uids}.
     */
    private <D> Result lazily(
            Backend<D> b,
            DataStream<D> l,
            DataStream<D> r,
            DataStream<BadRecord> inputErrors,
            Uids uids) {
        return new Result(
                this,
                engine,
                uids,
                () -> b.rows(l, r),
                () -> b.rowData(l, r),
                () -> b.raw(l, r),
                next -> b.chain(l, r, next),
                inputErrors);
    }

    /**
     * Joins the previous join's output, fed to this join's left side by the same engine, with the
     * right input's records of {@code kind}.
     */
    private <D, I> Result chainAndJoin(
            Backend<D> b, Result left, DataStream<I> right, InputKind<I> kind) {
        Backend.Joined<D> l = chained(left, leftSource, definition.left(), "left");
        Uids uids = uids(l.output, right);
        SingleOutputStreamOperator<D> r = decode(b, uids, definition.right(), right, kind);
        DataStream<BadRecord> errors = left.badRecords().union(r.getSideOutput(BadRecord.OUTPUT));
        return lazily(b, l.output, r, errors, uids);
    }

    /**
     * Joins the left input's records of {@code kind} with the previous join's output, fed to this
     * join's right side by the same engine.
     */
    private <D, I> Result joinChained(
            Backend<D> b, DataStream<I> left, Result right, InputKind<I> kind) {
        Backend.Joined<D> r = chained(right, rightSource, definition.right(), "right");
        Uids uids = uids(left, r.output);
        SingleOutputStreamOperator<D> l = decode(b, uids, definition.left(), left, kind);
        DataStream<BadRecord> errors = right.badRecords().union(l.getSideOutput(BadRecord.OUTPUT));
        return lazily(b, l, r.output, errors, uids);
    }

    /**
     * The previous join's output {@code result} as changes of this join's {@code side}, after
     * checking that it is the output of {@code source}, the join declared there, built with the
     * same engine.
     */
    private <D> Backend.Joined<D> chained(
            Result result, Object source, SideSpec side, String which) {
        if (source == null || result.source != source) {
            throw new IllegalArgumentException(
                    "the "
                            + which
                            + " result is not the output of the join declared as "
                            + side.name()
                            + " with "
                            + which
                            + "(name, join, joinKey, primaryKey)");
        }
        if (result.engine != engine) {
            throw new IllegalArgumentException(
                    "a chained join needs the same engine as the join it reads: "
                            + result.engine
                            + " and "
                            + engine);
        }
        @SuppressWarnings("unchecked") // built by the same engine's backend: its changes are D
        Backend.Joined<D> joined = (Backend.Joined<D>) result.chain(side);
        return joined;
    }

    /**
     * Joins natively decoded changes lazily with engine {@code b}, as {@link #decodeAndJoin} does.
     */
    private <D> Result joinDecoded(
            Backend<D> b,
            SingleOutputStreamOperator<ChangeRecord> left,
            SingleOutputStreamOperator<ChangeRecord> right) {
        Uids uids = uids(left, right);
        DataStream<D> l = changes(b, uids, definition.left(), left);
        DataStream<D> r = changes(b, uids, definition.right(), right);
        return lazily(b, l, r, badRecords(left, right), uids);
    }

    private static DataStream<BadRecord> badRecords(
            SingleOutputStreamOperator<?> left, SingleOutputStreamOperator<?> right) {
        return left.getSideOutput(BadRecord.OUTPUT).union(right.getSideOutput(BadRecord.OUTPUT));
    }

    /**
     * The outputs of a join: the changelog, as rows, as Flink's internal rows or as bytes, and the
     * records that could not be decoded or joined.
     *
     * <p>The join operator is added to the job by the first call of {@link #rows()} (rows), {@link
     * #rowData()} (Flink's internal rows) or {@link #rawRows()} (bytes), or when a next join reads
     * the result ({@link CdcJoin#joinJson(Result, DataStream)}); later calls of the same method
     * return the same stream. Each of these uses adds its own join operator over the same inputs,
     * each holding its own state (with {@link Engine#JAVA}, a next join reads {@link #rows()}).
     */
    public static final class Result {
        /** The join ({@link CdcJoin} or {@link CdcMultiJoin}) whose output this is. */
        private final Object source;

        /** Its engine, that of a next join reading it. */
        private final Engine engine;

        /** Names the operators of each output as it is added. */
        private final Uids uids;

        private final Supplier<Backend.Joined<Row>> rowsFactory;
        private final Supplier<Backend.Joined<RowData>> rowDataFactory;
        private final Supplier<Backend.Joined<byte[]>> rawFactory;
        private final Function<SideSpec, Backend.Joined<?>> chainFactory;
        private final DataStream<BadRecord> decodeErrors;
        private Backend.Joined<Row> rows;
        private Backend.Joined<RowData> rowData;
        private Backend.Joined<byte[]> raw;
        private final List<Backend.Joined<?>> chained = new ArrayList<>();

        Result(
                Object source,
                Engine engine,
                Uids uids,
                Supplier<Backend.Joined<Row>> rows,
                Supplier<Backend.Joined<RowData>> rowData,
                Supplier<Backend.Joined<byte[]>> raw,
                Function<SideSpec, Backend.Joined<?>> chain,
                DataStream<BadRecord> decodeErrors) {
            this.source = source;
            this.engine = engine;
            this.uids = uids;
            this.rowsFactory = rows;
            this.rowDataFactory = rowData;
            this.rawFactory = raw;
            this.chainFactory = chain;
            this.decodeErrors = decodeErrors;
        }

        /** The join's output as changes of {@code next}, a next join's side (a chained join). */
        Backend.Joined<?> chain(SideSpec next) {
            Backend.Joined<?> joined = chainFactory.apply(next);
            uids.assign(joined.output, "join-chained");
            chained.add(joined);
            return joined;
        }

        /**
         * The joined changelog.
         *
         * @return rows with their {@code RowKind}, typed by {@link CdcJoin#rowTypeInfo()}
         */
        public SingleOutputStreamOperator<Row> rows() {
            if (rows == null) {
                rows = rowsFactory.get();
                uids.assign(rows.output, "join");
            }
            return rows.output;
        }

        /**
         * The joined changelog in Flink's internal form, the one Flink's table runtime passes
         * between its operators: each output row a {@link
         * org.apache.flink.table.data.binary.BinaryRowData} with its {@code RowKind}, projected as
         * {@link #rows()}, typed {@code InternalTypeInfo.of(spec().rowType())} ({@link
         * JoinSpec#rowType()}). The native engine writes each row from the bytes it computed,
         * without a Java object per column (no {@code String} is decoded); the pure-Java engine
         * converts its rows with Flink's converter. {@code StreamTableEnvironment} does not take
         * internal rows as a table ({@code fromChangelogStream} wants {@link Row}s): this form is
         * for DataStream operators and sinks that read {@link RowData}.
         *
         * @return the output rows: the same changelog as {@link #rows()}
         */
        public SingleOutputStreamOperator<RowData> rowData() {
            if (rowData == null) {
                rowData = rowDataFactory.get();
                uids.assign(rowData.output, "join-rowdata");
            }
            return rowData.output;
        }

        /**
         * The joined changelog as bytes, for sinks that take bytes: one {@code byte[]} per output
         * row, {@code kind u8 | leftLen i32 | left row | rightLen i32 | right row} (little-endian,
         * length -1 for a null-padded side), each side a whole row of its schema in the compact row
         * encoding; the output projection is not applied. The native engine emits the bytes it
         * computed without building a Java object per row. Read them with {@link RawJoinOutput}.
         *
         * @return the output rows' bytes: the same changelog as {@link #rows()}
         */
        public SingleOutputStreamOperator<byte[]> rawRows() {
            if (raw == null) {
                raw = rawFactory.get();
                uids.assign(raw.output, "join-raw");
            }
            return raw.output;
        }

        /**
         * Records of either input that could not be decoded, and changes the join rejected (e.g. an
         * unchanged TOASTed column with no stored row to take its value from); empty under {@link
         * BadRecordPolicy#FAIL}. Call it after {@link #rows()}, {@link #rowData()} or {@link
         * #rawRows()}: when none was called yet, it adds the join as {@link #rows()} does.
         *
         * @return the bad records
         */
        public DataStream<BadRecord> badRecords() {
            if (rows == null && rowData == null && raw == null && chained.isEmpty()) {
                rows();
            }
            List<Backend.Joined<?>> joins = new ArrayList<>(chained);
            joins.addAll(Arrays.asList(rows, rowData, raw));
            // Two outputs may share one join (rowData() of the Java multi-way join converts its
            // rows()): each join's rejections are counted once.
            List<DataStream<BadRecord>> rejected = new ArrayList<>();
            for (Backend.Joined<?> joined : joins) {
                if (joined != null && !rejected.contains(joined.rejected)) {
                    rejected.add(joined.rejected);
                }
            }
            DataStream<BadRecord> all = decodeErrors;
            for (DataStream<BadRecord> r : rejected) {
                all = all.union(r);
            }
            return all;
        }
    }

    /** Declares a {@link CdcJoin}. */
    public static final class Builder extends JoinBuilder<Builder> {
        private SideSpec left;
        private Object leftSource;
        private SideSpec right;
        private Object rightSource;
        private JoinType joinType = JoinType.INNER;
        private Duration leftTtl;
        private Duration rightTtl;
        private DebeziumFormat leftFormat = DebeziumFormat.defaults();
        private DebeziumFormat rightFormat = DebeziumFormat.defaults();
        private boolean failOnAbsentRetraction;
        private boolean deleteInsertUpdates;

        private Builder() {}

        /**
         * Declares the left input.
         *
         * @param name the table's name
         * @param schema its columns
         * @param joinKey the join key columns
         * @param primaryKey the primary key columns, or {@code null}
         * @return this
         */
        public Builder left(
                String name, CdcSchema schema, List<String> joinKey, List<String> primaryKey) {
            this.left = new SideSpec(name, schema, joinKey, primaryKey, null);
            this.leftSource = null;
            return this;
        }

        /**
         * Declares the left input as the output of another join (a chained join, e.g. orders ⋈
         * customers joined with products): its columns are {@code previous}'s output columns
         * ({@link JoinSpec#outputSchema()}), its primary key is one that identifies an output row
         * (e.g. the fact table's id when every join before is on the dimensions' primary keys).
         * Join it with {@link CdcJoin#joinJson(Result, DataStream)}.
         *
         * @param name the input's name (in error messages and bad-record reports)
         * @param previous the join whose output this is
         * @param joinKey the join key columns, among {@code previous}'s output columns
         * @param primaryKey the output columns identifying a row, or {@code null} if none does
         * @return this
         */
        public Builder left(
                String name, CdcJoin previous, List<String> joinKey, List<String> primaryKey) {
            this.left = fedBy(name, previous.spec(), joinKey, primaryKey);
            this.leftSource = previous;
            return this;
        }

        /**
         * Declares the left input as the output of a multi-way join (a mart on one key joined with
         * a table on another key, e.g. users ⋈ profiles ⋈ settings on the user id, then ⋈ companies
         * on the company id): its columns are {@code previous}'s output columns ({@link
         * MultiJoinSpec#outputSchema()}), its primary key is one that identifies an output row.
         * Join it with {@link CdcJoin#joinJson(Result, DataStream)}.
         *
         * @param name the input's name (in error messages and bad-record reports)
         * @param previous the multi-way join whose output this is
         * @param joinKey the join key columns, among {@code previous}'s output columns
         * @param primaryKey the output columns identifying a row, or {@code null} if none does
         * @return this
         */
        public Builder left(
                String name, CdcMultiJoin previous, List<String> joinKey, List<String> primaryKey) {
            this.left = fedBy(name, previous.spec(), joinKey, primaryKey);
            this.leftSource = previous;
            return this;
        }

        /**
         * Declares the right input.
         *
         * @param name the table's name
         * @param schema its columns
         * @param joinKey the join key columns, pairwise of the left key's types
         * @param primaryKey the primary key columns, or {@code null}
         * @return this
         */
        public Builder right(
                String name, CdcSchema schema, List<String> joinKey, List<String> primaryKey) {
            this.right = new SideSpec(name, schema, joinKey, primaryKey, null);
            this.rightSource = null;
            return this;
        }

        /**
         * Declares the right input as the output of another join, as {@link #left(String, CdcJoin,
         * List, List)} does for the left one. Join it with {@link CdcJoin#joinJson(DataStream,
         * Result)}.
         *
         * @param name the input's name (in error messages and bad-record reports)
         * @param previous the join whose output this is
         * @param joinKey the join key columns, among {@code previous}'s output columns
         * @param primaryKey the output columns identifying a row, or {@code null} if none does
         * @return this
         */
        public Builder right(
                String name, CdcJoin previous, List<String> joinKey, List<String> primaryKey) {
            this.right = fedBy(name, previous.spec(), joinKey, primaryKey);
            this.rightSource = previous;
            return this;
        }

        /**
         * Declares the right input as the output of a multi-way join, as {@link #left(String,
         * CdcMultiJoin, List, List)} does for the left one. Join it with {@link
         * CdcJoin#joinJson(DataStream, Result)}.
         *
         * @param name the input's name (in error messages and bad-record reports)
         * @param previous the multi-way join whose output this is
         * @param joinKey the join key columns, among {@code previous}'s output columns
         * @param primaryKey the output columns identifying a row, or {@code null} if none does
         * @return this
         */
        public Builder right(
                String name, CdcMultiJoin previous, List<String> joinKey, List<String> primaryKey) {
            this.right = fedBy(name, previous.spec(), joinKey, primaryKey);
            this.rightSource = previous;
            return this;
        }

        /**
         * A side whose rows are {@code previous}'s output rows. Its primary key may not hold a
         * column {@code previous} can null-pad: every row padded there would have the same key and
         * replace the one before it (Flink infers no unique key from such a column either).
         */
        private static SideSpec fedBy(
                String name,
                JoinDefinition previous,
                List<String> joinKey,
                List<String> primaryKey) {
            for (String column : primaryKey == null ? List.<String>of() : primaryKey) {
                if (previous.paddedColumn(column)) {
                    throw new IllegalArgumentException(
                            name
                                    + ": primary key column '"
                                    + column
                                    + "' comes from an input the join before can null-pad, so"
                                    + " its padded rows would share one key and replace one"
                                    + " another; declare columns of inputs it preserves, or no"
                                    + " primary key (null)");
                }
            }
            return new SideSpec(name, previous.outputSchema(), joinKey, primaryKey, null)
                    .fedByJoin();
        }

        /**
         * Sets the join type (default INNER).
         *
         * @param joinType the type
         * @return this
         */
        public Builder joinType(JoinType joinType) {
            this.joinType = Objects.requireNonNull(joinType);
            return this;
        }

        /**
         * Sets the state TTL of both sides ({@code table.exec.state.ttl} semantics).
         *
         * @param ttl retention after a row's last write, or {@code null} for none
         * @return this
         */
        public Builder ttl(Duration ttl) {
            this.leftTtl = ttl;
            this.rightTtl = ttl;
            return this;
        }

        /**
         * Sets the state TTL of each side.
         *
         * @param left the left side's, or {@code null}
         * @param right the right side's, or {@code null}
         * @return this
         */
        public Builder ttl(Duration left, Duration right) {
            this.leftTtl = left;
            this.rightTtl = right;
            return this;
        }

        /**
         * Declares how both topics' Debezium messages encode values (default {@link
         * DebeziumFormat#defaults()}: what Flink's {@code debezium-json} reads).
         *
         * @param format the format
         * @return this
         */
        public Builder format(DebeziumFormat format) {
            return format(format, format);
        }

        /**
         * Declares how each topic's Debezium messages encode values.
         *
         * @param left the left topic's format
         * @param right the right topic's format
         * @return this
         */
        public Builder format(DebeziumFormat left, DebeziumFormat right) {
            this.leftFormat = Objects.requireNonNull(left, "left format");
            this.rightFormat = Objects.requireNonNull(right, "right format");
            return this;
        }

        /**
         * Fails the job on a retraction of a row that is not in state (default: count it).
         *
         * @param fail whether to
         * @return this
         */
        public Builder failOnAbsentRetraction(boolean fail) {
            this.failOnAbsentRetraction = fail;
            return this;
        }

        /**
         * Decodes updates as {@code -D}/{@code +I} pairs instead of {@code -U}/{@code +U}.
         *
         * @param on whether to
         * @return this
         */
        public Builder deleteInsertUpdates(boolean on) {
            this.deleteInsertUpdates = on;
            return this;
        }

        /**
         * Validates the declaration.
         *
         * @return the join
         * @throws IllegalArgumentException if it is incomplete or inconsistent
         */
        public CdcJoin build() {
            if (left == null || right == null) {
                throw new IllegalArgumentException("both left(...) and right(...) are required");
            }
            SideSpec l = left.withTtl(leftTtl).withFormat(leftFormat);
            SideSpec r = right.withTtl(rightTtl).withFormat(rightFormat);
            int[] indexes = projection.isEmpty() ? null : resolve(l, r);
            String[] names = projection.isEmpty() ? null : outputNames.toArray(new String[0]);
            return new CdcJoin(
                    this, new JoinSpec(l, r, joinType, failOnAbsentRetraction, indexes, names));
        }

        private int[] resolve(SideSpec l, SideSpec r) {
            int[] out = new int[projection.size()];
            for (int i = 0; i < out.length; i++) {
                out[i] = resolve(projection.get(i), l, r);
            }
            return out;
        }

        private static int resolve(String column, SideSpec l, SideSpec r) {
            int dot = column.indexOf('.');
            Function<SideSpec, Integer> find =
                    side ->
                            side.schema().columns().stream()
                                    .map(c -> c.name())
                                    .collect(Collectors.toList())
                                    .indexOf(dot < 0 ? column : column.substring(dot + 1));
            if (dot >= 0) {
                String table = column.substring(0, dot);
                if (table.equals(l.name()) && find.apply(l) >= 0) {
                    return find.apply(l);
                }
                if (table.equals(r.name()) && find.apply(r) >= 0) {
                    return l.schema().size() + find.apply(r);
                }
                throw new IllegalArgumentException("unknown output column '" + column + "'");
            }
            int inLeft = find.apply(l);
            int inRight = find.apply(r);
            if (inLeft >= 0 && inRight >= 0) {
                throw new IllegalArgumentException(
                        "ambiguous output column '" + column + "': write table.column");
            }
            if (inLeft < 0 && inRight < 0) {
                throw new IllegalArgumentException("unknown output column '" + column + "'");
            }
            return inLeft >= 0 ? inLeft : l.schema().size() + inRight;
        }
    }
}
