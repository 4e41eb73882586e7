package dev.cdcjoin.bench;

import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.table.data.RowData;
import org.apache.flink.util.Collector;
import org.apache.flink.util.UserCodeClassLoader;

/** What the trace source emits. */
final class Emitters {

    private Emitters() {}

    private static final byte[] EMPTY = new byte[0];

    /** The message bytes, as a Kafka source with a byte-array deserializer gives them. */
    static final class Bytes implements TraceSource.Emitter<byte[]> {
        private static final long serialVersionUID = 1L;

        @Override
        public void emit(byte[] message, ReaderOutput<byte[]> out) {
            out.collect(message == null ? EMPTY : message);
        }
    }

    /**
     * Rows decoded by a format's deserialization schema in the source, as Flink SQL's Kafka
     * connector does ({@code 'format' = 'debezium-json'}).
     */
    static final class Deserializing implements TraceSource.Emitter<RowData> {
        private static final long serialVersionUID = 1L;
        private final DeserializationSchema<RowData> schema;
        private transient Forward forward;

        Deserializing(DeserializationSchema<RowData> schema) {
            this.schema = schema;
        }

        @Override
        public void open(SourceReaderContext context) throws Exception {
            schema.open(
                    new DeserializationSchema.InitializationContext() {
                        @Override
                        public MetricGroup getMetricGroup() {
                            return context.metricGroup().addGroup("deserializer");
                        }

                        @Override
                        public UserCodeClassLoader getUserCodeClassLoader() {
                            return context.getUserCodeClassLoader();
                        }
                    });
            forward = new Forward();
        }

        @Override
        public void emit(byte[] message, ReaderOutput<RowData> out) throws Exception {
            forward.out = out;
            schema.deserialize(message, forward);
        }

        private static final class Forward implements Collector<RowData> {
            ReaderOutput<RowData> out;

            @Override
            public void collect(RowData record) {
                out.collect(record);
            }

            @Override
            public void close() {}
        }
    }
}
