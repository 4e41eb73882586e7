//! Per key group: the hash table from a join key to the rows both sides hold under it.
//!
//! One slot per join key holds both sides' [`Group`]s, so a record costs one probe of one table,
//! and the other side's rows are found in the same slot. Slots hold only groups and the key's
//! hash; the join key is projected from a stored row when the table compares keys, so a key costs
//! no bytes of its own. One table per key group makes a snapshot of a key group a walk over one
//! table, and restoring any subset of key groups (rescaling) a matter of filling the tables of the
//! groups given.
//!
//! The table is our own (open addressing, linear probing, backward-shift deletion) rather than a
//! general-purpose map because the join needs one thing a map does not offer: the address a key's
//! probe will start at, before the probe, so that [`crate::engine`] can prefetch the slots and
//! groups of the next records of a batch while it works on the current one. State is far larger
//! than the CPU caches, so without that every record waits for two or three cache misses in turn.

use crate::group::Group;
use crate::spec::ResolvedSide;
use cdcjoin_model::RowRef;
use std::hash::BuildHasher;

/// Hashes an encoded join key. Fixed seed: deterministic across runs and instances.
pub fn hash_key(key: &[u8]) -> u64 {
    foldhash::fast::FixedState::with_seed(0x5eed_cdc0_1a2b_3c4d).hash_one(key)
}

/// What a [`KeyTable`] holds per join key: one [`Group`] per input, in the order of the inputs'
/// declarations. The two-table join's slot is [`KeySlot`]; the multi-way join's
/// ([`crate::multiway`]) holds up to eight groups.
pub trait Slot: Default {
    /// A slot of `n` inputs' empty groups.
    fn with_inputs(n: usize) -> Self;

    /// The groups, one per input.
    fn groups(&self) -> &[Group];

    /// The groups, to be changed.
    fn groups_mut(&mut self) -> &mut [Group];

    /// Heap bytes the slot holds besides its groups' own (0 when the groups lie in the bucket).
    fn heap_bytes(&self) -> u64;

    /// True when no input holds a row.
    fn is_empty(&self) -> bool {
        self.groups().iter().all(Group::is_empty)
    }

    /// Whether the slot holds rows of the join key `key` (inputs declared by `sides`).
    fn has_key(&self, sides: &[ResolvedSide], key: &[u8]) -> bool {
        let Some((side, g)) = sides.iter().zip(self.groups()).find(|(_, g)| !g.is_empty()) else {
            return false;
        };
        g.first(side.entry).is_some_and(|first| {
            let row = RowRef::new(&side.row_layout, g.row(&first));
            side.join_key
                .has_key(&row, &RowRef::new(side.join_key.key_layout(), key))
        })
    }
}

/// Both sides' rows of one join key, indexed by [`crate::Side`].
#[derive(Clone, Default, Debug)]
pub struct KeySlot {
    /// Left and right groups; either may be empty, not both once the record is processed.
    pub sides: [Group; 2],
}

impl Slot for KeySlot {
    fn with_inputs(_: usize) -> KeySlot {
        KeySlot::default()
    }

    fn groups(&self) -> &[Group] {
        &self.sides
    }

    fn groups_mut(&mut self) -> &mut [Group] {
        &mut self.sides
    }

    fn heap_bytes(&self) -> u64 {
        0
    }
}

/// A position of the table: vacant when its slot is empty.
#[derive(Clone, Default)]
struct Bucket<S> {
    hash: u64,
    slot: S,
}

/// The slots of one key group. Shared with the snapshots being written until the engine writes to
/// it (see [`crate::snapshot::FrozenState`]).
#[derive(Clone, Default)]
pub struct KeyTable<S = KeySlot> {
    /// A power of two buckets (or none), at most [`Self::MAX_LOAD`] occupied.
    buckets: Vec<Bucket<S>>,
    len: usize,
}

/// Where a key is, or would be inserted, in a [`KeyTable`].
pub struct SlotEntry<'t, S = KeySlot> {
    table: &'t mut KeyTable<S>,
    at: usize,
    hash: u64,
    occupied: bool,
}

impl<S: Slot> KeyTable<S> {
    /// Highest fraction of buckets occupied, as numerator / denominator.
    const MAX_LOAD: (usize, usize) = (3, 4);

    /// The position of `key` (with hash `hash`), occupied or vacant; room for one more key is
    /// made first, so a vacant entry can always be filled.
    pub fn entry<'t>(
        &'t mut self,
        sides: &[ResolvedSide],
        hash: u64,
        key: &[u8],
    ) -> SlotEntry<'t, S> {
        self.reserve_one();
        let mask = self.buckets.len() - 1;
        let mut at = hash as usize & mask;
        loop {
            let b = &self.buckets[at];
            let occupied = !b.slot.is_empty();
            if !occupied || (b.hash == hash && b.slot.has_key(sides, key)) {
                return SlotEntry {
                    table: self,
                    at,
                    hash,
                    occupied,
                };
            }
            at = (at + 1) & mask;
        }
    }

    /// The slot of `key` (with hash `hash`), if stored: a probe that changes nothing.
    pub fn find(&self, sides: &[ResolvedSide], hash: u64, key: &[u8]) -> Option<&S> {
        self.find_at(sides, hash, key).map(|(_, slot)| slot)
    }

    /// [`Self::find`], with the position of the key's bucket: valid for the crate's `replace_at`
    /// until the table is next changed.
    pub fn find_at(&self, sides: &[ResolvedSide], hash: u64, key: &[u8]) -> Option<(usize, &S)> {
        let mask = self.buckets.len().wrapping_sub(1);
        self.probe(hash)
            .enumerate()
            .take_while(|(_, b)| !b.slot.is_empty())
            .find(|(_, b)| b.hash == hash && b.slot.has_key(sides, key))
            .map(|(i, b)| ((hash as usize).wrapping_add(i) & mask, &b.slot))
    }

    /// Replaces the slots at the positions of `slots` (position, hash and new slot; positions
    /// found by [`Self::find_at`] since the table last changed, in ascending order, each slot
    /// holding rows), without a probe or a key comparison: the buckets are visited in order, those
    /// a few slots ahead prefetched, so that merging many keys into a table far larger than the
    /// caches streams through it instead of waiting for two cache misses per key.
    pub(crate) fn replace_at(&mut self, slots: Vec<(usize, u64, S)>) {
        const AHEAD: usize = 8;
        let ahead: Vec<usize> = slots.iter().skip(AHEAD).map(|&(at, ..)| at).collect();
        for (i, (at, hash, slot)) in slots.into_iter().enumerate() {
            if let Some(&next) = ahead.get(i) {
                let b = &self.buckets[next] as *const Bucket<S> as *const u8;
                prefetch_range(b, std::mem::size_of::<Bucket<S>>());
            }
            let b = &mut self.buckets[at];
            assert!(
                b.hash == hash && !b.slot.is_empty() && !slot.is_empty(),
                "a slot replaced in place must replace the stored slot of its key"
            );
            b.slot = slot;
        }
    }

    /// Runs `run` on the slot of `key` (with hash `hash`) and drops the slot if `run` left it
    /// empty; if the key is not stored and `create` holds, runs it on a new slot and stores it if
    /// `run` left rows in it. Returns what `run` returned and the change in the number of keys
    /// (-1, 0 or 1), or `None` when the key is not stored and `create` does not hold.
    pub fn change<R>(
        &mut self,
        sides: &[ResolvedSide],
        hash: u64,
        key: &[u8],
        create: bool,
        run: impl FnOnce(&mut S) -> R,
    ) -> Option<(R, i64)> {
        let mut entry = self.entry(sides, hash, key);
        if let Some(slot) = entry.occupied() {
            let r = run(slot);
            return Some((r, -(entry.remove_if_empty() as i64)));
        }
        if !create {
            return None;
        }
        let mut slot = S::with_inputs(sides.len());
        let r = run(&mut slot);
        let added = !slot.is_empty() as i64;
        entry.insert(slot);
        Some((r, added))
    }

    /// The occupied buckets' hashes and slots.
    pub fn entries(&self) -> impl Iterator<Item = (u64, &S)> {
        self.buckets
            .iter()
            .filter(|b| !b.slot.is_empty())
            .map(|b| (b.hash, &b.slot))
    }

    /// The occupied buckets' hashes and slots, taken out of the table.
    pub fn into_entries(self) -> impl Iterator<Item = (u64, S)> {
        self.buckets
            .into_iter()
            .filter(|b| !b.slot.is_empty())
            .map(|b| (b.hash, b.slot))
    }

    /// Tells the CPU to fetch the bucket a probe for `hash` starts at.
    pub fn prefetch_bucket(&self, hash: u64) {
        if let Some(b) = self.probe(hash).next() {
            prefetch_range(
                b as *const Bucket<S> as *const u8,
                std::mem::size_of::<Bucket<S>>(),
            );
        }
    }

    /// Tells the CPU to fetch the first bytes of both groups of `hash`'s slot, if its bucket is
    /// found within the first few probes without a key comparison (a hash collision only costs
    /// a useless prefetch).
    pub fn prefetch_groups(&self, hash: u64) {
        const PROBES: usize = 4;
        let found = self
            .probe(hash)
            .take(PROBES)
            .take_while(|b| !b.slot.is_empty())
            .find(|b| b.hash == hash);
        for g in found.iter().flat_map(|b| b.slot.groups()) {
            let bytes = g.prefetch_bytes();
            prefetch_range(bytes.as_ptr(), bytes.len().min(GROUP_BYTES));
        }
    }

    /// The buckets a probe for `hash` visits, in order (none in a table without buckets).
    fn probe(&self, hash: u64) -> impl Iterator<Item = &Bucket<S>> {
        let mask = self.buckets.len().wrapping_sub(1);
        (0..self.buckets.len()).map(move |i| &self.buckets[(hash as usize).wrapping_add(i) & mask])
    }

    /// Number of join keys.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no key is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// All slots (for snapshots and accounting).
    pub fn slots(&self) -> impl Iterator<Item = &S> {
        self.buckets
            .iter()
            .map(|b| &b.slot)
            .filter(|s| !s.is_empty())
    }

    /// All slots, as [`Self::slots`], the groups of the slot a few slots ahead prefetched: a walk
    /// over the groups of a table far larger than the caches (a snapshot) would otherwise wait for
    /// a cache miss per group, one after the other.
    pub fn slots_prefetching(&self) -> impl Iterator<Item = &S> {
        const AHEAD: usize = 8;
        let mut ahead = self.slots().skip(AHEAD);
        self.slots().inspect(move |_| {
            for g in ahead.next().iter().flat_map(|slot| slot.groups()) {
                let bytes = g.prefetch_bytes();
                prefetch_range(bytes.as_ptr(), bytes.len().min(GROUP_BYTES));
            }
        })
    }

    /// Applies `f` to every slot, dropping those it leaves empty (TTL sweeps). Rebuilds the table,
    /// so it is meant for whole-table passes, not per record.
    pub fn retain_mut(&mut self, mut f: impl FnMut(&mut S)) {
        let mut old = std::mem::take(&mut self.buckets);
        for b in old.iter_mut().filter(|b| !b.slot.is_empty()) {
            f(&mut b.slot);
        }
        let kept = old.iter().filter(|b| !b.slot.is_empty()).count();
        self.rebuild(Self::buckets_for(kept), old);
    }

    /// Heap bytes of the table itself: its buckets (groups not included).
    pub fn table_bytes(&self) -> usize {
        self.buckets.capacity() * std::mem::size_of::<Bucket<S>>()
    }

    /// The number of buckets that holds `keys` keys within the load limit.
    fn buckets_for(keys: usize) -> usize {
        let (num, den) = Self::MAX_LOAD;
        (keys * den / num + 1).next_power_of_two().max(8)
    }

    fn reserve_one(&mut self) {
        let (num, den) = Self::MAX_LOAD;
        if (self.len + 1) * den > self.buckets.len() * num {
            let old = std::mem::take(&mut self.buckets);
            let size = Self::buckets_for(self.len + 1).max(old.len() * 2);
            self.rebuild(size, old);
        }
    }

    /// Makes room for `more` keys beyond those stored, in one step (a restore knows how many keys
    /// a key group brings; growing by doubling would move every bucket several times).
    pub fn reserve(&mut self, more: usize) {
        let size = Self::buckets_for(self.len.saturating_add(more));
        if size > self.buckets.len() {
            let old = std::mem::take(&mut self.buckets);
            self.rebuild(size, old);
        }
    }

    /// Fills a fresh table of `size` buckets with the occupied ones of `buckets` (distinct keys).
    fn rebuild(&mut self, size: usize, buckets: Vec<Bucket<S>>) {
        let mut fresh: Vec<Bucket<S>> = Vec::with_capacity(size);
        fresh.resize_with(size, Bucket::default);
        let mask = size - 1;
        self.len = 0;
        for b in buckets.into_iter().filter(|b| !b.slot.is_empty()) {
            let mut at = b.hash as usize & mask;
            while !fresh[at].slot.is_empty() {
                at = (at + 1) & mask;
            }
            fresh[at] = b;
            self.len += 1;
        }
        self.buckets = fresh;
    }

    /// Empties bucket `at` and shifts later buckets of the same probe run back, so that no probe
    /// ever has to step over a hole.
    fn remove_at(&mut self, mut at: usize) {
        self.buckets[at] = Bucket::default();
        self.len -= 1;
        let mask = self.buckets.len() - 1;
        let mut next = at;
        loop {
            next = (next + 1) & mask;
            if self.buckets[next].slot.is_empty() {
                return;
            }
            let home = self.buckets[next].hash as usize & mask;
            // The bucket at `next` may move to the hole at `at` unless its home lies in (at, next].
            let stays = if at <= next {
                at < home && home <= next
            } else {
                at < home || home <= next
            };
            if !stays {
                self.buckets.swap(at, next);
                at = next;
            }
        }
    }
}

impl<S: Slot> SlotEntry<'_, S> {
    /// The key's slot, if the key is stored.
    pub fn occupied(&mut self) -> Option<&mut S> {
        self.occupied.then(|| &mut self.table.buckets[self.at].slot)
    }

    /// Stores `slot` under the key, if the key was vacant and `slot` holds rows.
    pub fn insert(self, slot: S) {
        if !self.occupied && !slot.is_empty() {
            self.table.buckets[self.at] = Bucket {
                hash: self.hash,
                slot,
            };
            self.table.len += 1;
        }
    }

    /// Removes the key's slot if it was stored and holds no rows any more; returns whether it did.
    pub fn remove_if_empty(self) -> bool {
        let emptied = self.occupied && self.table.buckets[self.at].slot.is_empty();
        if emptied {
            self.table.remove_at(self.at);
        }
        emptied
    }
}

/// How much of a group's block a prefetch fetches: a small group's whole block, the start of a
/// larger one.
const GROUP_BYTES: usize = 256;

/// Prefetches the cache lines of `[ptr, ptr + len)` into all cache levels. A hint: prefetching
/// never faults, whatever the address. Nothing for an empty range (an empty group's pointer is
/// dangling).
fn prefetch_range(ptr: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let first = ptr.wrapping_sub(ptr as usize % 64);
        let end = if len == 0 { 0 } else { len + ptr as usize % 64 };
        let mut line = 0;
        while line < end {
            // SAFETY: a prefetch is a hint that cannot fault or change memory, for any address;
            // `wrapping_add` keeps the pointer arithmetic defined.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(line) as *const i8) };
            line += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (ptr, len);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::spec::{JoinSpec, JoinType, KeyGroupRange, RetractionPolicy, SideSpec};
    use cdcjoin_model::{DataType, Field, Schema};
    use proptest::prelude::*;
    use std::collections::HashSet;

    /// Both sides `(k INT NOT NULL)`, joined and keyed on `k`.
    pub(crate) fn sides() -> [ResolvedSide; 2] {
        let side = || SideSpec {
            schema: Schema::new(vec![Field::not_null("k", DataType::Int)]),
            join_key: vec!["k".into()],
            primary_key: Some(vec!["k".into()]),
            ttl_ms: None,
            exact_retractions: false,
        };
        let spec = JoinSpec {
            left: side(),
            right: side(),
            join_type: JoinType::Inner,
            absent_retraction: RetractionPolicy::Fail,
            key_groups: KeyGroupRange { start: 0, end: 0 },
        };
        spec.resolve().unwrap()
    }

    pub(crate) fn row(k: i32) -> Vec<u8> {
        let mut v = vec![0];
        v.extend_from_slice(&k.to_le_bytes());
        v
    }

    pub(crate) fn key(sides: &[ResolvedSide; 2], k: i32) -> Vec<u8> {
        let mut key = Vec::new();
        let r = row(k);
        sides[0]
            .join_key
            .write(&RowRef::new(&sides[0].row_layout, &r), &mut key);
        key
    }

    /// The hash a test gives key `k`: the real one, or one of five values at the very end of the
    /// hash space, so probe runs collide, wrap around the table's end and shift back on removal.
    fn hash(clustered: bool, key: &[u8], k: i32) -> u64 {
        if clustered {
            u64::MAX - (k.rem_euclid(5) as u64)
        } else {
            hash_key(key)
        }
    }

    fn contains(t: &mut KeyTable, sides: &[ResolvedSide; 2], k: i32, clustered: bool) -> bool {
        let key = key(sides, k);
        t.entry(sides, hash(clustered, &key, k), &key)
            .occupied()
            .is_some()
    }

    /// Inserts `k` with a row on `side`, or removes it (empties the slot, then drops it).
    fn apply(t: &mut KeyTable, sides: &[ResolvedSide; 2], k: i32, insert: bool, clustered: bool) {
        let key = key(sides, k);
        let mut e = t.entry(sides, hash(clustered, &key, k), &key);
        match (e.occupied(), insert) {
            (Some(slot), false) => {
                slot.sides = Default::default();
                assert!(e.remove_if_empty());
            }
            (None, true) => {
                let mut slot = KeySlot::default();
                slot.sides[1].push(sides[1].entry, &sides[1].identity(), &row(k), (1, 0), 0);
                e.insert(slot);
            }
            (Some(_), true) | (None, false) => assert!(!e.remove_if_empty()),
        }
    }

    proptest! {
        /// The table holds exactly the keys a set would, under any sequence of inserts and
        /// removals, with real hashes and with colliding ones that wrap around.
        #[test]
        fn behaves_as_a_set(
            ops in prop::collection::vec((-40i32..40, any::<bool>(), any::<u64>()), 0..300),
            clustered in any::<bool>(),
        ) {
            let sides = sides();
            let (mut t, mut model) = (KeyTable::default(), HashSet::new());
            for (k, insert, probe) in ops {
                t.prefetch_bucket(probe);
                t.prefetch_groups(probe);
                apply(&mut t, &sides, k, insert, clustered);
                if insert { model.insert(k); } else { model.remove(&k); }
                prop_assert_eq!(t.len(), model.len());
                prop_assert_eq!(t.slots().count(), model.len());
                for k in -40..40 {
                    prop_assert_eq!(contains(&mut t, &sides, k, clustered), model.contains(&k), "key {}", k);
                }
            }
        }
    }

    #[test]
    fn a_reserved_table_takes_its_keys_without_growing() {
        let sides = sides();
        let mut t = KeyTable::default();
        t.reserve(1000);
        let bytes = t.table_bytes();
        assert_eq!(bytes, 2048 * std::mem::size_of::<Bucket<KeySlot>>());
        for k in 0..1000 {
            apply(&mut t, &sides, k, true, false);
        }
        assert_eq!((t.len(), t.table_bytes()), (1000, bytes));
        t.reserve(10);
        assert_eq!(t.table_bytes(), bytes, "room left for 10 more keys");
        for k in 0..1000 {
            assert!(contains(&mut t, &sides, k, false), "key {k}");
        }
    }

    #[test]
    fn retain_drops_the_slots_left_empty() {
        let sides = sides();
        let mut t = KeyTable::default();
        for k in 0..100 {
            apply(&mut t, &sides, k, true, false);
        }
        let mut visited = 0;
        t.retain_mut(|slot| {
            visited += 1;
            let g = &slot.sides[1];
            let row = g.row(&g.first(sides[1].entry).unwrap());
            let k = i32::from_le_bytes(row[row.len() - 4..].try_into().unwrap());
            if k % 3 == 0 {
                slot.sides = Default::default();
            }
        });
        assert_eq!((visited, t.len()), (100, 66));
        for k in 0..100 {
            assert_eq!(contains(&mut t, &sides, k, false), k % 3 != 0, "key {k}");
        }
        assert_eq!(
            t.table_bytes(),
            128 * std::mem::size_of::<Bucket<KeySlot>>()
        );
    }
}
