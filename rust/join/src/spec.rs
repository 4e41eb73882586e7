//! The join as the user declares it, and what the declaration implies for state.

use crate::group::{EntryLayout, RowIdentity};
use cdcjoin_model::{KeyProjection, RowLayout, Schema};
use serde::{Deserialize, Serialize};

/// Which input a record comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Side {
    /// The first (left) input.
    Left = 0,
    /// The second (right) input.
    Right = 1,
}

impl Side {
    /// The other input.
    pub fn other(self) -> Side {
        match self {
            Side::Left => Side::Right,
            Side::Right => Side::Left,
        }
    }

    /// Parses the wire byte (0 left, 1 right).
    pub fn from_byte(b: u8) -> Option<Side> {
        match b {
            0 => Some(Side::Left),
            1 => Some(Side::Right),
            _ => None,
        }
    }
}

/// SQL join type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum JoinType {
    /// Only matched pairs.
    Inner,
    /// Every left row, null-padded when unmatched.
    Left,
    /// Every right row, null-padded when unmatched.
    Right,
    /// Every row of both sides.
    Full,
}

impl JoinType {
    /// Whether `side` is an outer side (its unmatched rows are emitted null-padded).
    pub fn is_outer(self, side: Side) -> bool {
        matches!(
            (self, side),
            (JoinType::Full, _) | (JoinType::Left, Side::Left) | (JoinType::Right, Side::Right)
        )
    }
}

/// What to do with a retraction (`-U`/`-D`) of a row that is not in state (never inserted, or
/// expired by TTL).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum RetractionPolicy {
    /// Count it (see [`crate::JoinStats`]) and emit nothing.
    #[default]
    Ignore,
    /// Fail the batch with [`crate::JoinError::AbsentRetraction`].
    Fail,
}

/// One input of the join.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideSpec {
    /// Columns of this input's rows.
    pub schema: Schema,
    /// Equi-join key columns, pairwise of the same type as the other side's.
    pub join_key: Vec<String>,
    /// Primary (unique) key columns, if the input has one.
    #[serde(default)]
    pub primary_key: Option<Vec<String>>,
    /// Idle-state retention in milliseconds (as `table.exec.state.ttl`); none keeps rows forever.
    #[serde(default)]
    pub ttl_ms: Option<u64>,
    /// Whether a retraction retracts the stored row of its primary key only when it is that very
    /// row (else it is counted as absent). Set on a side fed by another join (`crate::chain`):
    /// when a row moves between that join's keys, its `-U` and `+U` come from two of its subtasks
    /// and may arrive in either order; a late `-U` of the old row must not retract the new one.
    #[serde(default)]
    pub exact_retractions: bool,
}

/// A key group range `[start, end]` (inclusive, as Flink's `KeyGroupRange`) owned by one instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyGroupRange {
    /// First key group.
    pub start: u16,
    /// Last key group (inclusive).
    pub end: u16,
}

impl KeyGroupRange {
    /// Whether `kg` lies in the range.
    pub fn contains(&self, kg: u16) -> bool {
        (self.start..=self.end).contains(&kg)
    }

    /// Position of `kg` (which must lie in the range) among the range's key groups.
    pub fn offset(&self, kg: u16) -> usize {
        (kg - self.start) as usize
    }

    /// Number of key groups.
    pub fn len(&self) -> usize {
        (self.end as usize + 1).saturating_sub(self.start as usize)
    }

    /// True for an empty range.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The whole join declaration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinSpec {
    /// The left input.
    pub left: SideSpec,
    /// The right input.
    pub right: SideSpec,
    /// Inner, left, right or full.
    pub join_type: JoinType,
    /// Policy for retractions of absent rows.
    #[serde(default)]
    pub absent_retraction: RetractionPolicy,
    /// Key groups this instance owns.
    pub key_groups: KeyGroupRange,
}

/// How one side's rows are stored under a join key, chosen from its keys as Flink's
/// `JoinInputSideSpec` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateLayout {
    /// The join key contains the primary key: at most one row per join key.
    JoinKeyContainsUniqueKey,
    /// The input has a primary key: rows under a join key are distinct by primary key.
    HasUniqueKey,
    /// No primary key: rows are a multiset (each distinct row with its count).
    NoUniqueKey,
}

/// A side's declaration resolved against its schema: projections, layout, entry format.
#[derive(Clone, Debug)]
pub struct ResolvedSide {
    /// Column names, in schema order, for messages.
    pub columns: Vec<String>,
    /// Byte layout of this side's rows.
    pub row_layout: RowLayout,
    /// Extracts the join key.
    pub join_key: KeyProjection,
    /// Extracts the primary key, when there is one.
    pub primary_key: Option<KeyProjection>,
    /// How rows are stored.
    pub layout: StateLayout,
    /// Per-row header fields kept in state.
    pub entry: EntryLayout,
    /// Whether unmatched rows of this side are emitted null-padded.
    pub outer: bool,
    /// Retention in milliseconds.
    pub ttl_ms: Option<u64>,
    /// See [`SideSpec::exact_retractions`].
    pub exact_retractions: bool,
}

impl ResolvedSide {
    /// How this side's rows under one join key are told apart: by primary key, or by value on
    /// a multiset side.
    pub fn identity(&self) -> RowIdentity<'_> {
        let key = match self.layout {
            StateLayout::NoUniqueKey => None,
            _ => self.primary_key.as_ref(),
        };
        RowIdentity::new(&self.row_layout, key)
    }
}

impl JoinSpec {
    /// Checks the declaration and resolves both sides.
    pub fn resolve(&self) -> Result<[ResolvedSide; 2], String> {
        let left = resolve_side(&self.left, self.join_type.is_outer(Side::Left))
            .map_err(|e| format!("left input: {e}"))?;
        let right = resolve_side(&self.right, self.join_type.is_outer(Side::Right))
            .map_err(|e| format!("right input: {e}"))?;
        same_key_types(
            [("left", &self.left), ("right", &self.right)],
            [&left, &right],
        )?;
        if self.key_groups.is_empty() {
            return Err("empty key group range".into());
        }
        Ok([left, right])
    }
}

/// Checks that two inputs' join keys (each named for messages, with its declaration and its
/// resolution) pair up column by column with the same types, as an equi-join needs.
pub(crate) fn same_key_types(
    [(a_name, a_spec), (b_name, b_spec)]: [(&str, &SideSpec); 2],
    [a, b]: [&ResolvedSide; 2],
) -> Result<(), String> {
    let (at, bt) = (a.join_key.key_layout(), b.join_key.key_layout());
    if at.arity() != bt.arity() {
        return Err(format!(
            "join keys differ in length: {a_name} has {}, {b_name} has {}",
            at.arity(),
            bt.arity()
        ));
    }
    match (0..at.arity()).find(|&i| at.data_type(i) != bt.data_type(i)) {
        Some(i) => Err(format!(
            "join key column {i} differs in type: {a_name} {} ({}) vs {b_name} {} ({})",
            a_spec.join_key[i],
            at.data_type(i),
            b_spec.join_key[i],
            bt.data_type(i)
        )),
        None => Ok(()),
    }
}

/// Resolves one input's declaration; `outer` when its unmatched rows are emitted null-padded
/// (its rows then keep a match counter).
pub(crate) fn resolve_side(spec: &SideSpec, outer: bool) -> Result<ResolvedSide, String> {
    if spec.join_key.is_empty() {
        return Err("the join key has no column".into());
    }
    let jk = spec.schema.indices_of(&spec.join_key)?;
    let pk = spec
        .primary_key
        .as_ref()
        .map(|pk| spec.schema.indices_of(pk))
        .transpose()?;
    let layout = match &pk {
        Some(pk) if pk.is_empty() => return Err("the primary key has no column".into()),
        Some(pk) if pk.iter().all(|c| jk.contains(c)) => StateLayout::JoinKeyContainsUniqueKey,
        Some(_) => StateLayout::HasUniqueKey,
        None => StateLayout::NoUniqueKey,
    };
    if spec.ttl_ms == Some(0) {
        return Err("ttl_ms must be positive (omit it to keep rows forever)".into());
    }
    Ok(ResolvedSide {
        columns: spec.schema.fields.iter().map(|f| f.name.clone()).collect(),
        row_layout: RowLayout::new(&spec.schema),
        join_key: KeyProjection::new(&spec.schema, &jk),
        primary_key: pk.map(|pk| KeyProjection::new(&spec.schema, &pk)),
        layout,
        entry: EntryLayout::new(
            layout == StateLayout::NoUniqueKey,
            outer,
            spec.ttl_ms.is_some(),
        ),
        outer,
        ttl_ms: spec.ttl_ms,
        exact_retractions: spec.exact_retractions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdcjoin_model::{DataType, Field};

    fn side(pk: Option<&[&str]>) -> SideSpec {
        SideSpec {
            schema: Schema::new(vec![
                Field::not_null("id", DataType::Int),
                Field::new("user_id", DataType::Int),
                Field::new("name", DataType::String),
            ]),
            join_key: vec!["user_id".into()],
            primary_key: pk.map(|p| p.iter().map(|s| s.to_string()).collect()),
            ttl_ms: None,
            exact_retractions: false,
        }
    }

    fn spec(left: SideSpec, right: SideSpec) -> JoinSpec {
        JoinSpec {
            left,
            right,
            join_type: JoinType::Left,
            absent_retraction: RetractionPolicy::Ignore,
            key_groups: KeyGroupRange { start: 0, end: 127 },
        }
    }

    #[test]
    fn layouts_follow_the_keys() {
        let [l, r] = spec(side(Some(&["user_id"])), side(Some(&["id"])))
            .resolve()
            .unwrap();
        assert_eq!(l.layout, StateLayout::JoinKeyContainsUniqueKey);
        assert_eq!(r.layout, StateLayout::HasUniqueKey);
        assert!(l.outer && !r.outer);
        let [n, _] = spec(side(None), side(None)).resolve().unwrap();
        assert_eq!(n.layout, StateLayout::NoUniqueKey);
    }

    #[test]
    fn rejects_bad_declarations() {
        let mut bad = side(None);
        bad.join_key = vec!["nope".into()];
        assert!(spec(bad, side(None))
            .resolve()
            .unwrap_err()
            .contains("left input: unknown column 'nope'"));
        let mut other_type = side(None);
        other_type.join_key = vec!["name".into()];
        assert!(spec(side(None), other_type)
            .resolve()
            .unwrap_err()
            .contains("differs in type"));
    }

    #[test]
    fn outer_sides() {
        use JoinType::*;
        assert!(!Inner.is_outer(Side::Left) && !Inner.is_outer(Side::Right));
        assert!(Left.is_outer(Side::Left) && !Left.is_outer(Side::Right));
        assert!(!Right.is_outer(Side::Left) && Right.is_outer(Side::Right));
        assert!(Full.is_outer(Side::Left) && Full.is_outer(Side::Right));
    }
}
