package dev.cdcjoin.bench;

import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.types.Row;

/**
 * The counting sink on the 1.20 line ({@link ChecksumWriter}): there Sink V2's abstract method
 * takes the {@code InitContext} that 2.x removed.
 */
public final class ChecksumSink implements Sink<Row> {

    private static final long serialVersionUID = 1L;
    private final boolean probes;

    /** A sink that also samples the latency of probe rows when {@code probes}. */
    public ChecksumSink(boolean probes) {
        this.probes = probes;
    }

    @Override
    @SuppressWarnings("deprecation")
    public SinkWriter<Row> createWriter(InitContext context) {
        return new ChecksumWriter(probes);
    }
}
