//! Entry points of `dev.cdcjoin.flink.nativelib.NativeJoin`: a [`JoinEngine`] fed batch by batch.

use cdcjoin_join::state::{KeySlot, Slot};
use cdcjoin_join::{
    ChainSpec, Compression, FrozenState, JoinEngine, JoinSpec, Rekeyer, StoredSection,
    COUNTER_NAMES,
};
use jni::objects::{JByteBuffer, JClass, JLongArray, JString};
use jni::sys::{jboolean, jlong};
use jni::{Env, EnvUnowned};

use crate::calls::Output;
use crate::errors::{jni_entry, NativeError, NativeResult};
use crate::handles::Registry;

/// A join engine and the buffer its last output (or snapshot) was written to.
struct NativeJoin {
    engine: JoinEngine,
    /// Its spec, for a chain declared later.
    spec: JoinSpec,
    out: Vec<u8>,
    /// When its output feeds a next join: the rekeyer, and the buffer the engine writes to.
    chain: Option<(Rekeyer, Vec<u8>)>,
}

static JOINS: Registry<NativeJoin> = Registry::new("NativeJoin");

/// A join's state frozen for a snapshot written on another thread, and the buffer its last chunk
/// was written to. `S` is the join's slot: [`KeySlot`] here, `MultiSlot` for the multi-way join
/// (`crate::multiway`), which shares these calls.
pub(crate) struct FrozenJoin<S = KeySlot> {
    state: FrozenState<S>,
    out: Vec<u8>,
}

static FROZEN: Registry<FrozenJoin> = Registry::new("NativeJoin.Frozen");

/// `e` as an `IllegalArgumentException`: the caller passed something the engine rejects.
pub(crate) fn invalid(e: impl ToString) -> NativeError {
    NativeError::IllegalArgument(e.to_string())
}

/// `e` as an `IllegalStateException`: the engine failed on a batch or a snapshot.
pub(crate) fn failed(e: impl ToString) -> NativeError {
    NativeError::IllegalState(e.to_string())
}

impl Output for NativeJoin {
    fn output(&self) -> &[u8] {
        &self.out
    }
}

impl<S> Output for FrozenJoin<S> {
    fn output(&self) -> &[u8] {
        &self.out
    }
}

/// What a snapshot is written from: the engine itself, its state frozen at an instant, or a
/// multi-way join.
pub(crate) trait Sections {
    /// The key groups holding state, ascending.
    fn with_state(&self) -> Vec<u16>;
    /// Appends the section of key group `kg`.
    fn section(&self, kg: u16, out: &mut Vec<u8>) -> NativeResult<()>;
}

impl Sections for JoinEngine {
    fn with_state(&self) -> Vec<u16> {
        self.key_groups_with_state()
    }
    fn section(&self, kg: u16, out: &mut Vec<u8>) -> NativeResult<()> {
        self.snapshot_key_group(kg, out).map_err(failed)
    }
}

impl<S: Slot> Sections for FrozenState<S> {
    fn with_state(&self) -> Vec<u16> {
        self.key_groups_with_state()
    }
    fn section(&self, kg: u16, out: &mut Vec<u8>) -> NativeResult<()> {
        self.snapshot_key_group(kg, out).map_err(failed)
    }
}

/// `static native long create(String specJson)`: a join handle for a `JoinSpec` as JSON.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeJoin_create<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    spec: JString<'local>,
) -> jlong {
    JOINS.create_from_json(&mut env, "NativeJoin.create", &spec, |json| {
        let spec: JoinSpec =
            serde_json::from_str(json).map_err(|e| invalid(format!("invalid join spec: {e}")))?;
        let engine = JoinEngine::new(&spec).map_err(invalid)?;
        Ok(NativeJoin {
            engine,
            spec,
            out: Vec::new(),
            chain: None,
        })
    })
}

/// `static native void chain(long handle, String chainJson)`: from now on `processBatch` writes
/// the chained output (`cdcjoin_join::chain`) of the `ChainSpec` as JSON: the next join's input
/// blocks instead of joined rows.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeJoin_chain<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    chain: JString<'local>,
) {
    jni_entry(&mut env, "NativeJoin.chain", |env| {
        let chain = chain_spec(env, &chain)?;
        JOINS.with(handle, |j| {
            j.chain = Some((Rekeyer::new(&j.spec, &chain).map_err(invalid)?, Vec::new()));
            Ok(())
        })
    })
}

/// Joins `batch` into `j.out`: the joined rows, or with a chain their re-keyed blocks.
fn join_batch(j: &mut NativeJoin, batch: &[u8], now_ms: i64) -> NativeResult<()> {
    let engine = &mut j.engine;
    rekeyed(&mut j.chain, &mut j.out, |out| {
        engine.process_batch(batch, now_ms, out).map(drop)
    })
}

/// Writes a join's output into `out` (cleared first) by `process`: the joined rows, or when the
/// output feeds a next join (`chain`) their re-keyed blocks, the joined rows written to the
/// chain's own buffer first. Shared by the two-table and the multi-way join.
pub(crate) fn rekeyed<E: ToString>(
    chain: &mut Option<(Rekeyer, Vec<u8>)>,
    out: &mut Vec<u8>,
    process: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
) -> NativeResult<()> {
    out.clear();
    match chain {
        None => process(out),
        Some((rekeyer, joined)) => {
            joined.clear();
            let done = process(joined);
            rekeyer.rekey(joined, out);
            done
        }
    }
    .map_err(failed)
}

/// The `ChainSpec` of a `chain` call, given as JSON.
pub(crate) fn chain_spec(env: &mut Env<'_>, json: &JString<'_>) -> NativeResult<ChainSpec> {
    let json = json.try_to_string(env)?;
    serde_json::from_str(&json).map_err(|e| invalid(format!("invalid chain spec: {e}")))
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
    let context = "NativeJoin.processBatch";
    JOINS.with_batch(&mut env, context, handle, &input, len, &out, |j, batch| {
        join_batch(j, batch, now_ms)
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
    JOINS.take_output(&mut env, "NativeJoin.takeOutput", handle, &out)
}

/// Writes `(key_group u32 | section)*` for the key groups holding state from `from` on, in key
/// group order, stopping after the section that brings the output to `max_bytes` or more: a
/// checkpoint takes the state in chunks, never all of it in one buffer.
pub(crate) fn snapshot_chunk(
    state: &impl Sections,
    out: &mut Vec<u8>,
    from: i32,
    max_bytes: i32,
) -> NativeResult<()> {
    if from < 0 || max_bytes < 1 {
        return Err(invalid(format!(
            "snapshot chunk from key group {from} of at most {max_bytes} bytes: both must be positive"
        )));
    }
    out.clear();
    let from = u16::try_from(from).unwrap_or(u16::MAX);
    for kg in state.with_state() {
        if kg < from {
            continue;
        }
        if out.len() >= max_bytes as usize {
            break;
        }
        out.extend_from_slice(&u32::from(kg).to_le_bytes());
        state.section(kg, out)?;
    }
    Ok(())
}

/// `static native long snapshot(long handle, ByteBuffer out, int fromKeyGroup, int maxBytes)`:
/// a chunk of the state (see [`snapshot_chunk`]) as `(keyGroup u32 | section)*`, each section
/// self-delimiting (`len u32 | payload`); the length, or minus the needed capacity (then call
/// `takeOutput`).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeJoin_snapshot<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    out: JByteBuffer<'local>,
    from_key_group: i32,
    max_bytes: i32,
) -> jlong {
    JOINS.with_output(&mut env, "NativeJoin.snapshot", handle, &out, |j| {
        snapshot_chunk(&j.engine, &mut j.out, from_key_group, max_bytes)
    })
}

/// The compression a `setSnapshotCompression(boolean lz4)` call asks for.
pub(crate) fn compression(lz4: jboolean) -> Compression {
    if lz4 {
        Compression::Lz4
    } else {
        Compression::None
    }
}

/// `static native void setSnapshotCompression(long handle, boolean lz4)`: whether later snapshots
/// (and states frozen later) write LZ4-compressed sections (format 3) or plain ones (format 2);
/// either restores whatever the setting.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeJoin_setSnapshotCompression<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    lz4: jboolean,
) {
    jni_entry(&mut env, "NativeJoin.setSnapshotCompression", |_| {
        let compression = compression(lz4);
        JOINS.with(handle, |j| {
            j.engine.set_snapshot_compression(compression);
            Ok(())
        })
    })
}

/// `static native long freeze(long handle)`: the join's state as it is now, for a snapshot written
/// while the join goes on (in O(key groups); see `cdcjoin_join::snapshot`); a handle for
/// `snapshotFrozen`, to be released with `releaseFrozen`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeJoin_freeze<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jlong {
    FROZEN.freeze(&mut env, "NativeJoin.freeze", || {
        JOINS.with(handle, |j| Ok(j.engine.freeze()))
    })
}

/// The frozen states of one kind of join, behind the `freeze` and `snapshotFrozen` calls of
/// both joins.
impl<S: Slot> Registry<FrozenJoin<S>> {
    /// `freeze(long handle)`: a handle for the state `freeze` freezes.
    pub(crate) fn freeze(
        &self,
        env: &mut EnvUnowned<'_>,
        context: &'static str,
        freeze: impl FnOnce() -> NativeResult<FrozenState<S>>,
    ) -> jlong {
        jni_entry(env, context, |_| {
            let state = freeze()?;
            Ok(self.insert(FrozenJoin {
                state,
                out: Vec::new(),
            }))
        })
    }

    /// `snapshotFrozen(long frozen, ByteBuffer out, int fromKeyGroup, int maxBytes)`: a chunk of
    /// the frozen state of `frozen` ([`snapshot_chunk`]), each key group's section handed out
    /// once.
    pub(crate) fn snapshot_frozen(
        &self,
        env: &mut EnvUnowned<'_>,
        context: &'static str,
        frozen: jlong,
        out: &JByteBuffer<'_>,
        (from_key_group, max_bytes): (i32, i32),
    ) -> jlong {
        self.with_output(env, context, frozen, out, |f| {
            snapshot_chunk(&f.state, &mut f.out, from_key_group, max_bytes)
        })
    }
}

/// `static native long snapshotFrozen(long frozen, ByteBuffer out, int fromKeyGroup, int
/// maxBytes)`: a chunk of a frozen state, as `snapshot` writes one of the live state, each key
/// group's section handed out once; may run on another thread than the join's calls.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeJoin_snapshotFrozen<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    frozen: jlong,
    out: JByteBuffer<'local>,
    from_key_group: i32,
    max_bytes: i32,
) -> jlong {
    let chunk = (from_key_group, max_bytes);
    FROZEN.snapshot_frozen(&mut env, "NativeJoin.snapshotFrozen", frozen, &out, chunk)
}

/// `static native long takeFrozenOutput(long frozen, ByteBuffer out)`: copies the last chunk.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeJoin_takeFrozenOutput<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    frozen: jlong,
    out: JByteBuffer<'local>,
) -> jlong {
    FROZEN.take_output(&mut env, "NativeJoin.takeFrozenOutput", frozen, &out)
}

/// `static native void releaseFrozen(long frozen)`: drops a frozen state (its snapshot was written
/// or aborted), freeing the sections only it still held; unknown handles are ignored.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeJoin_releaseFrozen<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    frozen: jlong,
) {
    FROZEN.free(&mut env, "NativeJoin.releaseFrozen", frozen)
}

/// `static native void restore(long handle, ByteBuffer in, int len, int keyGroup)`: restores
/// the one section (`len u32 | payload`) at `[0, len)` of `in`, stored under key group
/// `keyGroup`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeJoin_restore<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    input: JByteBuffer<'local>,
    len: i32,
    key_group: i32,
) {
    let context = "NativeJoin.restore";
    JOINS.with_input(&mut env, context, handle, &input, len, |j, bytes| {
        let section = stored_section(bytes, key_group)?;
        j.engine.restore_section(&section).map_err(invalid)
    })
}

/// The section `bytes` that Flink stored under `key_group`.
pub(crate) fn stored_section(bytes: &[u8], key_group: i32) -> NativeResult<StoredSection<'_>> {
    let key_group = u16::try_from(key_group)
        .map_err(|_| invalid(format!("key group {key_group} is out of range")))?;
    Ok(StoredSection {
        key_group: Some(key_group),
        bytes,
    })
}

/// `static native String counterNames()`: the names of the values `stats` writes, in its order,
/// separated by commas (`cdcjoin_join::COUNTER_NAMES`); Java reads the counters by these names.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeJoin_counterNames<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> JString<'local> {
    jni_entry(&mut env, "NativeJoin.counterNames", |env| {
        Ok(JString::from_str(env, COUNTER_NAMES.join(","))?)
    })
}

/// Copies `values` into the Java `long[]` `into`, which must hold them all.
pub(crate) fn write_counters(
    env: &mut Env<'_>,
    into: &JLongArray<'_>,
    values: &[i64],
) -> NativeResult<()> {
    if into.is_null() || into.len(env)? < values.len() {
        return Err(invalid(format!("stats needs a long[{}]", values.len())));
    }
    into.set_region(env, 0, values)?;
    Ok(())
}

/// `static native void stats(long handle, long[] into)`: the engine's counters, named by
/// `counterNames`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeJoin_stats<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    into: JLongArray<'local>,
) {
    jni_entry(&mut env, "NativeJoin.stats", |env| {
        let values = JOINS.with(handle, |j| Ok(j.engine.counters().map(|v| v as i64)))?;
        write_counters(env, &into, &values)
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
    JOINS.free(&mut env, "NativeJoin.free", handle)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A section is named by the key group Java read it from, which must be one.
    #[test]
    fn a_stored_section_is_named_by_its_key_group() {
        let section = stored_section(b"abc", 5).unwrap();
        assert_eq!((section.key_group, section.bytes), (Some(5), &b"abc"[..]));
        for bad in [-1, 70_000] {
            let msg = stored_section(b"", bad).unwrap_err().to_string();
            assert!(
                msg.contains(&format!("key group {bad} is out of range")),
                "{msg}"
            );
        }
    }
}
