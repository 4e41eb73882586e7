package dev.cdcjoin.flink.nativelib;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** The "length, or minus the needed capacity" contract of native outputs, read in Java. */
class DirectBuffersTest {

    @Test
    void aShortOutputIsReadAndALongerOneAfterGrowing() {
        ByteBuffer small = DirectBuffers.allocate(4);
        assertEquals(3, DirectBuffers.result(3, small, out -> -1).limit());
        ByteBuffer grown =
                DirectBuffers.result(
                        -100,
                        small,
                        out -> {
                            assertTrue(out.capacity() >= 100, "grown to " + out.capacity());
                            return 100;
                        });
        assertEquals(100, grown.limit());
    }

    /**
     * An output no Java buffer can hold (a join's comes in pieces of about 32 MiB, so only a joined
     * row of more than 2 GiB would make one) fails saying so, before anything is allocated.
     */
    @Test
    void anOutputBeyondWhatAJavaBufferHoldsFailsSayingWhy() {
        IllegalStateException e =
                assertThrows(
                        IllegalStateException.class,
                        () ->
                                DirectBuffers.result(
                                        -(3L << 30),
                                        DirectBuffers.allocate(4),
                                        out -> {
                                            throw new AssertionError("nothing to copy into");
                                        }));
        assertTrue(
                e.getMessage()
                        .startsWith(
                                "a native call's output of 3221225472 bytes is more than a Java"
                                        + " buffer holds (2 GiB)"),
                e.getMessage());
    }
}
