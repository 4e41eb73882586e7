//! Entry points of `dev.cdcjoin.flink.nativelib.NativeJoin`: a [`JoinEngine`] fed batch by batch.

use cdcjoin_join::{JoinEngine, JoinSpec};
use jni::objects::{JByteBuffer, JClass, JLongArray, JString};
use jni::sys::jlong;
use jni::EnvUnowned;

use crate::buffers::RawEnv;
use crate::errors::{jni_entry, jni_entry_fast, NativeError, NativeResult};
use crate::handles::Registry;

/// A join engine and the buffer its last output (or snapshot) was written to.
struct NativeJoin {
    engine: JoinEngine,
    out: Vec<u8>,
}

static JOINS: Registry<NativeJoin> = Registry::new("NativeJoin");

/// Number of values `stats` writes.
const STATS_LEN: usize = 9;

fn invalid(e: impl ToString) -> NativeError {
    NativeError::IllegalArgument(e.to_string())
}

/// `static native long create(String specJson)`: a join handle for a `JoinSpec` as JSON.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeJoin_create<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    spec: JString<'local>,
) -> jlong {
    jni_entry(&mut env, "NativeJoin.create", |env| {
        let json = spec.try_to_string(env)?;
        let spec: JoinSpec =
            serde_json::from_str(&json).map_err(|e| invalid(format!("invalid join spec: {e}")))?;
        let engine = JoinEngine::new(&spec).map_err(invalid)?;
        Ok(JOINS.insert(NativeJoin {
            engine,
            out: Vec::new(),
        }))
    })
}

/// `static native long processBatch(long handle, ByteBuffer in, int len, long nowMs,
/// ByteBuffer out)`: joins a batch of input records; the output length, or minus the needed
/// capacity (then call `takeOutput`).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeJoin_processBatch<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    input: JByteBuffer<'local>,
    len: i32,
    now_ms: jlong,
    out: JByteBuffer<'local>,
) -> jlong {
    let raw = RawEnv::of(&env);
    jni_entry_fast(&mut env, "NativeJoin.processBatch", || {
        JOINS.with(handle, |j| {
            // SAFETY: the slice is used only during this call, while Java waits for it.
            let batch = unsafe { raw.input(input.as_raw(), len, "input buffer")? };
            j.out.clear();
            let result = j.engine.process_batch(batch, now_ms, &mut j.out);
            result.map_err(|e| NativeError::IllegalState(e.to_string()))?;
            raw.output(out.as_raw(), &j.out, "output buffer")
        })
    })
}

/// `static native long takeOutput(long handle, ByteBuffer out)`: copies the last output.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeJoin_takeOutput<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    out: JByteBuffer<'local>,
) -> jlong {
    let raw = RawEnv::of(&env);
    jni_entry_fast(&mut env, "NativeJoin.takeOutput", || {
        JOINS.with(handle, |j| {
            raw.output(out.as_raw(), &j.out, "output buffer")
        })
    })
}

/// Writes `(key_group u32 | section)*` for every key group holding state.
fn snapshot_all(j: &mut NativeJoin) -> NativeResult<()> {
    j.out.clear();
    for kg in j.engine.key_groups_with_state() {
        j.out.extend_from_slice(&u32::from(kg).to_le_bytes());
        let taken = j.engine.snapshot_key_group(kg, &mut j.out);
        taken.map_err(|e| NativeError::IllegalState(e.to_string()))?;
    }
    Ok(())
}

/// `static native long snapshot(long handle, ByteBuffer out)`: the state as
/// `(keyGroup u32 | section)*`, each section self-delimiting (`len u32 | payload`); the length,
/// or minus the needed capacity (then call `takeOutput`).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeJoin_snapshot<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    out: JByteBuffer<'local>,
) -> jlong {
    let raw = RawEnv::of(&env);
    jni_entry_fast(&mut env, "NativeJoin.snapshot", || {
        JOINS.with(handle, |j| {
            snapshot_all(j)?;
            raw.output(out.as_raw(), &j.out, "output buffer")
        })
    })
}

/// `static native int restore(long handle, ByteBuffer in, int len)`: restores the one section at
/// the start of `in`; the bytes it took.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeJoin_restore<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    input: JByteBuffer<'local>,
    len: i32,
) -> i32 {
    let raw = RawEnv::of(&env);
    jni_entry_fast(&mut env, "NativeJoin.restore", || {
        JOINS.with(handle, |j| {
            // SAFETY: the slice is used only during this call, while Java waits for it.
            let section = unsafe { raw.input(input.as_raw(), len, "input buffer")? };
            let used = j.engine.restore_key_group(section).map_err(invalid)?;
            Ok(used as i32)
        })
    })
}

/// The counters, in the order `NativeJoin.Stats` reads them.
fn stats_of(engine: &JoinEngine) -> [i64; STATS_LEN] {
    let (s, z) = (engine.stats(), engine.state_size());
    [
        s.records_in[0],
        s.records_in[1],
        s.rows_out,
        s.absent_retractions,
        s.expired_rows,
        z.rows,
        z.keys,
        z.group_bytes,
        z.heap_bytes,
    ]
    .map(|v| v as i64)
}

/// `static native void stats(long handle, long[] into)`: the engine's counters (see `stats_of`).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeJoin_stats<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    into: JLongArray<'local>,
) {
    jni_entry(&mut env, "NativeJoin.stats", |env| {
        let values = JOINS.with(handle, |j| Ok(stats_of(&j.engine)))?;
        if into.is_null() || into.len(env)? < STATS_LEN {
            return Err(invalid(format!("stats needs a long[{STATS_LEN}]")));
        }
        into.set_region(env, 0, &values)?;
        Ok(())
    })
}

/// `static native void free(long handle)`: releases the join and its state; unknown handles are
/// ignored.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeJoin_free<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    jni_entry_fast(&mut env, "NativeJoin.free", || {
        JOINS.remove(handle);
        Ok(())
    })
}
