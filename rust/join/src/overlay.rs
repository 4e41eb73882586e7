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
//!
//! A freeze while an earlier frozen state still holds the table (a savepoint or a forced
//! checkpoint taken while a checkpoint is being written) must not merge the overlay into the
//! table either: that would make the earlier frozen state write its section on the task thread
//! first, a pause that grows with the state (115-170 ms at 20M rows, bench/README.md). Instead
//! the overlay becomes a frozen *layer*, shared with the new frozen state ([`FrozenView`]), and the
//! engine writes to a fresh overlay above it. Reads look in the overlay, then in the layers from
//! the newest down, then in the table; the layers are merged into the table, oldest first, once
//! no frozen state holds them (a frozen state holds the table with its layers, so a table no
//! frozen state holds has layers none holds).

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
    /// Overlays frozen by freezes taken while the table was shared, oldest first: shared with
    /// the frozen states taken over them. Empty unless the table is shared (or being released).
    layers: Vec<Arc<Overlay<S>>>,
    /// The keys changed while the table was shared (since the newest layer); `None` when nothing
    /// was.
    overlay: Option<Box<Overlay<S>>>,
}

/// A key group as a frozen state holds it: the table and the layers above it, as they were at
/// the freeze.
pub(crate) struct FrozenView<S> {
    // Dropped before the table: a table no frozen state holds has layers none holds.
    layers: Vec<Arc<Overlay<S>>>,
    table: Arc<KeyTable<S>>,
}

impl<S: Slot + Clone> FrozenView<S> {
    /// The key group as one table: the table itself, or a copy with the layers merged (a freeze
    /// taken while an earlier one was written; the copy is made by the snapshot's writer).
    pub(crate) fn merged(&self, sides: &[ResolvedSide]) -> Cow<'_, KeyTable<S>> {
        merged(&self.table, &self.layers, None, sides)
    }
}

/// The keys of a shared table changed since, and what they cost.
#[derive(Default, Clone)]
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
    /// Whether the key is held below the overlay (by the shared table, or as a slot or a
    /// tombstone of a layer): an emptied slot then stays as a tombstone.
    held_below: bool,
    /// The position of the key's bucket in the shared table, when the copy was taken from it:
    /// the overlay merged first into the table (which no change moved since) writes the slot
    /// there without a probe.
    at: Option<usize>,
}

impl<S: Slot> Slot for Shadow<S> {
    fn with_inputs(n: usize) -> Shadow<S> {
        Shadow {
            slot: S::with_inputs(n),
            key: Box::default(),
            held_below: false,
            at: None,
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
        !self.held_below && self.slot.is_empty()
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
        let extra: i64 = self.overlays().map(|o| o.keys).sum();
        (self.table.len() as i64 + extra) as u64
    }

    /// The layers, oldest first, then the overlay.
    fn overlays(&self) -> impl Iterator<Item = &Overlay<S>> {
        let layers = self.layers.iter().map(|l| &**l);
        layers.chain(self.overlay.as_deref())
    }

    /// True when no key is stored.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether keys changed while the table was shared are not merged into it yet.
    pub(crate) fn has_overlay(&self) -> bool {
        self.overlay.is_some() || !self.layers.is_empty()
    }

    /// Heap bytes of the tables themselves (the overlays' included; groups not).
    pub(crate) fn table_bytes(&self) -> usize {
        let overlays: usize = self.overlays().map(|o| o.shadows.table_bytes()).sum();
        self.table.table_bytes() + overlays
    }

    /// Heap bytes kept only for the frozen states: the versions of the slots changed since.
    pub(crate) fn masked_bytes(&self) -> u64 {
        self.overlays().map(|o| o.masked_bytes).sum()
    }

    /// The key group as a frozen state takes it: the table and its layers, the overlay becoming
    /// the newest layer. O(1): nothing is copied or merged.
    pub(crate) fn freeze(&mut self) -> FrozenView<S> {
        if let Some(overlay) = self.overlay.take() {
            self.layers.push(Arc::new(*overlay));
        }
        FrozenView {
            layers: self.layers.clone(),
            table: Arc::clone(&self.table),
        }
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
        if !self.has_overlay() {
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
            let (below, held_below) = find_below(&self.layers, &self.table, sides, hash, key);
            let mut shadow = match below {
                Some((slot, at)) => {
                    overlay.masked_bytes += slot_bytes(slot);
                    Shadow {
                        slot: slot.clone(),
                        key: key.into(),
                        held_below,
                        at,
                    }
                }
                None if create => Shadow {
                    key: key.into(),
                    held_below,
                    ..Shadow::with_inputs(sides.len())
                },
                None => return None,
            };
            let before = !shadow.slot.is_empty();
            let r = run(&mut shadow.slot);
            let keys = !shadow.slot.is_empty() as i64 - before as i64;
            entry.insert(shadow);
            (r, keys)
        };
        overlay.keys += keys;
        Some((r, keys))
    }

    /// Merges the layers and the overlay into the table once no frozen state holds them. Cheap
    /// otherwise.
    pub(crate) fn settle(&mut self, sides: &[ResolvedSide]) {
        let released = |l: &mut Arc<Overlay<S>>| Arc::get_mut(l).is_some();
        if self.has_overlay()
            && self.layers.iter_mut().all(released)
            && Arc::get_mut(&mut self.table).is_some()
        {
            self.merge(sides);
        }
    }

    /// Applies the layers, oldest first, then the overlay to the table, which no frozen state
    /// holds any more (copied only if one being dropped on another thread still does).
    fn merge(&mut self, sides: &[ResolvedSide]) {
        let mut shared = std::mem::take(&mut self.table);
        let table = Arc::make_mut(&mut shared);
        // A frozen state still dropping its view on another thread may hold a layer an instant.
        let layers = self.layers.drain(..).map(Arc::unwrap_or_clone);
        for (i, o) in layers.chain(self.overlay.take().map(|o| *o)).enumerate() {
            apply(table, o.shadows.into_entries(), sides, i == 0);
        }
        self.table = shared;
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
        own_table(&mut self.table, freezes, offset);
        self.merge(sides);
        Arc::get_mut(&mut self.table).expect("owned above")
    }

    /// The key group's state as one table: the table itself, or without a frozen state's help a
    /// copy of it with the layers and the overlay merged (a snapshot of the live state while one
    /// is written).
    pub(crate) fn merged(&self, sides: &[ResolvedSide]) -> Cow<'_, KeyTable<S>> {
        merged(&self.table, &self.layers, self.overlay.as_deref(), sides)
    }
}

/// The slot of `key` below an overlay (in the newest of `layers` holding it, else in `table`,
/// with its position there), and whether anything below holds the key (a layer's tombstone does).
fn find_below<'a, S: Slot>(
    layers: &'a [Arc<Overlay<S>>],
    table: &'a KeyTable<S>,
    sides: &[ResolvedSide],
    hash: u64,
    key: &[u8],
) -> (Option<(&'a S, Option<usize>)>, bool) {
    for layer in layers.iter().rev() {
        if let Some(shadow) = layer.shadows.find(sides, hash, key) {
            let slot = (!shadow.slot.is_empty()).then_some((&shadow.slot, None));
            return (slot, true);
        }
    }
    let slot = table.find_at(sides, hash, key).map(|(at, s)| (s, Some(at)));
    (slot, slot.is_some())
}

/// `table` with `layers` (oldest first) and `overlay` merged: itself when there are none, else a
/// copy.
fn merged<'t, S: Slot + Clone>(
    table: &'t Arc<KeyTable<S>>,
    layers: &[Arc<Overlay<S>>],
    overlay: Option<&Overlay<S>>,
    sides: &[ResolvedSide],
) -> Cow<'t, KeyTable<S>> {
    if layers.is_empty() && overlay.is_none() {
        return Cow::Borrowed(table);
    }
    let mut copy = KeyTable::clone(table);
    for (i, o) in layers.iter().map(|l| &**l).chain(overlay).enumerate() {
        let shadows = o.shadows.entries().map(|(h, s)| (h, s.clone()));
        apply(&mut copy, shadows, sides, i == 0);
    }
    Cow::Owned(copy)
}

/// Writes the `shadows` (hash and shadow) into `table`: a slot replaces the key's, a tombstone
/// removes it. `in_place`: `table` is the table the shadows' positions were taken in, unchanged
/// since (the first overlay merged into it), so the slots of keys it holds are written at their
/// positions, in order, before any other change moves a bucket.
fn apply<S: Slot>(
    table: &mut KeyTable<S>,
    shadows: impl Iterator<Item = (u64, Shadow<S>)>,
    sides: &[ResolvedSide],
    in_place: bool,
) {
    let (mut placed, mut keyed) = (Vec::new(), Vec::new());
    for (hash, shadow) in shadows {
        match shadow.at {
            Some(at) if in_place && !shadow.slot.is_empty() => placed.push((at, hash, shadow.slot)),
            _ => keyed.push((hash, shadow)),
        }
    }
    placed.sort_unstable_by_key(|&(at, ..)| at);
    table.replace_at(placed);
    for (hash, shadow) in keyed {
        let mut entry = table.entry(sides, hash, &shadow.key);
        match entry.occupied() {
            Some(slot) => {
                *slot = shadow.slot;
                entry.remove_if_empty();
            }
            // A tombstone of a layer masks a key of a lower layer, merged before it.
            None if shadow.slot.is_empty() => {}
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

    /// Empties the slot of `k`; the change in keys, or `None` when the key is not stored.
    fn clear(kg: &mut KeyGroupState, sides: &[ResolvedSide; 2], k: i32) -> Option<i64> {
        let key = key(sides, k);
        let empty = |slot: &mut KeySlot| slot.sides[1] = Group::default();
        kg.change(sides, hash_key(&key), &key, false, empty)
            .map(|(_, keys)| keys)
    }

    /// Rows of `k` in a frozen view.
    fn frozen_rows(view: &FrozenView<KeySlot>, sides: &[ResolvedSide; 2], k: i32) -> usize {
        let key = key(sides, k);
        let table = view.merged(sides);
        table
            .find(sides, hash_key(&key), &key)
            .map_or(0, |slot| slot.sides[1].rows(sides[1].entry) as usize)
    }

    /// Freezes taken while earlier ones still hold the table stack the overlays as layers: each
    /// view keeps its instant (a key removed in one layer and stored again above it included),
    /// nothing merges while any view holds the table, and everything merges once none does.
    #[test]
    fn freezes_over_held_tables_stack_layers() {
        let sides = sides();
        let mut kg = KeyGroupState::default();
        add(&mut kg, &sides, 1);
        add(&mut kg, &sides, 2);
        let oldest = kg.freeze();
        add(&mut kg, &sides, 1);
        assert_eq!(clear(&mut kg, &sides, 2), Some(-1));
        let middle = kg.freeze();
        assert_eq!(clear(&mut kg, &sides, 2), None, "removed in a layer below");
        assert_eq!(add(&mut kg, &sides, 2), 1);
        assert_eq!(add(&mut kg, &sides, 3), 1);
        let newest = kg.freeze();
        add(&mut kg, &sides, 1);
        let at = |view: &FrozenView<KeySlot>| [1, 2, 3].map(|k| frozen_rows(view, &sides, k));
        assert_eq!(at(&oldest), [1, 1, 0]);
        assert_eq!(at(&middle), [2, 0, 0]);
        assert_eq!(at(&newest), [2, 1, 1]);
        assert_eq!([1, 2, 3].map(|k| rows(&kg, &sides, k)), [3, 1, 1]);
        assert_eq!(kg.len(), 3);
        drop((oldest, newest));
        kg.settle(&sides);
        assert!(kg.has_overlay(), "the middle view still holds the table");
        drop(middle);
        kg.settle(&sides);
        assert!(!kg.has_overlay());
        assert_eq!([1, 2, 3].map(|k| rows(&kg, &sides, k)), [3, 1, 1]);
        assert_eq!((kg.len(), kg.masked_bytes()), (3, 0));
    }

    /// Keys copied into the overlay of a second freeze from the table itself are merged by key,
    /// not at the positions they had in the table: the first layer's merge, which removes and
    /// adds keys (growing the table), moves buckets first.
    #[test]
    fn a_later_overlay_merges_after_the_first_moved_the_buckets() {
        let sides = sides();
        let mut kg = KeyGroupState::default();
        (0..600).for_each(|k| _ = add(&mut kg, &sides, k));
        let first = kg.freeze();
        (0..300).for_each(|k| _ = clear(&mut kg, &sides, k));
        (600..2000).for_each(|k| _ = add(&mut kg, &sides, k));
        let second = kg.freeze();
        (300..600).for_each(|k| _ = add(&mut kg, &sides, k));
        drop((first, second));
        kg.settle(&sides);
        assert!(!kg.has_overlay());
        let expected = |k| match k {
            0..300 => 0,
            300..600 => 2,
            _ => 1,
        };
        for k in 0..2000 {
            assert_eq!(rows(&kg, &sides, k), expected(k), "key {k}");
        }
        assert_eq!(kg.len(), 1700);
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
