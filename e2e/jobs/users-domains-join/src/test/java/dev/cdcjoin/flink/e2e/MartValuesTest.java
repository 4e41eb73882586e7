package dev.cdcjoin.flink.e2e;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link MartValues}: every value class a mart row holds survives the operator-state encoding
 * exactly.
 */
class MartValuesTest {

    @Test
    void everyTypeRoundTripsExactly() throws IOException {
        List<Object> values =
                Arrays.asList(
                        null,
                        7,
                        Long.MIN_VALUE,
                        "Zoë 😀",
                        true,
                        (byte) -128,
                        (short) 32767,
                        Float.MIN_VALUE,
                        -0.0f,
                        Double.MAX_VALUE,
                        new BigDecimal("-123456789012345678901234567.1234567890"),
                        new BigDecimal("1.500"),
                        LocalDate.of(1600, 2, 29),
                        LocalTime.of(23, 59, 59, 999_000_000),
                        LocalDateTime.of(1969, 12, 31, 23, 59, 59, 999_999_000),
                        Instant.parse("1969-12-31T23:59:59.999999Z"));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        for (Object v : values) {
            MartValues.write(out, v);
        }
        MartValues.write(out, new byte[] {0, (byte) 255});
        MartValues.write(out, new byte[0]);
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes.toByteArray()));
        for (Object v : values) {
            Object back = MartValues.read(in);
            assertEquals(v, back);
            assertEquals(v == null ? null : v.getClass(), back == null ? null : back.getClass());
        }
        assertArrayEquals(new byte[] {0, (byte) 255}, (byte[]) MartValues.read(in));
        assertArrayEquals(new byte[0], (byte[]) MartValues.read(in));
        assertEquals(-1, in.read(), "nothing left over");
    }

    @Test
    void unsupportedClassIsRefusedAndBadTagNamed() {
        DataOutputStream out = new DataOutputStream(new ByteArrayOutputStream());
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> MartValues.write(out, new StringBuilder("x")));
        assertEquals("mart sink: unsupported value type java.lang.StringBuilder", e.getMessage());
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(new byte[] {99}));
        assertEquals(
                "mart sink: bad value tag 99",
                assertThrows(IOException.class, () -> MartValues.read(in)).getMessage());
    }

    @Test
    void instantsBindAsOffsetDateTimeInUtc() {
        Instant t = Instant.parse("2024-02-29T12:00:00.123456Z");
        assertEquals(
                OffsetDateTime.of(2024, 2, 29, 12, 0, 0, 123_456_000, ZoneOffset.UTC),
                MartValues.jdbc(t));
        assertEquals("x", MartValues.jdbc("x"));
    }
}
