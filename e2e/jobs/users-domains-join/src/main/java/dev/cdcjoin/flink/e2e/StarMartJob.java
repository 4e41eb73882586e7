package dev.cdcjoin.flink.e2e;

import dev.cdcjoin.flink.BadRecordPolicy;
import dev.cdcjoin.flink.CdcJoin;
import dev.cdcjoin.flink.CdcStar;
import dev.cdcjoin.flink.JoinType;
import dev.cdcjoin.flink.codec.CdcSchema;
import dev.cdcjoin.flink.codec.Column;
import java.util.List;
import java.util.Map;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.types.Row;

/**
 * The e2e star-schema mart (run.sh): the Debezium topics of {@code orders} (the fact), {@code
 * customers} and {@code products} → the product's {@link CdcStar}, two chained native joins → the
 * Postgres mart {@code mart.star_orders}, through {@link MartSinkOperator} (exactly once):
 *
 * <pre>
 * orders LEFT JOIN customers ON customers.id = orders.customer_id
 *        JOIN products ON products.id = orders.product_id
 * </pre>
 *
 * <pre>
 * --bootstrap 127.0.0.1:19092 --topic-prefix e2e --group e2e-join-star
 * --jdbc-url jdbc:postgresql://127.0.0.1:15432/e2e --jdbc-user postgres [--jdbc-password ...]
 * --mart-table mart.star_orders --checkpoint-ms 2000
 * </pre>
 *
 * <p>Topology, parallelism as submitted (2 in the e2e): three Kafka sources → native decoders →
 * {@code keyBy customer_id} → the first join (its output projected to what the second needs, in the
 * native encoding) → {@code keyBy product_id} → the second join → (forward, chained) mart sink. The
 * mart's key contains the last join's key, so that each mart row's changes come from one ordered
 * stream.
 */
public final class StarMartJob {

    /** orders(id PK, customer_id, product_id, qty, status): the fact. */
    static final CdcSchema ORDERS =
            CdcSchema.of(
                    Column.notNull("id", "INT"),
                    Column.nullable("customer_id", "INT"),
                    Column.nullable("product_id", "INT"),
                    Column.nullable("qty", "INT"),
                    Column.nullable("status", "STRING"));

    /** customers(id PK, name, tier, notes): notes is TOASTed. */
    static final CdcSchema CUSTOMERS =
            CdcSchema.of(
                    Column.notNull("id", "INT"),
                    Column.nullable("name", "STRING"),
                    Column.nullable("tier", "STRING"),
                    Column.nullable("notes", "STRING"));

    /** products(id PK, title, price_cents). */
    static final CdcSchema PRODUCTS =
            CdcSchema.of(
                    Column.notNull("id", "INT"),
                    Column.nullable("title", "STRING"),
                    Column.nullable("price_cents", "INT"));

    /** The mart's columns (e2e/sql/schema.sql), in the star's selection order. */
    static final List<String> MART_COLUMNS =
            List.of(
                    "order_id",
                    "customer_id",
                    "product_id",
                    "qty",
                    "status",
                    "customer_name",
                    "customer_tier",
                    "customer_notes",
                    "product_title",
                    "price_cents");

    /** The mart's key: the order, and the last join's key (so one row's changes are ordered). */
    static final List<String> MART_KEY = List.of("order_id", "product_id");

    /**
     * The star: orders LEFT customers, then INNER products, selecting the mart's columns.
     *
     * @return the star, native engine, bad records failing the job
     */
    static CdcStar star() {
        return CdcStar.builder()
                .fact("orders", ORDERS, List.of("id"))
                .dimension(
                        "customers",
                        CUSTOMERS,
                        List.of("customer_id"),
                        List.of("id"),
                        JoinType.LEFT)
                .dimension(
                        "products", PRODUCTS, List.of("product_id"), List.of("id"), JoinType.INNER)
                .select("orders.id", "order_id")
                .select("orders.customer_id")
                .select("orders.product_id")
                .select("orders.qty")
                .select("orders.status")
                .select("customers.name", "customer_name")
                .select("customers.tier", "customer_tier")
                .select("customers.notes", "customer_notes")
                .select("products.title", "product_title")
                .select("products.price_cents")
                .badRecordPolicy(BadRecordPolicy.FAIL)
                .uid("star") // every step's operators: star/customers/..., star/products/...
                .build();
    }

    /**
     * Builds the job from its arguments (above) and runs it until cancelled.
     *
     * @param args {@code --key value} pairs
     * @throws Exception when the job cannot be built or fails
     */
    public static void main(String[] args) throws Exception {
        Map<String, String> a = E2eJobs.parse(args);
        String bootstrap = E2eJobs.required(a, "bootstrap");
        String prefix = a.getOrDefault("topic-prefix", "e2e");
        String group = a.getOrDefault("group", "e2e-join-star");
        String jdbcUrl = E2eJobs.required(a, "jdbc-url");
        String table = E2eJobs.required(a, "mart-table");
        long checkpointMs = Long.parseLong(a.getOrDefault("checkpoint-ms", "2000"));

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.enableCheckpointing(checkpointMs); // exactly once (aligned barriers)
        CdcJoin.Result result =
                star().joinKafka(
                                E2eJobs.source(
                                        env, bootstrap, prefix + ".public.orders", group, "orders"),
                                List.of(
                                        E2eJobs.source(
                                                env,
                                                bootstrap,
                                                prefix + ".public.customers",
                                                group,
                                                "customers"),
                                        E2eJobs.source(
                                                env,
                                                bootstrap,
                                                prefix + ".public.products",
                                                group,
                                                "products")));
        SingleOutputStreamOperator<Row> rows = result.rows();
        MartSinkOperator.sink(
                rows,
                jdbcUrl,
                a.getOrDefault("jdbc-user", "postgres"),
                a.getOrDefault("jdbc-password", ""),
                table,
                MART_COLUMNS,
                MART_KEY);
        env.execute("e2e star orders-customers-products -> " + table);
    }

    private StarMartJob() {}
}
