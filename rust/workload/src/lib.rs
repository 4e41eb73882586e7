//! The seeds' users/domains example as a deterministic Debezium trace.
//!
//! `users(id PK, firstname, lastname)` and `domains(id PK, user_id, domain_name)`, joined on
//! `users.id = domains.user_id`. A trace starts with a snapshot (`op = r`) of both tables and goes on
//! with a realistic mix of changes: inserts, renames, domains moved to another user (a join-key
//! change), domains renumbered (a primary-key change), deletes of domains and of users (with their
//! domains first, as a foreign key would). Envelopes carry a full Postgres `source` block, so decode
//! benchmarks parse what a real connector sends. The same seed always gives the same trace.

#[cfg(feature = "criterion")]
pub mod cpu_time;
mod xorshift;

pub use xorshift::XorShift;

use cdcjoin_model::{DataType, Field, Schema};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;

/// Which table (and Kafka topic) an event belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Topic {
    /// `users`.
    Users,
    /// `domains`.
    Domains,
}

impl Topic {
    /// The table name.
    pub fn name(self) -> &'static str {
        match self {
            Topic::Users => "users",
            Topic::Domains => "domains",
        }
    }
}

/// `users(id INT NOT NULL, firstname STRING, lastname STRING)`.
pub fn users_schema() -> Schema {
    Schema::new(vec![
        Field::not_null("id", DataType::Int),
        Field::new("firstname", DataType::String),
        Field::new("lastname", DataType::String),
    ])
}

/// `domains(id INT NOT NULL, user_id INT, domain_name STRING)`.
pub fn domains_schema() -> Schema {
    Schema::new(vec![
        Field::not_null("id", DataType::Int),
        Field::new("user_id", DataType::Int),
        Field::new("domain_name", DataType::String),
    ])
}

/// One Debezium message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// Its table.
    pub topic: Topic,
    /// Position in its topic (as a Kafka offset).
    pub offset: u64,
    /// The JSON envelope.
    pub json: Vec<u8>,
}

/// Size and shape of a trace.
#[derive(Clone, Debug)]
pub struct WorkloadConfig {
    /// Users in the initial snapshot.
    pub users: usize,
    /// Domains in the initial snapshot (spread over the users).
    pub domains: usize,
    /// Total events, snapshot included.
    pub events: usize,
    /// RNG seed.
    pub seed: u64,
}

impl Default for WorkloadConfig {
    /// 200k users, 1M domains, 5M events: the benchmark's default.
    fn default() -> Self {
        WorkloadConfig {
            users: 200_000,
            domains: 1_000_000,
            events: 5_000_000,
            seed: 42,
        }
    }
}

#[derive(Clone)]
struct Domain {
    id: i32,
    user_id: i32,
    name: String,
}

#[derive(Clone)]
struct User {
    id: i32,
    first: String,
    last: String,
}

/// A live table: rows by position (for uniform picks) plus an index by id.
struct Table<T> {
    rows: Vec<T>,
    pos: HashMap<i32, usize>,
}

impl<T: Clone> Table<T> {
    fn new() -> Self {
        Table {
            rows: Vec::new(),
            pos: HashMap::new(),
        }
    }

    fn insert(&mut self, id: i32, row: T) {
        self.pos.insert(id, self.rows.len());
        self.rows.push(row);
    }

    fn remove(&mut self, id: i32, id_of: impl Fn(&T) -> i32) -> Option<T> {
        let at = self.pos.remove(&id)?;
        let row = self.rows.swap_remove(at);
        if let Some(moved) = self.rows.get(at) {
            self.pos.insert(id_of(moved), at);
        }
        Some(row)
    }
}

/// Generates the trace for `cfg`.
pub fn generate(cfg: &WorkloadConfig) -> Vec<Event> {
    Generator::new(cfg).run()
}

struct Generator {
    rng: StdRng,
    cfg: WorkloadConfig,
    users: Table<User>,
    domains: Table<Domain>,
    /// Domains of each user, for cascading deletes.
    by_user: HashMap<i32, Vec<i32>>,
    next_user: i32,
    next_domain: i32,
    offsets: [u64; 2],
    out: Vec<Event>,
    ts: u64,
}

const FIRST: [&str; 8] = ["Ana", "Bo", "Chen", "Dara", "Eli", "Farah", "Goran", "Hiro"];
const LAST: [&str; 8] = [
    "Garcia", "Kim", "Novak", "Okafor", "Park", "Rossi", "Silva", "Weber",
];
const TLD: [&str; 4] = ["com", "org", "net", "io"];

impl Generator {
    fn new(cfg: &WorkloadConfig) -> Generator {
        Generator {
            rng: StdRng::seed_from_u64(cfg.seed),
            cfg: cfg.clone(),
            users: Table::new(),
            domains: Table::new(),
            by_user: HashMap::new(),
            next_user: 1,
            next_domain: 1,
            offsets: [0, 0],
            out: Vec::with_capacity(cfg.events),
            ts: 1_700_000_000_000,
        }
    }

    fn run(mut self) -> Vec<Event> {
        for _ in 0..self.cfg.users.min(self.cfg.events) {
            self.insert_user("r");
        }
        while self.out.len() < self.cfg.events.min(self.cfg.users + self.cfg.domains) {
            self.insert_domain("r");
        }
        while self.out.len() < self.cfg.events {
            self.change();
        }
        self.out.truncate(self.cfg.events);
        self.out
    }

    fn change(&mut self) {
        match self.rng.gen_range(0..100) {
            0..=9 => self.insert_user("c"),
            10..=29 => self.insert_domain("c"),
            30..=44 => self.rename_user(),
            45..=59 => self.rename_domain(),
            60..=74 => self.move_domain(),
            75..=79 => self.renumber_domain(),
            80..=94 => self.delete_domain(),
            _ => self.delete_user(),
        }
    }

    fn user_json(u: &User) -> String {
        format!(
            r#"{{"id":{},"firstname":{},"lastname":{}}}"#,
            u.id,
            quote(&u.first),
            quote(&u.last)
        )
    }

    fn domain_json(d: &Domain) -> String {
        format!(
            r#"{{"id":{},"user_id":{},"domain_name":{}}}"#,
            d.id,
            d.user_id,
            quote(&d.name)
        )
    }

    fn emit(&mut self, topic: Topic, op: &str, before: Option<String>, after: Option<String>) {
        self.ts += 1;
        let i = topic as usize;
        let snapshot = if op == "r" { "true" } else { "false" };
        let json = format!(
            concat!(
                r#"{{"before":{},"after":{},"source":{{"version":"2.7.3.Final","connector":"postgresql","#,
                r#""name":"shop","ts_ms":{},"snapshot":"{}","db":"shop","sequence":"[\"24023928\",\"24023928\"]","#,
                r#""schema":"public","table":"{}","txId":{},"lsn":{},"xmin":null}},"op":"{}","ts_ms":{},"transaction":null}}"#
            ),
            before.as_deref().unwrap_or("null"),
            after.as_deref().unwrap_or("null"),
            self.ts,
            snapshot,
            topic.name(),
            500 + self.ts % 100_000,
            24_023_928 + self.offsets[i] * 64,
            op,
            self.ts + 3,
        );
        self.out.push(Event {
            topic,
            offset: self.offsets[i],
            json: json.into_bytes(),
        });
        self.offsets[i] += 1;
    }

    fn pick<'a, T>(rng: &mut StdRng, t: &'a Table<T>) -> Option<&'a T> {
        (!t.rows.is_empty()).then(|| &t.rows[rng.gen_range(0..t.rows.len())])
    }

    fn insert_user(&mut self, op: &str) {
        let u = User {
            id: self.next_user,
            first: FIRST[self.rng.gen_range(0..8)].to_string(),
            last: LAST[self.rng.gen_range(0..8)].to_string(),
        };
        self.next_user += 1;
        self.emit(Topic::Users, op, None, Some(Self::user_json(&u)));
        self.users.insert(u.id, u);
    }

    fn insert_domain(&mut self, op: &str) {
        let Some(user_id) = Self::pick(&mut self.rng, &self.users).map(|u| u.id) else {
            return self.insert_user(op);
        };
        let id = self.next_domain;
        self.next_domain += 1;
        let d = Domain {
            id,
            user_id,
            name: format!("site{id}.{}", TLD[id as usize % 4]),
        };
        self.emit(Topic::Domains, op, None, Some(Self::domain_json(&d)));
        self.by_user.entry(user_id).or_default().push(id);
        self.domains.insert(id, d);
    }

    fn rename_user(&mut self) {
        let Some(before) = Self::pick(&mut self.rng, &self.users).cloned() else {
            return;
        };
        let after = User {
            last: LAST[self.rng.gen_range(0..8)].to_string(),
            ..before.clone()
        };
        self.emit(
            Topic::Users,
            "u",
            Some(Self::user_json(&before)),
            Some(Self::user_json(&after)),
        );
        self.users.rows[self.users.pos[&before.id]] = after;
    }

    fn update_domain(&mut self, before: Domain, after: Domain) {
        self.emit(
            Topic::Domains,
            "u",
            Some(Self::domain_json(&before)),
            Some(Self::domain_json(&after)),
        );
        self.domains.remove(before.id, |d| d.id);
        self.unlink(before.user_id, before.id);
        self.by_user
            .entry(after.user_id)
            .or_default()
            .push(after.id);
        self.domains.insert(after.id, after);
    }

    fn unlink(&mut self, user_id: i32, domain_id: i32) {
        if let Some(v) = self.by_user.get_mut(&user_id) {
            v.retain(|&d| d != domain_id);
        }
    }

    fn rename_domain(&mut self) {
        let Some(before) = Self::pick(&mut self.rng, &self.domains).cloned() else {
            return;
        };
        let after = Domain {
            name: format!("www.{}", before.name.trim_start_matches("www.")),
            ..before.clone()
        };
        self.update_domain(before, after);
    }

    fn move_domain(&mut self) {
        let Some(before) = Self::pick(&mut self.rng, &self.domains).cloned() else {
            return;
        };
        let Some(to) = Self::pick(&mut self.rng, &self.users).map(|u| u.id) else {
            return;
        };
        self.update_domain(
            before.clone(),
            Domain {
                user_id: to,
                ..before
            },
        );
    }

    fn renumber_domain(&mut self) {
        let Some(before) = Self::pick(&mut self.rng, &self.domains).cloned() else {
            return;
        };
        let id = self.next_domain;
        self.next_domain += 1;
        self.update_domain(before.clone(), Domain { id, ..before });
    }

    fn delete_domain(&mut self) {
        let Some(d) = Self::pick(&mut self.rng, &self.domains).cloned() else {
            return;
        };
        self.emit(Topic::Domains, "d", Some(Self::domain_json(&d)), None);
        self.domains.remove(d.id, |d| d.id);
        self.unlink(d.user_id, d.id);
    }

    fn delete_user(&mut self) {
        let Some(u) = Self::pick(&mut self.rng, &self.users).cloned() else {
            return;
        };
        for id in self.by_user.remove(&u.id).unwrap_or_default() {
            if let Some(d) = self.domains.remove(id, |d| d.id) {
                self.emit(Topic::Domains, "d", Some(Self::domain_json(&d)), None);
            }
        }
        self.emit(Topic::Users, "d", Some(Self::user_json(&u)), None);
        self.users.remove(u.id, |u| u.id);
    }
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_sized() {
        let cfg = WorkloadConfig {
            users: 50,
            domains: 200,
            events: 2_000,
            seed: 7,
        };
        let a = generate(&cfg);
        assert_eq!(a.len(), 2_000);
        assert_eq!(a, generate(&cfg));
        assert!(a[..50].iter().all(|e| e.topic == Topic::Users));
        for e in &a {
            let v: serde_json::Value = serde_json::from_slice(&e.json).unwrap();
            assert!(["r", "c", "u", "d"].contains(&v["op"].as_str().unwrap()));
        }
        let ops = |op: &str| {
            a.iter()
                .filter(|e| String::from_utf8_lossy(&e.json).contains(&format!(r#""op":"{op}""#)))
                .count()
        };
        assert!(
            ops("u") > 500 && ops("d") > 100 && ops("c") > 100,
            "a mix of changes"
        );
    }
}
