//! Versioned snapshots, one self-delimiting section per key group.
//!
//! ```text
//! section := payload_len u32 | bincode(KeyGroupSnapshot)
//! groups  := (group_len u32 | group bytes)*      (each side's groups, as one byte string)
//! ```
//! Decoding borrows from the input, so a corrupt length can never make it allocate more than the
//! section holds. A section holds both sides' groups of one key group as their raw bytes (the in-memory format is
//! already compact and position-independent), plus each side's entry layout so that a snapshot
//! taken under another declaration is refused rather than misread. Sections restore independently,
//! so any subset of key groups can go to any instance: that is how Flink rescales keyed state.

use crate::engine::{JoinEngine, JoinError};
use crate::group::Group;
use crate::state::{hash_key, KeySlot};
use bincode::{BorrowDecode, Encode};
use cdcjoin_model::RowRef;

/// Current snapshot format version.
pub const FORMAT_VERSION: u32 = 1;

#[derive(Encode, BorrowDecode)]
struct KeyGroupSnapshot<'a> {
    version: u32,
    key_group: u16,
    sides: [SideSnapshot<'a>; 2],
}

#[derive(Encode, BorrowDecode)]
struct SideSnapshot<'a> {
    entry_layout: u8,
    groups: &'a [u8],
}

/// Splits a side's `groups` byte string into the groups' bytes.
fn split_groups(mut bytes: &[u8]) -> impl Iterator<Item = Result<&[u8], String>> {
    std::iter::from_fn(move || {
        if bytes.is_empty() {
            return None;
        }
        let Some((len, rest)) = bytes.split_first_chunk::<4>() else {
            bytes = &[];
            return Some(Err("truncated group length".into()));
        };
        let len = u32::from_le_bytes(*len) as usize;
        if len > rest.len() {
            bytes = &[];
            return Some(Err(format!("group of {len} bytes is truncated")));
        }
        let (group, rest) = rest.split_at(len);
        bytes = rest;
        Some(Ok(group))
    })
}

fn config() -> impl bincode::config::Config {
    bincode::config::standard().with_fixed_int_encoding()
}

impl JoinEngine {
    /// Key groups of this instance that hold any state.
    pub fn key_groups_with_state(&self) -> Vec<u16> {
        (self.range.start..=self.range.end)
            .zip(&self.key_groups)
            .filter(|(_, table)| !table.is_empty())
            .map(|(k, _)| k)
            .collect()
    }

    /// Appends the section of key group `kg` to `out`.
    pub fn snapshot_key_group(&self, kg: u16, out: &mut Vec<u8>) -> Result<(), JoinError> {
        let err = |reason: String| JoinError::Snapshot {
            key_group: kg,
            reason,
        };
        if !self.range.contains(kg) {
            return Err(err(format!(
                "not in this instance's range {}..={}",
                self.range.start, self.range.end
            )));
        }
        let state = &self.key_groups[self.range.offset(kg)];
        let groups = [0, 1].map(|i| {
            let mut buf = Vec::new();
            for g in state
                .slots()
                .map(|slot| &slot.sides[i])
                .filter(|g| !g.is_empty())
            {
                buf.extend_from_slice(&(g.bytes().len() as u32).to_le_bytes());
                buf.extend_from_slice(g.bytes());
            }
            buf
        });
        let side = |i: usize| SideSnapshot {
            entry_layout: self.sides[i].entry.to_byte(),
            groups: &groups[i],
        };
        let snap = KeyGroupSnapshot {
            version: FORMAT_VERSION,
            key_group: kg,
            sides: [side(0), side(1)],
        };
        let at = out.len();
        out.extend_from_slice(&[0; 4]);
        bincode::encode_into_std_write(&snap, out, config()).map_err(|e| err(e.to_string()))?;
        let len = (out.len() - at - 4) as u32;
        out[at..at + 4].copy_from_slice(&len.to_le_bytes());
        Ok(())
    }

    /// Restores one section from the start of `bytes`, adding to whatever state this instance has;
    /// returns the bytes consumed. The section's key group must be in this instance's range.
    pub fn restore_key_group(&mut self, bytes: &[u8]) -> Result<usize, JoinError> {
        let unknown = |reason: String| JoinError::Snapshot {
            key_group: u16::MAX,
            reason,
        };
        let len = bytes
            .get(..4)
            .ok_or_else(|| unknown("truncated section header".into()))?;
        let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
        let payload = bytes
            .get(4..4 + len)
            .ok_or_else(|| unknown(format!("section of {len} bytes is truncated")))?;
        let (snap, _): (KeyGroupSnapshot, usize) =
            bincode::borrow_decode_from_slice(payload, config())
                .map_err(|e| unknown(format!("undecodable section: {e}")))?;
        self.restore_section(snap)?;
        Ok(4 + len)
    }

    fn restore_section(&mut self, snap: KeyGroupSnapshot) -> Result<(), JoinError> {
        let kg = snap.key_group;
        let err = |reason: String| JoinError::Snapshot {
            key_group: kg,
            reason,
        };
        if snap.version != FORMAT_VERSION {
            return Err(err(format!(
                "format version {} is not {FORMAT_VERSION}",
                snap.version
            )));
        }
        if !self.range.contains(kg) {
            return Err(err(format!(
                "not in this instance's range {}..={}",
                self.range.start, self.range.end
            )));
        }
        for (i, side) in snap.sides.into_iter().enumerate() {
            let spec = &self.sides[i];
            if side.entry_layout != spec.entry.to_byte() {
                return Err(err(
                    "taken under a different join declaration (join type, keys or TTL changed)"
                        .into(),
                ));
            }
            for bytes in split_groups(side.groups) {
                let g =
                    Group::from_bytes(bytes.map_err(&err)?.to_vec(), spec.entry, &spec.row_layout)
                        .map_err(&err)?;
                let mut key = Vec::new();
                let first = g
                    .first(spec.entry)
                    .expect("from_bytes refuses empty groups");
                spec.join_key
                    .write(&RowRef::new(&spec.row_layout, g.row(&first)), &mut key);
                let rows = g
                    .entries(spec.entry)
                    .map(|e| g.count(spec.entry, &e) as u64)
                    .sum::<u64>();
                let table = &mut self.key_groups[self.range.offset(kg)];
                let mut entry = table.entry(&self.sides, hash_key(&key), &key);
                match entry.occupied() {
                    Some(slot) if slot.sides[i].is_empty() => slot.sides[i] = g,
                    Some(_) => {
                        return Err(err(
                            "a join key is restored twice (the key group was restored already)"
                                .into(),
                        ))
                    }
                    None => {
                        let mut slot = KeySlot::default();
                        slot.sides[i] = g;
                        entry.insert(slot);
                    }
                }
                self.stats.stored_rows += rows;
            }
        }
        self.recount_state();
        Ok(())
    }
}
