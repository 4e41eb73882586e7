//! Restoring snapshot sections on several threads.
//!
//! A restore is the time a recovering or rescaled job stands still, and it is CPU work: every
//! group's rows are checked and every join key is hashed into a fresh table (about 65 ns per
//! stored row on one core, bench/README.md). Key groups are independent, so their sections are
//! decoded on up to `threads` threads, each into a table of its own, and then installed in the
//! engine by the calling thread: a key group that holds no state yet takes the decoded table as it
//! is; one that does (a section restored on top of state) is restored again into its own table, in
//! order, with the one-section path's checks. The result is the same state and statistics as
//! restoring the sections one after another; a section that fails fails the restore, named by
//! its key group.

use crate::engine::JoinError;
use crate::overlay::KeyGroupState;
use crate::state::{KeyTable, Slot};
use std::sync::atomic::{AtomicUsize, Ordering};

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

/// A section restored into a table of its own, off the engine.
pub(crate) struct Decoded<S> {
    /// Its key group.
    pub key_group: u16,
    /// The key group's table, holding only this section's groups.
    pub table: KeyTable<S>,
    /// What it holds.
    pub restored: Restored,
}

/// Restores each of `sections` with `decode` into a table of its own, on up to `threads`
/// threads; the results in the sections' order, or the error of the first section that failed.
pub(crate) fn decode_all<S: Send>(
    sections: &[StoredSection<'_>],
    threads: usize,
    decode: impl Fn(&StoredSection<'_>) -> Result<Decoded<S>, JoinError> + Sync,
) -> Result<Vec<Decoded<S>>, JoinError> {
    let threads = threads.clamp(1, sections.len().max(1));
    if threads == 1 {
        return sections.iter().map(&decode).collect();
    }
    let next = AtomicUsize::new(0);
    let worker = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(section) = sections.get(i) else {
                return done;
            };
            done.push((i, decode(section)));
        }
    };
    let mut results: Vec<_> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads).map(|_| scope.spawn(worker)).collect();
        let joined = workers.into_iter().map(|w| w.join());
        // A worker's panic goes on in the calling thread, where the caller catches panics.
        joined
            .flat_map(|r| r.unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    });
    results.sort_unstable_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// Gives `table` to a key group that holds no state; a key group that does gives it back (the
/// caller then restores the section into the key group's own table).
pub(crate) fn install<S: Slot + Clone>(
    state: &mut KeyGroupState<S>,
    table: KeyTable<S>,
) -> Result<(), KeyTable<S>> {
    if state.is_empty() && !state.has_overlay() {
        state.replace_table(table);
        Ok(())
    } else {
        Err(table)
    }
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
