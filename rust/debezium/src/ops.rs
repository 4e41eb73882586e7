//! The op rules: how one Debezium change becomes one or two changelog rows.
//!
//! | op           | emits                                          |
//! |--------------|------------------------------------------------|
//! | `c`, `r`     | `+I(after)`                                    |
//! | `u`          | `-U(before)`, `+U(after)` (or `-D`, `+I`)      |
//! | `d`          | `-D(before)`                                   |
//!
//! This is Flink's `DebeziumJsonDeserializationSchema`, plus [`UpdateMode::DeleteInsert`] for
//! consumers that want updates split into a delete and an insert. The retraction always comes
//! first, so a downstream join never sees two live versions of a row.
//!
//! In *upsert* mode (a side with a primary key, e.g. a Postgres table at the default `REPLICA
//! IDENTITY`, whose updates carry no `before`), a `u` without `before` emits only the accumulation
//! of `after`: the join retracts the row stored under the same primary key.
//!
//! The rules live only here. They are applied to row *sources*: already-encoded rows
//! ([`split_envelope`], for envelopes decoded elsewhere, e.g. by Java) or the lazily decoded
//! `before`/`after` images of a JSON envelope (the decoder). A source writes an image only when the
//! op needs it, so a `c` record never pays for (or fails on) its `before`.

use crate::error::{DecodeError, ErrorKind, Side};
use crate::sink::ChangeSink;
use cdcjoin_model::RowKind;
use serde::{Deserialize, Serialize};
use std::fmt;

/// How an UPDATE (`u`) is emitted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UpdateMode {
    /// `-U(before)` then `+U(after)`, as Flink's debezium-json format does.
    #[default]
    Retract,
    /// `-D(before)` then `+I(after)`: for consumers that treat every change as a delete or insert.
    DeleteInsert,
}

/// Where the `before` and `after` images of one change come from.
pub(crate) trait RowSource {
    /// Whether the image is present (neither missing nor JSON null).
    fn has(&self, side: Side) -> bool;

    /// Appends the image, encoded, to `buf`. Called only for present images.
    fn write(&mut self, side: Side, buf: &mut Vec<u8>) -> Result<(), ErrorKind>;
}

/// What an op turns into: an optional retraction of `before`, then an optional accumulation of
/// `after`, and the op's name for messages.
struct Plan {
    name: &'static str,
    retract: Option<RowKind>,
    accumulate: Option<RowKind>,
}

fn plan(op: u8, mode: UpdateMode) -> Result<Plan, ErrorKind> {
    let (retract, accumulate) = match mode {
        UpdateMode::Retract => (RowKind::UpdateBefore, RowKind::UpdateAfter),
        UpdateMode::DeleteInsert => (RowKind::Delete, RowKind::Insert),
    };
    let plan = |name, retract, accumulate| Plan {
        name,
        retract,
        accumulate,
    };
    match op {
        b'c' => Ok(plan("INSERT", None, Some(RowKind::Insert))),
        b'r' => Ok(plan("READ", None, Some(RowKind::Insert))),
        b'u' => Ok(plan("UPDATE", Some(retract), Some(accumulate))),
        b'd' => Ok(plan("DELETE", Some(RowKind::Delete), None)),
        other => Err(ErrorKind::UnknownOp(op_text(other))),
    }
}

/// An op byte as it would appear in JSON: `"t"`, or its code when not printable.
fn op_text(op: u8) -> String {
    if op.is_ascii_graphic() {
        format!("\"{}\"", op as char)
    } else {
        format!("byte 0x{op:02x}")
    }
}

/// The op rules' settings: the update mode and whether upsert mode is on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Rules {
    pub(crate) mode: UpdateMode,
    pub(crate) upsert: bool,
}

/// Applies the op rules to `rows`, appending to `out`; returns the number of changes appended.
/// On error nothing is left in `out`.
pub(crate) fn apply_op(
    op: u8,
    rules: Rules,
    rows: &mut impl RowSource,
    out: &mut ChangeSink,
) -> Result<usize, ErrorKind> {
    let mut plan = plan(op, rules.mode)?;
    if plan.retract.is_some() && !rows.has(Side::Before) {
        if !(rules.upsert && op == b'u') {
            return Err(ErrorKind::MissingBefore(plan.name));
        }
        plan.retract = None;
    }
    if plan.accumulate.is_some() && !rows.has(Side::After) {
        return Err(ErrorKind::MissingAfter(plan.name));
    }
    let mark = out.mark();
    let written = emit(&plan, rows, out);
    if written.is_err() {
        out.truncate(mark);
    }
    written
}

fn emit(plan: &Plan, rows: &mut impl RowSource, out: &mut ChangeSink) -> Result<usize, ErrorKind> {
    let mut n = 0;
    if let Some(kind) = plan.retract {
        out.push_with(kind, |buf| rows.write(Side::Before, buf))?;
        n += 1;
    }
    if let Some(kind) = plan.accumulate {
        out.push_with(kind, |buf| rows.write(Side::After, buf))?;
        n += 1;
    }
    Ok(n)
}

/// Rows that are already encoded, copied as they are.
pub(crate) struct EncodedRows<'a> {
    pub(crate) before: Option<&'a [u8]>,
    pub(crate) after: Option<&'a [u8]>,
}

impl RowSource for EncodedRows<'_> {
    fn has(&self, side: Side) -> bool {
        self.get(side).is_some()
    }

    fn write(&mut self, side: Side, buf: &mut Vec<u8>) -> Result<(), ErrorKind> {
        buf.extend_from_slice(self.get(side).unwrap_or_default());
        Ok(())
    }
}

impl<'a> EncodedRows<'a> {
    fn get(&self, side: Side) -> Option<&'a [u8]> {
        match side {
            Side::Before => self.before,
            Side::After => self.after,
        }
    }
}

/// Applies the op rules to an envelope that is already decoded: its op byte (`b'c'`, `b'r'`,
/// `b'u'`, `b'd'`) and its `before`/`after` rows in the compact row encoding (`None` for null).
///
/// Appends one or two changes to `out` and returns how many. The rows are copied verbatim: rows
/// from an untrusted caller should be checked with [`cdcjoin_model::RowLayout::validate`] first
/// (as [`crate::Decoder::split_rows`] does). On error nothing is appended, and the error names
/// `position`.
pub fn split_envelope(
    op: u8,
    before: Option<&[u8]>,
    after: Option<&[u8]>,
    mode: UpdateMode,
    position: &dyn fmt::Display,
    out: &mut ChangeSink,
) -> Result<usize, DecodeError> {
    let rules = Rules {
        mode,
        upsert: false,
    };
    split_with(op, before, after, rules, out).map_err(|e| e.at(position))
}

/// [`split_envelope`] with all the op rules' settings.
pub(crate) fn split_with(
    op: u8,
    before: Option<&[u8]>,
    after: Option<&[u8]>,
    rules: Rules,
    out: &mut ChangeSink,
) -> Result<usize, ErrorKind> {
    apply_op(op, rules, &mut EncodedRows { before, after }, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(
        op: u8,
        before: Option<&[u8]>,
        after: Option<&[u8]>,
        mode: UpdateMode,
    ) -> Result<Vec<(RowKind, Vec<u8>)>, String> {
        let mut out = ChangeSink::new();
        out.push(RowKind::Insert, b"earlier");
        let r = split_envelope(op, before, after, mode, &"rec #3", &mut out);
        let changes: Vec<_> = out.iter().skip(1).map(|(k, r)| (k, r.to_vec())).collect();
        match r {
            Ok(n) => {
                assert_eq!(n, changes.len());
                Ok(changes)
            }
            Err(e) => {
                assert_eq!(out.len(), 1, "nothing appended on error");
                assert_eq!(out.data(), b"earlier");
                Err(e.to_string())
            }
        }
    }

    #[test]
    fn every_op() {
        let (b, a) = (Some(&b"old"[..]), Some(&b"new"[..]));
        let r = UpdateMode::Retract;
        let ins = vec![(RowKind::Insert, b"new".to_vec())];
        assert_eq!(split(b'c', None, a, r).unwrap(), ins);
        assert_eq!(split(b'r', b, a, r).unwrap(), ins);
        assert_eq!(
            split(b'u', b, a, r).unwrap(),
            vec![
                (RowKind::UpdateBefore, b"old".to_vec()),
                (RowKind::UpdateAfter, b"new".to_vec())
            ]
        );
        assert_eq!(
            split(b'u', b, a, UpdateMode::DeleteInsert).unwrap(),
            vec![
                (RowKind::Delete, b"old".to_vec()),
                (RowKind::Insert, b"new".to_vec())
            ]
        );
        let del = vec![(RowKind::Delete, b"old".to_vec())];
        assert_eq!(split(b'd', b, None, r).unwrap(), del);
        assert_eq!(split(b'd', b, a, UpdateMode::DeleteInsert).unwrap(), del);
    }

    #[test]
    fn errors_name_position_and_reason() {
        let row = Some(&b"x"[..]);
        let r = UpdateMode::Retract;
        let e = split(b'u', None, row, r).unwrap_err();
        assert!(e.starts_with("rec #3: The \"before\" field of UPDATE message is null"));
        assert!(e.contains("REPLICA IDENTITY to FULL"));
        let e = split(b'd', None, None, r).unwrap_err();
        assert!(e.starts_with("rec #3: The \"before\" field of DELETE message is null"));
        let e = split(b'u', row, None, r).unwrap_err();
        assert_eq!(e, "rec #3: The \"after\" field of UPDATE message is null.");
        let e = split(b'c', None, None, r).unwrap_err();
        assert_eq!(e, "rec #3: The \"after\" field of INSERT message is null.");
        let e = split(b'r', row, None, r).unwrap_err();
        assert_eq!(e, "rec #3: The \"after\" field of READ message is null.");
        let e = split(b't', row, row, r).unwrap_err();
        assert!(e.starts_with("rec #3: unknown \"op\" value \"t\""), "{e}");
        let e = split(0, row, row, r).unwrap_err();
        assert!(e.contains("byte 0x00"), "{e}");
    }

    #[test]
    fn upsert_updates_need_no_before() {
        let after = Some(&b"new"[..]);
        for (mode, kind) in [
            (UpdateMode::Retract, RowKind::UpdateAfter),
            (UpdateMode::DeleteInsert, RowKind::Insert),
        ] {
            let mut out = ChangeSink::new();
            let rules = Rules { mode, upsert: true };
            assert_eq!(split_with(b'u', None, after, rules, &mut out), Ok(1));
            assert_eq!(out.get(0), Some((kind, &b"new"[..])));
            // A delete still needs its (key) image.
            let e = split_with(b'd', None, None, rules, &mut out).unwrap_err();
            assert_eq!(e, ErrorKind::MissingBefore("DELETE"));
        }
    }
}
