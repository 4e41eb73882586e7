package dev.cdcjoin.bench;

import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;

/**
 * The counting sink on the 2.x line ({@link ChecksumWriter}; Sink V2's 2.x signature), sampling the
 * latency of probe rows when {@code probes}, reading its rows through {@code access}.
 *
 * @param <T> the row type
 */
public record ChecksumSink<T>(boolean probes, RowAccess<T> access) implements Sink<T> {

    @Override
    public SinkWriter<T> createWriter(WriterInitContext context) {
        return new ChecksumWriter<>(probes, access);
    }
}
