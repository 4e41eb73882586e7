//! Restoring snapshot sections, each checked against the key group Flink stored it under.
//!
//! A section is decoded into a table of its own, which a key group holding no state yet takes as
//! it is; a key group that does (a section restored on top of state) is restored again into its
//! own table, decoding it a second time, with the checks against keys restored twice (a restore
//! at init, the common case, fills empty key groups). The same reader serves the two-table and the
//! multi-way join (`SectionRead`).
//!
//! Decoding sections on several threads was measured and not kept: twice as fast in criterion
//! (`benches/snapshot.rs`, 20M rows), but slower inside a 2-core TaskManager, where the restore
//! competes with the JIT compiling the new job and every page of the new state is faulted in
//! (bench/README.md, "State scale").

use crate::engine::JoinError;
use crate::overlay::KeyGroupState;
use crate::snapshot::Frozen;
use crate::spec::{KeyGroupRange, ResolvedSide};
use crate::state::{KeyTable, Slot};
use std::sync::Weak;

/// One stored section (`len u32 | payload`, exactly) and the key group Flink stored it under,
/// when known: a restore checks that the section holds that key group and names it in errors.
#[derive(Clone, Copy, Debug)]
pub struct StoredSection<'a> {
    /// The key group the section was stored under, if the caller knows it.
    pub key_group: Option<u16>,
    /// The section's bytes.
    pub bytes: &'a [u8],
}

/// What restored groups added to a table.
#[derive(Default)]
pub(crate) struct Restored {
    /// Join keys new to the table.
    pub keys: u64,
    /// Rows, with multiplicity.
    pub rows: u64,
    /// The groups' stored bytes.
    pub group_bytes: u64,
    /// The groups' heap bytes beyond them.
    pub overhead_bytes: u64,
}

/// Reads the sections of one kind of join into tables.
pub(crate) trait SectionRead<S> {
    /// The join's sides (inputs), in order.
    fn sides(&self) -> &[ResolvedSide];

    /// Restores `section` into `table` (its key group's table, or a fresh one); the section's key
    /// group and what it added.
    fn restore_into(
        &self,
        section: &StoredSection<'_>,
        table: &mut KeyTable<S>,
    ) -> Result<(u16, Restored), JoinError>;
}

/// The key group states of a join (one per key group of its range) and its frozen states.
pub(crate) type States<'a, S> = (&'a mut Vec<KeyGroupState<S>>, &'a mut Vec<Weak<Frozen<S>>>);

/// Restores `section` with `reader` into `states` (the key groups of `range`): into a table of
/// its own, which a key group holding no state yet takes as it is; what it added.
pub(crate) fn restore_one<S: Slot + Clone>(
    reader: &impl SectionRead<S>,
    (states, freezes): States<'_, S>,
    range: KeyGroupRange,
    section: &StoredSection<'_>,
) -> Result<Restored, JoinError> {
    let mut table = KeyTable::default();
    let (key_group, restored) = reader.restore_into(section, &mut table)?;
    let offset = range.offset(key_group);
    let state = &mut states[offset];
    if state.is_empty() && !state.has_overlay() {
        state.replace_table(table);
        return Ok(restored);
    }
    let own = state.own(reader.sides(), freezes, offset);
    Ok(reader.restore_into(section, own)?.1)
}

/// `error` with the key group of `section` where the section's own was not known yet (a section
/// unreadable before its key group is).
pub(crate) fn named(error: JoinError, section: &StoredSection<'_>) -> JoinError {
    match (error, section.key_group) {
        (JoinError::Snapshot { key_group, reason }, Some(known)) if key_group == u16::MAX => {
            JoinError::Snapshot {
                key_group: known,
                reason,
            }
        }
        (error, _) => error,
    }
}

/// Checks that a section stored under `section.key_group` holds key group `found`.
pub(crate) fn check_key_group(section: &StoredSection<'_>, found: u16) -> Result<(), JoinError> {
    match section.key_group {
        Some(stored) if stored != found => Err(JoinError::Snapshot {
            key_group: stored,
            reason: format!("stored under key group {stored}, the section holds key group {found}"),
        }),
        _ => Ok(()),
    }
}
