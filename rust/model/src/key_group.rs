//! Flink's key groups, computed in Rust exactly as Flink computes them for a join key.
//!
//! Flink splits a keyed stream into `max_parallelism` *key groups* and gives each subtask a
//! contiguous range of them; a keyed operator's state is written and restored per key group. The
//! Java layer keys the join by `JoinKey`, whose `hashCode` is `java.util.Arrays.hashCode` of the
//! key's bytes (the compact row encoding of the key columns), so a key's group is
//! `KeyGroupRangeAssignment.computeKeyGroupForKeyHash(Arrays.hashCode(key), max_parallelism)`:
//! Flink's `MathUtils.murmurHash` of that hash code, modulo the max parallelism (Flink 2.3.0,
//! `flink-runtime` `KeyGroupRangeAssignment`, `flink-core` `MathUtils`).
//!
//! Computing it here, while decoding, lets the decoder group its output by key group (see
//! [`crate::exchange`]), and it must agree with Flink bit for bit: a change routed to a key group
//! its subtask does not own would be joined against the wrong state, and a savepoint written by a
//! job that computed key groups in Java must restore into one that computes them here. The shared
//! vector file `tests/vectors/key_groups/flink.tsv`, produced by Flink's own Java function, holds
//! both sides to that.

/// Flink's upper bound of the max parallelism (`KeyGroupRangeAssignment.UPPER_BOUND_MAX_PARALLELISM`):
/// key groups are `0..max_parallelism`, so one fits a `u16`.
pub const UPPER_BOUND_MAX_PARALLELISM: u32 = 1 << 15;

/// `java.util.Arrays.hashCode(byte[])`: `31 * h + b` over the bytes read as Java's signed bytes,
/// starting from 1, in Java's wrapping `int` arithmetic.
pub fn java_bytes_hash(bytes: &[u8]) -> i32 {
    bytes.iter().fold(1i32, |h, &b| {
        h.wrapping_mul(31).wrapping_add(b as i8 as i32)
    })
}

/// Flink's `MathUtils.murmurHash(int)`: one 32-bit murmur3 round of the code, its finalizer
/// (`MathUtils.bitMix`) and the absolute value, `i32::MIN` mapping to 0. Never negative.
pub fn flink_murmur_hash(code: i32) -> i32 {
    let mut h = code as u32;
    h = h.wrapping_mul(0xcc9e_2d51);
    h = h.rotate_left(15);
    h = h.wrapping_mul(0x1b87_3593);
    h = h.rotate_left(13);
    h = h.wrapping_mul(5).wrapping_add(0xe654_6b64);
    h ^= 4;
    let mixed = bit_mix(h) as i32;
    if mixed == i32::MIN {
        0
    } else {
        mixed.abs()
    }
}

/// Flink's `MathUtils.bitMix`: murmur3's 32-bit finalizer.
fn bit_mix(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h
}

/// Checks a max parallelism as Flink does (`1..=`[`UPPER_BOUND_MAX_PARALLELISM`]).
pub fn check_max_parallelism(max_parallelism: u32) -> Result<u32, String> {
    if (1..=UPPER_BOUND_MAX_PARALLELISM).contains(&max_parallelism) {
        Ok(max_parallelism)
    } else {
        Err(format!(
            "max parallelism {max_parallelism} is outside Flink's 1..={UPPER_BOUND_MAX_PARALLELISM}"
        ))
    }
}

/// The key group of a join key (its compact encoding) under `max_parallelism`, exactly Flink's
/// `KeyGroupRangeAssignment.assignToKeyGroup(new JoinKey(key), max_parallelism)`. The max
/// parallelism must have passed [`check_max_parallelism`].
pub fn key_group(key: &[u8], max_parallelism: u32) -> u16 {
    debug_assert!(check_max_parallelism(max_parallelism).is_ok());
    (flink_murmur_hash(java_bytes_hash(key)) as u32 % max_parallelism) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values of `Arrays.hashCode(byte[])` and `MathUtils.murmurHash(int)` printed by Java.
    #[test]
    fn java_and_flink_hashes() {
        assert_eq!(java_bytes_hash(&[]), 1);
        assert_eq!(java_bytes_hash(&[1]), 32);
        assert_eq!(java_bytes_hash(&[0xFF]), 30, "bytes are signed");
        assert_eq!(java_bytes_hash(b"hello world, hello"), -1_376_455_077);
        assert_eq!(flink_murmur_hash(0), 593_689_054);
        assert_eq!(flink_murmur_hash(i32::MIN), 1_718_298_732);
        assert_eq!(flink_murmur_hash(-1), 1_982_413_648);
    }

    #[test]
    fn max_parallelism_bounds() {
        assert!(check_max_parallelism(0).is_err());
        assert_eq!(check_max_parallelism(1 << 15), Ok(1 << 15));
        let e = check_max_parallelism((1 << 15) + 1).unwrap_err();
        assert!(e.contains("32769"), "{e}");
        assert_eq!(key_group(b"any", 1), 0);
    }

    /// The shared vectors, produced by Flink's `KeyGroupRangeAssignment` (see the file's header).
    #[test]
    fn flink_vectors() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/vectors/key_groups/flink.tsv"
        );
        let text = std::fs::read_to_string(path).expect("vector file");
        let mut checked = 0;
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let mut fields = line.split('\t');
            let mut next = || fields.next().expect("three fields");
            let key = hex(next());
            let max_parallelism: u32 = next().parse().unwrap();
            let expected: u16 = next().parse().unwrap();
            assert_eq!(
                key_group(&key, max_parallelism),
                expected,
                "key {line} under max parallelism {max_parallelism}"
            );
            checked += 1;
        }
        assert!(checked >= 100, "only {checked} vectors");
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }
}
