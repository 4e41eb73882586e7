//! A keyed, stateful changelog join whose emission is exactly that of Flink SQL's regular join
//! (`StreamingJoinOperator`), with the state held in compact native buffers.
//!
//! The crate is split the way the problem is:
//! - [`spec`]: what the user declares (schemas, keys, join type, TTL) and what it implies, chiefly
//!   the *state layout* of each side, chosen as Flink does from the keys.
//! - [`block`]: a compact group's heap block, in the allocator's size classes, so that an update
//!   changes it in place.
//! - [`group`]: the rows stored under one join key: one allocation while they are few, an arena
//!   indexed by primary key (or row value) once they are many, so a hot key costs O(1) per change.
//! - [`state`]: per key group, the hash table from a join key to both sides' groups.
//! - [`engine`]: the emission rules, in one place, over any layout.
//! - `reject`: the changes the join refuses without failing the batch (unavailable columns it
//!   cannot fill), and their messages.
//! - [`batch`]: the wire format of input records and output rows, so a caller (the JNI bridge)
//!   crosses into native code once per batch.
//! - [`chain`]: a join's output turned into the input changes of a next join (chained joins).
//! - [`flink_rows`]: a join's output with its joined rows in Flink's `BinaryRowData` layout.
//! - [`multiway`]: up to eight inputs joined on one key by one operator, with the changelog of the
//!   chain of binary joins and without its intermediate results.
//! - [`snapshot`]: the versioned, per-key-group snapshot format that makes checkpoints and
//!   rescaling work, written from a state frozen in O(key groups) while the join goes on.
//! - `ttl`: state TTL, shared by both joins: expiry deadlines, freeing expired rows, sweeps.
//! - `restore`: a section restored into its key group's table, checked against the key group
//!   Flink stored it under.
//!
//! The few `#[inline(always)]`s on per-record functions (reading a change, finding a stored row,
//! pushing and emitting one) are measured, not guessed: each was tried alone under callgrind and
//! kept only where it cut instructions, and others forced inline cost more (bench/README.md,
//! "Calls the compiler kept out of line").

pub mod batch;
pub mod block;
pub mod chain;
pub mod engine;
pub mod flink_rows;
pub mod group;
pub mod multiway;
mod overlay;
mod reject;
mod restore;
pub mod snapshot;
pub mod spec;
pub mod state;
mod ttl;

pub use batch::{
    BatchReader, OutputEntries, OutputEntry, OutputRow, OutputWriter, WideEntries, WideEntry,
    WideRow,
};
pub use chain::{ChainSpec, Rekeyer};
pub use engine::{JoinEngine, JoinError, JoinStats, StateSize, COUNTER_NAMES};
pub use flink_rows::{FlinkRows, FlinkRowsSpec};
pub use multiway::{
    MultiSlot, MultiwayError, MultiwayJoin, MultiwaySpec, MultiwayStats, MULTIWAY_COUNTER_NAMES,
};
pub use snapshot::{Compression, FrozenState, StoredSection};
pub use spec::{JoinSpec, JoinType, KeyGroupRange, RetractionPolicy, Side, SideSpec, StateLayout};
