package dev.cdcjoin.flink;

import dev.cdcjoin.flink.codec.RowCodec;
import dev.cdcjoin.flink.runtime.JoinBatches;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Objects;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

/**
 * The byte-encoded join output ({@link CdcJoin.Result#rawRows()}): one {@code byte[]} per output
 * row, exactly as the native engine writes it (a joined row of {@link JoinBatches} without its
 * stamp), for sinks that take bytes without building a Java object per column.
 *
 * <pre>
 * record := kind u8 (Flink {@link RowKind#toByteValue()})
 *           leftLen i32 | left row bytes       (little-endian; leftLen = -1: null-padded, no bytes)
 *           rightLen i32 | right row bytes     (the same for the right side)
 * </pre>
 *
 * <p>Each side is a whole row of that side's schema in the compact row encoding ({@link RowCodec});
 * the join's output projection is not applied. The static methods read a record's parts in place;
 * an instance decodes records into the {@link Row}s that {@link CdcJoin.Result#rows()} emits (kind,
 * projection and names of its {@link JoinSpec}), e.g. {@code result.rawRows().map(new
 * RawJoinOutput(definition), definition.rowTypeInfo())}.
 */
public final class RawJoinOutput implements MapFunction<byte[], Row> {

    private static final long serialVersionUID = 1L;

    /** The length written for a null-padded side. */
    public static final int NULL_SIDE = JoinBatches.NULL_SIDE;

    private final RowCodec left;
    private final RowCodec right;
    private final int[] projection;

    /**
     * A decoder of the raw output of a join.
     *
     * @param definition the join that wrote the records
     */
    public RawJoinOutput(JoinSpec definition) {
        Objects.requireNonNull(definition, "definition");
        this.left = new RowCodec(definition.left().schema());
        this.right = new RowCodec(definition.right().schema());
        this.projection = definition.projection();
    }

    /**
     * The change kind of a record.
     *
     * @param record a raw output record
     * @return its kind
     */
    public static RowKind kind(byte[] record) {
        return RowKind.fromByteValue(record[0]);
    }

    /**
     * The record as a little-endian buffer, for reading a side in place with {@link
     * RowCodec#decodeInto(ByteBuffer, int, Object[], int)} at {@link #leftStart(byte[])} or {@link
     * #rightStart(byte[])}.
     *
     * @param record a raw output record
     * @return a buffer over the record (not a copy)
     */
    public static ByteBuffer buffer(byte[] record) {
        return ByteBuffer.wrap(record).order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * The length of the left row.
     *
     * @param record a raw output record
     * @return bytes, or {@link #NULL_SIDE} when the left side is null-padded
     */
    public static int leftLength(byte[] record) {
        return buffer(record).getInt(JoinBatches.LEFT_LENGTH_AT);
    }

    /**
     * Where the left row's bytes start.
     *
     * @param record a raw output record
     * @return the index of its first byte
     */
    public static int leftStart(byte[] record) {
        return JoinBatches.LEFT_AT;
    }

    /**
     * The length of the right row.
     *
     * @param record a raw output record
     * @return bytes, or {@link #NULL_SIDE} when the right side is null-padded
     */
    public static int rightLength(byte[] record) {
        return buffer(record).getInt(rightStart(record) - 4);
    }

    /**
     * Where the right row's bytes start.
     *
     * @param record a raw output record
     * @return the index of its first byte
     */
    public static int rightStart(byte[] record) {
        return JoinBatches.LEFT_AT + Math.max(leftLength(record), 0) + 4;
    }

    /**
     * A copy of the left row's bytes.
     *
     * @param record a raw output record
     * @return the left row in its compact encoding, or {@code null} when null-padded
     */
    public static byte[] left(byte[] record) {
        int n = leftLength(record);
        return n < 0
                ? null
                : Arrays.copyOfRange(record, JoinBatches.LEFT_AT, JoinBatches.LEFT_AT + n);
    }

    /**
     * A copy of the right row's bytes.
     *
     * @param record a raw output record
     * @return the right row in its compact encoding, or {@code null} when null-padded
     */
    public static byte[] right(byte[] record) {
        int n = rightLength(record);
        int at = rightStart(record);
        return n < 0 ? null : Arrays.copyOfRange(record, at, at + n);
    }

    /**
     * Decodes a record into the row {@link CdcJoin.Result#rows()} emits for it.
     *
     * @param record a raw output record of this decoder's join
     * @return the row, with its kind, projected as the join's output (positional fields, as {@link
     *     CdcJoin.Result#rows()}; names are those of {@link JoinSpec#rowTypeInfo()})
     */
    public Row toRow(byte[] record) {
        ByteBuffer buf = buffer(record);
        Object[] both = new Object[left.arity() + right.arity()];
        if (buf.getInt(JoinBatches.LEFT_LENGTH_AT) >= 0) {
            left.decodeInto(buf, JoinBatches.LEFT_AT, both, 0);
        }
        int rightAt = rightStart(record);
        if (buf.getInt(rightAt - 4) >= 0) {
            right.decodeInto(buf, rightAt, both, left.arity());
        }
        Object[] values = new Object[projection.length];
        for (int i = 0; i < projection.length; i++) {
            values[i] = both[projection[i]];
        }
        return Row.ofKind(kind(record), values);
    }

    /**
     * Decodes a record (see {@link #toRow(byte[])}).
     *
     * @param record a raw output record
     * @return the row
     */
    @Override
    public Row map(byte[] record) {
        return toRow(record);
    }
}
