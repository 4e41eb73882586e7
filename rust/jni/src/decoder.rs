//! Entry points of `dev.cdcjoin.flink.nativelib.NativeDecoder`: Debezium batches decoded by
//! [`cdcjoin_debezium::batch::BatchDecoder`].

use cdcjoin_debezium::batch::BatchDecoder;
use jni::objects::{JByteBuffer, JClass, JString};
use jni::sys::jlong;
use jni::EnvUnowned;

use crate::buffers::RawEnv;
use crate::errors::{jni_entry, jni_entry_fast, NativeError, NativeResult};
use crate::handles::Registry;

static DECODERS: Registry<BatchDecoder> = Registry::new("NativeDecoder");

/// `static native long create(String configJson)`: a decoder handle.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeDecoder_create<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    config: JString<'local>,
) -> jlong {
    jni_entry(&mut env, "NativeDecoder.create", |env| {
        let json = config.try_to_string(env)?;
        let decoder =
            BatchDecoder::from_json(json.as_bytes()).map_err(NativeError::IllegalArgument)?;
        Ok(DECODERS.insert(decoder))
    })
}

/// Decodes one batch with `decode` and copies the output to `out` (see [`RawEnv::output`]).
fn decode_batch(
    raw: RawEnv,
    handle: jlong,
    input: &JByteBuffer<'_>,
    len: i32,
    out: &JByteBuffer<'_>,
    decode: impl FnOnce(&mut BatchDecoder, &[u8]) -> Result<(), String>,
) -> NativeResult<jlong> {
    DECODERS.with(handle, |d| {
        // SAFETY: the slice is used only during this call, while Java waits for it.
        let batch = unsafe { raw.input(input.as_raw(), len, "input buffer")? };
        decode(d, batch).map_err(NativeError::IllegalArgument)?;
        raw.output(out.as_raw(), d.output(), "output buffer")
    })
}

/// `static native long decodeJson(long handle, ByteBuffer in, int len, long firstIndex,
/// ByteBuffer out)`: decodes a batch of JSON messages; the output length, or minus the needed
/// capacity (then call `takeOutput`).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeDecoder_decodeJson<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    input: JByteBuffer<'local>,
    len: i32,
    first_index: jlong,
    out: JByteBuffer<'local>,
) -> jlong {
    let raw = RawEnv::of(&env);
    jni_entry_fast(&mut env, "NativeDecoder.decodeJson", || {
        decode_batch(raw, handle, &input, len, &out, |d, b| {
            d.decode_json(b, first_index as u64).map(drop)
        })
    })
}

/// `static native long decodeRows(long handle, ByteBuffer in, int len, long firstIndex,
/// ByteBuffer out)`: as `decodeJson`, for envelopes of encoded rows.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeDecoder_decodeRows<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    input: JByteBuffer<'local>,
    len: i32,
    first_index: jlong,
    out: JByteBuffer<'local>,
) -> jlong {
    let raw = RawEnv::of(&env);
    jni_entry_fast(&mut env, "NativeDecoder.decodeRows", || {
        decode_batch(raw, handle, &input, len, &out, |d, b| {
            d.decode_rows(b, first_index as u64).map(drop)
        })
    })
}

/// `static native long takeOutput(long handle, ByteBuffer out)`: copies the last batch's output.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeDecoder_takeOutput<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    out: JByteBuffer<'local>,
) -> jlong {
    let raw = RawEnv::of(&env);
    jni_entry_fast(&mut env, "NativeDecoder.takeOutput", || {
        DECODERS.with(handle, |d| {
            raw.output(out.as_raw(), d.output(), "output buffer")
        })
    })
}

/// `static native void free(long handle)`: releases the decoder; unknown handles are ignored.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeDecoder_free<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    jni_entry_fast(&mut env, "NativeDecoder.free", || {
        DECODERS.remove(handle);
        Ok(())
    })
}
