package dev.cdcjoin.flink.nativelib;

import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A native join engine's counters, read by name: the native library says which counters it has and
 * in which order ({@code NativeJoin.counterNames()}, Rust {@code cdcjoin_join::COUNTER_NAMES}), so
 * the Java side never depends on a position. A name the library does not know fails loudly (a JAR
 * and a library out of step), never reads another counter.
 */
public final class NativeCounters {

    /** Records in from the left input. */
    public static final String RECORDS_IN_LEFT = "records_in_left";

    /** Records in from the right input. */
    public static final String RECORDS_IN_RIGHT = "records_in_right";

    /** Rows emitted. */
    public static final String ROWS_OUT = "rows_out";

    /** Retractions of rows that were not in state. */
    public static final String ABSENT_RETRACTIONS = "absent_retractions";

    /** Rows dropped by TTL. */
    public static final String EXPIRED_ROWS = "expired_rows";

    /** Input changes the engine rejected (not applied). */
    public static final String REJECTED = "rejected";

    /** Rows in state (with multiplicity). */
    public static final String STATE_ROWS = "state_rows";

    /** Distinct join keys in state. */
    public static final String STATE_KEYS = "state_keys";

    /** Bytes of the rows in state with their per-row headers. */
    public static final String STATE_ROW_BYTES = "state_row_bytes";

    /** Heap bytes held by the state. */
    public static final String STATE_HEAP_BYTES = "state_heap_bytes";

    /**
     * Heap bytes held only by frozen states whose snapshot is still being written (the sections of
     * the key groups the join wrote to before they were written out; included in {@link
     * #STATE_HEAP_BYTES}).
     */
    public static final String STATE_FROZEN_BYTES = "state_frozen_bytes";

    final long[] values = new long[Names.INDEX.size()];

    /** All counters at zero. */
    public NativeCounters() {}

    /**
     * One counter.
     *
     * @param name one of this class's constants
     * @return its value
     * @throws IllegalStateException if the native library has no such counter
     */
    public long get(String name) {
        Integer i = Names.INDEX.get(name);
        if (i == null) {
            throw new IllegalStateException(
                    "the native library has no counter '"
                            + name
                            + "' (it has "
                            + Names.INDEX.keySet()
                            + "): the JAR and its library are out of step");
        }
        return values[i];
    }

    /**
     * A copy of the current values.
     *
     * @return a copy
     */
    public NativeCounters copy() {
        NativeCounters c = new NativeCounters();
        System.arraycopy(values, 0, c.values, 0, values.length);
        return c;
    }

    @Override
    public String toString() {
        return Names.INDEX.keySet() + "=" + Arrays.toString(values);
    }

    /**
     * The library's counter names, in its order.
     *
     * @return the names
     */
    public static List<String> names() {
        return Names.ORDER;
    }

    /** The library's counter names, read once (loading the library). */
    private static final class Names {
        static final List<String> ORDER = load();
        static final Map<String, Integer> INDEX = index(ORDER);

        private static List<String> load() {
            NativeLibrary.load();
            return List.of(NativeJoin.counterNames().split(","));
        }

        private static Map<String, Integer> index(List<String> names) {
            Map<String, Integer> index = new HashMap<>();
            for (int i = 0; i < names.size(); i++) {
                index.put(names.get(i), i);
            }
            return Collections.unmodifiableMap(index);
        }
    }
}
