//! Entry points of `dev.cdcjoin.flink.nativelib.NativeDecoder`: Debezium batches decoded by
//! [`cdcjoin_debezium::batch::BatchDecoder`].

use cdcjoin_debezium::batch::{BatchDecoder, BatchSummary};
use jni::objects::{JByteBuffer, JClass, JString};
use jni::sys::jlong;
use jni::EnvUnowned;

use crate::calls::Output;
use crate::errors::{NativeError, NativeResult};
use crate::handles::Registry;

static DECODERS: Registry<BatchDecoder> = Registry::new("NativeDecoder");

impl Output for BatchDecoder {
    fn output(&self) -> &[u8] {
        BatchDecoder::output(self)
    }
}

/// `static native long create(String configJson)`: a decoder handle.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeDecoder_create<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    config: JString<'local>,
) -> jlong {
    DECODERS.create_from_json(&mut env, "NativeDecoder.create", &config, |json| {
        BatchDecoder::from_json(json.as_bytes()).map_err(NativeError::IllegalArgument)
    })
}

/// The batch step of `decodeJson`, `decodeRows` and `decodeUpsert`: `decode` from message `first_index` on.
fn decoding(
    decode: fn(&mut BatchDecoder, &[u8], u64) -> Result<BatchSummary, String>,
    first_index: jlong,
) -> impl FnOnce(&mut BatchDecoder, &[u8]) -> NativeResult<()> {
    move |d, batch| {
        decode(d, batch, first_index as u64)
            .map(drop)
            .map_err(NativeError::IllegalArgument)
    }
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
    let context = "NativeDecoder.decodeJson";
    let decode = decoding(BatchDecoder::decode_json, first_index);
    DECODERS.with_batch(&mut env, context, handle, &input, len, &out, decode)
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
    let context = "NativeDecoder.decodeRows";
    let decode = decoding(BatchDecoder::decode_rows, first_index);
    DECODERS.with_batch(&mut env, context, handle, &input, len, &out, decode)
}

/// `static native long decodeUpsert(long handle, ByteBuffer in, int len, long firstIndex,
/// ByteBuffer out)`: as `decodeJson`, for upsert-kafka records (key and value per record).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeDecoder_decodeUpsert<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    input: JByteBuffer<'local>,
    len: i32,
    first_index: jlong,
    out: JByteBuffer<'local>,
) -> jlong {
    let context = "NativeDecoder.decodeUpsert";
    let decode = decoding(BatchDecoder::decode_upsert, first_index);
    DECODERS.with_batch(&mut env, context, handle, &input, len, &out, decode)
}

/// `static native long takeOutput(long handle, ByteBuffer out)`: copies the last batch's output.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeDecoder_takeOutput<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    out: JByteBuffer<'local>,
) -> jlong {
    DECODERS.take_output(&mut env, "NativeDecoder.takeOutput", handle, &out)
}

/// `static native void free(long handle)`: releases the decoder; unknown handles are ignored.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeDecoder_free<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    DECODERS.free(&mut env, "NativeDecoder.free", handle)
}
