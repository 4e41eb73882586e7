package dev.cdcjoin.bench;

import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.types.Row;

/**
 * The counting sink on the 2.x line ({@link ChecksumWriter}; Sink V2's 2.x signature), sampling the
 * latency of probe rows when {@code probes}.
 */
public record ChecksumSink(boolean probes) implements Sink<Row> {

    @Override
    public SinkWriter<Row> createWriter(WriterInitContext context) {
        return new ChecksumWriter(probes);
    }
}
