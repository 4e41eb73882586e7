//! Per key group and side: the hash table from a join key to its [`Group`] of rows.
//!
//! Tables hold only groups; the join key is projected from a group's first row when the table
//! compares or rehashes, so a key costs no bytes of its own. One table per key group makes a
//! snapshot of a key group a walk over one table, and restoring any subset of key groups (rescaling)
//! a matter of filling the tables of the groups given.

use crate::group::Group;
use crate::spec::ResolvedSide;
use cdcjoin_model::RowRef;
use hashbrown::HashTable;
use std::hash::BuildHasher;

/// Hashes an encoded join key. Fixed seed: deterministic across runs and instances.
pub fn hash_key(key: &[u8]) -> u64 {
    foldhash::fast::FixedState::with_seed(0x5eed_cdc0_1a2b_3c4d).hash_one(key)
}

/// The groups of one side in one key group.
#[derive(Default)]
pub struct SideTable {
    table: HashTable<Group>,
}

/// Projects the join key of a group's first row into `scratch` (for rehashing).
fn group_key<'s>(side: &ResolvedSide, g: &Group, scratch: &'s mut Vec<u8>) -> &'s [u8] {
    scratch.clear();
    let first = g
        .first(side.entry)
        .expect("groups in a table are never empty");
    side.join_key
        .write(&RowRef::new(&side.row_layout, g.row(&first)), scratch);
    scratch
}

/// Whether a group holds rows of the join key `key`.
fn group_has_key(side: &ResolvedSide, g: &Group, key: &[u8]) -> bool {
    let first = g
        .first(side.entry)
        .expect("groups in a table are never empty");
    let row = RowRef::new(&side.row_layout, g.row(&first));
    side.join_key
        .has_key(&row, &RowRef::new(side.join_key.key_layout(), key))
}

impl SideTable {
    /// The group of `key` (with hash `hash`).
    pub fn find(&self, side: &ResolvedSide, hash: u64, key: &[u8]) -> Option<&Group> {
        self.table.find(hash, |g| group_has_key(side, g, key))
    }

    /// The group of `key`, mutable.
    pub fn find_mut(&mut self, side: &ResolvedSide, hash: u64, key: &[u8]) -> Option<&mut Group> {
        self.table.find_mut(hash, |g| group_has_key(side, g, key))
    }

    /// Stores a new, non-empty group for a key that has none.
    pub fn insert(&mut self, side: &ResolvedSide, hash: u64, group: Group) {
        debug_assert!(!group.is_empty());
        self.table.insert_unique(hash, group, |g| {
            hash_key(group_key(side, g, &mut Vec::new()))
        });
    }

    /// Applies `f` to the group of `key`, if any, and drops the group if `f` leaves it empty.
    pub fn modify<R>(
        &mut self,
        side: &ResolvedSide,
        hash: u64,
        key: &[u8],
        f: impl FnOnce(&mut Group) -> R,
    ) -> Option<R> {
        let mut entry = self
            .table
            .find_entry(hash, |g| group_has_key(side, g, key))
            .ok()?;
        let result = f(entry.get_mut());
        if entry.get().is_empty() {
            entry.remove();
        }
        Some(result)
    }

    /// Number of join keys.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// True when no key is stored.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// All groups (for snapshots and accounting).
    pub fn groups(&self) -> impl Iterator<Item = &Group> {
        self.table.iter()
    }

    /// Applies `f` to every group, dropping those it leaves empty (TTL sweeps).
    pub fn retain_mut(&mut self, mut f: impl FnMut(&mut Group)) {
        self.table.retain(|g| {
            f(g);
            !g.is_empty()
        });
    }

    /// Heap bytes held: the table's slots and control bytes plus every group's block.
    pub fn heap_bytes(&self) -> usize {
        let slots = self.table.capacity();
        let table = if slots == 0 {
            0
        } else {
            slots * std::mem::size_of::<Group>() + slots + 16
        };
        table + self.table.iter().map(|g| g.bytes().len()).sum::<usize>()
    }

    /// Drops everything.
    pub fn clear(&mut self) {
        self.table = HashTable::new();
    }
}

/// Both sides' tables of one key group.
#[derive(Default)]
pub struct KeyGroupState {
    /// Left and right tables, indexed by [`crate::Side`].
    pub sides: [SideTable; 2],
}
