//! Entry points of `dev.cdcjoin.flink.nativelib.KeyGroupJoin`, the calls the two-table join
//! (`NativeJoin`, a [`JoinEngine`]) and the multi-way join (`NativeMultiJoin`, a `MultiwayJoin`,
//! `crate::multiway`) share: one set of entry points over either kind of join ([`Engine`]), fed
//! batch by batch, its output optionally reshaped (re-keyed for a next join, or its rows written
//! as Flink rows: [`Reshape`]), its state written and restored one section per key group, live or
//! from a state frozen at an instant (`freeze`, `snapshotFrozen`, `takeFrozenOutput`,
//! `releaseFrozen`) while the join goes on. Each class keeps only its constructor and counter
//! names (`NativeJoin.create` here).

use cdcjoin_join::batch::DEFAULT_OUTPUT_BOUND;
use cdcjoin_join::state::Slot;
use cdcjoin_join::{
    ChainSpec, Compression, FlinkRows, FlinkRowsSpec, FrozenState, JoinEngine, JoinSpec, Rekeyer,
    StoredSection, COUNTER_NAMES,
};
use jni::objects::{JByteBuffer, JClass, JLongArray, JString};
use jni::sys::{jboolean, jlong};
use jni::{Env, EnvUnowned};

use crate::calls::Output;
use crate::errors::{jni_entry, NativeError, NativeResult};
use crate::handles::Registry;

/// What the entry points do with a join, whichever its kind.
pub(crate) trait Engine: Sections + Send {
    /// Joins `batch` (key group blocks) at processing time `now_ms`, writing the output entries
    /// to `out`, up to the output bound (`cdcjoin_join::batch::OutputBound`).
    fn process(&mut self, batch: &[u8], now_ms: i64, out: &mut Vec<u8>) -> NativeResult<()>;
    /// Joins what a call left at its output bound, as `process` joins a batch and at its time.
    fn resume(&mut self, out: &mut Vec<u8>) -> NativeResult<()>;
    /// Whether the last call left changes at its output bound.
    fn has_pending(&self) -> bool;
    /// The rekeyer of an output that feeds the next join `chain` declares.
    fn rekeyer(&self, chain: &ChainSpec) -> NativeResult<Rekeyer>;
    /// The writer of the output's rows as the Flink rows `spec` declares.
    fn flink_rows(&self, spec: &FlinkRowsSpec) -> NativeResult<FlinkRows>;
    /// Sets the compression of later snapshots.
    fn set_snapshot_compression(&mut self, compression: Compression);
    /// Restores one stored section.
    fn restore(&mut self, section: &StoredSection<'_>) -> NativeResult<()>;
    /// The state as it is now, for a snapshot written while the join goes on.
    fn freeze(&mut self) -> Box<dyn Sections + Send>;
    /// Merges what released frozen states no longer hold back into the live state.
    fn settle(&mut self);
    /// The counters, in the order of the kind's counter names.
    fn counters(&self) -> Vec<i64>;
}

/// A join, the buffer its last output (or snapshot) was written to, and when its output is
/// reshaped, how and the buffer the join writes to.
struct Join {
    engine: Box<dyn Engine>,
    out: Vec<u8>,
    reshape: Option<(Reshape, Vec<u8>)>,
}

/// What becomes of a join's output entries before the caller reads them.
enum Reshape {
    /// Re-keyed into the next join's input blocks (`cdcjoin_join::chain`).
    Chain(Box<Rekeyer>),
    /// Each joined row written as a Flink row (`cdcjoin_join::flink_rows`).
    Flink(FlinkRows),
}

impl Reshape {
    /// Appends the reshaped output of the join output `entries` to `out`.
    fn write(&mut self, entries: &[u8], out: &mut Vec<u8>) {
        match self {
            Reshape::Chain(rekeyer) => rekeyer.rekey(entries, out),
            Reshape::Flink(rows) => rows.write(entries, out),
        }
    }
}

static JOINS: Registry<Join> = Registry::new("KeyGroupJoin");

/// A join's state frozen for a snapshot written on another thread, and the buffer its last chunk
/// was written to.
struct FrozenJoin {
    state: Box<dyn Sections + Send>,
    out: Vec<u8>,
}

static FROZEN: Registry<FrozenJoin> = Registry::new("FrozenState");

/// `e` as an `IllegalArgumentException`: the caller passed something the engine rejects.
pub(crate) fn invalid(e: impl ToString) -> NativeError {
    NativeError::IllegalArgument(e.to_string())
}

/// `e` as an `IllegalStateException`: the engine failed on a batch or a snapshot.
pub(crate) fn failed(e: impl ToString) -> NativeError {
    NativeError::IllegalState(e.to_string())
}

impl Output for Join {
    fn output(&self) -> &[u8] {
        &self.out
    }
}

impl Output for FrozenJoin {
    fn output(&self) -> &[u8] {
        &self.out
    }
}

/// What a snapshot is written from: a join, or its state frozen at an instant.
pub(crate) trait Sections {
    /// The key groups holding state, ascending.
    fn with_state(&self) -> Vec<u16>;
    /// Appends the section of key group `kg`.
    fn section(&self, kg: u16, out: &mut Vec<u8>) -> NativeResult<()>;
}

impl<S: Slot + Clone> Sections for FrozenState<S> {
    fn with_state(&self) -> Vec<u16> {
        self.key_groups_with_state()
    }
    fn section(&self, kg: u16, out: &mut Vec<u8>) -> NativeResult<()> {
        self.snapshot_key_group(kg, out).map_err(failed)
    }
}

/// The two-table join, and its spec for a chain or Flink rows declared later.
struct TwoTable {
    engine: JoinEngine,
    spec: JoinSpec,
}

impl Sections for TwoTable {
    fn with_state(&self) -> Vec<u16> {
        self.engine.key_groups_with_state()
    }
    fn section(&self, kg: u16, out: &mut Vec<u8>) -> NativeResult<()> {
        self.engine.snapshot_key_group(kg, out).map_err(failed)
    }
}

impl Engine for TwoTable {
    fn process(&mut self, batch: &[u8], now_ms: i64, out: &mut Vec<u8>) -> NativeResult<()> {
        self.engine
            .process_batch(batch, now_ms, out)
            .map(drop)
            .map_err(failed)
    }
    fn resume(&mut self, out: &mut Vec<u8>) -> NativeResult<()> {
        self.engine.resume(out).map(drop).map_err(failed)
    }
    fn has_pending(&self) -> bool {
        self.engine.has_pending()
    }
    fn rekeyer(&self, chain: &ChainSpec) -> NativeResult<Rekeyer> {
        Rekeyer::new(&self.spec, chain).map_err(invalid)
    }
    fn flink_rows(&self, spec: &FlinkRowsSpec) -> NativeResult<FlinkRows> {
        FlinkRows::new(&self.spec, spec).map_err(invalid)
    }
    fn set_snapshot_compression(&mut self, compression: Compression) {
        self.engine.set_snapshot_compression(compression);
    }
    fn restore(&mut self, section: &StoredSection<'_>) -> NativeResult<()> {
        self.engine.restore_section(section).map_err(invalid)
    }
    fn freeze(&mut self) -> Box<dyn Sections + Send> {
        Box::new(self.engine.freeze())
    }
    fn settle(&mut self) {
        self.engine.settle();
    }
    fn counters(&self) -> Vec<i64> {
        self.engine.counters().map(|v| v as i64).to_vec()
    }
}

/// `create(String specJson)` of a join class: a handle for the join `build` makes of the JSON.
pub(crate) fn create(
    env: &mut EnvUnowned<'_>,
    context: &'static str,
    spec: &JString<'_>,
    build: impl FnOnce(&str) -> NativeResult<Box<dyn Engine>>,
) -> jlong {
    JOINS.create_from_json(env, context, spec, |json| {
        Ok(Join {
            engine: build(json)?,
            out: Vec::new(),
            reshape: None,
        })
    })
}

/// `static native long NativeJoin.create(String specJson)`: a join handle for a `JoinSpec` as JSON.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeJoin_create<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    spec: JString<'local>,
) -> jlong {
    create(&mut env, "NativeJoin.create", &spec, |json| {
        let spec: JoinSpec =
            serde_json::from_str(json).map_err(|e| invalid(format!("invalid join spec: {e}")))?;
        let mut engine = JoinEngine::new(&spec).map_err(invalid)?;
        engine.set_output_bound(DEFAULT_OUTPUT_BOUND);
        Ok(Box::new(TwoTable { engine, spec }))
    })
}

/// `static native String NativeJoin.counterNames()`: the names of the values `stats` writes, in
/// its order, separated by commas (`cdcjoin_join::COUNTER_NAMES`); Java reads the counters by
/// these names.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeJoin_counterNames<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> JString<'local> {
    counter_names(&mut env, "NativeJoin.counterNames", &COUNTER_NAMES)
}

/// `counterNames()` of a join class: `names`, separated by commas.
pub(crate) fn counter_names<'local>(
    env: &mut EnvUnowned<'local>,
    context: &'static str,
    names: &[&str],
) -> JString<'local> {
    jni_entry(env, context, |env| {
        Ok(JString::from_str(env, names.join(","))?)
    })
}

/// `static native void chain(long handle, String chainJson)`: from now on `processBatch` writes
/// the chained output (`cdcjoin_join::chain`) of the `ChainSpec` as JSON: the next join's input
/// blocks instead of joined rows.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_KeyGroupJoin_chain<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    chain: JString<'local>,
) {
    let context = "KeyGroupJoin.chain";
    set_reshape(&mut env, context, handle, &chain, |engine, spec| {
        Ok(Reshape::Chain(Box::new(engine.rekeyer(&spec)?)))
    })
}

/// `static native void flinkRows(long handle, String specJson)`: from now on `processBatch`
/// writes each joined row as the Flink row (`cdcjoin_join::flink_rows`) of the `FlinkRowsSpec` as
/// JSON, in Flink's `BinaryRowData` layout, instead of one row per input.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_KeyGroupJoin_flinkRows<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    spec: JString<'local>,
) {
    let context = "KeyGroupJoin.flinkRows";
    set_reshape(&mut env, context, handle, &spec, |engine, spec| {
        Ok(Reshape::Flink(engine.flink_rows(&spec)?))
    })
}

/// Reshapes the later output of the join of `handle` as `make` builds it from the spec given as
/// JSON (`json`, a `T`).
fn set_reshape<T: serde::de::DeserializeOwned>(
    env: &mut EnvUnowned<'_>,
    context: &'static str,
    handle: jlong,
    json: &JString<'_>,
    make: impl FnOnce(&dyn Engine, T) -> NativeResult<Reshape>,
) {
    jni_entry(env, context, |env| {
        let json = json.try_to_string(env)?;
        let spec =
            serde_json::from_str(&json).map_err(|e| invalid(format!("invalid spec: {e}")))?;
        JOINS.with(handle, |j| {
            j.reshape = Some((make(j.engine.as_ref(), spec)?, Vec::new()));
            Ok(())
        })
    })
}

/// Joins `batch` into `j.out`: the joined rows, or reshaped.
fn join_batch(j: &mut Join, batch: &[u8], now_ms: i64) -> NativeResult<()> {
    let engine = &mut j.engine;
    reshaped(&mut j.reshape, &mut j.out, |out| {
        engine.process(batch, now_ms, out)
    })
}

/// Writes a join's output into `out` (cleared first) by `process`: the joined rows, or when the
/// output is reshaped, the joined rows written to the reshape's own buffer first, then reshaped.
fn reshaped(
    reshape: &mut Option<(Reshape, Vec<u8>)>,
    out: &mut Vec<u8>,
    process: impl FnOnce(&mut Vec<u8>) -> NativeResult<()>,
) -> NativeResult<()> {
    out.clear();
    match reshape {
        None => process(out),
        Some((reshape, joined)) => {
            joined.clear();
            let done = process(joined);
            reshape.write(joined, out);
            done
        }
    }
}

/// `static native long processBatch(long handle, ByteBuffer in, int len, long nowMs,
/// ByteBuffer out)`: joins a batch of input records; the output length, or minus the needed
/// capacity (then call `takeOutput`).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_KeyGroupJoin_processBatch<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    input: JByteBuffer<'local>,
    len: i32,
    now_ms: jlong,
    out: JByteBuffer<'local>,
) -> jlong {
    let context = "KeyGroupJoin.processBatch";
    JOINS.with_batch(&mut env, context, handle, &input, len, &out, |j, batch| {
        join_batch(j, batch, now_ms)
    })
}

/// `static native long continueBatch(long handle, ByteBuffer out)`: joins what the last call left
/// at its output bound; the output length, or minus the needed capacity.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_KeyGroupJoin_continueBatch<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    out: JByteBuffer<'local>,
) -> jlong {
    JOINS.with_output(&mut env, "KeyGroupJoin.continueBatch", handle, &out, |j| {
        let engine = &mut j.engine;
        reshaped(&mut j.reshape, &mut j.out, |out| engine.resume(out))
    })
}

/// `static native boolean hasPending(long handle)`: whether the last call stopped at its output
/// bound with changes left (`continueBatch` joins them; a batch before that is refused).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_KeyGroupJoin_hasPending<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jboolean {
    JOINS.ask(&mut env, "KeyGroupJoin.hasPending", handle, |j| {
        Ok(j.engine.has_pending())
    })
}

/// `static native long takeOutput(long handle, ByteBuffer out)`: copies the last output.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_KeyGroupJoin_takeOutput<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    out: JByteBuffer<'local>,
) -> jlong {
    JOINS.take_output(&mut env, "KeyGroupJoin.takeOutput", handle, &out)
}

/// Writes `(key_group u32 | section)*` for the key groups holding state from `from` on, in key
/// group order, stopping after the section that brings the output to `max_bytes` or more: a
/// checkpoint takes the state in chunks, never all of it in one buffer.
fn snapshot_chunk(
    state: &(impl Sections + ?Sized),
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
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_KeyGroupJoin_snapshot<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    out: JByteBuffer<'local>,
    from_key_group: i32,
    max_bytes: i32,
) -> jlong {
    JOINS.with_output(&mut env, "KeyGroupJoin.snapshot", handle, &out, |j| {
        snapshot_chunk(j.engine.as_ref(), &mut j.out, from_key_group, max_bytes)
    })
}

/// The compression a `setSnapshotCompression(boolean lz4)` call asks for.
fn compression(lz4: jboolean) -> Compression {
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
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_KeyGroupJoin_setSnapshotCompression<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    lz4: jboolean,
) {
    jni_entry(&mut env, "KeyGroupJoin.setSnapshotCompression", |_| {
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
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_KeyGroupJoin_freeze<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jlong {
    jni_entry(&mut env, "KeyGroupJoin.freeze", |_| {
        let state = JOINS.with(handle, |j| Ok(j.engine.freeze()))?;
        Ok(FROZEN.insert(FrozenJoin {
            state,
            out: Vec::new(),
        }))
    })
}

/// `static native void settle(long handle)`: merges the keys the join changed while frozen states
/// held their key groups back into its tables, for those the frozen states released (each batch
/// ends with this; an idle join is settled once a snapshot is written, so that the next freeze
/// merges nothing on the task thread).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_KeyGroupJoin_settle<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    jni_entry(&mut env, "KeyGroupJoin.settle", |_| {
        JOINS.with(handle, |j| {
            j.engine.settle();
            Ok(())
        })
    })
}

/// `static native long snapshotFrozen(long frozen, ByteBuffer out, int fromKeyGroup, int
/// maxBytes)`: a chunk of a frozen state, as `snapshot` writes one of the live state, each key
/// group's section handed out once; may run on another thread than the join's calls.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_KeyGroupJoin_snapshotFrozen<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    frozen: jlong,
    out: JByteBuffer<'local>,
    from_key_group: i32,
    max_bytes: i32,
) -> jlong {
    let context = "KeyGroupJoin.snapshotFrozen";
    FROZEN.with_output(&mut env, context, frozen, &out, |f| {
        snapshot_chunk(f.state.as_ref(), &mut f.out, from_key_group, max_bytes)
    })
}

/// `static native long takeFrozenOutput(long frozen, ByteBuffer out)`: copies the last chunk.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_KeyGroupJoin_takeFrozenOutput<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    frozen: jlong,
    out: JByteBuffer<'local>,
) -> jlong {
    FROZEN.take_output(&mut env, "KeyGroupJoin.takeFrozenOutput", frozen, &out)
}

/// `static native void releaseFrozen(long frozen)`: drops a frozen state (its snapshot was written
/// or aborted), freeing the sections only it still held; unknown handles are ignored.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_KeyGroupJoin_releaseFrozen<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    frozen: jlong,
) {
    FROZEN.free(&mut env, "KeyGroupJoin.releaseFrozen", frozen)
}

/// `static native void restore(long handle, ByteBuffer in, int len, int keyGroup)`: restores
/// the one section (`len u32 | payload`) at `[0, len)` of `in`, stored under key group
/// `keyGroup`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_KeyGroupJoin_restore<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    input: JByteBuffer<'local>,
    len: i32,
    key_group: i32,
) {
    let context = "KeyGroupJoin.restore";
    JOINS.with_input(&mut env, context, handle, &input, len, |j, bytes| {
        let section = stored_section(bytes, key_group)?;
        j.engine.restore(&section)
    })
}

/// The section `bytes` that Flink stored under `key_group`.
fn stored_section(bytes: &[u8], key_group: i32) -> NativeResult<StoredSection<'_>> {
    let key_group = u16::try_from(key_group)
        .map_err(|_| invalid(format!("key group {key_group} is out of range")))?;
    Ok(StoredSection {
        key_group: Some(key_group),
        bytes,
    })
}

/// Copies `values` into the Java `long[]` `into`, which must hold them all.
fn write_counters(env: &mut Env<'_>, into: &JLongArray<'_>, values: &[i64]) -> NativeResult<()> {
    if into.is_null() || into.len(env)? < values.len() {
        return Err(invalid(format!("stats needs a long[{}]", values.len())));
    }
    into.set_region(env, 0, values)?;
    Ok(())
}

/// `static native void stats(long handle, long[] into)`: the engine's counters, named by
/// `counterNames`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_KeyGroupJoin_stats<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    into: JLongArray<'local>,
) {
    jni_entry(&mut env, "KeyGroupJoin.stats", |env| {
        let values = JOINS.with(handle, |j| Ok(j.engine.counters()))?;
        write_counters(env, &into, &values)
    })
}

/// `static native void free(long handle)`: releases the join and its state; unknown handles are
/// ignored.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_KeyGroupJoin_free<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    JOINS.free(&mut env, "KeyGroupJoin.free", handle)
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
