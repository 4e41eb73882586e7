package dev.cdcjoin.bench;

import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;

/**
 * The counting sink on the 1.20 line ({@link ChecksumWriter}), sampling the latency of probe rows
 * when {@code probes}, reading its rows through {@code access}: there Sink V2's abstract method
 * takes the {@code InitContext} 2.x removed.
 *
 * @param <T> the row type
 */
public record ChecksumSink<T>(boolean probes, RowAccess<T> access) implements Sink<T> {

    @Override
    @SuppressWarnings("deprecation")
    public SinkWriter<T> createWriter(InitContext context) {
        return new ChecksumWriter<>(probes, access);
    }
}
