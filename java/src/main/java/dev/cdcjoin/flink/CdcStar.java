package dev.cdcjoin.flink;

import dev.cdcjoin.flink.codec.CdcSchema;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.types.Row;

/**
 * A star-shaped mart: one fact table joined with N dimension tables, each on its own key (the
 * fact's foreign key columns = the dimension's primary key), wired as a chain of {@link CdcJoin}s:
 * the fact ⋈ the first dimension, its output ⋈ the second, and so on. Each step projects its output
 * to what later steps need (the fact's primary key, the fact columns later dimensions are joined
 * on, and the selected columns), so intermediate rows and states carry nothing else. Each dimension
 * is joined INNER (fact rows without it are dropped) or LEFT (kept, its columns null).
 *
 * <pre>{@code
 * CdcStar mart = CdcStar.builder()
 *     .fact("orders", orders, List.of("id"))
 *     .dimension("customers", customers, List.of("customer_id"), List.of("id"), JoinType.LEFT)
 *     .dimension("products", products, List.of("product_id"), List.of("id"), JoinType.INNER)
 *     .select("orders.id", "order_id").select("customers.name").select("products.title")
 *     .build();
 * CdcJoin.Result result = mart.joinJson(ordersTopic, List.of(customersTopic, productsTopic));
 * }</pre>
 *
 * <p>The chain's rows keep their fact row's identity, so each step's chained side has the fact's
 * primary key; the limit on rows that change a previous step's key (README, chained joins) applies:
 * a fact row should keep its foreign keys of all but the last dimension.
 */
public final class CdcStar {

    private final List<CdcJoin> joins;

    private CdcStar(List<CdcJoin> joins) {
        this.joins = joins;
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
     * The chain of joins, one per dimension, in declaration order; the last one's output is the
     * mart ({@code joins().get(n - 1).spec().dataType()} is its type).
     *
     * @return the joins
     */
    public List<CdcJoin> joins() {
        return joins;
    }

    /**
     * Joins the fact table's Debezium JSON messages with its dimensions', given as bytes.
     *
     * @param fact the fact table's messages
     * @param dimensions each dimension's messages, in declaration order
     * @return the mart's changelog and every step's bad records
     */
    public CdcJoin.Result joinJson(DataStream<byte[]> fact, List<DataStream<byte[]>> dimensions) {
        return chain(fact, dimensions, CdcJoin::joinJson, CdcJoin::joinJson);
    }

    /**
     * Joins the fact table's Kafka records with its dimensions' (from {@code KafkaSource}s with a
     * {@link KafkaMessageDeserializer}), as {@link CdcJoin#joinKafka(DataStream, DataStream)} reads
     * them: bad records name their topic, partition and offset.
     *
     * @param fact the fact table's records
     * @param dimensions each dimension's records, in declaration order
     * @return the mart's changelog and every step's bad records
     */
    public CdcJoin.Result joinKafka(
            DataStream<KafkaMessage> fact, List<DataStream<KafkaMessage>> dimensions) {
        return chain(fact, dimensions, CdcJoin::joinKafka, CdcJoin::joinKafka);
    }

    /**
     * Joins the fact table's Debezium JSON messages with its dimensions', given as strings.
     *
     * @param fact the fact table's messages
     * @param dimensions each dimension's messages, in declaration order
     * @return the mart's changelog and every step's bad records
     */
    public CdcJoin.Result joinStrings(
            DataStream<String> fact, List<DataStream<String>> dimensions) {
        return chain(fact, dimensions, CdcJoin::joinStrings, CdcJoin::joinStrings);
    }

    /**
     * Joins the fact table's {@code Row(before, op, after)} envelopes with its dimensions' (e.g.
     * from a Kafka source with a deserializer of one's own, such as Debezium records in Avro), as
     * {@link CdcJoin#joinRows(DataStream, DataStream)} reads them.
     *
     * @param fact the fact table's envelopes
     * @param dimensions each dimension's envelopes, in declaration order
     * @return the mart's changelog and every step's bad records
     */
    public CdcJoin.Result joinRows(DataStream<Row> fact, List<DataStream<Row>> dimensions) {
        return chain(fact, dimensions, CdcJoin::joinRows, CdcJoin::joinRows);
    }

    /** Joins the first step with {@code first}, then each result with the next dimension. */
    private <I> CdcJoin.Result chain(
            DataStream<I> fact,
            List<DataStream<I>> dimensions,
            Step<DataStream<I>, I> first,
            Step<CdcJoin.Result, I> next) {
        if (dimensions.size() != joins.size()) {
            throw new IllegalArgumentException(
                    "the star has " + joins.size() + " dimensions, given " + dimensions.size());
        }
        CdcJoin.Result result = first.join(joins.get(0), fact, dimensions.get(0));
        for (int i = 1; i < joins.size(); i++) {
            result = next.join(joins.get(i), result, dimensions.get(i));
        }
        return result;
    }

    /** One step's entry point: a join of a left input with a dimension's records. */
    @FunctionalInterface
    private interface Step<L, I> {
        CdcJoin.Result join(CdcJoin join, L left, DataStream<I> dimension);
    }

    /** A dimension as declared. */
    private static final class Dimension {
        final String name;
        final CdcSchema schema;
        final List<String> factColumns;
        final List<String> key;
        final JoinType joinType;

        Dimension(
                String name,
                CdcSchema schema,
                List<String> factColumns,
                List<String> key,
                JoinType joinType) {
            this.name = name;
            this.schema = schema;
            this.factColumns = List.copyOf(factColumns);
            this.key = List.copyOf(key);
            this.joinType = joinType;
        }
    }

    /** A selected column: {@code table.column} and its name in the mart. */
    private static final class Selected {
        final String table;
        final String column;
        final String outputName;

        Selected(String qualified, String outputName) {
            int dot = qualified.indexOf('.');
            if (dot < 0) {
                throw new IllegalArgumentException(
                        "select columns as table.column, got '" + qualified + "'");
            }
            this.table = qualified.substring(0, dot);
            this.column = qualified.substring(dot + 1);
            this.outputName = outputName;
        }
    }

    /** Declares a {@link CdcStar}. */
    public static final class Builder {
        private String factName;
        private CdcSchema factSchema;
        private List<String> factKey;
        private final List<Dimension> dimensions = new ArrayList<>();
        private final List<Selected> selected = new ArrayList<>();
        private Engine engine = Engine.NATIVE;
        private DebeziumFormat format = DebeziumFormat.defaults();
        private Duration ttl;
        private BadRecordPolicy policy = BadRecordPolicy.FAIL;
        private String uid;
        private Integer batchSize;
        private Duration maxFlushDelay;

        private Builder() {}

        /**
         * Declares the fact table.
         *
         * @param name its name
         * @param schema its columns
         * @param primaryKey its primary key columns
         * @return this
         */
        public Builder fact(String name, CdcSchema schema, List<String> primaryKey) {
            this.factName = Objects.requireNonNull(name, "name");
            this.factSchema = Objects.requireNonNull(schema, "schema");
            this.factKey = List.copyOf(primaryKey);
            return this;
        }

        /**
         * Adds a dimension table, joined after those declared before it.
         *
         * @param name its name
         * @param schema its columns
         * @param factColumns the fact's columns that reference it
         * @param key its primary key, joined with {@code factColumns} pairwise
         * @param joinType {@link JoinType#INNER} or {@link JoinType#LEFT} (the fact preserved)
         * @return this
         */
        public Builder dimension(
                String name,
                CdcSchema schema,
                List<String> factColumns,
                List<String> key,
                JoinType joinType) {
            if (joinType != JoinType.INNER && joinType != JoinType.LEFT) {
                throw new IllegalArgumentException(
                        name + ": a star joins a dimension INNER or LEFT, not " + joinType);
            }
            dimensions.add(new Dimension(name, schema, factColumns, key, joinType));
            return this;
        }

        /**
         * Adds a column of the mart.
         *
         * @param column {@code table.column}
         * @param outputName its name in the mart
         * @return this
         */
        public Builder select(String column, String outputName) {
            selected.add(new Selected(column, outputName));
            return this;
        }

        /**
         * Adds a column of the mart under its own name.
         *
         * @param column {@code table.column}
         * @return this
         */
        public Builder select(String column) {
            return select(column, column.substring(column.indexOf('.') + 1));
        }

        /**
         * Chooses the engine of every step (default {@link Engine#NATIVE}).
         *
         * @param engine the engine
         * @return this
         */
        public Builder engine(Engine engine) {
            this.engine = Objects.requireNonNull(engine);
            return this;
        }

        /**
         * Declares how every topic's Debezium messages encode values.
         *
         * @param format the format
         * @return this
         */
        public Builder format(DebeziumFormat format) {
            this.format = Objects.requireNonNull(format);
            return this;
        }

        /**
         * Sets the state TTL of every step's sides.
         *
         * @param ttl the retention, or {@code null} for none
         * @return this
         */
        public Builder ttl(Duration ttl) {
            this.ttl = ttl;
            return this;
        }

        /**
         * Sets the records per native call of every step ({@link JoinBuilder#batchSize}, default
         * 1024).
         *
         * @param batchSize at least 1
         * @return this
         */
        public Builder batchSize(int batchSize) {
            if (batchSize < 1) {
                throw new IllegalArgumentException("batchSize must be >= 1");
            }
            this.batchSize = batchSize;
            return this;
        }

        /**
         * Sets the longest time a record waits in an unfilled batch, at every step ({@link
         * JoinBuilder#maxFlushDelay}, default 100 ms).
         *
         * @param delay the delay
         * @return this
         */
        public Builder maxFlushDelay(Duration delay) {
            this.maxFlushDelay = Objects.requireNonNull(delay);
            return this;
        }

        /**
         * Names the operators of every step ({@link JoinBuilder#uid}): the step that joins
         * dimension {@code d} has the prefix {@code uid + "/" + d}.
         *
         * @param uid the prefix, not empty
         * @return this
         */
        public Builder uid(String uid) {
            if (uid == null || uid.isEmpty()) {
                throw new IllegalArgumentException("uid must not be empty");
            }
            this.uid = uid;
            return this;
        }

        /**
         * Sets what happens to bad records, at every step (default FAIL).
         *
         * @param policy the policy
         * @return this
         */
        public Builder badRecordPolicy(BadRecordPolicy policy) {
            this.policy = Objects.requireNonNull(policy);
            return this;
        }

        /**
         * Validates the declaration and wires the chain.
         *
         * @return the star
         * @throws IllegalArgumentException if it is incomplete or inconsistent
         */
        public CdcStar build() {
            if (factName == null || dimensions.isEmpty() || selected.isEmpty()) {
                throw new IllegalArgumentException(
                        "a star needs fact(...), at least one dimension(...) and select(...)");
            }
            for (Selected s : selected) {
                tableOf(s.table);
            }
            List<CdcJoin> joins = new ArrayList<>();
            for (int i = 0; i < dimensions.size(); i++) {
                joins.add(step(i, i == 0 ? null : joins.get(i - 1)));
            }
            return new CdcStar(List.copyOf(joins));
        }

        /** The join of step {@code i}: {@code previous}'s output (or the fact) ⋈ dimension i. */
        private CdcJoin step(int i, CdcJoin previous) {
            Dimension d = dimensions.get(i);
            CdcJoin.Builder b = CdcJoin.builder();
            if (previous == null) {
                b.left(factName, factSchema, d.factColumns, factKey);
            } else {
                b.left(stepName(i - 1), previous, carried(d.factColumns), carried(factKey));
            }
            b.right(d.name, d.schema, d.key, d.key)
                    .joinType(d.joinType)
                    .engine(engine)
                    .format(format)
                    .ttl(ttl)
                    .badRecordPolicy(policy);
            if (uid != null) {
                b.uid(uid + "/" + d.name);
            }
            if (batchSize != null) {
                b.batchSize(batchSize);
            }
            if (maxFlushDelay != null) {
                b.maxFlushDelay(maxFlushDelay);
            }
            if (i == dimensions.size() - 1) {
                selected.forEach(s -> b.select(ref(i, s.table, s.column), s.outputName));
            } else {
                for (String[] c : kept(i)) {
                    b.select(ref(i, c[0], c[1]), carried(c[0], c[1]));
                }
            }
            return b.build();
        }

        /** Columns step {@code i} passes on: the fact's key, later join keys, selections. */
        private List<String[]> kept(int i) {
            Set<String> seen = new LinkedHashSet<>();
            List<String[]> out = new ArrayList<>();
            List<String[]> wanted = new ArrayList<>();
            factKey.forEach(c -> wanted.add(new String[] {factName, c}));
            for (Dimension later : dimensions.subList(i + 1, dimensions.size())) {
                later.factColumns.forEach(c -> wanted.add(new String[] {factName, c}));
            }
            for (Selected s : selected) {
                if (joinedBy(s.table, i)) {
                    wanted.add(new String[] {s.table, s.column});
                }
            }
            for (String[] c : wanted) {
                if (seen.add(carried(c[0], c[1]))) {
                    out.add(c);
                }
            }
            return out;
        }

        /** Whether table {@code t} is joined at step {@code i} or before (the fact always). */
        private boolean joinedBy(String t, int i) {
            return t.equals(factName) || dimensions.indexOf(tableOf(t)) <= i;
        }

        /** The dimension named {@code t}, or {@code null} for the fact; unknown names fail. */
        private Dimension tableOf(String t) {
            if (t.equals(factName)) {
                return null;
            }
            return dimensions.stream()
                    .filter(d -> d.name.equals(t))
                    .findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("unknown table '" + t + "'"));
        }

        /** How step {@code i} names column {@code c} of table {@code t} in its inputs. */
        private String ref(int i, String t, String c) {
            boolean onTable = i == 0 || t.equals(dimensions.get(i).name);
            return onTable ? t + "." + c : stepName(i - 1) + "." + carried(t, c);
        }

        /** The name of a fact column in the chain's intermediate rows. */
        private List<String> carried(List<String> factColumns) {
            List<String> out = new ArrayList<>();
            factColumns.forEach(c -> out.add(carried(factName, c)));
            return out;
        }

        /** The name of column {@code c} of table {@code t} in the chain's intermediate rows. */
        private static String carried(String t, String c) {
            return t + "$" + c;
        }

        /** The name of step {@code i}'s output as the next step's input. */
        private String stepName(int i) {
            StringBuilder name = new StringBuilder(factName);
            dimensions.subList(0, i + 1).forEach(d -> name.append('_').append(d.name));
            return name.toString();
        }
    }
}
