//! What the join fuzz targets share.

use cdcjoin_join::state::Slot;
use cdcjoin_join::{FrozenState, JoinType};
use std::fmt::Debug;

/// The join types, picked by two bits of a target's first byte.
pub const JOIN_TYPES: [JoinType; 4] = [
    JoinType::Inner,
    JoinType::Left,
    JoinType::Right,
    JoinType::Full,
];

/// The section of each of `key_groups`, as `write` appends it; a key group that cannot be written
/// is a failure (every key group with state must be).
pub fn sections<E: Debug>(
    key_groups: Vec<u16>,
    write: impl Fn(u16, &mut Vec<u8>) -> Result<(), E>,
) -> Vec<(u16, Vec<u8>)> {
    let section = |kg| {
        let mut out = Vec::new();
        write(kg, &mut out).expect("a key group with state writes its section");
        (kg, out)
    };
    key_groups.into_iter().map(section).collect()
}

/// Asserts that `frozen` writes the sections `before`, written from the live state at the freeze
/// (the state changed since must not show), and releases it.
pub fn frozen_writes<S: Slot + Clone>(before: &[(u16, Vec<u8>)], frozen: FrozenState<S>) {
    let written = sections(frozen.key_groups_with_state(), |kg, out| {
        frozen.snapshot_key_group(kg, out)
    });
    assert!(
        written == before,
        "a frozen state wrote other sections than a snapshot at its instant"
    );
}
