package dev.cdcjoin.flink.nativelib;

import java.nio.ByteBuffer;
import java.util.function.LongSupplier;

/**
 * A native object behind its handle (an id in the native library's registry, see Rust {@code
 * cdcjoin_jni::handles}) and the direct buffer its calls' outputs are copied to: what {@link
 * NativeDecoder}, {@link NativeJoin} and {@link NativeMultiJoin} share. {@link #close()} frees the
 * native object; any later call throws {@link IllegalStateException}.
 */
abstract class NativeHandle implements AutoCloseable {

    private final String kind;
    private long handle;
    private ByteBuffer output;

    /**
     * Loads the native library if needed and creates the native object.
     *
     * @param kind the class's name, in error messages
     * @param initialOutput the output buffer's first capacity
     * @param create the native constructor, returning the handle
     */
    NativeHandle(String kind, int initialOutput, LongSupplier create) {
        NativeLibrary.load();
        this.kind = kind;
        this.output = DirectBuffers.allocate(initialOutput);
        this.handle = create.getAsLong();
    }

    /** The handle, checked open. */
    final long open() {
        if (handle == 0) {
            throw new IllegalStateException(kind + " is closed");
        }
        return handle;
    }

    /** The buffer a call copies its output to. */
    final ByteBuffer output() {
        return output;
    }

    /**
     * A call's output, after growing the buffer and taking it again with {@code take} when the call
     * said it did not fit ({@link DirectBuffers#result}); valid until the next call.
     */
    final ByteBuffer collect(long result, DirectBuffers.OutputTaker take) {
        output = DirectBuffers.result(result, output, take);
        return output;
    }

    /** Frees the native object of {@code handle}. */
    abstract void release(long handle);

    /** Frees the native object; idempotent. */
    @Override
    public void close() {
        if (handle != 0) {
            long h = handle;
            handle = 0;
            release(h);
        }
    }
}
