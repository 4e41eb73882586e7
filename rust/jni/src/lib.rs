//! `cdcjoin-jni`: the native library (`libcdcjoin_jni`) behind the Java class
//! `dev.cdcjoin.flink.nativelib.NativeLibrary` of the `cdcjoin-flink` JAR.
//!
//! Every exported function is an `extern "system"` JNI entry point of the form
//! `Java_<package>_<Class>_<method>(EnvUnowned, JClass|JObject, args...)` and
//! runs its body through [`errors::jni_entry`] or [`errors::jni_entry_fast`]
//! (directly, or through the shared call shapes of the `calls` module), so
//! Rust errors and panics surface as Java exceptions and never unwind into the
//! JVM.

mod buffers;
mod calls;
mod decoder;
pub mod errors;
mod handles;
mod join;
mod multiway;

use jni::objects::{JClass, JString};
use jni::EnvUnowned;

use crate::errors::{jni_entry, jni_entry_fast};

/// jemalloc for everything the library allocates (not the JVM's own mallocs: its symbols are
/// prefixed). The join reallocates a key's group on every change of it; under glibc's malloc the
/// join thread spent about a tenth of its time coalescing and splitting chunks, and the join
/// benchmark (`cargo bench -p cdcjoin-join --bench join`, which uses the same allocator) runs
/// 16-20% faster with jemalloc in the same run. Built with `disable_initial_exec_tls`, because
/// the JVM loads the library with `dlopen`.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Version of this crate (the workspace version), as reported to Java.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `static native String NativeLibrary.version()`: the crate version.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeLibrary_version<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> JString<'local> {
    jni_entry(&mut env, "NativeLibrary.version", |env| {
        Ok(JString::from_str(env, VERSION)?)
    })
}

/// Message of the deliberate panic of [`Java_dev_cdcjoin_flink_nativelib_NativeLibrary_panicForTest`].
pub const TEST_PANIC_MESSAGE: &str = "deliberate panic for test";

/// `static native void NativeLibrary.panicForTest()`: panics on purpose, to
/// prove that a panic becomes a Java exception (through the fast entry path).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeLibrary_panicForTest<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
) {
    jni_entry_fast(
        &mut env,
        "NativeLibrary.panicForTest",
        || -> errors::NativeResult<()> { panic!("{TEST_PANIC_MESSAGE} (cdcjoin-jni {VERSION})") },
    )
}
