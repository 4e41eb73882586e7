//! The shapes shared by the entry points that work on a handle's object.
//!
//! `NativeDecoder` and `NativeJoin` expose the same kinds of calls: create an object from a JSON
//! configuration, feed it a batch in a direct buffer and copy its output out, copy out what it
//! holds (after an optional step), read a buffer, and free it. Each shape is one method here, so
//! an exported function is its JNI signature plus one call, and every shape catches panics and
//! errors the same way (see [`crate::errors`]).

use jni::objects::{JByteBuffer, JString};
use jni::sys::jlong;
use jni::EnvUnowned;

use crate::buffers::RawEnv;
use crate::errors::{jni_entry, jni_entry_fast, NativeResult};
use crate::handles::Registry;

/// A native object whose calls leave bytes for Java to copy into its output buffer.
pub trait Output {
    /// The bytes the last call left for Java.
    fn output(&self) -> &[u8];
}

impl<T> Registry<T> {
    /// `create(String json)`: builds an object from the Java string `json` and returns its handle.
    pub fn create_from_json(
        &self,
        env: &mut EnvUnowned<'_>,
        context: &'static str,
        json: &JString<'_>,
        build: impl FnOnce(&str) -> NativeResult<T>,
    ) -> jlong {
        jni_entry(env, context, |env| {
            let json = json.try_to_string(env)?;
            Ok(self.insert(build(&json)?))
        })
    }

    /// A hot call: runs `f` on the object of `handle` without upgrading the JNI environment.
    fn fast<R: Default>(
        &self,
        env: &mut EnvUnowned<'_>,
        context: &'static str,
        handle: jlong,
        f: impl FnOnce(&mut T, RawEnv) -> NativeResult<R>,
    ) -> R {
        let raw = RawEnv::of(env);
        jni_entry_fast(env, context, || self.with(handle, |object| f(object, raw)))
    }

    /// A hot call that asks the object of `handle` something: `f`'s answer.
    pub fn ask<R: Default>(
        &self,
        env: &mut EnvUnowned<'_>,
        context: &'static str,
        handle: jlong,
        f: impl FnOnce(&mut T) -> NativeResult<R>,
    ) -> R {
        self.fast(env, context, handle, |object, _| f(object))
    }

    /// Runs `f` on the object of `handle` and the first `len` bytes of the direct buffer `input`.
    pub fn with_input<R: Default>(
        &self,
        env: &mut EnvUnowned<'_>,
        context: &'static str,
        handle: jlong,
        input: &JByteBuffer<'_>,
        len: i32,
        f: impl FnOnce(&mut T, &[u8]) -> NativeResult<R>,
    ) -> R {
        self.fast(env, context, handle, |object, raw| {
            // SAFETY: the slice is used only during this call, while Java waits for it.
            f(object, unsafe { raw.input(input, len)? })
        })
    }

    /// Frees the object of `handle`; unknown handles are ignored.
    pub fn free(&self, env: &mut EnvUnowned<'_>, context: &'static str, handle: jlong) {
        jni_entry_fast(env, context, || {
            self.remove(handle);
            Ok(())
        })
    }
}

impl<T: Output> Registry<T> {
    /// Runs `f` on the object of `handle`, then copies its output to the direct buffer `out`:
    /// the output length, or minus the needed capacity (see [`RawEnv::output`]).
    pub fn with_output(
        &self,
        env: &mut EnvUnowned<'_>,
        context: &'static str,
        handle: jlong,
        out: &JByteBuffer<'_>,
        f: impl FnOnce(&mut T) -> NativeResult<()>,
    ) -> jlong {
        self.fast(env, context, handle, |object, raw| {
            f(object)?;
            raw.output(out, object.output())
        })
    }

    /// Copies the output of the object of `handle` to `out` again, after Java grew the buffer.
    pub fn take_output(
        &self,
        env: &mut EnvUnowned<'_>,
        context: &'static str,
        handle: jlong,
        out: &JByteBuffer<'_>,
    ) -> jlong {
        self.with_output(env, context, handle, out, |_| Ok(()))
    }

    /// Runs `f` on the object of `handle` and the batch in the first `len` bytes of `input`,
    /// then copies its output to `out` as [`Registry::with_output`] does. The batch's slice ends
    /// before the copy: `out` may be the memory of `input` (a caller handing a call's output back
    /// as the next call's input), which must not be written while a slice of it lives.
    #[allow(clippy::too_many_arguments)] // the arguments of the JNI call, passed through
    pub fn with_batch(
        &self,
        env: &mut EnvUnowned<'_>,
        context: &'static str,
        handle: jlong,
        input: &JByteBuffer<'_>,
        len: i32,
        out: &JByteBuffer<'_>,
        f: impl FnOnce(&mut T, &[u8]) -> NativeResult<()>,
    ) -> jlong {
        self.fast(env, context, handle, |object, raw| {
            // SAFETY: the slice is used only by `f`, during this call, while Java waits for it.
            f(object, unsafe { raw.input(input, len)? })?;
            raw.output(out, object.output())
        })
    }
}
