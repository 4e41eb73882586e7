package dev.cdcjoin.flink.nativelib;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import org.junit.jupiter.api.Test;

/**
 * The two-Flink-jobs case: each job has its own user-code class loader holding its own copy of
 * {@link NativeLibrary}; each must be able to load the library (the JVM refuses one library path in
 * two class loaders, so each gets its own extracted copy).
 */
class TwoClassLoadersTest {

    /**
     * A loader over the built classes whose parent is the platform loader: no delegation to the
     * application class path, so dev.cdcjoin classes are defined anew, as in a Flink job.
     */
    private static URLClassLoader isolatedLoader(String name) {
        URL classes = NativeLibrary.class.getProtectionDomain().getCodeSource().getLocation();
        return new URLClassLoader(name, new URL[] {classes}, ClassLoader.getPlatformClassLoader());
    }

    private static Object callStatic(Class<?> cls, String method) throws Exception {
        Method m = cls.getDeclaredMethod(method);
        m.setAccessible(true);
        return m.invoke(null);
    }

    @Test
    void twoClassLoadersBothLoadTheLibrary() throws Exception {
        NativeLibrary.load(); // the application class loader too
        String expectedVersion = NativeLibraryTest.expectedCrateVersion();
        try (URLClassLoader job1 = isolatedLoader("job-1");
                URLClassLoader job2 = isolatedLoader("job-2")) {
            Class<?> c1 = Class.forName(NativeLibrary.class.getName(), true, job1);
            Class<?> c2 = Class.forName(NativeLibrary.class.getName(), true, job2);
            assertNotSame(NativeLibrary.class, c1);
            assertNotSame(c1, c2);
            assertEquals(job1, c1.getClassLoader());
            assertEquals(job2, c2.getClassLoader());

            callStatic(c1, "load");
            callStatic(c2, "load");
            assertEquals(expectedVersion, callStatic(c1, "version"));
            assertEquals(expectedVersion, callStatic(c2, "version"));

            String from1 = (String) callStatic(c1, "loadedFrom");
            String from2 = (String) callStatic(c2, "loadedFrom");
            assertNotEquals(from1, from2);
            assertNotEquals(NativeLibrary.loadedFrom(), from1);
            assertNotEquals(NativeLibrary.loadedFrom(), from2);

            // The panic mapping works in a child loader too.
            InvocationTargetException e =
                    assertThrows(
                            InvocationTargetException.class, () -> callStatic(c2, "panicForTest"));
            assertTrue(e.getCause() instanceof IllegalStateException, String.valueOf(e.getCause()));
            assertTrue(e.getCause().getMessage().contains("deliberate panic for test"));
        }
        // The original loader is unaffected.
        assertEquals(expectedVersion, NativeLibrary.version());
    }
}
