//! Changes the join refuses without failing the batch, and the messages that say why.
//!
//! A row may arrive with *unavailable* columns (see `cdcjoin_model::row`): values that exist at
//! the source but that the change does not carry, such as Debezium's placeholder for an unchanged
//! TOASTed value, or the non-key columns of a delete that names its row by primary key only. The
//! join never stores or emits them. On a side with a primary key the stored row of the same
//! primary key holds the values: an accumulation takes them from it ([`fill`]), and a retraction
//! retracts the stored row anyway. Everything else is refused ([`Refusal`]), and the refusal goes
//! to the output (see [`crate::batch`]) so that the caller's bad-record policy decides: guessing a
//! value, or storing the placeholder as one, would make the result silently wrong.

use crate::spec::{ResolvedSide, Side, StateLayout};
use cdcjoin_model::{KeyProjection, RowKind, RowRef, RowWriter, Value};

/// Why a change with unavailable columns is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A join key column is unavailable: the row's key, and so its state, is unknown.
    JoinKey,
    /// A primary key column is unavailable: the stored row it changes cannot be found.
    PrimaryKey,
    /// The side has no primary key: no stored row is known to be the same row.
    NoPrimaryKey,
    /// An accumulation found no stored row of its primary key to take the values from.
    NothingStored,
}

/// How a row prints an unavailable column in messages.
const UNAVAILABLE: &str = "<unavailable>";

/// What an unavailable column is, for messages.
const WHAT_UNAVAILABLE_IS: &str = "the change does not carry the value, e.g. Debezium's \
     placeholder for an unchanged TOASTed value, or a delete by key";

/// The refusal that `side`'s declaration alone implies for a change whose unavailable columns are
/// `unavailable`, whatever state holds; `None` when the change may go on.
pub(crate) fn refusal(side: &ResolvedSide, unavailable: &[usize]) -> Option<Refusal> {
    let hits = |key: &KeyProjection| unavailable.iter().any(|c| key.columns().contains(c));
    if unavailable.is_empty() {
        None
    } else if hits(&side.join_key) {
        Some(Refusal::JoinKey)
    } else if side.primary_key.as_ref().is_some_and(hits) {
        Some(Refusal::PrimaryKey)
    } else if side.layout == StateLayout::NoUniqueKey {
        Some(Refusal::NoPrimaryKey)
    } else {
        None
    }
}

/// Writes `row` with each unavailable column taken from `stored` (a row of the same side and
/// primary key) to `out`.
pub(crate) fn fill(side: &ResolvedSide, row: &RowRef<'_>, stored: &RowRef<'_>, out: &mut Vec<u8>) {
    let mut w = RowWriter::new(&side.row_layout, out);
    for i in 0..side.row_layout.arity() {
        let from = if row.is_unavailable(i) { stored } else { row };
        w.copy_from(from, i);
    }
    w.finish();
}

/// `row` printed as Flink prints rows (`+U[7, null, x]`), an unavailable column as
/// `<unavailable>`.
pub(crate) fn print_row(kind: RowKind, row: &RowRef<'_>) -> String {
    let parts: Vec<String> = (0..row.layout().arity())
        .map(|i| match row.is_unavailable(i) {
            true => UNAVAILABLE.to_string(),
            false => Value::read(row, i).to_string(),
        })
        .collect();
    format!("{}[{}]", kind.short_string(), parts.join(", "))
}

/// How messages name a side of the two-table join.
pub(crate) fn side_name(side: Side) -> &'static str {
    match side {
        Side::Left => "left",
        Side::Right => "right",
    }
}

/// The message of a refusal of `row` (with unavailable columns `unavailable`) on the input named
/// `input` (`left`, `right`, or `input 2` of a multi-way join), whose declaration is `side`: the
/// input, the row, the columns and the reason.
pub(crate) fn message(
    input: &str,
    side: &ResolvedSide,
    kind: RowKind,
    row: &RowRef<'_>,
    unavailable: &[usize],
    why: Refusal,
) -> String {
    let in_key = |key: &KeyProjection| -> Vec<usize> {
        let cols = unavailable.iter().filter(|c| key.columns().contains(c));
        cols.copied().collect()
    };
    let reason = match (why, side.primary_key.as_ref()) {
        (Refusal::JoinKey, _) => format!(
            "{}: the row's join key, and so its state, is unknown",
            columns(side, &in_key(&side.join_key), " of the join key")
        ),
        (Refusal::PrimaryKey, Some(pk)) => format!(
            "{}: the stored row it changes cannot be found",
            columns(side, &in_key(pk), " of the primary key")
        ),
        (Refusal::NothingStored, Some(pk)) => format!(
            "{} ({WHAT_UNAVAILABLE_IS}), and no row with primary key {} is stored to take it \
             from (first sight of the key, or expired by TTL)",
            columns(side, unavailable, ""),
            print_key(pk, row)
        ),
        _ => format!(
            "{} ({WHAT_UNAVAILABLE_IS}), and a side without a primary key cannot fill unavailable \
             columns: no stored row is known to be the same row",
            columns(side, unavailable, "")
        ),
    };
    format!("{input} row {}: {reason}", print_row(kind, row))
}

/// `column 'a'{of} is unavailable` or `columns 'a', 'b'{of} are unavailable`.
fn columns(side: &ResolvedSide, cols: &[usize], of: &str) -> String {
    let names: Vec<String> = cols
        .iter()
        .map(|&c| format!("'{}'", side.columns[c]))
        .collect();
    match names.len() {
        1 => format!("column {}{of} is unavailable", names[0]),
        _ => format!("columns {}{of} are unavailable", names.join(", ")),
    }
}

/// The values of `key`'s columns of `row`, as `[7]`.
fn print_key(key: &KeyProjection, row: &RowRef<'_>) -> String {
    let values: Vec<String> = key
        .columns()
        .iter()
        .map(|&c| Value::read(row, c).to_string())
        .collect();
    format!("[{}]", values.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{JoinSpec, JoinType, KeyGroupRange, RetractionPolicy, SideSpec};
    use cdcjoin_model::{DataType, Field, RowLayout, Schema};

    /// `(id INT NOT NULL, k INT, body STRING, note STRING)` joined on `k`, keyed by `id` if `pk`.
    fn side(pk: bool) -> ResolvedSide {
        let spec = SideSpec {
            schema: Schema::new(vec![
                Field::not_null("id", DataType::Int),
                Field::new("k", DataType::Int),
                Field::new("body", DataType::String),
                Field::new("note", DataType::String),
            ]),
            join_key: vec!["k".into()],
            primary_key: pk.then(|| vec!["id".into()]),
            ttl_ms: None,
            exact_retractions: false,
        };
        let [left, _] = JoinSpec {
            left: spec.clone(),
            right: spec,
            join_type: JoinType::Inner,
            absent_retraction: RetractionPolicy::Ignore,
            key_groups: KeyGroupRange { start: 0, end: 0 },
        }
        .resolve()
        .unwrap();
        left
    }

    /// A row `(7, 1, body, note)`, the columns in `missing` unavailable.
    fn row(layout: &RowLayout, body: &str, missing: &[usize]) -> Vec<u8> {
        let mut buf = Vec::new();
        let mut w = RowWriter::new(layout, &mut buf);
        let text = |s: &str| Value::String(s.into());
        let values = [Value::Int(7), Value::Int(1), text(body), text("n")];
        for (i, v) in values.iter().enumerate() {
            match missing.contains(&i) {
                true => w.unavailable(),
                false => v.write(&mut w),
            }
        }
        w.finish();
        buf
    }

    #[test]
    fn finds_unavailable_columns() {
        let s = side(true);
        let l = &s.row_layout;
        let bytes = row(l, "b", &[]);
        assert!(RowRef::new(l, &bytes).unavailable_columns().is_empty());
        let bytes = row(l, "b", &[1, 3]);
        assert_eq!(RowRef::new(l, &bytes).unavailable_columns(), vec![1, 3]);
    }

    #[test]
    fn refusals_follow_the_keys() {
        let (pk, no_pk) = (side(true), side(false));
        assert_eq!(refusal(&pk, &[]), None);
        assert_eq!(refusal(&no_pk, &[]), None);
        assert_eq!(refusal(&pk, &[2, 3]), None, "filled from the stored row");
        assert_eq!(refusal(&pk, &[1, 2]), Some(Refusal::JoinKey));
        assert_eq!(refusal(&pk, &[0]), Some(Refusal::PrimaryKey));
        assert_eq!(refusal(&no_pk, &[2]), Some(Refusal::NoPrimaryKey));
        assert_eq!(refusal(&no_pk, &[1]), Some(Refusal::JoinKey));
    }

    #[test]
    fn fills_unavailable_columns_from_the_stored_row() {
        let s = side(true);
        let l = &s.row_layout;
        let (new, stored) = (row(l, "ignored", &[2]), row(l, "kept", &[]));
        let mut out = vec![9]; // appends
        fill(
            &s,
            &RowRef::new(l, &new),
            &RowRef::new(l, &stored),
            &mut out,
        );
        assert_eq!(out[1..], stored[..]);
    }

    #[test]
    fn messages_name_side_row_columns_and_reason() {
        let s = side(true);
        let l = &s.row_layout;
        let bytes = row(l, "b", &[2, 3]);
        let r = RowRef::new(l, &bytes);
        let kind = RowKind::UpdateAfter;
        assert_eq!(
            message("right", &s, kind, &r, &[2, 3], Refusal::NothingStored),
            "right row +U[7, 1, <unavailable>, <unavailable>]: columns 'body', 'note' are \
             unavailable (the change does not carry the value, e.g. Debezium's placeholder for an \
             unchanged TOASTed value, or a delete by key), and no row with primary key [7] is \
             stored to take it from (first sight of the key, or expired by TTL)"
        );
        let bytes = row(l, "b", &[1, 3]);
        let r = RowRef::new(l, &bytes);
        assert_eq!(
            message(
                side_name(Side::Left),
                &s,
                RowKind::Delete,
                &r,
                &[1, 3],
                Refusal::JoinKey
            ),
            "left row -D[7, <unavailable>, b, <unavailable>]: column 'k' of the join key is \
             unavailable: the row's join key, and so its state, is unknown"
        );
        let no_pk = side(false);
        let msg = message("input 2", &no_pk, kind, &r, &[3], Refusal::NoPrimaryKey);
        assert!(msg.starts_with("input 2 row +U[7, <unavailable>, b, <unavailable>]: "));
        assert!(
            msg.ends_with("a side without a primary key cannot fill unavailable columns: no stored row is known to be the same row"),
            "{msg}"
        );
    }
}
