//! Entry points of `dev.cdcjoin.flink.nativelib.NativeMultiJoin`: a [`MultiwayJoin`] (up to eight
//! inputs joined on one key, `cdcjoin_join::multiway`) fed batch by batch.
//!
//! The calls are the two-table join's (`crate::join`) with the multi-way join's formats: a batch
//! is the join's input frames with each block behind its input's index, the output is the join's
//! output entries with one row per input. Snapshots are written from the live state, or from a
//! state frozen at an instant (`freeze`, `snapshotFrozen`, `takeFrozenOutput`, `releaseFrozen`)
//! while the join goes on, through the two-table join's frozen-state calls.

use cdcjoin_join::{MultiSlot, MultiwayJoin, MultiwaySpec, Rekeyer, MULTIWAY_COUNTER_NAMES};
use jni::objects::{JByteBuffer, JClass, JLongArray, JString};
use jni::sys::{jboolean, jlong};
use jni::EnvUnowned;

use crate::calls::Output;
use crate::errors::{jni_entry, NativeResult};
use crate::handles::Registry;
use crate::join::{
    chain_spec, compression, failed, invalid, rekeyed, snapshot_chunk, stored_section,
    write_counters, FrozenJoin, Sections,
};

/// A multi-way join and the buffer its last output (or snapshot chunk) was written to.
struct NativeMultiJoin {
    join: MultiwayJoin,
    /// Its spec, for a chain declared later.
    spec: MultiwaySpec,
    out: Vec<u8>,
    /// When its output feeds a next join: the rekeyer, and the buffer the join writes to.
    chain: Option<(Rekeyer, Vec<u8>)>,
}

static JOINS: Registry<NativeMultiJoin> = Registry::new("NativeMultiJoin");

static FROZEN: Registry<FrozenJoin<MultiSlot>> = Registry::new("NativeMultiJoin.Frozen");

impl Output for NativeMultiJoin {
    fn output(&self) -> &[u8] {
        &self.out
    }
}

impl Sections for MultiwayJoin {
    fn with_state(&self) -> Vec<u16> {
        self.key_groups_with_state()
    }
    fn section(&self, kg: u16, out: &mut Vec<u8>) -> NativeResult<()> {
        self.snapshot_key_group(kg, out).map_err(failed)
    }
}

/// `static native long create(String specJson)`: a handle for a `MultiwaySpec` as JSON.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeMultiJoin_create<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    spec: JString<'local>,
) -> jlong {
    JOINS.create_from_json(&mut env, "NativeMultiJoin.create", &spec, |json| {
        let spec: MultiwaySpec = serde_json::from_str(json)
            .map_err(|e| invalid(format!("invalid multi-way join spec: {e}")))?;
        let join = MultiwayJoin::new(&spec).map_err(invalid)?;
        Ok(NativeMultiJoin {
            join,
            spec,
            out: Vec::new(),
            chain: None,
        })
    })
}

/// `static native void chain(long handle, String chainJson)`: from now on `processBatch` writes
/// the chained output (`cdcjoin_join::chain`) of the `ChainSpec` as JSON, its projection over the
/// inputs' columns in input order: the next join's input blocks instead of joined rows.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeMultiJoin_chain<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    chain: JString<'local>,
) {
    jni_entry(&mut env, "NativeMultiJoin.chain", |env| {
        let chain = chain_spec(env, &chain)?;
        JOINS.with(handle, |j| {
            j.chain = Some((
                Rekeyer::multiway(&j.spec, &chain).map_err(invalid)?,
                Vec::new(),
            ));
            Ok(())
        })
    })
}

/// `static native long processBatch(long handle, ByteBuffer in, int len, ByteBuffer out)`: joins
/// a batch of input blocks, each behind its input's index; the output length (the joined rows, or
/// after `chain` their re-keyed blocks), or minus the needed capacity (then call `takeOutput`).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeMultiJoin_processBatch<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    input: JByteBuffer<'local>,
    len: i32,
    out: JByteBuffer<'local>,
) -> jlong {
    let context = "NativeMultiJoin.processBatch";
    JOINS.with_batch(&mut env, context, handle, &input, len, &out, |j, batch| {
        let join = &mut j.join;
        rekeyed(&mut j.chain, &mut j.out, |out| {
            join.process_batch(batch, out).map(drop)
        })
    })
}

/// `static native long takeOutput(long handle, ByteBuffer out)`: copies the last output.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeMultiJoin_takeOutput<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    out: JByteBuffer<'local>,
) -> jlong {
    JOINS.take_output(&mut env, "NativeMultiJoin.takeOutput", handle, &out)
}

/// `static native long snapshot(long handle, ByteBuffer out, int fromKeyGroup, int maxBytes)`:
/// a chunk of the state as `NativeJoin.snapshot` writes one, `(keyGroup u32 | section)*`; the
/// length, or minus the needed capacity (then call `takeOutput`).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeMultiJoin_snapshot<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    out: JByteBuffer<'local>,
    from_key_group: i32,
    max_bytes: i32,
) -> jlong {
    JOINS.with_output(&mut env, "NativeMultiJoin.snapshot", handle, &out, |j| {
        snapshot_chunk(&j.join, &mut j.out, from_key_group, max_bytes)
    })
}

/// `static native long freeze(long handle)`: the join's state as it is now, for a snapshot written
/// while the join goes on (in O(key groups)); a handle for `snapshotFrozen`, to be released with
/// `releaseFrozen`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeMultiJoin_freeze<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jlong {
    FROZEN.freeze(&mut env, "NativeMultiJoin.freeze", || {
        JOINS.with(handle, |j| Ok(j.join.freeze()))
    })
}

/// `static native long snapshotFrozen(long frozen, ByteBuffer out, int fromKeyGroup, int
/// maxBytes)`: a chunk of a frozen state, as `snapshot` writes one of the live state, each key
/// group's section handed out once; may run on another thread than the join's calls.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeMultiJoin_snapshotFrozen<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    frozen: jlong,
    out: JByteBuffer<'local>,
    from_key_group: i32,
    max_bytes: i32,
) -> jlong {
    let chunk = (from_key_group, max_bytes);
    FROZEN.snapshot_frozen(
        &mut env,
        "NativeMultiJoin.snapshotFrozen",
        frozen,
        &out,
        chunk,
    )
}

/// `static native long takeFrozenOutput(long frozen, ByteBuffer out)`: copies the last chunk.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeMultiJoin_takeFrozenOutput<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    frozen: jlong,
    out: JByteBuffer<'local>,
) -> jlong {
    FROZEN.take_output(&mut env, "NativeMultiJoin.takeFrozenOutput", frozen, &out)
}

/// `static native void releaseFrozen(long frozen)`: drops a frozen state (its snapshot was written
/// or aborted), freeing what only it still held; unknown handles are ignored.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeMultiJoin_releaseFrozen<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    frozen: jlong,
) {
    FROZEN.free(&mut env, "NativeMultiJoin.releaseFrozen", frozen)
}

/// `static native void setSnapshotCompression(long handle, boolean lz4)`: whether later snapshots
/// (and states frozen later) write LZ4-compressed sections; either restores whatever the setting.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeMultiJoin_setSnapshotCompression<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    lz4: jboolean,
) {
    jni_entry(&mut env, "NativeMultiJoin.setSnapshotCompression", |_| {
        JOINS.with(handle, |j| {
            j.join.set_snapshot_compression(compression(lz4));
            Ok(())
        })
    })
}

/// `static native void restore(long handle, ByteBuffer in, int len, int keyGroup)`: restores
/// the one section at `[0, len)` of `in`, stored under key group `keyGroup`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeMultiJoin_restore<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    input: JByteBuffer<'local>,
    len: i32,
    key_group: i32,
) {
    let context = "NativeMultiJoin.restore";
    JOINS.with_input(&mut env, context, handle, &input, len, |j, bytes| {
        let section = stored_section(bytes, key_group)?;
        j.join.restore_section(&section).map_err(invalid)
    })
}

/// `static native String counterNames()`: the names of the values `stats` writes, in its order,
/// separated by commas (`cdcjoin_join::MULTIWAY_COUNTER_NAMES`).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeMultiJoin_counterNames<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> JString<'local> {
    jni_entry(&mut env, "NativeMultiJoin.counterNames", |env| {
        Ok(JString::from_str(env, MULTIWAY_COUNTER_NAMES.join(","))?)
    })
}

/// `static native void stats(long handle, long[] into)`: the join's counters, named by
/// `counterNames`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeMultiJoin_stats<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    into: JLongArray<'local>,
) {
    jni_entry(&mut env, "NativeMultiJoin.stats", |env| {
        let values = JOINS.with(handle, |j| Ok(j.join.counters().map(|v| v as i64)))?;
        write_counters(env, &into, &values)
    })
}

/// `static native void free(long handle)`: releases the join and its state; unknown handles are
/// ignored.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeMultiJoin_free<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    JOINS.free(&mut env, "NativeMultiJoin.free", handle)
}
