package dev.cdcjoin.bench;

import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.types.Row;

/**
 * The counting sink on the 1.20 line ({@link ChecksumWriter}), sampling the latency of probe rows
 * when {@code probes}: there Sink V2's abstract method takes the {@code InitContext} 2.x removed.
 */
public record ChecksumSink(boolean probes) implements Sink<Row> {

    @Override
    @SuppressWarnings("deprecation")
    public SinkWriter<Row> createWriter(InitContext context) {
        return new ChecksumWriter(probes);
    }
}
