//! Versioned, self-checking snapshots, one self-delimiting section per key group.
//!
//! ```text
//! section := payload_len u32 | payload
//! payload := version u32 (= 2) | crc32c u32 (of body) | body
//!          | version u32 (= 3) | crc32c u32 (of the rest) | codec u8 | body_len u32 | packed
//! body    := bincode(key_group u16 | fingerprint u64 | definition str | side | side)
//! side    := entry_layout u8 | groups
//! groups  := (group_len u32 | group bytes)*      (each side's groups, as one byte string)
//! packed  := body, compressed by codec (1 = an LZ4 block)
//! ```
//! A section holds both sides' groups of one key group as their raw bytes (the in-memory format is
//! already compact and position-independent). A multi-way join's section (`crate::multiway`)
//! is the same with one `side` per input, in the inputs' order, under its own definition. Sections restore independently, so any subset of key
//! groups can go to any instance: that is how Flink rescales keyed state. Decoding borrows from the
//! input, so a corrupt length can never make it allocate more than the section holds; a restore
//! sizes the key group's table once, for the groups the section holds, and counts what it adds to
//! the engine's statistics as it goes (a recount of the whole state per section made restoring n
//! sections quadratic).
//!
//! Why the header: rows are stored without their schema, so bytes restored under another
//! declaration, or flipped on disk, could decode as other valid rows and the join would go on
//! silently wrong. The CRC32C makes corruption an error; the [`Definition`] (everything the state's
//! bytes depend on, as a canonical text, plus its fingerprint) makes a changed declaration an error
//! that names each part that differs.
//!
//! Format 3 is format 2 compressed, written only when asked
//! ([`JoinEngine::set_snapshot_compression`]): measured on 5M rows (`benches/snapshot.rs`), LZ4
//! halves the section bytes but costs CPU on the join's cores at every checkpoint and slows a
//! restore's decoding, so it pays where checkpoint storage is slow, not by default
//! (bench/README.md). A section is compressed on its own, so that
//! sections still restore independently; the CRC32C covers the compressed bytes, so corruption is
//! caught before decompression, and the recorded `body_len` is checked against what LZ4 can expand
//! the packed bytes to before anything is allocated.
//!
//! Format 1 (release 0.1.0) had neither: `payload := bincode(version u32 (= 1) | key_group u16 |
//! side | side)`. It is still restored, checked as it was then, by each side's entry layout only.
//!
//! A checkpoint must not stop the join for a time that grows with the state. So a snapshot is
//! taken in two steps: [`JoinEngine::freeze`] (and [`MultiwayJoin::freeze`], with the same code
//! over its slots of one group per input) makes a [`FrozenState`], the state as it is at that
//! instant, in O(key groups) (it shares each key group's table); the sections are then written
//! from it, on any thread, while the engine goes on. While a frozen state holds a key group's
//! table, the engine writes each key it changes to a copy of the key's slot taken at its first
//! write (`crate::overlay`: copy on write per join key), merged back into the table once no
//! frozen state holds it. The extra memory is the frozen versions of the keys written to
//! meanwhile, released when the snapshots are done with their key groups (written, or dropped
//! when aborted); [`JoinEngine::frozen_bytes`] counts it. A freeze while an earlier frozen state
//! still holds a key group written to keeps the copies as a frozen layer shared with the new
//! frozen state (`crate::overlay`), so no freeze writes or merges anything. Whole-table changes
//! (TTL sweeps, restores) make the frozen states holding the table write its section first
//! (serialize on first write, the scheme before copies per key: it cost the task thread a pass
//! over nearly the whole state per checkpoint, since every key group is written to within
//! milliseconds at production rates; bench/README.md).

use crate::engine::{JoinEngine, JoinError};
use crate::group::Group;
use crate::multiway::{MultiSlot, MultiwayError, MultiwayJoin, MultiwaySpec};
use crate::overlay::{FrozenView, KeyGroupState};
pub use crate::restore::StoredSection;
use crate::restore::{check_key_group, named, restore_one, Restored, SectionRead};
use crate::spec::SideSpec;
use crate::spec::{JoinSpec, KeyGroupRange, ResolvedSide};
use crate::state::{hash_key, KeySlot, KeyTable, Slot};
use bincode::BorrowDecode;
use cdcjoin_model::{RowRef, Schema};
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

/// Format version written by this build for uncompressed sections.
pub const FORMAT_VERSION: u32 = 2;

/// Format version of compressed sections.
const FORMAT_V3: u32 = 3;

/// The largest factor by which an LZ4 block expands (a run of one byte): a recorded body length
/// beyond it (and a few bytes of slack) cannot be right.
const LZ4_MAX_EXPANSION: usize = 255;

/// How snapshot sections are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Compression {
    /// Format 2: the body as it is.
    #[default]
    None,
    /// Format 3 with the body compressed as one LZ4 block.
    Lz4,
}

impl Compression {
    /// The codec byte of a format-3 section.
    const LZ4_CODEC: u8 = 1;
}

/// The header-less format of release 0.1.0, still restored.
const FORMAT_V1: u32 = 1;

/// Bytes before the bincode body: payload length, version, CRC32C.
const HEADER_LEN: usize = 12;

/// Everything a join's stored bytes depend on, as a canonical text of `name: value` lines (join
/// type; per side: schema, join key, primary key, state layout, row entry header), and an FNV-1a
/// fingerprint of that text. TTL durations and the retraction policy are left out: they change
/// what the join does, not how its state reads (whether rows carry a write time is in the entry).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Definition {
    text: String,
    fingerprint: u64,
}

impl Definition {
    /// The definition of `spec`, whose sides resolve to `sides`.
    pub fn of(spec: &JoinSpec, sides: &[ResolvedSide; 2]) -> Definition {
        let head = format!(
            "join type: {}\n",
            format!("{:?}", spec.join_type).to_uppercase()
        );
        let inputs = [("left", &spec.left), ("right", &spec.right)];
        Definition::describe(head, inputs.into_iter().zip(sides))
    }

    /// The definition of a multi-way join: its join types, then per input (`input 0`, ...) what
    /// [`Definition::of`] says of a side.
    pub fn of_multiway(spec: &MultiwaySpec, inputs: &[ResolvedSide]) -> Definition {
        let types: Vec<String> = (spec.steps.iter())
            .map(|t| format!("{t:?}").to_uppercase())
            .collect();
        let head = format!("join types: {}\n", types.join(", "));
        let names: Vec<String> = (0..inputs.len()).map(|i| format!("input {i}")).collect();
        let declared = names.iter().map(String::as_str).zip(&spec.inputs);
        Definition::describe(head, declared.zip(inputs))
    }

    /// `head`, then the lines of each named input.
    fn describe<'a>(
        mut text: String,
        inputs: impl Iterator<Item = ((&'a str, &'a SideSpec), &'a ResolvedSide)>,
    ) -> Definition {
        for ((name, declared), resolved) in inputs {
            let pk = declared
                .primary_key
                .as_ref()
                .map_or("none".to_string(), |pk| columns(pk));
            let _ = write!(
                text,
                "{name} schema: {}\n{name} join key: {}\n{name} primary key: {pk}\n\
                 {name} state layout: {:?}\n{name} row entry: {}\n",
                schema_text(&declared.schema),
                columns(&declared.join_key),
                resolved.layout,
                resolved.entry,
            );
        }
        Definition::from_text(text)
    }

    fn from_text(text: String) -> Definition {
        let fingerprint = fnv1a(text.as_bytes());
        Definition { text, fingerprint }
    }

    /// The canonical text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// FNV-1a (64 bit) of [`Definition::text`].
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// An error unless a section of key group `kg` was taken under this definition (its
    /// `fingerprint` and `text`), naming each part that differs.
    fn check(&self, kg: u16, fingerprint: u64, text: &str) -> Result<(), JoinError> {
        if fingerprint == self.fingerprint {
            return Ok(());
        }
        let what = self.differences(text);
        Err(JoinError::Snapshot {
            key_group: kg,
            reason: format!(
                "the join definition differs (fingerprint {fingerprint:016x}, this job's {:016x}): {}",
                self.fingerprint,
                if what.is_empty() { "same parts" } else { &what }
            ),
        })
    }

    /// What differs between a snapshot's definition text and this one, part by part.
    fn differences(&self, snapshot: &str) -> String {
        let parts = |text: &'_ str| -> Vec<(String, String)> {
            text.lines()
                .map(|l| l.split_once(": ").unwrap_or((l, "")))
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect()
        };
        let (theirs, ours) = (parts(snapshot), parts(&self.text));
        let value = |parts: &[(String, String)], name: &str| {
            parts
                .iter()
                .find(|(n, _)| n == name)
                .map_or("(not recorded)".to_string(), |(_, v)| v.clone())
        };
        let mut names: Vec<&str> = ours.iter().map(|(n, _)| n.as_str()).collect();
        for (n, _) in &theirs {
            if !names.contains(&n.as_str()) {
                names.push(n);
            }
        }
        let diffs: Vec<String> = names
            .into_iter()
            .map(|n| (n, value(&theirs, n), value(&ours, n)))
            .filter(|(_, theirs, ours)| theirs != ours)
            .map(|(n, theirs, ours)| {
                format!("the snapshot was taken for {n} {theirs}, this job declares {ours}")
            })
            .collect();
        diffs.join("; ")
    }
}

/// Column names, quoted so that any name reads back unambiguously.
fn columns(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("{n:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn schema_text(schema: &Schema) -> String {
    schema
        .fields
        .iter()
        .map(|f| {
            let null = if f.nullable { "" } else { " NOT NULL" };
            format!("{:?} {}{null}", f.name, f.data_type)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// FNV-1a, 64 bit: a stable hash (unlike std's) for the definition's fingerprint.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A format-2 body, as [`write_section`] writes it and a restore reads it.
#[derive(BorrowDecode)]
#[cfg_attr(test, derive(bincode::Encode))]
struct SectionBody<'a> {
    key_group: u16,
    fingerprint: u64,
    definition: &'a str,
    sides: [SideSnapshot<'a>; 2],
}

/// A format-1 payload after its version (written by tests only, to check it still restores).
#[derive(BorrowDecode)]
#[cfg_attr(test, derive(bincode::Encode))]
struct SectionV1<'a> {
    key_group: u16,
    sides: [SideSnapshot<'a>; 2],
}

#[derive(BorrowDecode)]
#[cfg_attr(test, derive(bincode::Encode))]
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

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at + 4)?;
    Some(u32::from_le_bytes(b.try_into().expect("4 bytes")))
}

/// What follows the version and CRC32C of a format 2 or 3 payload, once the CRC32C holds.
fn checked(payload: &[u8]) -> Result<&[u8], JoinError> {
    let stored = u32_at(payload, 4).ok_or_else(|| unreadable("truncated checksum".into()))?;
    let rest = &payload[8..];
    let computed = crc32c::crc32c(rest);
    if stored != computed {
        return Err(unreadable(format!(
            "checksum mismatch: the section records CRC32C {stored:08x}, its {} bytes have \
             {computed:08x} (corrupted snapshot)",
            rest.len()
        )));
    }
    Ok(rest)
}

/// The body of a format-3 payload from what follows its CRC32C: `codec | body_len | packed`.
fn unpacked(rest: &[u8]) -> Result<Vec<u8>, JoinError> {
    let (&codec, rest) = rest
        .split_first()
        .ok_or_else(|| unreadable("truncated codec".into()))?;
    let (body_len, packed) = rest
        .split_first_chunk::<4>()
        .ok_or_else(|| unreadable("truncated body length".into()))?;
    let body_len = u32::from_le_bytes(*body_len) as usize;
    if codec != Compression::LZ4_CODEC {
        return Err(unreadable(format!(
            "codec {codec} is not one this build reads ({} = LZ4)",
            Compression::LZ4_CODEC
        )));
    }
    if body_len > packed.len().saturating_mul(LZ4_MAX_EXPANSION) + 16 {
        return Err(unreadable(format!(
            "the section records {body_len} bytes compressed into {}, more than LZ4 expands to \
             (corrupted snapshot)",
            packed.len()
        )));
    }
    let body = lz4_flex::block::decompress(packed, body_len).map_err(|e| {
        unreadable(format!(
            "undecompressable LZ4 body: {e} (corrupted snapshot)"
        ))
    })?;
    if body.len() != body_len {
        return Err(unreadable(format!(
            "the LZ4 body holds {} bytes, the section records {body_len} (corrupted snapshot)",
            body.len()
        )));
    }
    Ok(body)
}

/// The payload of the section at the start of `bytes`, and the bytes the section takes.
fn payload_of(bytes: &[u8]) -> Result<(&[u8], usize), JoinError> {
    let len =
        u32_at(bytes, 0).ok_or_else(|| unreadable("truncated section header".into()))? as usize;
    let payload = (bytes.get(4..4 + len))
        .ok_or_else(|| unreadable(format!("section of {len} bytes is truncated")))?;
    Ok((payload, 4 + len))
}

/// The section at the start of `bytes`, its key group not known.
fn leading_section(bytes: &[u8]) -> Result<StoredSection<'_>, JoinError> {
    let used = payload_of(bytes)?.1;
    Ok(StoredSection {
        key_group: None,
        bytes: &bytes[..used],
    })
}

/// A snapshot error for a section whose key group is not known (yet).
fn unreadable(reason: String) -> JoinError {
    JoinError::Snapshot {
        key_group: u16::MAX,
        reason,
    }
}

/// What a section is written with besides the key group's table.
struct SectionContext<'a> {
    sides: &'a [ResolvedSide],
    definition: &'a Definition,
    compression: Compression,
}

/// Appends the section of key group `kg`, whose table is `table`, to `out`.
///
/// The body is written straight into `out`, sized first by a walk over the table's buckets (a
/// compact group's length is in its bucket), both sides' groups then copied in one more walk, with
/// the groups of the slots ahead prefetched: in bincode's encoding of [`SectionBody`] (fixed-width
/// integers, a `u64` before each byte string), without building each side's byte string apart
/// first. The section is written on the task thread before the engine's first write to a frozen
/// key group (see the module docs), so every walk over the state and copy of its bytes counts.
fn write_section<S: Slot>(
    kg: u16,
    table: &KeyTable<S>,
    cx: &SectionContext<'_>,
    out: &mut Vec<u8>,
) -> Result<(), JoinError> {
    let (sides, definition) = (cx.sides, cx.definition);
    let mut lens = vec![0; sides.len()];
    for slot in table.slots() {
        for (len, g) in lens.iter_mut().zip(slot.groups()) {
            if !g.is_empty() {
                *len += 4 + g.stored_bytes();
            }
        }
    }
    let text = definition.text().as_bytes();
    let at = out.len();
    let groups: usize = lens.iter().sum();
    out.reserve(HEADER_LEN + 2 + 8 + 8 + text.len() + sides.len() * (1 + 8) + groups);
    out.extend_from_slice(&[0; HEADER_LEN]);
    out.extend_from_slice(&kg.to_le_bytes());
    out.extend_from_slice(&definition.fingerprint().to_le_bytes());
    out.extend_from_slice(&(text.len() as u64).to_le_bytes());
    out.extend_from_slice(text);
    // All sides' byte strings are laid out first, then filled in one walk over the table.
    let mut starts = vec![0; sides.len()];
    for (i, len) in lens.into_iter().enumerate() {
        out.push(sides[i].entry.to_byte());
        out.extend_from_slice(&(len as u64).to_le_bytes());
        starts[i] = out.len();
        out.resize(out.len() + len, 0);
    }
    for slot in table.slots_prefetching() {
        for (start, g) in starts.iter_mut().zip(slot.groups()) {
            if !g.is_empty() {
                let len = g.stored_bytes();
                out[*start..*start + 4].copy_from_slice(&(len as u32).to_le_bytes());
                g.copy_entries(&mut out[*start + 4..*start + 4 + len]);
                *start += 4 + len;
            }
        }
    }
    let crc = crc32c::crc32c(&out[at + HEADER_LEN..]);
    let len = u32::try_from(out.len() - at - 4).map_err(|_| JoinError::Snapshot {
        key_group: kg,
        reason: format!(
            "the section takes {} bytes, more than its u32 length can say",
            out.len() - at - 4
        ),
    })?;
    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
    out[at + 4..at + 8].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    out[at + 8..at + 12].copy_from_slice(&crc.to_le_bytes());
    if cx.compression == Compression::Lz4 {
        compress_section(out, at);
    }
    Ok(())
}

/// Rewrites the format-2 section at `out[at..]` as format 3, its body an LZ4 block.
fn compress_section(out: &mut Vec<u8>, at: usize) {
    let body = &out[at + HEADER_LEN..];
    let packed = lz4_flex::block::compress(body);
    let body_len = body.len() as u32;
    out.truncate(at + 4);
    out.extend_from_slice(&FORMAT_V3.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.push(Compression::LZ4_CODEC);
    out.extend_from_slice(&body_len.to_le_bytes());
    out.extend_from_slice(&packed);
    let crc = crc32c::crc32c(&out[at + 12..]);
    out[at + 8..at + 12].copy_from_slice(&crc.to_le_bytes());
    let len = (out.len() - at - 4) as u32;
    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
}

/// What a frozen state holds of one key group.
enum Pending<S> {
    /// The key group as it was frozen: its table and the layers above it, shared with the
    /// engine, which writes the keys it changes meanwhile to copies ([`crate::overlay`]).
    Table(FrozenView<S>),
    /// The key group's section, written by the engine before a change of the whole table (or the
    /// error writing it failed with).
    Section(Result<Vec<u8>, JoinError>),
    /// Nothing: the key group held no state when frozen, or its section was handed out.
    Done,
}

/// The part of a frozen state the engine reaches too: the key groups not handed out yet, and
/// what their sections are written with. `S` is the join's [`Slot`]: [`KeySlot`] for the
/// two-table join, [`MultiSlot`] for the multi-way join.
pub(crate) struct Frozen<S = KeySlot> {
    range: KeyGroupRange,
    sides: Vec<ResolvedSide>,
    definition: Definition,
    compression: Compression,
    /// One per key group of `range`: locked by whichever writes its section (the engine before
    /// its first write to the key group, or the snapshot's writer), so it is written once.
    key_groups: Vec<Mutex<Pending<S>>>,
    /// Heap bytes of the sections in [`Pending::Section`].
    held: AtomicU64,
}

impl<S: Slot + Clone> Frozen<S> {
    fn context(&self) -> SectionContext<'_> {
        SectionContext {
            sides: &self.sides,
            definition: &self.definition,
            compression: self.compression,
        }
    }

    fn slot(&self, offset: usize) -> MutexGuard<'_, Pending<S>> {
        // A panic while a slot was locked left it as it was: still consistent.
        self.key_groups[offset]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Called by the engine before it changes the whole table of the key group at `offset` (a
    /// sweep, a restore): writes the key group's section from its frozen table, if not handed out
    /// yet, and lets the table go, so that the engine changes it in place.
    fn write_before_change(&self, offset: usize) {
        let mut slot = self.slot(offset);
        if let Pending::Table(view) = &*slot {
            let kg = self.range.start + offset as u16;
            let mut section = Vec::new();
            let table = view.merged(&self.sides);
            let written = write_section(kg, &table, &self.context(), &mut section).map(|()| {
                section.shrink_to_fit();
                self.held
                    .fetch_add(section.capacity() as u64, Ordering::Relaxed);
                section
            });
            *slot = Pending::Section(written);
        }
    }

    /// Heap bytes held only by this frozen state: the sections the engine wrote for it.
    fn held_bytes(&self) -> u64 {
        self.held.load(Ordering::Relaxed)
    }
}

/// The state of a join at the instant [`JoinEngine::freeze`] (or [`MultiwayJoin::freeze`], then
/// `S` is [`MultiSlot`]) was called, written as sections while the join goes on (see the module
/// docs). It may be used on another thread than the join's. Each key group's section is handed
/// out once: what it holds of a key group is released as soon as the section is written.
pub struct FrozenState<S = KeySlot> {
    frozen: Arc<Frozen<S>>,
    with_state: Vec<u16>,
}

impl<S: Slot + Clone> FrozenState<S> {
    /// Key groups that held any state.
    pub fn key_groups_with_state(&self) -> Vec<u16> {
        self.with_state.clone()
    }

    /// Appends the section of key group `kg` as it was when frozen to `out`: byte for byte what
    /// [`JoinEngine::snapshot_key_group`] (or [`MultiwayJoin::snapshot_key_group`]) wrote then.
    /// A key group's section is handed out once (and released then); asking again, or for a key
    /// group that held no state, is an error.
    pub fn snapshot_key_group(&self, kg: u16, out: &mut Vec<u8>) -> Result<(), JoinError> {
        let frozen = &self.frozen;
        out_of_range(frozen.range, kg)?;
        let mut slot = frozen.slot(frozen.range.offset(kg));
        // The table is dropped before the slot is unlocked, so the engine, which waits for the
        // slot before its first write to the key group, finds the table its own again.
        match std::mem::replace(&mut *slot, Pending::Done) {
            Pending::Table(view) => {
                let table = view.merged(&frozen.sides);
                write_section(kg, &table, &frozen.context(), out)
            }
            Pending::Section(written) => written.map(|section| {
                frozen
                    .held
                    .fetch_sub(section.capacity() as u64, Ordering::Relaxed);
                out.extend_from_slice(&section);
            }),
            Pending::Done => Err(JoinError::Snapshot {
                key_group: kg,
                reason: "held no state when frozen, or its section was handed out already \
                         (a frozen state writes each key group once)"
                    .into(),
            }),
        }
    }
}

/// `table`, the table of the key group at `offset` of an engine's key groups, to be written to:
/// every frozen state of `freezes` still holding it writes the key group's section from it first
/// and lets it go, so that the engine writes in place. Cheap when no frozen state holds it. For
/// whole-table changes (a record's change goes through [`crate::overlay`] instead).
pub(crate) fn own_table<'t, S: Slot + Clone>(
    table: &'t mut Arc<KeyTable<S>>,
    freezes: &mut Vec<Weak<Frozen<S>>>,
    offset: usize,
) -> &'t mut KeyTable<S> {
    if Arc::get_mut(table).is_none() {
        freezes.retain(|f| f.strong_count() > 0);
        for frozen in freezes.iter().filter_map(Weak::upgrade) {
            frozen.write_before_change(offset);
        }
    }
    // Copies the table only if a frozen state being dropped on another thread held it still.
    Arc::make_mut(table)
}

/// The key groups of `range` whose tables are not empty (`empty`: per key group, in order,
/// whether its table is).
fn holding_state(range: KeyGroupRange, empty: impl Iterator<Item = bool>) -> Vec<u16> {
    (range.start..=range.end)
        .zip(empty)
        .filter(|(_, empty)| !empty)
        .map(|(kg, _)| kg)
        .collect()
}

/// The state of `key_groups` (the key groups of `range`, whose frozen states are `freezes`) as it
/// is now, written with `cx`: O(key groups), no row is copied or merged (see the module docs):
/// the copies of keys written to while an earlier frozen state still holds their key group
/// become a layer the new frozen state shares.
fn freeze_key_groups<S: Slot + Clone>(
    key_groups: &mut [KeyGroupState<S>],
    freezes: &mut Vec<Weak<Frozen<S>>>,
    range: KeyGroupRange,
    cx: &SectionContext<'_>,
) -> FrozenState<S> {
    freezes.retain(|f| f.strong_count() > 0);
    for kg in key_groups.iter_mut() {
        kg.settle(cx.sides);
    }
    let with_state = holding_state(range, key_groups.iter().map(KeyGroupState::is_empty));
    // A key group an earlier frozen state still holds keeps its overlay as a layer (see
    // `crate::overlay`): nothing is written or merged here.
    let pending = (key_groups.iter_mut())
        .map(|kg| match kg.is_empty() {
            true => Pending::Done,
            false => Pending::Table(kg.freeze()),
        })
        .map(Mutex::new)
        .collect();
    let frozen = Arc::new(Frozen {
        range,
        sides: cx.sides.to_vec(),
        definition: cx.definition.clone(),
        compression: cx.compression,
        key_groups: pending,
        held: AtomicU64::new(0),
    });
    freezes.push(Arc::downgrade(&frozen));
    FrozenState { frozen, with_state }
}

/// Heap bytes held only by the frozen states of `freezes` not dropped yet: the frozen versions
/// of the keys of `key_groups` written to since, and the sections written for them before a
/// whole-table change.
fn held_by_freezes<S: Slot + Clone>(
    key_groups: &[KeyGroupState<S>],
    freezes: &[Weak<Frozen<S>>],
) -> u64 {
    let sections: u64 = (freezes.iter().filter_map(Weak::upgrade))
        .map(|f| f.held_bytes())
        .sum();
    sections
        + key_groups
            .iter()
            .map(KeyGroupState::masked_bytes)
            .sum::<u64>()
}

/// An error unless `kg` lies in `range`.
fn out_of_range(range: KeyGroupRange, kg: u16) -> Result<(), JoinError> {
    if range.contains(kg) {
        return Ok(());
    }
    Err(JoinError::Snapshot {
        key_group: kg,
        reason: format!(
            "not in this instance's range {}..={}",
            range.start, range.end
        ),
    })
}

impl JoinEngine {
    /// Key groups of this instance that hold any state.
    pub fn key_groups_with_state(&self) -> Vec<u16> {
        holding_state(
            self.range,
            self.key_groups.iter().map(KeyGroupState::is_empty),
        )
    }

    /// Appends the section of key group `kg` to `out`.
    pub fn snapshot_key_group(&self, kg: u16, out: &mut Vec<u8>) -> Result<(), JoinError> {
        out_of_range(self.range, kg)?;
        let table = self.key_groups[self.range.offset(kg)].merged(&self.sides);
        let cx = SectionContext {
            sides: &self.sides,
            definition: &self.definition,
            compression: self.compression,
        };
        write_section(kg, &table, &cx, out)
    }

    /// Writes the sections of later snapshots (and of states frozen later) with `compression`.
    pub fn set_snapshot_compression(&mut self, compression: Compression) {
        self.compression = compression;
    }

    /// The state as it is now, to be written while the engine goes on: O(key groups), no row is
    /// copied here (see the module docs).
    pub fn freeze(&mut self) -> FrozenState {
        let cx = SectionContext {
            sides: &self.sides,
            definition: &self.definition,
            compression: self.compression,
        };
        freeze_key_groups(&mut self.key_groups, &mut self.freezes, self.range, &cx)
    }

    /// Heap bytes held only by frozen states not dropped yet: the frozen versions of the keys
    /// the engine wrote to since (and the sections it wrote for them before a whole-table
    /// change).
    pub fn frozen_bytes(&self) -> u64 {
        held_by_freezes(&self.key_groups, &self.freezes)
    }

    /// Restores one section (format 3 or 2, or 1 of release 0.1.0) from the start of `bytes`,
    /// adding to whatever state this instance has; returns the bytes consumed. The section's key
    /// group must be in this instance's range, its checksum must hold and its join definition must
    /// be this engine's.
    pub fn restore_key_group(&mut self, bytes: &[u8]) -> Result<usize, JoinError> {
        let section = leading_section(bytes)?;
        self.restore_section(&section)?;
        Ok(section.bytes.len())
    }

    /// Restores `section` ([`restore_key_group`](Self::restore_key_group), the section exactly
    /// its bytes, checked against the key group it was stored under when that is known).
    pub fn restore_section(&mut self, section: &StoredSection<'_>) -> Result<(), JoinError> {
        let reader = SectionReader {
            sides: &self.sides,
            definition: &self.definition,
            range: self.range,
        };
        let states = (&mut self.key_groups, &mut self.freezes);
        let r = restore_one(&reader, states, self.range, section)?;
        let s = &mut self.stats;
        s.stored_keys += r.keys;
        s.stored_rows += r.rows;
        s.group_bytes += r.group_bytes;
        s.index_bytes += r.overhead_bytes;
        Ok(())
    }
}

/// What a section of a two-table join is read against.
struct SectionReader<'a> {
    sides: &'a [ResolvedSide],
    definition: &'a Definition,
    range: KeyGroupRange,
}

impl SectionRead<KeySlot> for SectionReader<'_> {
    fn sides(&self) -> &[ResolvedSide] {
        self.sides
    }

    /// Format 3, 2 or 1.
    fn restore_into(
        &self,
        section: &StoredSection<'_>,
        table: &mut KeyTable,
    ) -> Result<(u16, Restored), JoinError> {
        self.read(section, table).map_err(|e| named(e, section))
    }
}

impl SectionReader<'_> {
    fn read(
        &self,
        section: &StoredSection<'_>,
        table: &mut KeyTable,
    ) -> Result<(u16, Restored), JoinError> {
        let (payload, used) = payload_of(section.bytes)?;
        trailing(section, used)?;
        match u32_at(payload, 0) {
            Some(FORMAT_V3) => self.restore_body(section, &unpacked(checked(payload)?)?, table),
            Some(FORMAT_VERSION) => self.restore_body(section, checked(payload)?, table),
            Some(FORMAT_V1) => {
                let (snap, _): (SectionV1, usize) =
                    bincode::borrow_decode_from_slice(&payload[4..], config())
                        .map_err(|e| unreadable(format!("undecodable format-1 section: {e}")))?;
                self.restore_sides(section, snap.key_group, &snap.sides, table)
            }
            Some(v) => Err(unreadable(format!(
                "format version {v} is not one this build reads \
                 ({FORMAT_V1}, {FORMAT_VERSION} or {FORMAT_V3})"
            ))),
            None => Err(unreadable("no format version".into())),
        }
    }

    /// Restores a format-2 body (also the decompressed body of format 3).
    fn restore_body(
        &self,
        section: &StoredSection<'_>,
        body: &[u8],
        table: &mut KeyTable,
    ) -> Result<(u16, Restored), JoinError> {
        let (snap, _): (SectionBody, usize) = bincode::borrow_decode_from_slice(body, config())
            .map_err(|e| unreadable(format!("undecodable section: {e}")))?;
        self.definition
            .check(snap.key_group, snap.fingerprint, snap.definition)?;
        self.restore_sides(section, snap.key_group, &snap.sides, table)
    }

    fn restore_sides(
        &self,
        section: &StoredSection<'_>,
        kg: u16,
        sides: &[SideSnapshot; 2],
        table: &mut KeyTable,
    ) -> Result<(u16, Restored), JoinError> {
        check_key_group(section, kg)?;
        out_of_range(self.range, kg)?;
        let names = |i: usize| ["the left side", "the right side"][i].to_string();
        let restored = restore_groups(kg, table, self.sides, names, sides)?;
        Ok((kg, restored))
    }
}

/// Refuses bytes of a section beyond its payload (`used` bytes).
fn trailing(section: &StoredSection<'_>, used: usize) -> Result<(), JoinError> {
    if used == section.bytes.len() {
        return Ok(());
    }
    Err(unreadable(format!(
        "{} bytes follow the section's {used}",
        section.bytes.len() - used
    )))
}

/// A multi-way join's snapshot: the same sections, one side per input, written from the live
/// state or from a [`FrozenState`] of [`MultiSlot`]s while the join goes on.
impl MultiwayJoin {
    /// Key groups of this instance that hold any state.
    pub fn key_groups_with_state(&self) -> Vec<u16> {
        holding_state(self.range, self.tables.iter().map(KeyGroupState::is_empty))
    }

    /// Appends the section of key group `kg` to `out`: format 2 (3 when compressed), `side`
    /// repeated once per input, under the multi-way join's [`Definition`].
    pub fn snapshot_key_group(&self, kg: u16, out: &mut Vec<u8>) -> Result<(), MultiwayError> {
        out_of_range(self.range, kg)?;
        let cx = SectionContext {
            sides: &self.inputs,
            definition: &self.definition,
            compression: self.compression,
        };
        let table = self.tables[self.range.offset(kg)].merged(&self.inputs);
        Ok(write_section(kg, &table, &cx, out)?)
    }

    /// Writes the sections of later snapshots (and of states frozen later) with `compression`.
    pub fn set_snapshot_compression(&mut self, compression: Compression) {
        self.compression = compression;
    }

    /// The state as it is now, to be written while the join goes on: O(key groups), no row is
    /// copied here ([`JoinEngine::freeze`], with one group per input).
    pub fn freeze(&mut self) -> FrozenState<MultiSlot> {
        let cx = SectionContext {
            sides: &self.inputs,
            definition: &self.definition,
            compression: self.compression,
        };
        freeze_key_groups(&mut self.tables, &mut self.freezes, self.range, &cx)
    }

    /// Heap bytes held only by frozen states not dropped yet ([`JoinEngine::frozen_bytes`]).
    pub fn frozen_bytes(&self) -> u64 {
        held_by_freezes(&self.tables, &self.freezes)
    }

    /// Restores one section (format 3 or 2) from the start of `bytes`, adding to whatever state
    /// this instance has; returns the bytes consumed. The section's key group must be in this
    /// instance's range, its checksum must hold and its definition must be this join's.
    pub fn restore_key_group(&mut self, bytes: &[u8]) -> Result<usize, MultiwayError> {
        let section = leading_section(bytes)?;
        self.restore_section(&section)?;
        Ok(section.bytes.len())
    }

    /// Restores `section` ([`JoinEngine::restore_section`]).
    pub fn restore_section(&mut self, section: &StoredSection<'_>) -> Result<(), MultiwayError> {
        let reader = MultiSectionReader {
            inputs: &self.inputs,
            definition: &self.definition,
            range: self.range,
        };
        let states = (&mut self.tables, &mut self.freezes);
        let r = restore_one(&reader, states, self.range, section)?;
        let s = &mut self.stats;
        s.stored_keys += r.keys;
        s.stored_rows += r.rows;
        s.group_bytes += r.group_bytes;
        s.overhead_bytes += r.overhead_bytes;
        Ok(())
    }
}
/// What a section of a multi-way join is read against.
struct MultiSectionReader<'a> {
    inputs: &'a [ResolvedSide],
    definition: &'a Definition,
    range: KeyGroupRange,
}

impl SectionRead<MultiSlot> for MultiSectionReader<'_> {
    fn sides(&self) -> &[ResolvedSide] {
        self.inputs
    }

    /// Format 3 or 2.
    fn restore_into(
        &self,
        section: &StoredSection<'_>,
        table: &mut KeyTable<MultiSlot>,
    ) -> Result<(u16, Restored), JoinError> {
        self.read(section, table).map_err(|e| named(e, section))
    }
}

impl MultiSectionReader<'_> {
    fn read(
        &self,
        section: &StoredSection<'_>,
        table: &mut KeyTable<MultiSlot>,
    ) -> Result<(u16, Restored), JoinError> {
        let (payload, used) = payload_of(section.bytes)?;
        trailing(section, used)?;
        let body = match u32_at(payload, 0) {
            Some(FORMAT_V3) => unpacked(checked(payload)?)?,
            Some(FORMAT_VERSION) => checked(payload)?.to_vec(),
            v => {
                return Err(unreadable(format!(
                    "format version {v:?} is not one the multi-way join reads \
                     ({FORMAT_VERSION} or {FORMAT_V3})"
                )))
            }
        };
        self.restore_body(section, &body, table)
    }

    /// Restores a section's body: its header, then one side per input.
    fn restore_body(
        &self,
        section: &StoredSection<'_>,
        body: &[u8],
        table: &mut KeyTable<MultiSlot>,
    ) -> Result<(u16, Restored), JoinError> {
        let undecodable =
            |e: bincode::error::DecodeError| unreadable(format!("undecodable section: {e}"));
        let ((kg, fingerprint, definition), mut at): ((u16, u64, &str), usize) =
            bincode::borrow_decode_from_slice(body, config()).map_err(undecodable)?;
        self.definition.check(kg, fingerprint, definition)?;
        let mut sides = Vec::with_capacity(self.inputs.len());
        for _ in 0..self.inputs.len() {
            let (side, used): (SideSnapshot, usize) =
                bincode::borrow_decode_from_slice(&body[at..], config()).map_err(undecodable)?;
            sides.push(side);
            at += used;
        }
        check_key_group(section, kg)?;
        out_of_range(self.range, kg)?;
        let name = |i| format!("input {i}");
        let restored = restore_groups(kg, table, self.inputs, name, &sides)?;
        Ok((kg, restored))
    }
}

/// Restores the groups of every side of section `kg` (`snaps`, in the order of `sides`) into
/// `table`; `name(i)` names side `i` in errors.
fn restore_groups<S: Slot>(
    kg: u16,
    table: &mut KeyTable<S>,
    sides: &[ResolvedSide],
    name: impl Fn(usize) -> String,
    snaps: &[SideSnapshot<'_>],
) -> Result<Restored, JoinError> {
    let err = |reason: String| JoinError::Snapshot {
        key_group: kg,
        reason,
    };
    // Each side holds at most one group per key, and every key has a group on one side at
    // least: the table is sized once for the larger side instead of doubling as it fills.
    // A counted group takes 9 bytes of the section at least, so a corrupt section cannot
    // make this reserve more than a small multiple of its own size.
    let keys = snaps
        .iter()
        .map(|s| {
            split_groups(s.groups)
                .filter(|g| g.as_ref().is_ok_and(|g| !g.is_empty()))
                .count()
        })
        .max();
    table.reserve(keys.unwrap_or(0));
    let (mut key, mut restored) = (Vec::new(), Restored::default());
    for (i, side) in snaps.iter().enumerate() {
        let spec = &sides[i];
        if side.entry_layout != spec.entry.to_byte() {
            return Err(err(format!(
                "taken under a different join declaration: {}'s row entries were \
                 laid out as {:#05b}, this job's as {} ({:#05b}) (join type, keys or TTL changed)",
                name(i),
                side.entry_layout,
                spec.entry,
                spec.entry.to_byte()
            )));
        }
        for bytes in split_groups(side.groups) {
            let g = restore_group(spec, bytes.map_err(&err)?, &mut key).map_err(&err)?;
            add_group(table, sides, i, g, &key, &mut restored).map_err(&err)?;
        }
    }
    Ok(restored)
}

/// The group of one side (declared as `spec`) from its snapshot bytes, every row checked, and its
/// rows; its join key is written to `key`.
fn restore_group(
    spec: &ResolvedSide,
    bytes: &[u8],
    key: &mut Vec<u8>,
) -> Result<(Group, u64), String> {
    let (g, rows) = Group::from_bytes(bytes, spec.entry, &spec.row_layout, &spec.identity())?;
    let first = g
        .first(spec.entry)
        .expect("from_bytes refuses empty groups");
    key.clear();
    spec.join_key
        .write(&RowRef::new(&spec.row_layout, g.row(&first)), key);
    Ok((g, rows))
}

/// Stores restored group `g` of side `i` under join key `key` in `table`, and counts it in
/// `restored`.
fn add_group<S: Slot>(
    table: &mut KeyTable<S>,
    sides: &[ResolvedSide],
    i: usize,
    (g, rows): (Group, u64),
    key: &[u8],
    restored: &mut Restored,
) -> Result<(), String> {
    let (stored, overhead) = (g.stored_bytes() as u64, g.overhead_bytes() as u64);
    let mut entry = table.entry(sides, hash_key(key), key);
    match entry.occupied() {
        Some(slot) if slot.groups()[i].is_empty() => slot.groups_mut()[i] = g,
        Some(_) => {
            return Err("a join key is restored twice (the key group was restored already)".into())
        }
        None => {
            let mut slot = S::with_inputs(sides.len());
            slot.groups_mut()[i] = g;
            let heap = slot.heap_bytes();
            entry.insert(slot);
            restored.keys += 1;
            restored.overhead_bytes += heap;
        }
    }
    restored.rows += rows;
    restored.group_bytes += stored;
    restored.overhead_bytes += overhead;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::{write_input, InputRecord};
    use crate::spec::{JoinType, KeyGroupRange, Side, SideSpec};
    use cdcjoin_model::{DataType, Field, RowKind, RowLayout, RowWriter};

    const KG: u16 = 2;

    fn side(pk: bool) -> SideSpec {
        SideSpec {
            schema: Schema::new(vec![
                Field::not_null("id", DataType::Int),
                Field::new("k", DataType::Int),
            ]),
            join_key: vec!["k".into()],
            primary_key: pk.then(|| vec!["id".into()]),
            ttl_ms: None,
            exact_retractions: false,
        }
    }

    fn spec(join_type: JoinType) -> JoinSpec {
        JoinSpec {
            left: side(true),
            right: side(true),
            join_type,
            absent_retraction: Default::default(),
            key_groups: KeyGroupRange { start: 0, end: 3 },
        }
    }

    /// An engine of `spec` holding rows `(1, 7)` on the left and `(2, 7)` on the right in [`KG`].
    fn filled(spec: &JoinSpec) -> JoinEngine {
        let mut e = JoinEngine::new(spec).unwrap();
        insert(&mut e, spec, Side::Left, 1);
        insert(&mut e, spec, Side::Right, 2);
        e
    }

    /// Inserts row `(id, 7)` on `side` of `e` (declared as `spec`), in [`KG`].
    fn insert(e: &mut JoinEngine, spec: &JoinSpec, side: Side, id: i32) {
        let layout = RowLayout::new(&spec.left.schema);
        let mut row = Vec::new();
        let mut w = RowWriter::new(&layout, &mut row);
        w.int(id);
        w.int(7);
        w.finish();
        let rec = InputRecord {
            side,
            kind: RowKind::Insert,
            key_group: KG,
            timestamp: None,
            row: &row,
        };
        let mut batch = Vec::new();
        write_input(&mut batch, &rec);
        e.process_batch(&batch, 0, &mut Vec::new()).unwrap();
    }

    fn section(e: &JoinEngine) -> Vec<u8> {
        let mut out = Vec::new();
        e.snapshot_key_group(KG, &mut out).unwrap();
        out
    }

    fn restore_err(spec: &JoinSpec, bytes: &[u8]) -> String {
        let mut e = JoinEngine::new(spec).unwrap();
        e.restore_key_group(bytes).unwrap_err().to_string()
    }

    #[test]
    fn a_section_restores_into_the_same_definition() {
        let spec = spec(JoinType::Left);
        let original = filled(&spec);
        let bytes = section(&original);
        assert_eq!(u32_at(&bytes, 4), Some(FORMAT_VERSION));
        let mut e = JoinEngine::new(&spec).unwrap();
        assert_eq!(e.restore_key_group(&bytes).unwrap(), bytes.len());
        assert_eq!(e.stats().stored_rows, 2);
        assert_eq!(section(&e), bytes);
    }

    /// A restore counts keys, rows and bytes as a recount of the restored state would, indexed
    /// groups (with their overhead) included.
    #[test]
    fn a_restore_counts_what_it_adds() {
        let spec = spec(JoinType::Left);
        let mut original = filled(&spec);
        let layout = RowLayout::new(&spec.right.schema);
        let mut batch = Vec::new();
        for id in 10..90 {
            let mut row = Vec::new();
            let mut w = RowWriter::new(&layout, &mut row);
            w.int(id);
            w.int(id % 2);
            w.finish();
            let rec = InputRecord {
                side: Side::Right,
                kind: RowKind::Insert,
                timestamp: None,
                key_group: KG,
                row: &row,
            };
            write_input(&mut batch, &rec);
        }
        original.process_batch(&batch, 0, &mut Vec::new()).unwrap();
        let mut e = JoinEngine::new(&spec).unwrap();
        e.restore_key_group(&section(&original)).unwrap();
        let restored = e.stats();
        assert_eq!(restored.stored_rows, 82);
        assert!(
            restored.index_bytes > 0,
            "a key of 40 rows on one side is indexed"
        );
        e.recount_state();
        assert_eq!(restored, e.stats());
        assert_eq!(
            (restored.stored_keys, restored.group_bytes),
            (3, original.stats().group_bytes)
        );
    }

    /// While a frozen state holds a key group, the engine writes to a copy of each key it changes
    /// (counted as frozen bytes: the key's slot, not the key group's section); the frozen state
    /// hands the section out once, as it was at the freeze; after the next batch the copies are
    /// back in the table, which then is what it would be without the freeze. A key group whose
    /// section was handed out first costs the engine's write nothing.
    #[test]
    fn a_frozen_key_group_keeps_its_instant_while_the_engine_changes_it() {
        let spec = spec(JoinType::Left);
        let mut e = filled(&spec);
        let want = section(&e);
        let frozen = e.freeze();
        assert_eq!(e.frozen_bytes(), 0, "freezing copies nothing");
        insert(&mut e, &spec, Side::Right, 3);
        let copied = e.frozen_bytes();
        assert!(
            copied > 0 && copied < 64,
            "{copied} bytes: the changed key's slot"
        );
        assert_ne!(section(&e), want, "the engine changed the key group");
        let mut got = Vec::new();
        frozen.snapshot_key_group(KG, &mut got).unwrap();
        assert_eq!(got, want);
        let again = frozen.snapshot_key_group(KG, &mut got).unwrap_err();
        assert!(again.to_string().contains("handed out already"), "{again}");
        insert(&mut e, &spec, Side::Right, 4);
        assert_eq!(e.frozen_bytes(), 0, "the copies went back into the table");
        let mut twin = filled(&spec);
        insert(&mut twin, &spec, Side::Right, 3);
        insert(&mut twin, &spec, Side::Right, 4);
        assert_eq!(section(&e), section(&twin));

        let want = section(&e);
        let frozen = e.freeze();
        let mut got = Vec::new();
        frozen.snapshot_key_group(KG, &mut got).unwrap();
        insert(&mut e, &spec, Side::Right, 5);
        assert_eq!((got, e.frozen_bytes()), (want, 0));
    }

    /// Without a batch after the write, `settle` merges the copies a released frozen state left,
    /// so that they are freed and the next freeze has nothing to merge on the task thread.
    #[test]
    fn settling_after_the_write_merges_the_copies_without_a_batch() {
        let spec = spec(JoinType::Left);
        let mut e = filled(&spec);
        let frozen = e.freeze();
        insert(&mut e, &spec, Side::Right, 3);
        frozen.snapshot_key_group(KG, &mut Vec::new()).unwrap();
        drop(frozen);
        assert!(e.frozen_bytes() > 0, "the copy stays until it is merged");
        e.settle();
        assert_eq!(e.frozen_bytes(), 0, "the copies went back into the table");
        let mut twin = filled(&spec);
        insert(&mut twin, &spec, Side::Right, 3);
        assert_eq!(section(&e), section(&twin));
    }

    /// A section's body, written field by field, is bincode's encoding of [`SectionBody`], which
    /// a restore decodes: all of it, back to the same bytes (an indexed group included).
    #[test]
    fn a_section_body_is_the_encoding_a_restore_decodes() {
        let spec = spec(JoinType::Left);
        let mut e = filled(&spec);
        for id in 10..50 {
            insert(&mut e, &spec, Side::Right, id);
        }
        let bytes = section(&e);
        let body = &bytes[HEADER_LEN..];
        let (decoded, used): (SectionBody, usize) =
            bincode::borrow_decode_from_slice(body, config()).unwrap();
        assert_eq!(used, body.len());
        assert_eq!(bincode::encode_to_vec(&decoded, config()).unwrap(), body);
    }

    /// An engine of `spec` holding, in every key group of its range, left rows `(id, id % 5)` and
    /// right rows `(id, id % 7)` for 60 ids per key group (several keys, some indexed).
    fn spread(spec: &JoinSpec) -> JoinEngine {
        let mut e = JoinEngine::new(spec).unwrap();
        let layout = RowLayout::new(&spec.left.schema);
        let mut batch = Vec::new();
        let mut rows = Vec::new();
        for id in 0..240 {
            let (side, key) = match id % 2 {
                0 => (Side::Left, id % 5),
                _ => (Side::Right, id % 7),
            };
            rows.clear();
            let mut w = RowWriter::new(&layout, &mut rows);
            w.int(id);
            w.int(key);
            w.finish();
            let rec = InputRecord {
                side,
                kind: RowKind::Insert,
                key_group: (id % 4) as u16,
                timestamp: None,
                row: &rows,
            };
            write_input(&mut batch, &rec);
        }
        e.process_batch(&batch, 0, &mut Vec::new()).unwrap();
        e
    }

    /// Every section of `e`, with the key group it is stored under.
    fn sections(e: &JoinEngine) -> Vec<(u16, Vec<u8>)> {
        let sections = e.key_groups_with_state().into_iter();
        sections
            .map(|kg| {
                let mut out = Vec::new();
                e.snapshot_key_group(kg, &mut out).unwrap();
                (kg, out)
            })
            .collect()
    }

    fn stored(sections: &[(u16, Vec<u8>)]) -> Vec<StoredSection<'_>> {
        let stored = sections.iter().map(|(kg, bytes)| StoredSection {
            key_group: Some(*kg),
            bytes,
        });
        stored.collect()
    }

    /// Sections restored under the key groups they were stored under are the state restored one
    /// by one, statistics included; restored again on top, they are refused.
    #[test]
    fn sections_restored_under_their_key_groups_are_the_state_restored_one_by_one() {
        let spec = spec(JoinType::Full);
        let original = spread(&spec);
        let taken = sections(&original);
        assert_eq!(taken.len(), 4);
        let mut one_by_one = JoinEngine::new(&spec).unwrap();
        for (_, bytes) in &taken {
            one_by_one.restore_key_group(bytes).unwrap();
        }
        let mut e = JoinEngine::new(&spec).unwrap();
        for section in stored(&taken) {
            e.restore_section(&section).unwrap();
        }
        assert_eq!(sections(&e), taken);
        assert_eq!(e.stats(), one_by_one.stats());
        assert_eq!(e.stats().stored_rows, 240);
        let again = e.restore_section(&stored(&taken)[1]);
        let msg = again.unwrap_err().to_string();
        assert!(msg.contains("restored twice"), "{msg}");
    }

    /// A section holds the key group it was stored under, and nothing more; a section unreadable
    /// before its key group is known is named by the one it was stored under.
    #[test]
    fn a_stored_section_is_checked_against_its_key_group() {
        let spec = spec(JoinType::Left);
        let bytes = section(&filled(&spec));
        let restore = |key_group: Option<u16>, bytes: &[u8]| {
            let mut e = JoinEngine::new(&spec).unwrap();
            let stored = StoredSection { key_group, bytes };
            e.restore_section(&stored).unwrap_err().to_string()
        };
        let msg = restore(Some(1), &bytes);
        assert!(
            msg.contains("stored under key group 1, the section holds key group 2"),
            "{msg}"
        );
        let mut longer = bytes.clone();
        longer.push(0);
        let msg = restore(Some(KG), &longer);
        assert!(msg.contains("1 bytes follow the section's"), "{msg}");
        let mut flipped = bytes.clone();
        flipped[HEADER_LEN] ^= 1;
        let msg = restore(Some(3), &flipped);
        assert!(
            msg.starts_with("snapshot of key group 3: checksum mismatch"),
            "{msg}"
        );
    }

    #[test]
    fn a_flipped_byte_fails_the_checksum() {
        let spec = spec(JoinType::Left);
        let bytes = section(&filled(&spec));
        for at in HEADER_LEN..bytes.len() {
            let mut bad = bytes.clone();
            bad[at] ^= 0x10;
            let msg = restore_err(&spec, &bad);
            assert!(msg.contains("checksum mismatch"), "byte {at}: {msg}");
            assert!(msg.contains("(corrupted snapshot)"), "{msg}");
        }
        let mut bad = bytes.clone();
        bad[9] ^= 1; // the recorded CRC itself
        assert!(restore_err(&spec, &bad).contains("checksum mismatch"));
    }

    #[test]
    fn another_definition_is_refused_naming_what_differs() {
        let bytes = section(&filled(&spec(JoinType::Left)));
        let msg = restore_err(&spec(JoinType::Inner), &bytes);
        assert!(
            msg.starts_with("snapshot of key group 2: the join definition differs"),
            "{msg}"
        );
        assert!(
            msg.contains("the snapshot was taken for join type LEFT, this job declares INNER"),
            "{msg}"
        );
        assert!(
            msg.contains(
                "the snapshot was taken for left row entry row_len, matches, \
                 this job declares row_len"
            ),
            "{msg}"
        );

        let mut wider = spec(JoinType::Left);
        wider
            .right
            .schema
            .fields
            .push(Field::new("name", DataType::String));
        let msg = restore_err(&wider, &bytes);
        assert!(
            msg.contains(
                "the snapshot was taken for right schema \"id\" INT NOT NULL, \"k\" INT, \
                 this job declares \"id\" INT NOT NULL, \"k\" INT, \"name\" STRING"
            ),
            "{msg}"
        );
        assert!(!msg.contains("left"), "only the right side differs: {msg}");

        let mut no_pk = spec(JoinType::Left);
        no_pk.right.primary_key = None;
        let msg = restore_err(&no_pk, &bytes);
        assert!(
            msg.contains("right primary key \"id\", this job declares none"),
            "{msg}"
        );
        assert!(
            msg.contains("right state layout HasUniqueKey, this job declares NoUniqueKey"),
            "{msg}"
        );
    }

    #[test]
    fn the_definition_text_names_every_part() {
        let spec = spec(JoinType::Full);
        let e = JoinEngine::new(&spec).unwrap();
        let text = e.definition.text();
        assert_eq!(text.lines().next(), Some("join type: FULL"), "{text}");
        for part in [
            "schema",
            "join key",
            "primary key",
            "state layout",
            "row entry",
        ] {
            assert!(text.contains(&format!("\nleft {part}: ")), "{part}: {text}");
            assert!(
                text.contains(&format!("\nright {part}: ")),
                "{part}: {text}"
            );
        }
        assert_eq!(e.definition.fingerprint(), fnv1a(text.as_bytes()));
        // Stable across builds: the fingerprint of a fixed text.
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    /// The text is pinned: every snapshot taken so far records its fingerprint, so any change to
    /// it would refuse them all.
    #[test]
    fn the_definition_text_is_pinned() {
        let e = JoinEngine::new(&spec(JoinType::Left)).unwrap();
        let side = |name: &str, entry: &str| {
            format!(
                "{name} schema: \"id\" INT NOT NULL, \"k\" INT\n{name} join key: \"k\"\n\
                 {name} primary key: \"id\"\n{name} state layout: HasUniqueKey\n\
                 {name} row entry: {entry}\n"
            )
        };
        let text = format!(
            "join type: LEFT\n{}{}",
            side("left", "row_len, matches"),
            side("right", "row_len")
        );
        assert_eq!(e.definition.text(), text);
    }

    /// The state of `e`'s key group [`KG`] as a format-1 section, as release 0.1.0 wrote it.
    fn v1_section(e: &JoinEngine) -> Vec<u8> {
        let bytes = section(e);
        let (body, _): (SectionBody, usize) =
            bincode::borrow_decode_from_slice(&bytes[HEADER_LEN..], config()).unwrap();
        let v1 = SectionV1 {
            key_group: body.key_group,
            sides: body.sides,
        };
        let mut payload = FORMAT_V1.to_le_bytes().to_vec();
        payload.extend(bincode::encode_to_vec(&v1, config()).unwrap());
        let mut out = (payload.len() as u32).to_le_bytes().to_vec();
        out.extend_from_slice(&payload);
        out
    }

    #[test]
    fn format_1_still_restores_and_is_checked_by_entry_layout() {
        let spec = spec(JoinType::Left);
        let original = filled(&spec);
        let old = v1_section(&original);
        let mut e = JoinEngine::new(&spec).unwrap();
        assert_eq!(e.restore_key_group(&old).unwrap(), old.len());
        assert_eq!(section(&e), section(&original));

        let msg = restore_err(&self::spec(JoinType::Inner), &old);
        assert!(
            msg.contains(
                "the left side's row entries were laid out as 0b010, this job's as row_len (0b000)"
            ),
            "{msg}"
        );
    }

    /// `e`'s section of [`KG`], compressed.
    fn lz4_section(e: &mut JoinEngine) -> Vec<u8> {
        e.set_snapshot_compression(Compression::Lz4);
        let bytes = section(e);
        e.set_snapshot_compression(Compression::None);
        bytes
    }

    #[test]
    fn a_compressed_section_restores_the_same_state() {
        let spec = spec(JoinType::Left);
        let mut original = filled(&spec);
        let plain = section(&original);
        let packed = lz4_section(&mut original);
        assert_eq!(u32_at(&packed, 4), Some(FORMAT_V3));
        original.set_snapshot_compression(Compression::Lz4);
        let mut frozen = Vec::new();
        original
            .freeze()
            .snapshot_key_group(KG, &mut frozen)
            .unwrap();
        assert_eq!(frozen, packed, "a frozen state writes as its engine");
        let mut e = JoinEngine::new(&spec).unwrap();
        assert_eq!(e.restore_key_group(&packed).unwrap(), packed.len());
        assert_eq!(section(&e), plain);
        assert_eq!(e.stats(), {
            let mut again = JoinEngine::new(&spec).unwrap();
            again.restore_key_group(&plain).unwrap();
            again.stats()
        });
    }

    #[test]
    fn a_corrupt_compressed_section_is_an_error() {
        let spec = spec(JoinType::Left);
        let packed = lz4_section(&mut filled(&spec));
        for at in HEADER_LEN..packed.len() {
            let mut bad = packed.clone();
            bad[at] ^= 0x10;
            let msg = restore_err(&spec, &bad);
            assert!(msg.contains("checksum mismatch"), "byte {at}: {msg}");
        }
        for cut in 0..packed.len() {
            assert!(restore_err(&spec, &packed[..cut]).starts_with("snapshot of key group"));
        }
        // Sections whose CRC32C holds over what is wrong in them, as only a writer's bug could
        // make them.
        let body_len = u32::from_le_bytes(packed[13..17].try_into().unwrap());
        let lz4 = &packed[17..];
        for (codec, len, data, want) in [
            (
                9,
                body_len,
                lz4,
                "codec 9 is not one this build reads (1 = LZ4)",
            ),
            (
                1,
                u32::MAX,
                lz4,
                "more than LZ4 expands to (corrupted snapshot)",
            ),
            (1, body_len, &[0xf0, 1, 2][..], "undecompressable LZ4 body"),
            (1, body_len + 1, lz4, "LZ4 body"),
        ] {
            let msg = restore_err(&spec, &v3_section(codec, len, data));
            assert!(msg.starts_with("snapshot of key group"), "{msg}");
            assert!(msg.contains(want), "{want}: {msg}");
        }
    }

    /// A format-3 section of `packed` with `codec` and `body_len` as given, its CRC32C right.
    fn v3_section(codec: u8, body_len: u32, packed: &[u8]) -> Vec<u8> {
        let mut rest = vec![codec];
        rest.extend_from_slice(&body_len.to_le_bytes());
        rest.extend_from_slice(packed);
        let mut out = ((rest.len() + 8) as u32).to_le_bytes().to_vec();
        out.extend_from_slice(&FORMAT_V3.to_le_bytes());
        out.extend_from_slice(&crc32c::crc32c(&rest).to_le_bytes());
        out.extend_from_slice(&rest);
        out
    }

    #[test]
    fn truncated_and_unknown_sections_are_errors() {
        let spec = spec(JoinType::Left);
        let bytes = section(&filled(&spec));
        for cut in 0..bytes.len() {
            assert!(restore_err(&spec, &bytes[..cut]).starts_with("snapshot of key group"));
        }
        let mut future = bytes.clone();
        future[4] = 4;
        assert!(restore_err(&spec, &future)
            .contains("format version 4 is not one this build reads (1, 2 or 3)"));
    }
}
