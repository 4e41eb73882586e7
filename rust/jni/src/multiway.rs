//! Entry points of `dev.cdcjoin.flink.nativelib.NativeMultiJoin`: a [`MultiwayJoin`] (up to eight
//! inputs joined on one key, `cdcjoin_join::multiway`), created here and then used through the
//! calls it shares with the two-table join (`crate::join`, Java's `KeyGroupJoin`) with the
//! multi-way join's formats: a batch is the join's input frames with each block behind its
//! input's index, the output is the join's output entries with one row per input.

use cdcjoin_join::batch::DEFAULT_OUTPUT_BOUND;
use cdcjoin_join::{
    ChainSpec, Compression, FlinkRows, FlinkRowsSpec, MultiwayJoin, MultiwaySpec, Rekeyer,
    StoredSection, MULTIWAY_COUNTER_NAMES,
};
use jni::objects::{JClass, JString};
use jni::sys::jlong;
use jni::EnvUnowned;

use crate::errors::NativeResult;
use crate::join::{counter_names, create, failed, invalid, Engine, Sections};

/// The multi-way join, and its spec for a chain or Flink rows declared later.
struct Multiway {
    join: MultiwayJoin,
    spec: MultiwaySpec,
}

impl Sections for Multiway {
    fn with_state(&self) -> Vec<u16> {
        self.join.key_groups_with_state()
    }
    fn section(&self, kg: u16, out: &mut Vec<u8>) -> NativeResult<()> {
        self.join.snapshot_key_group(kg, out).map_err(failed)
    }
}

impl Engine for Multiway {
    fn process(&mut self, batch: &[u8], now_ms: i64, out: &mut Vec<u8>) -> NativeResult<()> {
        self.join
            .process_batch(batch, now_ms, out)
            .map(drop)
            .map_err(failed)
    }
    fn resume(&mut self, out: &mut Vec<u8>) -> NativeResult<()> {
        self.join.resume(out).map(drop).map_err(failed)
    }
    fn has_pending(&self) -> bool {
        self.join.has_pending()
    }
    fn rekeyer(&self, chain: &ChainSpec) -> NativeResult<Rekeyer> {
        Rekeyer::multiway(&self.spec, chain).map_err(invalid)
    }
    fn flink_rows(&self, spec: &FlinkRowsSpec) -> NativeResult<FlinkRows> {
        FlinkRows::multiway(&self.spec, spec).map_err(invalid)
    }
    fn set_snapshot_compression(&mut self, compression: Compression) {
        self.join.set_snapshot_compression(compression);
    }
    fn restore(&mut self, section: &StoredSection<'_>) -> NativeResult<()> {
        self.join.restore_section(section).map_err(invalid)
    }
    fn freeze(&mut self) -> Box<dyn Sections + Send> {
        Box::new(self.join.freeze())
    }
    fn settle(&mut self) {
        self.join.settle();
    }
    fn counters(&self) -> Vec<i64> {
        self.join.counters().map(|v| v as i64).to_vec()
    }
}

/// `static native long create(String specJson)`: a handle for a `MultiwaySpec` as JSON.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeMultiJoin_create<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    spec: JString<'local>,
) -> jlong {
    create(&mut env, "NativeMultiJoin.create", &spec, |json| {
        let spec: MultiwaySpec = serde_json::from_str(json)
            .map_err(|e| invalid(format!("invalid multi-way join spec: {e}")))?;
        let mut join = MultiwayJoin::new(&spec).map_err(invalid)?;
        join.set_output_bound(DEFAULT_OUTPUT_BOUND);
        Ok(Box::new(Multiway { join, spec }))
    })
}

/// `static native String counterNames()`: the names of the values `stats` writes, in its order,
/// separated by commas (`cdcjoin_join::MULTIWAY_COUNTER_NAMES`).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_cdcjoin_flink_nativelib_NativeMultiJoin_counterNames<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> JString<'local> {
    counter_names(
        &mut env,
        "NativeMultiJoin.counterNames",
        &MULTIWAY_COUNTER_NAMES,
    )
}
