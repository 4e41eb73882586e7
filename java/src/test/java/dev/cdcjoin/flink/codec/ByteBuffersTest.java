package dev.cdcjoin.flink.codec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class ByteBuffersTest {

    /** A direct buffer holding 0, 1, ..., 15, limit 12, position 5. */
    private static ByteBuffer buffer() {
        ByteBuffer buf = ByteBuffer.allocateDirect(16);
        for (int i = 0; i < 16; i++) {
            buf.put((byte) i);
        }
        buf.limit(12).position(5);
        return buf;
    }

    @Test
    void readsTheRangeAsTheAbsoluteGetDoesAndKeepsThePosition() {
        ByteBuffer buf = buffer();
        byte[] dst = new byte[6];
        ByteBuffers.read(buf, 8, dst, 1, 4);
        assertArrayEquals(new byte[] {0, 8, 9, 10, 11, 0}, dst);
        assertEquals(5, buf.position());
        assertEquals(12, buf.limit());

        // Java 13's buffer().get(8, expected, 1, 4), by its specification (a loop of get(int)).
        byte[] expected = new byte[6];
        ByteBuffer src = buffer();
        for (int i = 0; i < 4; i++) {
            expected[1 + i] = src.get(8 + i);
        }
        assertArrayEquals(expected, dst);
    }

    @Test
    void aRangePastTheLimitFailsNamingItAndKeepsThePosition() {
        ByteBuffer buf = buffer();
        IndexOutOfBoundsException e =
                assertThrows(
                        IndexOutOfBoundsException.class,
                        () -> ByteBuffers.read(buf, 9, new byte[4], 0, 4));
        assertTrue(e.getMessage().contains("4 bytes at 9 in a buffer of limit 12"), e.getMessage());
        assertThrows(
                IndexOutOfBoundsException.class,
                () -> ByteBuffers.read(buf, -1, new byte[4], 0, 1));
        assertEquals(5, buf.position());
    }

    @Test
    void aDestinationTooShortFailsAndKeepsThePosition() {
        ByteBuffer buf = buffer();
        assertThrows(
                IndexOutOfBoundsException.class, () -> ByteBuffers.read(buf, 0, new byte[2], 1, 4));
        assertEquals(5, buf.position());
    }
}
