package dev.cdcjoin.bench;

import java.util.Set;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.sink.SinkV2Provider;
import org.apache.flink.table.factories.DynamicTableSinkFactory;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.types.logical.RowType;

/**
 * SQL connector {@code 'connector' = 'cdcjoin-bench-checksum'}: the counting sink ({@link
 * ChecksumSink}) as a table, taking the query's rows in Flink's internal form as the planner hands
 * them to a sink, without the conversion to {@code Row} that {@code toChangelogStream} adds. For
 * the Flink SQL variant whose sink reads RowData, as the native one's does.
 */
public final class ChecksumTableFactory implements DynamicTableSinkFactory {

    static final ConfigOption<Boolean> PROBES =
            ConfigOptions.key("probes").booleanType().defaultValue(false);

    @Override
    public String factoryIdentifier() {
        return "cdcjoin-bench-checksum";
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        return Set.of();
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        return Set.of(PROBES);
    }

    @Override
    public DynamicTableSink createDynamicTableSink(Context context) {
        FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
        helper.validate();
        RowType type = (RowType) context.getPhysicalRowDataType().getLogicalType();
        return new Table(type, helper.getOptions().get(PROBES));
    }

    /** The sink table: every change kind, each row to the counting sink. */
    private record Table(RowType type, boolean probes) implements DynamicTableSink {

        @Override
        public ChangelogMode getChangelogMode(ChangelogMode requested) {
            return requested;
        }

        @Override
        public SinkRuntimeProvider getSinkRuntimeProvider(Context context) {
            return SinkV2Provider.of(new ChecksumSink<>(probes, RowAccess.rowData(type)));
        }

        @Override
        public DynamicTableSink copy() {
            return new Table(type, probes);
        }

        @Override
        public String asSummaryString() {
            return "checksum sink";
        }
    }
}
