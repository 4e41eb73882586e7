//! What the users/domains benchmarks share: the join's declaration, how records are spread over
//! key groups, and measuring by CPU time (`cdcjoin_workload::cpu_time`).

use cdcjoin_join::{JoinSpec, JoinType, KeyGroupRange, RetractionPolicy, SideSpec};
pub use cdcjoin_workload::cpu_time::measure;
use cdcjoin_workload::{domains_schema, users_schema};

/// Key groups of the benchmarks' engines: Flink's default maximum parallelism.
pub const MAX_KG: u16 = 128;

/// A LEFT join of users and domains on `users.id = domains.user_id`, both sides keyed by `id`,
/// owning all [`MAX_KG`] key groups.
pub fn spec() -> JoinSpec {
    let side = |schema, jk: &str| SideSpec {
        schema,
        join_key: vec![jk.into()],
        primary_key: Some(vec!["id".into()]),
        ttl_ms: None,
        exact_retractions: false,
    };
    JoinSpec {
        left: side(users_schema(), "id"),
        right: side(domains_schema(), "user_id"),
        join_type: JoinType::Left,
        absent_retraction: RetractionPolicy::Fail,
        key_groups: KeyGroupRange {
            start: 0,
            end: MAX_KG - 1,
        },
    }
}

/// A key group independent of the engine's table hash (Flink uses murmur of the key's hashCode).
pub fn key_group(key: &[u8]) -> u16 {
    let mut h = std::hash::DefaultHasher::new();
    std::hash::Hash::hash(key, &mut h);
    (std::hash::Hasher::finish(&h) % MAX_KG as u64) as u16
}
