//! Per key group: the hash table from a join key to the rows both sides hold under it.
//!
//! One slot per join key holds both sides' [`Group`]s, so a record costs one probe of one table,
//! and the other side's rows are found in the same slot. Slots hold only groups; the join key is
//! projected from a stored row when the table compares or rehashes, so a key costs no bytes of its
//! own. One table per key group makes a snapshot of a key group a walk over one table, and
//! restoring any subset of key groups (rescaling) a matter of filling the tables of the groups given.

use crate::group::Group;
use crate::spec::ResolvedSide;
use cdcjoin_model::RowRef;
use hashbrown::hash_table::Entry;
use hashbrown::HashTable;
use std::hash::BuildHasher;

/// Hashes an encoded join key. Fixed seed: deterministic across runs and instances.
pub fn hash_key(key: &[u8]) -> u64 {
    foldhash::fast::FixedState::with_seed(0x5eed_cdc0_1a2b_3c4d).hash_one(key)
}

/// Both sides' rows of one join key, indexed by [`crate::Side`].
#[derive(Default, Debug)]
pub struct KeySlot {
    /// Left and right groups; either may be empty, not both once the record is processed.
    pub sides: [Group; 2],
}

impl KeySlot {
    /// True when neither side holds a row.
    pub fn is_empty(&self) -> bool {
        self.sides.iter().all(Group::is_empty)
    }

    /// A stored row and its side's declaration, to project the slot's key from.
    fn some_row<'a>(
        &'a self,
        sides: &'a [ResolvedSide; 2],
    ) -> Option<(&'a ResolvedSide, RowRef<'a>)> {
        let (side, g) = sides.iter().zip(&self.sides).find(|(_, g)| !g.is_empty())?;
        let first = g.first(side.entry)?;
        Some((side, RowRef::new(&side.row_layout, g.row(&first))))
    }

    /// Whether the slot holds rows of the join key `key`.
    fn has_key(&self, sides: &[ResolvedSide; 2], key: &[u8]) -> bool {
        self.some_row(sides).is_some_and(|(side, row)| {
            side.join_key
                .has_key(&row, &RowRef::new(side.join_key.key_layout(), key))
        })
    }

    /// The hash of the slot's join key (for rehashing).
    fn hash(&self, sides: &[ResolvedSide; 2]) -> u64 {
        let mut key = Vec::new();
        if let Some((side, row)) = self.some_row(sides) {
            side.join_key.write(&row, &mut key);
        }
        hash_key(&key)
    }
}

/// The slots of one key group.
#[derive(Default)]
pub struct KeyTable {
    table: HashTable<KeySlot>,
}

impl KeyTable {
    /// The slot of `key` (with hash `hash`), occupied or vacant.
    pub fn entry<'t>(
        &'t mut self,
        sides: &[ResolvedSide; 2],
        hash: u64,
        key: &[u8],
    ) -> Entry<'t, KeySlot> {
        self.table
            .entry(hash, |s| s.has_key(sides, key), |s| s.hash(sides))
    }

    /// Number of join keys.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// True when no key is stored.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// All slots (for snapshots and accounting).
    pub fn slots(&self) -> impl Iterator<Item = &KeySlot> {
        self.table.iter()
    }

    /// Applies `f` to every slot, dropping those it leaves empty (TTL sweeps).
    pub fn retain_mut(&mut self, mut f: impl FnMut(&mut KeySlot)) {
        self.table.retain(|s| {
            f(s);
            !s.is_empty()
        });
    }

    /// Heap bytes of the table itself: its slots and control bytes (groups not included).
    pub fn table_bytes(&self) -> usize {
        let slots = self.table.capacity();
        if slots == 0 {
            0
        } else {
            slots * std::mem::size_of::<KeySlot>() + slots + 16
        }
    }
}
