//! One key group of a join (the two-table join's or the multi-way join's: generic over the
//! [`Slot`]): its table, and while a snapshot being written still holds that table, the join keys
//! changed since, copied on their first write (copy on write per key).
//!
//! Why per key: [`crate::snapshot`] freezes the state by sharing each key group's table with the
//! frozen state, so the engine may not change a shared table. Any coarser unit of copy is written
//! to almost whole at the rates a checkpoint matters for (every key group, and every segment of a
//! few keys, receives changes within the first milliseconds after a freeze; bench/README.md), so
//! copying or serializing the unit on the task thread made every checkpoint cost the task thread
//! a pass over the whole state. Here the engine writes to an *overlay*: a small table of the keys
//! changed since the freeze, each a copy of the key's slot (every input's group) taken at its
//! first write, or a *tombstone* when the change removed the key. Reads look in the overlay first,
//! then in the shared table. The task thread's cost of a checkpoint is then a copy of the slots it
//! writes to while the snapshot is written, and the extra memory is the versions of those slots
//! the snapshot keeps (counted as frozen bytes). Once no frozen state holds the table, the overlay
//! is merged into it (after the next batch, or before anything that walks the whole table).

use crate::group::Group;
use crate::snapshot::{own_table, Frozen};
use crate::spec::ResolvedSide;
use crate::state::{KeySlot, KeyTable, Slot};
use std::borrow::Cow;
use std::sync::{Arc, Weak};

/// One key group's state (see the module docs).
#[derive(Default)]
pub(crate) struct KeyGroupState<S = KeySlot> {
    /// The table, shared with the frozen states that have not written the key group yet.
    table: Arc<KeyTable<S>>,
    /// The keys changed while the table was shared; `None` when nothing was.
    overlay: Option<Box<Overlay<S>>>,
}

/// The keys of a shared table changed since, and what they cost.
#[derive(Default)]
struct Overlay<S> {
    shadows: KeyTable<Shadow<S>>,
    /// Keys the overlay adds to the table's, net of those it removes.
    keys: i64,
    /// Heap bytes of the table's slots the overlay masks: kept alive only for the frozen states.
    masked_bytes: u64,
}

/// A key's slot as changed since the freeze, or its tombstone.
#[derive(Default, Clone)]
struct Shadow<S> {
    /// Every input's rows now; empty for a tombstone.
    slot: S,
    /// The join key's bytes (a tombstone has no row to project it from).
    key: Box<[u8]>,
    /// Whether the shared table holds the key: an emptied slot then stays as a tombstone.
    in_table: bool,
}

impl<S: Slot> Slot for Shadow<S> {
    fn with_inputs(n: usize) -> Shadow<S> {
        Shadow {
            slot: S::with_inputs(n),
            key: Box::default(),
            in_table: false,
        }
    }

    fn groups(&self) -> &[Group] {
        self.slot.groups()
    }

    fn groups_mut(&mut self) -> &mut [Group] {
        self.slot.groups_mut()
    }

    fn heap_bytes(&self) -> u64 {
        self.key.len() as u64 + self.slot.heap_bytes()
    }

    /// A tombstone is not empty: it masks the shared table's slot.
    fn is_empty(&self) -> bool {
        !self.in_table && self.slot.is_empty()
    }

    fn has_key(&self, _: &[ResolvedSide], key: &[u8]) -> bool {
        *self.key == *key
    }
}

/// Heap bytes of a slot: its groups', and its own.
fn slot_bytes<S: Slot>(slot: &S) -> u64 {
    let groups: u64 = (slot.groups().iter())
        .map(|g| (g.stored_bytes() + g.overhead_bytes()) as u64)
        .sum();
    groups + slot.heap_bytes()
}

impl<S: Slot + Clone> KeyGroupState<S> {
    /// The table as frozen states share it (for freezing, prefetching and whole-table reads of a
    /// key group without an overlay).
    pub(crate) fn table(&self) -> &Arc<KeyTable<S>> {
        &self.table
    }

    /// Makes `table` the key group's table: a restore into a key group that holds nothing.
    pub(crate) fn replace_table(&mut self, table: KeyTable<S>) {
        self.table = Arc::new(table);
    }

    /// Number of join keys stored.
    pub(crate) fn len(&self) -> u64 {
        let extra = self.overlay.as_ref().map_or(0, |o| o.keys);
        (self.table.len() as i64 + extra) as u64
    }

    /// True when no key is stored.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether keys changed while the table was shared are not merged into it yet.
    pub(crate) fn has_overlay(&self) -> bool {
        self.overlay.is_some()
    }

    /// Heap bytes of the tables themselves (the overlay's included; groups not).
    pub(crate) fn table_bytes(&self) -> usize {
        self.table.table_bytes() + self.overlay.as_ref().map_or(0, |o| o.shadows.table_bytes())
    }

    /// Heap bytes kept only for the frozen states: the versions of the slots changed since.
    pub(crate) fn masked_bytes(&self) -> u64 {
        self.overlay.as_ref().map_or(0, |o| o.masked_bytes)
    }

    /// Runs `run` on the slot of `key` as [`KeyTable::change`] does: on the table if there is no
    /// overlay and no frozen state holds the table, else on the key's copy in the overlay.
    ///
    /// Once an overlay exists, every change goes to it until [`Self::settle`] merges it: the
    /// frozen states release the table on another thread at any instant, and a change written to
    /// the table while the overlay still held a newer copy of its key would be lost at the merge.
    pub(crate) fn change<R>(
        &mut self,
        sides: &[ResolvedSide],
        hash: u64,
        key: &[u8],
        create: bool,
        run: impl FnOnce(&mut S) -> R,
    ) -> Option<(R, i64)> {
        if self.overlay.is_none() {
            if let Some(table) = Arc::get_mut(&mut self.table) {
                return table.change(sides, hash, key, create, run);
            }
        }
        self.change_shared(sides, hash, key, create, run)
    }

    /// [`Self::change`] while frozen states hold the table, or an overlay is not merged yet.
    fn change_shared<R>(
        &mut self,
        sides: &[ResolvedSide],
        hash: u64,
        key: &[u8],
        create: bool,
        run: impl FnOnce(&mut S) -> R,
    ) -> Option<(R, i64)> {
        let overlay = self.overlay.get_or_insert_with(Box::default);
        let mut entry = overlay.shadows.entry(sides, hash, key);
        let (r, keys) = if let Some(shadow) = entry.occupied() {
            let before = !shadow.slot.is_empty();
            if !before && !create {
                return None;
            }
            let r = run(&mut shadow.slot);
            let keys = !shadow.slot.is_empty() as i64 - before as i64;
            entry.remove_if_empty();
            (r, keys)
        } else {
            let mut shadow = match self.table.find(sides, hash, key) {
                Some(slot) => {
                    overlay.masked_bytes += slot_bytes(slot);
                    Shadow {
                        slot: slot.clone(),
                        key: key.into(),
                        in_table: true,
                    }
                }
                None if create => Shadow {
                    key: key.into(),
                    ..Shadow::with_inputs(sides.len())
                },
                None => return None,
            };
            let before = shadow.in_table;
            let r = run(&mut shadow.slot);
            let keys = !shadow.slot.is_empty() as i64 - before as i64;
            entry.insert(shadow);
            (r, keys)
        };
        overlay.keys += keys;
        Some((r, keys))
    }

    /// Merges the overlay into the table once no frozen state holds the table. Cheap otherwise.
    pub(crate) fn settle(&mut self, sides: &[ResolvedSide]) {
        if self.overlay.is_some() {
            if let Some(table) = Arc::get_mut(&mut self.table) {
                let overlay = self.overlay.take().expect("checked above");
                apply(table, overlay.shadows.into_entries(), sides);
            }
        }
    }

    /// The table, to be changed as a whole (sweeps, restores, a freeze of a key group with an
    /// overlay): the frozen states still holding it write the key group's section first and let
    /// it go (see [`own_table`]), then the overlay is merged into it.
    pub(crate) fn own(
        &mut self,
        sides: &[ResolvedSide],
        freezes: &mut Vec<Weak<Frozen<S>>>,
        offset: usize,
    ) -> &mut KeyTable<S> {
        let table = own_table(&mut self.table, freezes, offset);
        if let Some(overlay) = self.overlay.take() {
            apply(table, overlay.shadows.into_entries(), sides);
        }
        table
    }

    /// The key group's state as one table: the table itself, or without a frozen state's help a
    /// copy of it with the overlay merged (a snapshot of the live state while one is written).
    pub(crate) fn merged(&self, sides: &[ResolvedSide]) -> Cow<'_, KeyTable<S>> {
        match &self.overlay {
            None => Cow::Borrowed(&self.table),
            Some(overlay) => {
                let mut table = KeyTable::clone(&self.table);
                let shadows = overlay.shadows.entries().map(|(h, s)| (h, s.clone()));
                apply(&mut table, shadows, sides);
                Cow::Owned(table)
            }
        }
    }
}

/// Writes the `shadows` (hash and shadow) into `table`: a slot replaces the key's, a tombstone
/// removes it.
fn apply<S: Slot>(
    table: &mut KeyTable<S>,
    shadows: impl Iterator<Item = (u64, Shadow<S>)>,
    sides: &[ResolvedSide],
) {
    for (hash, shadow) in shadows {
        let mut entry = table.entry(sides, hash, &shadow.key);
        match entry.occupied() {
            Some(slot) => {
                *slot = shadow.slot;
                entry.remove_if_empty();
            }
            None => entry.insert(shadow.slot),
        }
    }
}

/// The sum of `f` over every stored group of `states` (a join's key groups, whose inputs are
/// `sides`) with its input's declaration, the keys changed while a snapshot is written included.
/// Walks the whole state (recounts after sweeps, payload measures).
pub(crate) fn sum_groups<S: Slot + Clone>(
    states: &[KeyGroupState<S>],
    sides: &[ResolvedSide],
    f: impl Fn(&ResolvedSide, &Group) -> u64,
) -> u64 {
    let per_key_group = |kg: &KeyGroupState<S>| -> u64 {
        let table = kg.merged(sides);
        let groups = table
            .slots()
            .flat_map(|slot| sides.iter().zip(slot.groups()));
        groups
            .filter(|(_, g)| !g.is_empty())
            .map(|(s, g)| f(s, g))
            .sum()
    };
    states.iter().map(per_key_group).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::hash_key;
    use crate::state::tests::{key, row, sides};

    /// Adds a right row `(k)` to the slot of `k` (creating it).
    fn add(kg: &mut KeyGroupState, sides: &[ResolvedSide; 2], k: i32) -> i64 {
        let key = key(sides, k);
        let push = |slot: &mut KeySlot| {
            let g = &mut slot.sides[1];
            g.push(sides[1].entry, &sides[1].identity(), &row(k), (1, 0), 0);
        };
        kg.change(sides, hash_key(&key), &key, true, push)
            .unwrap()
            .1
    }

    fn rows(kg: &KeyGroupState, sides: &[ResolvedSide; 2], k: i32) -> usize {
        let key = key(sides, k);
        let table = kg.merged(sides);
        table
            .find(sides, hash_key(&key), &key)
            .map_or(0, |slot| slot.sides[1].rows(sides[1].entry) as usize)
    }

    /// A key written while a frozen state held the table goes to the overlay, and so does every
    /// later change until the overlay is merged, even once the table is released: a change
    /// written to the table then would be lost when the overlay's older copy is merged over it.
    #[test]
    fn the_overlay_takes_every_change_until_it_is_merged() {
        let sides = sides();
        let mut kg = KeyGroupState::default();
        assert_eq!(add(&mut kg, &sides, 1), 1);
        let frozen = Arc::clone(kg.table());
        assert_eq!(add(&mut kg, &sides, 1), 0);
        assert!(kg.has_overlay() && kg.masked_bytes() > 0);
        drop(frozen);
        assert_eq!(add(&mut kg, &sides, 1), 0);
        assert!(
            kg.has_overlay(),
            "released, but not merged before the overlay is settled"
        );
        assert_eq!((rows(&kg, &sides, 1), kg.len()), (3, 1));
        kg.settle(&sides);
        assert!(!kg.has_overlay());
        assert_eq!(
            (rows(&kg, &sides, 1), kg.len(), kg.masked_bytes()),
            (3, 1, 0)
        );
    }
}
