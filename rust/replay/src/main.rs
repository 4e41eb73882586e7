//! `cdcjoin-replay`: the native decoder and join on a Debezium trace, printing the changelog.
//!
//! - `cdcjoin-replay vector tests/vectors/users_domains.json --join left` replays a test vector and
//!   checks it against the vector's expected changelog;
//! - `cdcjoin-replay generate --users 1000 --domains 5000 --events 20000 --join left` replays a
//!   generated users/domains trace (the seeds' example) and prints a summary.

use cdcjoin_join::Side;
use cdcjoin_replay::{parse_join_type, Pipeline, Table, Vector};
use cdcjoin_workload::{domains_schema, generate, users_schema, Topic, WorkloadConfig};
use clap::{Parser, Subcommand};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser)]
#[command(about = "Replay Debezium traces through the native decoder and changelog join")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Replay a shared test vector and compare with its expected changelog.
    Vector {
        /// The vector file.
        path: std::path::PathBuf,
        /// INNER, LEFT, RIGHT or FULL.
        #[arg(long, default_value = "left")]
        join: String,
    },
    /// Replay a generated users/domains trace.
    Generate {
        #[arg(long, default_value_t = 1_000)]
        users: usize,
        #[arg(long, default_value_t = 5_000)]
        domains: usize,
        #[arg(long, default_value_t = 20_000)]
        events: usize,
        /// INNER, LEFT, RIGHT or FULL.
        #[arg(long, default_value = "left")]
        join: String,
        /// Print at most this many changelog rows.
        #[arg(long, default_value_t = 40)]
        print: usize,
    },
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Vector { path, join } => vector(&path, &join),
        Command::Generate {
            users,
            domains,
            events,
            join,
            print,
        } => replay_generated(
            WorkloadConfig {
                users,
                domains,
                events,
                seed: 42,
            },
            &join,
            print,
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn vector(path: &std::path::Path, join: &str) -> Result<(), Box<dyn std::error::Error>> {
    let v: Vector = serde_json::from_slice(&std::fs::read(path)?)?;
    let jt = parse_join_type(join)?;
    println!("{}\n", v.description);
    let got = v.run(jt)?;
    got.iter().for_each(|r| println!("{r}"));
    let key = join.to_ascii_uppercase();
    match v.expected.get(&key) {
        Some(want) if *want == got => println!("\n{key} JOIN: {} rows, as expected", got.len()),
        Some(_) => {
            return Err(format!("{key} JOIN: the changelog differs from the expected one").into())
        }
        None => println!(
            "\n{key} JOIN: {} rows (no expectation in the vector)",
            got.len()
        ),
    }
    Ok(())
}

fn replay_generated(
    cfg: WorkloadConfig,
    join: &str,
    print: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let table = |name: &str, schema, jk: &str| Table::new(name, schema, &[jk], &["id"]);
    let mut p = Pipeline::new(
        table("users", users_schema(), "id"),
        table("domains", domains_schema(), "user_id"),
        parse_join_type(join)?,
    )?;
    let trace = generate(&cfg);
    let bytes: usize = trace.iter().map(|e| e.json.len()).sum();
    println!(
        "users JOIN domains ({join}) over {} Debezium events ({:.1} MB)",
        trace.len(),
        bytes as f64 / 1e6
    );
    let (start, mut printed, mut rows) = (Instant::now(), 0, 0u64);
    for e in &trace {
        let side = if e.topic == Topic::Users {
            Side::Left
        } else {
            Side::Right
        };
        for r in p.process(side, e.offset, &e.json)? {
            rows += 1;
            if printed < print {
                println!("{r}");
                printed += 1;
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let s = p.summary();
    let size = p.engine().state_size();
    println!("... ({} more rows)\n", rows.saturating_sub(printed as u64));
    println!(
        "events in       {:>12}   ({} tombstones)",
        s.messages, s.tombstones
    );
    println!(
        "changes joined  {:>12}   (updates split into retraction + insertion)",
        s.changes
    );
    println!("rows out        {:>12}", s.join.rows_out);
    println!(
        "throughput      {:>12.0} events/s   (one event per call; batches are faster)",
        s.messages as f64 / secs
    );
    println!(
        "state           {:>12} rows, {} keys, {:.1} MB",
        size.rows,
        size.keys,
        size.heap_bytes as f64 / 1e6
    );
    Ok(())
}
