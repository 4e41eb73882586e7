//! Mapping of Rust errors and panics to Java exceptions.
//!
//! No Rust panic may unwind into the JVM (that is undefined behaviour and in
//! practice kills the TaskManager), and no error may be dropped silently. Every
//! exported `Java_*` function therefore goes through one of the two entry
//! helpers of this module:
//!
//! * [`jni_entry`]: the general form. It upgrades the [`EnvUnowned`] into an
//!   [`Env`] with [`EnvUnowned::with_env`] (which wraps the closure in
//!   `catch_unwind`) and resolves the outcome with the [`ThrowJavaException`]
//!   policy. Use it whenever the body needs JNI (strings, arrays, objects).
//! * [`jni_entry_fast`]: for hot entry points whose body is pure Rust (raw
//!   pointers, primitives). It wraps the body in a bare
//!   [`std::panic::catch_unwind`] and only touches JNI on the error path,
//!   saving the cost of `with_env` on every call.
//!
//! Both map failures the same way:
//!
//! | Rust failure                                   | Java exception                                  |
//! |------------------------------------------------|-------------------------------------------------|
//! | panic                                          | `java.lang.IllegalStateException` `Rust panic in <context>: <message>` |
//! | [`NativeError::IllegalArgument`]               | `java.lang.IllegalArgumentException`            |
//! | [`NativeError::IllegalState`]                  | `java.lang.IllegalStateException`               |
//! | [`NativeError::Jni`] (a JNI call failed)       | `java.lang.RuntimeException`                    |
//! | any error while a Java exception is pending    | the pending exception is left to propagate      |
//!
//! Exception messages are prefixed with the context (normally
//! `"<JavaClass>.<method>"`) so a stack trace names the native entry point.
//! The workspace keeps `panic = "unwind"`; with `panic = "abort"` none of this
//! could catch anything.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use jni::errors::ErrorPolicy;
use jni::strings::{JNIStr, JNIString};
use jni::{jni_str, Env, EnvUnowned};

/// Errors a native entry point may return; each maps to a Java exception class
/// (see the module documentation).
#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    /// A JNI call failed. If it left a Java exception pending
    /// ([`jni::errors::Error::JavaException`]), that exception propagates as is.
    #[error("JNI error: {0}")]
    Jni(#[from] jni::errors::Error),
    /// The caller passed an invalid argument (`IllegalArgumentException`).
    #[error("{0}")]
    IllegalArgument(String),
    /// The native side is in a state that does not allow the call
    /// (`IllegalStateException`).
    #[error("{0}")]
    IllegalState(String),
}

impl NativeError {
    /// JNI binary name of the Java exception class this error is thrown as.
    pub fn java_class(&self) -> &'static JNIStr {
        match self {
            NativeError::Jni(_) => RUNTIME_EXCEPTION,
            NativeError::IllegalArgument(_) => ILLEGAL_ARGUMENT_EXCEPTION,
            NativeError::IllegalState(_) => ILLEGAL_STATE_EXCEPTION,
        }
    }
}

/// Result type of native entry-point bodies.
pub type NativeResult<T> = Result<T, NativeError>;

const RUNTIME_EXCEPTION: &JNIStr = jni_str!("java/lang/RuntimeException");
const ILLEGAL_ARGUMENT_EXCEPTION: &JNIStr = jni_str!("java/lang/IllegalArgumentException");
const ILLEGAL_STATE_EXCEPTION: &JNIStr = jni_str!("java/lang/IllegalStateException");
/// Class thrown for Rust panics.
const PANIC_EXCEPTION: &JNIStr = ILLEGAL_STATE_EXCEPTION;

/// Extracts the message of a panic payload (`panic!("literal")` carries a
/// `&'static str`, `panic!("{x}")` a `String`; anything else is reported as
/// such). Note that jni's own `ThrowRuntimeExAndDefault` only understands the
/// `&'static str` case.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<non-string panic payload>".to_owned()
    }
}

/// Message of the Java exception thrown for a panic in `context`.
pub fn panic_exception_message(context: &str, payload: &(dyn Any + Send)) -> String {
    format!("Rust panic in {context}: {}", panic_message(payload))
}

/// Message of the Java exception thrown for `err` in `context`.
pub fn error_exception_message(context: &str, err: &NativeError) -> String {
    format!("{context}: {err}")
}

/// Throws the Java exception for `err`, unless one is already pending (a JNI
/// call that failed with a Java exception leaves it pending; it is the more
/// precise report and is kept).
pub fn throw_error(env: &mut Env<'_>, context: &str, err: &NativeError) {
    if env.exception_check() {
        return;
    }
    let msg = JNIString::from(error_exception_message(context, err));
    // `throw_new` reports the now pending exception as `Err(JavaException)`:
    // that is the intended result here. If throwing itself failed (no class,
    // out of memory) the JVM has a pending error of its own to propagate.
    let _ = env.throw_new(err.java_class(), msg);
}

/// Throws the Java exception for a panic payload. A Java exception that was
/// already pending is replaced: the panic is the more severe failure.
pub fn throw_panic(env: &mut Env<'_>, context: &str, payload: Box<dyn Any + Send>) {
    let msg = panic_exception_message(context, payload.as_ref());
    drop_payload(payload);
    if env.exception_check() {
        env.exception_clear();
    }
    let _ = env.throw_new(PANIC_EXCEPTION, JNIString::from(msg));
}

/// Drops a panic payload; a payload whose destructor itself panics is leaked.
fn drop_payload(payload: Box<dyn Any + Send>) {
    if let Err(p) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(p);
    }
}

/// [`ErrorPolicy`] for [`jni::EnvOutcome::resolve_with`]: throws the Java
/// exception mapped from the error or panic (see the module documentation) and
/// returns `T::default()` (`null`, `0`, `false`), which Java never sees since
/// an exception is pending. The captures are the context string naming the
/// entry point.
#[derive(Debug, Default)]
pub struct ThrowJavaException;

impl<T: Default> ErrorPolicy<T, NativeError> for ThrowJavaException {
    type Captures<'unowned_env_local: 'native_method, 'native_method> = &'static str;

    fn on_error<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        context: &mut &'static str,
        err: NativeError,
    ) -> jni::errors::Result<T> {
        throw_error(env, context, &err);
        Ok(T::default())
    }

    fn on_panic<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        context: &mut &'static str,
        payload: Box<dyn Any + Send + 'static>,
    ) -> jni::errors::Result<T> {
        throw_panic(env, context, payload);
        Ok(T::default())
    }
}

/// Runs the body of a native method with an [`Env`], mapping its errors and
/// panics to Java exceptions.
///
/// `context` names the entry point in exception messages, e.g.
/// `"NativeLibrary.version"`.
///
/// ```ignore
/// #[unsafe(no_mangle)]
/// pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeLibrary_version<'local>(
///     mut env: EnvUnowned<'local>,
///     _class: JClass<'local>,
/// ) -> JString<'local> {
///     jni_entry(&mut env, "NativeLibrary.version", |env| Ok(JString::from_str(env, "x")?))
/// }
/// ```
pub fn jni_entry<'local, T, F>(env: &mut EnvUnowned<'local>, context: &'static str, body: F) -> T
where
    T: Default,
    F: FnOnce(&mut Env<'local>) -> NativeResult<T>,
{
    env.with_env(body)
        .resolve_with::<ThrowJavaException, _>(|| context)
}

/// Runs a pure-Rust native method body (no JNI use inside `body`) under a bare
/// `catch_unwind`; JNI is only used to throw when the body fails or panics.
/// This is the form for per-batch hot entry points, where `with_env`'s extra
/// cost per call matters.
pub fn jni_entry_fast<'local, T, F>(
    env: &mut EnvUnowned<'local>,
    context: &'static str,
    body: F,
) -> T
where
    T: Default,
    F: FnOnce() -> NativeResult<T>,
{
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => value,
        Ok(Err(err)) => env
            .with_env(|env| -> NativeResult<T> {
                throw_error(env, context, &err);
                Ok(T::default())
            })
            .resolve_with::<ThrowJavaException, _>(|| context),
        Err(payload) => env
            .with_env(|env| -> NativeResult<T> {
                throw_panic(env, context, payload);
                Ok(T::default())
            })
            .resolve_with::<ThrowJavaException, _>(|| context),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // (The default panic hook prints these panics; the hook is global, so the
    // tests leave it alone.)
    fn payload_of(f: impl FnOnce() + std::panic::UnwindSafe) -> Box<dyn Any + Send> {
        catch_unwind(f).expect_err("closure must panic")
    }

    #[test]
    fn panic_message_of_literal_and_formatted_panics() {
        let literal = payload_of(|| panic!("static message"));
        assert_eq!(panic_message(literal.as_ref()), "static message");
        let n = 42;
        let formatted = payload_of(move || panic!("formatted {n}"));
        assert_eq!(panic_message(formatted.as_ref()), "formatted 42");
        let other = payload_of(|| std::panic::panic_any(7_u32));
        assert_eq!(panic_message(other.as_ref()), "<non-string panic payload>");
    }

    #[test]
    fn exception_messages_name_the_context() {
        let p = payload_of(|| panic!("boom"));
        assert_eq!(
            panic_exception_message("NativeLibrary.panicForTest", p.as_ref()),
            "Rust panic in NativeLibrary.panicForTest: boom"
        );
        let e = NativeError::IllegalArgument("bad batch".into());
        assert_eq!(
            error_exception_message("Op.process", &e),
            "Op.process: bad batch"
        );
    }

    #[test]
    fn error_classes() {
        assert_eq!(
            NativeError::IllegalArgument(String::new()).java_class(),
            ILLEGAL_ARGUMENT_EXCEPTION
        );
        assert_eq!(
            NativeError::IllegalState(String::new()).java_class(),
            ILLEGAL_STATE_EXCEPTION
        );
        assert_eq!(
            NativeError::Jni(jni::errors::Error::JavaException).java_class(),
            RUNTIME_EXCEPTION
        );
    }
}
