//! State TTL, shared by the two-table join ([`crate::engine`]) and the multi-way join
//! ([`crate::multiway`]): Flink's `OnCreateAndWrite` / `NeverReturnExpired` in processing time.
//!
//! A row of an input declared with `ttl_ms` expires `ttl_ms` after its last write (the entry's
//! `written_at`, see [`crate::group`]); from then on it is invisible, and its expiry emits nothing.
//! Expired rows are freed in three ways, none of which changes what a join emits:
//! - when their key is touched, if their group holds few rows ([`purge_few`]: a scan of a few
//!   rows; freeing a group of many rows by a scan would make every change cost the rows of its
//!   key);
//! - when a change finds them by primary key or value ([`unexpired`]);
//! - by a periodic sweep of the whole state every half of the shortest TTL ([`Sweep`]), so that
//!   the rows of keys never touched again go too.

use crate::group::{expiry_deadline, Entry, Group};
use crate::overlay::KeyGroupState;
use crate::snapshot::Frozen;
use crate::spec::ResolvedSide;
use crate::state::{KeyTable, Slot};
use std::sync::{Arc, Weak};

/// The write time at or before which the rows of `side` have expired at `now` (`i64::MIN`
/// without a TTL: none has).
pub(crate) fn deadline(side: &ResolvedSide, now: i64) -> i64 {
    side.ttl_ms
        .map_or(i64::MIN, |ttl| expiry_deadline(ttl, now))
}

/// `found`, an entry of `side`'s group `g`, unless it has expired at `now`: then it is freed,
/// its rows (with multiplicity) are added to `expired`, and `None` is returned.
pub(crate) fn unexpired(
    side: &ResolvedSide,
    g: &mut Group,
    found: Entry,
    now: i64,
    expired: &mut u64,
) -> Option<Entry> {
    if g.written_at(side.entry, &found) > deadline(side, now) {
        return Some(found);
    }
    *expired += g.count(side.entry, &found) as u64;
    g.remove(&side.identity(), &found);
    None
}

/// Frees the expired rows of `side`'s group `g` if it holds few rows (not indexed); the rows
/// freed, with multiplicity.
pub(crate) fn purge_few(side: &ResolvedSide, g: &mut Group, now: i64) -> u64 {
    match (side.ttl_ms, g.is_indexed()) {
        (Some(ttl), false) => g.purge_expired(side.entry, &side.identity(), ttl, now),
        _ => 0,
    }
}

/// Frees the expired rows of `side`'s group `g`, whatever its size; the rows freed.
pub(crate) fn purge_all(side: &ResolvedSide, g: &mut Group, now: i64) -> u64 {
    side.ttl_ms.map_or(0, |ttl| {
        g.purge_expired(side.entry, &side.identity(), ttl, now)
    })
}

/// When the whole state is swept of expired rows: every half of the shortest TTL of the join's
/// inputs, never without one.
pub(crate) struct Sweep {
    every_ms: Option<i64>,
    last: i64,
}

impl Sweep {
    /// The sweep of a join whose inputs are `sides`.
    pub(crate) fn new(sides: &[ResolvedSide]) -> Sweep {
        let min_ttl = sides.iter().filter_map(|s| s.ttl_ms).min();
        Sweep {
            every_ms: min_ttl.map(|t| (t / 2).clamp(1, i64::MAX as u64) as i64),
            last: i64::MIN,
        }
    }

    /// Frees the expired rows of every key group in `tables` (the join's, whose inputs are
    /// `sides`) when a sweep is due at `now`; the rows freed, or `None` when none was due. A key
    /// group that a frozen state (of `freezes`) still holds is handed over only if the sweep
    /// changes it. The caller recounts its key and byte counters after a sweep.
    pub(crate) fn run<S: Slot + Clone>(
        &mut self,
        sides: &[ResolvedSide],
        tables: &mut [KeyGroupState<S>],
        freezes: &mut Vec<Weak<Frozen<S>>>,
        now: i64,
    ) -> Option<u64> {
        let every = self.every_ms?;
        if now.saturating_sub(self.last) < every {
            return None;
        }
        self.last = now;
        let has_expired = |t: &KeyTable<S>| {
            t.slots()
                .flat_map(|slot| sides.iter().zip(slot.groups()))
                .any(|(side, g)| {
                    side.ttl_ms
                        .is_some_and(|ttl| g.has_expired(side.entry, ttl, now))
                })
        };
        let mut expired = 0;
        for (offset, kg) in tables.iter_mut().enumerate() {
            kg.settle(sides);
            if !kg.has_overlay() && Arc::strong_count(kg.table()) > 1 && !has_expired(kg.table()) {
                continue;
            }
            let table = kg.own(sides, freezes, offset);
            table.retain_mut(|slot| {
                for (side, g) in sides.iter().zip(slot.groups_mut()) {
                    expired += purge_all(side, g, now);
                }
            });
        }
        Some(expired)
    }
}
