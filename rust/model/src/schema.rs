//! Declared schemas: the column types a row may hold and the byte layout they imply.
//!
//! Types are written as in Flink SQL (`INT`, `DECIMAL(10, 2)`, `TIMESTAMP(3)`), so a schema can be
//! passed from Java as plain JSON and read in error messages as the user declared it.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A column type. Each maps to one fixed-width slot in the row encoding (see [`crate::row`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum DataType {
    /// `BOOLEAN`, one byte.
    Boolean,
    /// `TINYINT`, 8-bit signed.
    TinyInt,
    /// `SMALLINT`, 16-bit signed.
    SmallInt,
    /// `INT`, 32-bit signed.
    Int,
    /// `BIGINT`, 64-bit signed.
    BigInt,
    /// `FLOAT`, IEEE 754 single.
    Float,
    /// `DOUBLE`, IEEE 754 double.
    Double,
    /// `DECIMAL(p, s)`, stored as its unscaled integer (i64 up to p = 18, i128 up to p = 38).
    Decimal {
        /// Total digits, 1..=38.
        precision: u8,
        /// Digits after the point, 0..=precision.
        scale: u8,
    },
    /// `STRING` (any `VARCHAR`/`CHAR`), UTF-8.
    String,
    /// `BYTES` (any `VARBINARY`/`BINARY`).
    Bytes,
    /// `DATE`, days since 1970-01-01.
    Date,
    /// `TIME(p)`: milliseconds of the day, as Flink's runtime holds TIME (at most 3 fractional
    /// digits are kept whatever `p` says).
    Time {
        /// Declared fractional-second digits, 0..=9.
        precision: u8,
    },
    /// `TIMESTAMP(p)` without time zone: microseconds since the epoch for p <= 6, nanoseconds
    /// (years 1677..2262) for p > 6.
    Timestamp {
        /// Fractional-second digits, 0..=9.
        precision: u8,
    },
    /// `TIMESTAMP_LTZ(p)` (`TIMESTAMP(p) WITH LOCAL TIME ZONE`): an instant, stored like
    /// `TIMESTAMP(p)` as microseconds (p <= 6) or nanoseconds (p > 6) since the epoch in UTC.
    TimestampLtz {
        /// Fractional-second digits, 0..=9.
        precision: u8,
    },
}

impl DataType {
    /// Width in bytes of this type's fixed slot.
    pub fn slot_width(self) -> usize {
        match self {
            DataType::Boolean | DataType::TinyInt => 1,
            DataType::SmallInt => 2,
            DataType::Int | DataType::Float | DataType::Date | DataType::Time { .. } => 4,
            DataType::BigInt
            | DataType::Double
            | DataType::Timestamp { .. }
            | DataType::TimestampLtz { .. } => 8,
            DataType::Decimal { precision, .. } if precision <= 18 => 8,
            DataType::Decimal { .. } => 16,
            // (offset u32, length u32) into the row's variable tail.
            DataType::String | DataType::Bytes => 8,
        }
    }

    /// True when values live in the variable tail.
    pub fn is_variable(self) -> bool {
        matches!(self, DataType::String | DataType::Bytes)
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataType::Boolean => f.write_str("BOOLEAN"),
            DataType::TinyInt => f.write_str("TINYINT"),
            DataType::SmallInt => f.write_str("SMALLINT"),
            DataType::Int => f.write_str("INT"),
            DataType::BigInt => f.write_str("BIGINT"),
            DataType::Float => f.write_str("FLOAT"),
            DataType::Double => f.write_str("DOUBLE"),
            DataType::Decimal { precision, scale } => write!(f, "DECIMAL({precision}, {scale})"),
            DataType::String => f.write_str("STRING"),
            DataType::Bytes => f.write_str("BYTES"),
            DataType::Date => f.write_str("DATE"),
            DataType::Time { precision } => write!(f, "TIME({precision})"),
            DataType::Timestamp { precision } => write!(f, "TIMESTAMP({precision})"),
            DataType::TimestampLtz { precision } => write!(f, "TIMESTAMP_LTZ({precision})"),
        }
    }
}

impl From<DataType> for String {
    fn from(t: DataType) -> String {
        t.to_string()
    }
}

impl TryFrom<String> for DataType {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl FromStr for DataType {
    type Err = String;

    /// Parses Flink SQL spellings: `INT`/`INTEGER`, `VARCHAR(n)`, `DECIMAL(p, s)`, `TIME(p)`,
    /// `TIMESTAMP(p)`, `TIMESTAMP_LTZ(p)` or `TIMESTAMP(p) WITH LOCAL TIME ZONE`, ...
    fn from_str(s: &str) -> Result<Self, String> {
        let upper = s.trim().to_ascii_uppercase();
        let words: Vec<&str> = upper.split_whitespace().collect();
        let norm = words.join(" ");
        if let Some(ts) = norm.strip_suffix(" WITH LOCAL TIME ZONE") {
            return match ts.parse::<DataType>() {
                Ok(DataType::Timestamp { precision }) if ts.starts_with("TIMESTAMP") => {
                    Ok(DataType::TimestampLtz { precision })
                }
                _ => Err(format!("unsupported type '{s}'")),
            };
        }
        let (name, args) = match norm.find('(') {
            Some(i) if norm.ends_with(')') => {
                (norm[..i].trim(), parse_args(&norm[i + 1..norm.len() - 1])?)
            }
            Some(_) => return Err(format!("unbalanced parentheses in type '{s}'")),
            None => (norm.as_str(), Vec::new()),
        };
        let arity_err = || format!("wrong number of parameters in type '{s}'");
        let t = match (name, args.as_slice()) {
            ("BOOLEAN", []) => DataType::Boolean,
            ("TINYINT", []) => DataType::TinyInt,
            ("SMALLINT", []) => DataType::SmallInt,
            ("INT" | "INTEGER", []) => DataType::Int,
            ("BIGINT", []) => DataType::BigInt,
            ("FLOAT", []) => DataType::Float,
            ("DOUBLE", []) => DataType::Double,
            ("STRING" | "VARCHAR" | "CHAR", [] | [_]) => DataType::String,
            ("BYTES" | "VARBINARY" | "BINARY", [] | [_]) => DataType::Bytes,
            ("DATE", []) => DataType::Date,
            ("DECIMAL" | "NUMERIC", []) => DataType::Decimal {
                precision: 10,
                scale: 0,
            },
            ("DECIMAL" | "NUMERIC", [p]) => decimal(*p, 0, s)?,
            ("DECIMAL" | "NUMERIC", [p, sc]) => decimal(*p, *sc, s)?,
            ("TIME", []) => DataType::Time { precision: 0 },
            ("TIMESTAMP", []) => DataType::Timestamp { precision: 6 },
            ("TIMESTAMP_LTZ", []) => DataType::TimestampLtz { precision: 6 },
            ("TIME", [p]) => DataType::Time {
                precision: fraction_digits(*p, s)?,
            },
            ("TIMESTAMP", [p]) => DataType::Timestamp {
                precision: fraction_digits(*p, s)?,
            },
            ("TIMESTAMP_LTZ", [p]) => DataType::TimestampLtz {
                precision: fraction_digits(*p, s)?,
            },
            ("DECIMAL" | "NUMERIC" | "TIME" | "TIMESTAMP" | "TIMESTAMP_LTZ", _) => {
                return Err(arity_err())
            }
            _ => return Err(format!("unsupported type '{s}'")),
        };
        Ok(t)
    }
}

fn parse_args(inner: &str) -> Result<Vec<u32>, String> {
    inner
        .split(',')
        .map(|a| {
            a.trim()
                .parse::<u32>()
                .map_err(|_| format!("bad type parameter '{a}'"))
        })
        .collect()
}

/// A TIME or TIMESTAMP precision, 0..=9.
fn fraction_digits(p: u32, src: &str) -> Result<u8, String> {
    if p > 9 {
        return Err(format!("invalid precision in '{src}' (0 <= p <= 9)"));
    }
    Ok(p as u8)
}

fn decimal(p: u32, s: u32, src: &str) -> Result<DataType, String> {
    if !(1..=38).contains(&p) || s > p {
        return Err(format!(
            "invalid precision/scale in '{src}' (1 <= p <= 38, 0 <= s <= p)"
        ));
    }
    Ok(DataType::Decimal {
        precision: p as u8,
        scale: s as u8,
    })
}

/// One column: its name, type and nullability.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Field {
    /// Column name, as in the Debezium `before`/`after` objects.
    pub name: String,
    /// Declared type.
    #[serde(rename = "type")]
    pub data_type: DataType,
    /// Whether the column may be null (default true, as in SQL).
    #[serde(default = "default_nullable")]
    pub nullable: bool,
}

fn default_nullable() -> bool {
    true
}

impl Field {
    /// A nullable column.
    pub fn new(name: &str, data_type: DataType) -> Field {
        Field {
            name: name.to_string(),
            data_type,
            nullable: true,
        }
    }

    /// A `NOT NULL` column.
    pub fn not_null(name: &str, data_type: DataType) -> Field {
        Field {
            name: name.to_string(),
            data_type,
            nullable: false,
        }
    }
}

/// An ordered list of columns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schema {
    /// The columns, in row order.
    pub fields: Vec<Field>,
}

impl Schema {
    /// A schema of these fields.
    pub fn new(fields: Vec<Field>) -> Schema {
        Schema { fields }
    }

    /// Number of columns.
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// True for a schema with no column.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Position of the column named `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }

    /// Positions of the named columns, or an error naming the first unknown one.
    pub fn indices_of<S: AsRef<str>>(&self, names: &[S]) -> Result<Vec<usize>, String> {
        names
            .iter()
            .map(|n| {
                self.index_of(n.as_ref()).ok_or_else(|| {
                    format!(
                        "unknown column '{}' (schema has {})",
                        n.as_ref(),
                        self.column_names()
                    )
                })
            })
            .collect()
    }

    /// The sub-schema of the columns at `indices`, in that order (a key's schema).
    pub fn project(&self, indices: &[usize]) -> Schema {
        Schema::new(indices.iter().map(|&i| self.fields[i].clone()).collect())
    }

    fn column_names(&self) -> String {
        let names: Vec<&str> = self.fields.iter().map(|f| f.name.as_str()).collect();
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_flink_spellings() {
        let cases = [
            ("int", DataType::Int),
            ("INTEGER", DataType::Int),
            ("VARCHAR(25)", DataType::String),
            (
                "decimal(10, 2)",
                DataType::Decimal {
                    precision: 10,
                    scale: 2,
                },
            ),
            (
                "DECIMAL(38,10)",
                DataType::Decimal {
                    precision: 38,
                    scale: 10,
                },
            ),
            ("TIMESTAMP(3)", DataType::Timestamp { precision: 3 }),
            ("TIMESTAMP", DataType::Timestamp { precision: 6 }),
            ("BYTES", DataType::Bytes),
            ("DATE", DataType::Date),
            ("tinyint", DataType::TinyInt),
            ("SMALLINT", DataType::SmallInt),
            ("TIME", DataType::Time { precision: 0 }),
            ("TIME(3)", DataType::Time { precision: 3 }),
            ("TIMESTAMP_LTZ(3)", DataType::TimestampLtz { precision: 3 }),
            ("TIMESTAMP_LTZ", DataType::TimestampLtz { precision: 6 }),
            (
                "timestamp(9)  with local time zone",
                DataType::TimestampLtz { precision: 9 },
            ),
            (
                "TIMESTAMP WITH LOCAL TIME ZONE",
                DataType::TimestampLtz { precision: 6 },
            ),
        ];
        for (s, t) in cases {
            assert_eq!(s.parse::<DataType>().unwrap(), t, "{s}");
            assert_eq!(t.to_string().parse::<DataType>().unwrap(), t);
        }
        let shown = |s: &str| s.parse::<DataType>().unwrap().to_string();
        assert_eq!(shown("TIME"), "TIME(0)");
        assert_eq!(
            shown("TIMESTAMP(3) WITH LOCAL TIME ZONE"),
            "TIMESTAMP_LTZ(3)"
        );
        assert_eq!(shown("TINYINT"), "TINYINT");
        assert_eq!(shown("SMALLINT"), "SMALLINT");
    }

    #[test]
    fn rejects_bad_types() {
        for s in [
            "DECIMAL(39, 2)",
            "DECIMAL(5, 6)",
            "TIMESTAMP(10)",
            "TIME(10)",
            "TIMESTAMP_LTZ(3, 1)",
            "TIME WITH LOCAL TIME ZONE",
            "DATE WITH LOCAL TIME ZONE",
            "MAP<INT,INT>",
            "INT(",
            "DECIMAL(a)",
        ] {
            assert!(s.parse::<DataType>().is_err(), "{s}");
        }
    }

    #[test]
    fn schema_from_json() {
        let s: Schema = serde_json::from_str(
            r#"{"fields":[{"name":"id","type":"INT","nullable":false},{"name":"amount","type":"DECIMAL(10, 2)"}]}"#,
        )
        .unwrap();
        assert_eq!(s.fields[0], Field::not_null("id", DataType::Int));
        assert_eq!(
            s.fields[1],
            Field::new(
                "amount",
                DataType::Decimal {
                    precision: 10,
                    scale: 2
                }
            )
        );
        assert_eq!(s.indices_of(&["amount", "id"]).unwrap(), vec![1, 0]);
        assert!(s.indices_of(&["nope"]).unwrap_err().contains("nope"));
    }
}
