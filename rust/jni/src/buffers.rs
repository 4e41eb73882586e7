//! Direct `ByteBuffer`s read and written on the hot path without [`jni::EnvUnowned::with_env`].
//!
//! Batches cross as Java direct buffers: the input is read in place, the output is copied into a
//! Java-owned buffer, so Java never holds a pointer into native memory that could dangle. Every
//! length is checked against the buffer's capacity.

use jni::objects::JByteBuffer;
use jni::sys::{jobject, JNIEnv};
use jni::EnvUnowned;

use crate::errors::{NativeError, NativeResult};

/// The raw JNI environment of the current native call, for the two buffer functions only.
#[derive(Clone, Copy)]
pub struct RawEnv(*mut JNIEnv);

impl RawEnv {
    /// The environment of the call `env` belongs to.
    pub fn of(env: &EnvUnowned<'_>) -> RawEnv {
        RawEnv(env.as_raw())
    }

    /// Address and capacity of a direct buffer, or an error naming `what`.
    fn direct(&self, buf: jobject, what: &str) -> NativeResult<(*mut u8, usize)> {
        if buf.is_null() {
            return Err(NativeError::IllegalArgument(format!("{what} is null")));
        }
        // SAFETY: `self.0` is the JNIEnv of the current native call (no exception is pending
        // there), `buf` a live local reference passed to it; both functions are JNI 1.4.
        let (addr, cap) = unsafe {
            let functions = *self.0;
            let addr = ((*functions).v1_4.GetDirectBufferAddress)(self.0, buf);
            let cap = ((*functions).v1_4.GetDirectBufferCapacity)(self.0, buf);
            (addr as *mut u8, cap)
        };
        if addr.is_null() || cap < 0 {
            return Err(NativeError::IllegalArgument(format!(
                "{what} is not a direct ByteBuffer"
            )));
        }
        Ok((addr, cap as usize))
    }

    /// The first `len` bytes of the direct buffer `buf` (errors name it the "input buffer").
    ///
    /// # Safety
    /// The returned slice must not outlive the native call that passed `buf`, and the buffer
    /// must not be written while the slice is in use (Java's thread is inside this call).
    pub unsafe fn input<'a>(&self, buf: &'a JByteBuffer<'_>, len: i32) -> NativeResult<&'a [u8]> {
        let what = "input buffer";
        let (addr, cap) = self.direct(buf.as_raw(), what)?;
        if len < 0 || len as usize > cap {
            return Err(NativeError::IllegalArgument(format!(
                "{what}: length {len} is outside its capacity {cap}"
            )));
        }
        if len == 0 {
            return Ok(&[]);
        }
        // SAFETY: `addr..addr+len` lies within the buffer's memory (checked above).
        Ok(unsafe { std::slice::from_raw_parts(addr, len as usize) })
    }

    /// Copies `data` to the start of the direct buffer `buf` (errors name it the "output
    /// buffer") and returns its length, or returns `-(data.len())` without copying when the
    /// buffer is too small.
    pub fn output(&self, buf: &JByteBuffer<'_>, data: &[u8]) -> NativeResult<i64> {
        let (addr, cap) = self.direct(buf.as_raw(), "output buffer")?;
        if data.len() > cap {
            return Ok(-(data.len() as i64));
        }
        // SAFETY: the destination holds `cap >= data.len()` bytes; `copy` allows overlap.
        unsafe { std::ptr::copy(data.as_ptr(), addr, data.len()) };
        Ok(data.len() as i64)
    }
}
