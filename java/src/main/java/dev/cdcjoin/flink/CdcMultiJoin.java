package dev.cdcjoin.flink;

import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.runtime.ChangeBatch;
import dev.cdcjoin.flink.runtime.JoinOutput;
import dev.cdcjoin.flink.runtime.KeyGroupRoutes;
import dev.cdcjoin.flink.runtime.NativeMultiJoinOperator;
import dev.cdcjoin.flink.serialization.ChangeBatchSerializer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.api.java.typeutils.TupleTypeInfo;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;

/**
 * A multi-way join of 2 to 8 Debezium change streams on one join key, in one operator: each input's
 * rows stored once, no intermediate result, with the changelog of the equivalent chain of binary
 * joins ({@code a JOIN b USING (k) LEFT JOIN c USING (k) ...}).
 *
 * <pre>{@code
 * CdcMultiJoin join = CdcMultiJoin.builder()
 *     .input("users", usersSchema, List.of("id"), List.of("id"))
 *     .input("profiles", profilesSchema, List.of("user_id"), List.of("id"), JoinType.LEFT)
 *     .input("settings", settingsSchema, List.of("user_id"), List.of("user_id"), JoinType.FULL)
 *     .badRecordPolicy(BadRecordPolicy.SIDE_OUTPUT)
 *     .build();
 * CdcJoin.Result result = join.joinJson(List.of(usersBytes, profilesBytes, settingsBytes));
 * }</pre>
 *
 * <p>Step {@code j} joins the result of inputs {@code 0..j-1} with input {@code j} by its join type
 * on the {@code USING} key: a row of the result carries the key of its present inputs (SQL's {@code
 * COALESCE} of the key columns), so RIGHT and FULL steps are well defined and every row belongs to
 * one key. The output is every input's columns in input order (or a projection).
 *
 * <p>With {@link Engine#NATIVE} (default) each input is decoded natively and the join is {@link
 * NativeMultiJoinOperator}; with {@link Engine#JAVA} it is that chain of the pure-Java binary
 * joins, each intermediate result keyed by the {@code USING} key: the same changelog, with the
 * chain's state. Its result can feed a two-table join on another key ({@link
 * CdcJoin.Builder#left(String, CdcMultiJoin, List, List)}): with the native engine the rows cross
 * to it in the native encoding, re-keyed in native code.
 *
 * <p>State TTL ({@link Builder#ttl(Duration)}, per input {@link Builder#ttl(String, Duration)}) has
 * the semantics of Flink's own multi-way join ({@code StreamingMultiJoinOperator}, one state
 * retention per input): each input's rows expire on their own, the TTL after their last write in
 * processing time, and an expired row is invisible at once (it matches nothing; an outer step
 * null-pads as if its input had no such row), its expiry emits nothing, and a retraction of it
 * counts as a retraction of an absent row. With {@link Engine#JAVA} the chain's intermediate
 * results expire too, on their own clock, as Flink SQL's chained joins do, so under expiry the two
 * engines' changelogs differ: the native multi-way join's is not the chain's then.
 */
public final class CdcMultiJoin {

    private final MultiJoinSpec definition;
    private final Engine engine;
    private final BadRecordPolicy policy;
    private final int batchSize;
    private final Duration maxFlushDelay;
    private final Duration ttl;

    /** The prefix of the uids of the operators this join adds ({@link JoinBuilder#uid}). */
    private final String uid;

    private CdcMultiJoin(Builder b, MultiJoinSpec definition) {
        this.definition = definition;
        this.engine = b.engine;
        this.policy = b.policy;
        this.batchSize = b.batchSize;
        this.maxFlushDelay = b.maxFlushDelay;
        this.ttl = b.ttl;
        this.uid = b.uid;
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
    public MultiJoinSpec spec() {
        return definition;
    }

    /**
     * The engine that decodes and joins.
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
     * Joins the inputs' streams of Debezium JSON messages given as bytes (e.g. Kafka record
     * values), one per input in declaration order.
     *
     * @param inputs one stream per input
     * @return the joined changelog and the bad records; {@code rawRows()} is each joined row's
     *     native bytes ({@code kind u8 | (len i32 | row)*inputs}, length -1 for a null-padded
     *     input), the same with either engine
     * @throws IllegalArgumentException if there is not one stream per input
     */
    public CdcJoin.Result joinJson(List<DataStream<byte[]>> inputs) {
        return join(inputs, InputKind.JSON_BYTES);
    }

    /**
     * Joins the inputs' streams of Kafka records of Debezium topics (from {@code KafkaSource}s with
     * a {@link KafkaMessageDeserializer}), one per input in declaration order, as {@link #joinJson}
     * joins messages: bad records name their topic, partition and offset.
     *
     * @param inputs one stream per input
     * @return the joined changelog and the bad records, as {@link #joinJson}'s
     * @throws IllegalArgumentException if there is not one stream per input
     */
    public CdcJoin.Result joinKafka(List<DataStream<KafkaMessage>> inputs) {
        return join(inputs, InputKind.KAFKA_MESSAGES);
    }

    /** Joins the inputs' records of {@code kind} with this join's engine. */
    private <I> CdcJoin.Result join(List<DataStream<I>> inputs, InputKind<I> kind) {
        if (inputs.size() != definition.inputs().size()) {
            throw new IllegalArgumentException(
                    "the join has "
                            + definition.inputs().size()
                            + " inputs, not "
                            + inputs.size()
                            + " streams");
        }
        return engine == Engine.JAVA ? javaChain(inputs) : nativeJoin(inputs, kind);
    }

    /** The native engine: decode each input natively, key group batches, the multi-way join. */
    private <I> CdcJoin.Result nativeJoin(List<DataStream<I>> inputs, InputKind<I> kind) {
        TypeInformation<Tuple2<Integer, ChangeBatch>> tagged =
                new TupleTypeInfo<>(Types.INT, ChangeBatchSerializer.TYPE_INFO);
        Uids uids = new Uids(uid, inputs);
        DataStream<Tuple2<Integer, ChangeBatch>> all = null;
        DataStream<BadRecord> decodeErrors = null;
        for (int i = 0; i < inputs.size(); i++) {
            SideSpec side = definition.inputs().get(i);
            SingleOutputStreamOperator<ChangeBatch> batches =
                    DebeziumDecoder.of(side)
                            .badRecordPolicy(policy)
                            .batchSize(batchSize)
                            .maxFlushDelay(maxFlushDelay)
                            .decodeBatches(inputs.get(i), kind);
            DataStream<Tuple2<Integer, ChangeBatch>> input =
                    batches.map(new Tag(i))
                            .returns(tagged)
                            .name("Input " + i + ": " + side.name())
                            .setParallelism(batches.getParallelism());
            uids.assign(input, "decode-" + side.name());
            DataStream<BadRecord> errors = batches.getSideOutput(BadRecord.OUTPUT);
            all = all == null ? input : all.union(input);
            decodeErrors = decodeErrors == null ? errors : decodeErrors.union(errors);
        }
        DataStream<Tuple2<Integer, ChangeBatch>> keyed = all.keyBy(new Routes(), Types.INT);
        return new CdcJoin.Result(
                this,
                engine,
                uids,
                () -> joined(keyed, JoinOutput.ROWS, definition.rowTypeInfo()),
                () -> joined(keyed, JoinOutput.ROW_DATA, InternalTypeInfo.of(definition.rowType())),
                () ->
                        joined(
                                keyed,
                                JoinOutput.BYTES,
                                PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO),
                next -> joined(keyed, JoinOutput.chained(next), ChangeBatchSerializer.TYPE_INFO),
                decodeErrors);
    }

    /** The multi-way join operator over the keyed inputs, its state declared as managed memory. */
    private <T> Backend.Joined<T> joined(
            DataStream<Tuple2<Integer, ChangeBatch>> keyed,
            JoinOutput<T> output,
            TypeInformation<T> type) {
        NativeMultiJoinOperator<T> operator =
                NativeMultiJoinOperator.of(
                        definition, output, batchSize, maxFlushDelay.toMillis(), policy);
        return Backend.Joined.of(
                NativeBackend.withManagedMemory(
                        keyed.transform(
                                "CdcMultiJoin: " + definition + output.nameSuffix(),
                                type,
                                operator)));
    }

    /** The Java engine: the left-deep chain of Java binary joins ({@link JavaChain}). */
    private <I> CdcJoin.Result javaChain(List<DataStream<I>> inputs) {
        JavaChain chain = new JavaChain(definition, policy, ttl);
        JavaChain.Built built = chain.build(inputs);
        return new CdcJoin.Result(
                this,
                engine,
                new Uids(uid, inputs),
                () -> built.rows,
                () -> JavaBackend.rowData(built.rows, definition.dataType(), definition.rowType()),
                () -> chain.raw(built),
                next -> built.rows,
                built.badRecords);
    }

    /** Tags a batch with its input's index. */
    private static final class Tag
            implements MapFunction<ChangeBatch, Tuple2<Integer, ChangeBatch>> {
        private static final long serialVersionUID = 1L;
        private final int input;

        Tag(int input) {
            this.input = input;
        }

        @Override
        public Tuple2<Integer, ChangeBatch> map(ChangeBatch batch) {
            return Tuple2.of(input, batch);
        }
    }

    /** Routes a tagged batch by its key group ({@link KeyGroupRoutes}). */
    private static final class Routes
            implements KeySelector<Tuple2<Integer, ChangeBatch>, Integer> {
        private static final long serialVersionUID = 1L;
        private final KeyGroupRoutes routes = new KeyGroupRoutes();

        @Override
        public Integer getKey(Tuple2<Integer, ChangeBatch> tagged) {
            return routes.getKey(tagged.f1);
        }
    }

    /** Declares a {@link CdcMultiJoin}. */
    public static final class Builder extends JoinBuilder<Builder> {
        private final List<SideSpec> inputs = new ArrayList<>();
        private final List<JoinType> steps = new ArrayList<>();
        private Duration ttl;
        private final Map<String, Duration> inputTtls = new HashMap<>();
        private DebeziumFormat format = DebeziumFormat.defaults();

        private Builder() {}

        /**
         * Declares the first input.
         *
         * @param name the table's name
         * @param schema its columns
         * @param joinKey the join key columns
         * @param primaryKey the primary key columns, or {@code null}
         * @return this
         * @throws IllegalStateException if an input was declared already
         */
        public Builder input(
                String name, CdcSchema schema, List<String> joinKey, List<String> primaryKey) {
            if (!inputs.isEmpty()) {
                throw new IllegalStateException(
                        "inputs after the first take their join type: input(name, schema, joinKey,"
                                + " primaryKey, joinType)");
            }
            inputs.add(new SideSpec(name, schema, joinKey, primaryKey, null));
            return this;
        }

        /**
         * Declares the next input, joined with the result of the inputs before it by {@code
         * joinType} on the {@code USING} key.
         *
         * @param name the table's name
         * @param schema its columns
         * @param joinKey the join key columns, pairwise of the first input's key types
         * @param primaryKey the primary key columns, or {@code null}
         * @param joinType INNER, LEFT, RIGHT or FULL
         * @return this
         * @throws IllegalStateException if the first input is not declared yet
         */
        public Builder input(
                String name,
                CdcSchema schema,
                List<String> joinKey,
                List<String> primaryKey,
                JoinType joinType) {
            if (inputs.isEmpty()) {
                throw new IllegalStateException(
                        "the first input has no join type: input(name, schema, joinKey,"
                                + " primaryKey)");
            }
            inputs.add(new SideSpec(name, schema, joinKey, primaryKey, null));
            steps.add(Objects.requireNonNull(joinType, "joinType"));
            return this;
        }

        /**
         * Sets the state TTL of every input not given its own ({@link #ttl(String, Duration)}), and
         * with {@link Engine#JAVA} of every intermediate result of the chain (see {@link
         * CdcMultiJoin} for what expiry does).
         *
         * @param ttl retention after a row's last write (processing time), or {@code null} for none
         * @return this
         */
        public Builder ttl(Duration ttl) {
            this.ttl = ttl;
            return this;
        }

        /**
         * Sets the state TTL of one input, over {@link #ttl(Duration)}: Flink's multi-way join
         * takes one retention per input, e.g. a long one for a dimension table and a short one for
         * events.
         *
         * @param input the input's name, as declared
         * @param ttl retention after a row's last write (processing time), or {@code null} for none
         * @return this
         */
        public Builder ttl(String input, Duration ttl) {
            inputTtls.put(Objects.requireNonNull(input, "input"), ttl);
            return this;
        }

        /**
         * Declares how every topic's Debezium messages encode values (default {@link
         * DebeziumFormat#defaults()}).
         *
         * @param format the format
         * @return this
         */
        public Builder format(DebeziumFormat format) {
            this.format = Objects.requireNonNull(format, "format");
            return this;
        }

        /**
         * Validates the declaration.
         *
         * @return the join
         * @throws IllegalArgumentException if it is incomplete or inconsistent, or gives a TTL to
         *     an input it does not declare
         */
        public CdcMultiJoin build() {
            List<SideSpec> sides = new ArrayList<>();
            for (SideSpec s : inputs) {
                Duration own = inputTtls.containsKey(s.name()) ? inputTtls.get(s.name()) : ttl;
                sides.add(s.withFormat(format).withTtl(own));
            }
            for (String name : inputTtls.keySet()) {
                if (sides.stream().noneMatch(s -> s.name().equals(name))) {
                    throw new IllegalArgumentException(
                            "ttl of unknown input '" + name + "': the inputs are " + names(sides));
                }
            }
            int[] indexes = projection.isEmpty() ? null : resolve(sides);
            String[] names = projection.isEmpty() ? null : outputNames.toArray(new String[0]);
            return new CdcMultiJoin(this, new MultiJoinSpec(sides, steps, false, indexes, names));
        }

        private static List<String> names(List<SideSpec> sides) {
            List<String> names = new ArrayList<>();
            sides.forEach(s -> names.add(s.name()));
            return names;
        }

        private static List<String> columnNames(SideSpec side) {
            List<String> names = new ArrayList<>();
            side.schema().columns().forEach(c -> names.add(c.name()));
            return names;
        }

        /** The projection's columns as indexes into all inputs' columns in input order. */
        private int[] resolve(List<SideSpec> sides) {
            int[] out = new int[projection.size()];
            for (int p = 0; p < out.length; p++) {
                String column = projection.get(p);
                int dot = column.indexOf('.');
                String table = dot < 0 ? null : column.substring(0, dot);
                String name = dot < 0 ? column : column.substring(dot + 1);
                int found = -1;
                int offset = 0;
                for (SideSpec s : sides) {
                    int at = columnNames(s).indexOf(name);
                    if (at >= 0 && (table == null || table.equals(s.name()))) {
                        if (found >= 0) {
                            throw new IllegalArgumentException(
                                    "ambiguous output column '" + column + "': write table.column");
                        }
                        found = offset + at;
                    }
                    offset += s.schema().size();
                }
                if (found < 0) {
                    throw new IllegalArgumentException("unknown output column '" + column + "'");
                }
                out[p] = found;
            }
            return out;
        }
    }
}
