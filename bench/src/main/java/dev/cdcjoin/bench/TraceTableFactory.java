package dev.cdcjoin.bench;

import java.util.Set;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.format.DecodingFormat;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.ScanTableSource;
import org.apache.flink.table.connector.source.SourceProvider;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.factories.DeserializationFormatFactory;
import org.apache.flink.table.factories.DynamicTableSourceFactory;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.types.DataType;

/**
 * SQL connector {@code 'connector' = 'cdcjoin-bench-trace'}: a table over one topic of a trace,
 * read by {@link TraceSource} and decoded in the source by the table's {@code format} (e.g. {@code
 * debezium-json}), as Flink's Kafka connector does.
 */
public final class TraceTableFactory implements DynamicTableSourceFactory {

    static final ConfigOption<String> TRACE =
            ConfigOptions.key("trace").stringType().noDefaultValue();
    static final ConfigOption<String> TOPIC =
            ConfigOptions.key("topic").stringType().noDefaultValue();
    static final ConfigOption<Double> RATE =
            ConfigOptions.key("rate").doubleType().defaultValue(0.0);
    static final ConfigOption<Double> MAX_SECONDS =
            ConfigOptions.key("max-seconds").doubleType().defaultValue(0.0);
    static final ConfigOption<Boolean> PAUSE =
            ConfigOptions.key("pause-at-end").booleanType().defaultValue(false);
    static final ConfigOption<Integer> PROBES =
            ConfigOptions.key("probes").intType().defaultValue(0);
    static final ConfigOption<Long> PROBE_INTERVAL =
            ConfigOptions.key("probe-interval-ns").longType().defaultValue(2_000_000L);

    static final ConfigOption<Double> FRACTION =
            ConfigOptions.key("fraction").doubleType().defaultValue(1.0);

    @Override
    public String factoryIdentifier() {
        return "cdcjoin-bench-trace";
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        return Set.of(TRACE, TOPIC, FactoryUtil.FORMAT);
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        return Set.of(RATE, MAX_SECONDS, PAUSE, PROBES, PROBE_INTERVAL, FRACTION);
    }

    @Override
    public DynamicTableSource createDynamicTableSource(Context context) {
        FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
        DecodingFormat<DeserializationSchema<RowData>> format =
                helper.discoverDecodingFormat(
                        DeserializationFormatFactory.class, FactoryUtil.FORMAT);
        helper.validate();
        ReadableConfig o = helper.getOptions();
        TraceSource.Spec spec = new TraceSource.Spec();
        spec.dir = o.get(TRACE);
        spec.topic = TraceFiles.topic(o.get(TOPIC));
        spec.rate = o.get(RATE);
        spec.maxSeconds = o.get(MAX_SECONDS);
        spec.pauseAtEnd = o.get(PAUSE);
        spec.probes = o.get(PROBES);
        spec.probeIntervalNanos = o.get(PROBE_INTERVAL);
        spec.fraction = o.get(FRACTION);
        return new Table(spec, format, context.getPhysicalRowDataType());
    }

    static final class Table implements ScanTableSource {
        private final TraceSource.Spec spec;
        private final DecodingFormat<DeserializationSchema<RowData>> format;
        private final DataType physical;

        Table(
                TraceSource.Spec spec,
                DecodingFormat<DeserializationSchema<RowData>> format,
                DataType physical) {
            this.spec = spec;
            this.format = format;
            this.physical = physical;
        }

        @Override
        public ChangelogMode getChangelogMode() {
            return format.getChangelogMode();
        }

        @Override
        public ScanRuntimeProvider getScanRuntimeProvider(ScanContext context) {
            DeserializationSchema<RowData> schema = format.createRuntimeDecoder(context, physical);
            return SourceProvider.of(new TraceSource<>(spec, new Emitters.Deserializing(schema)));
        }

        @Override
        public DynamicTableSource copy() {
            return new Table(spec, format, physical);
        }

        @Override
        public String asSummaryString() {
            return "cdcjoin-bench-trace";
        }
    }
}
