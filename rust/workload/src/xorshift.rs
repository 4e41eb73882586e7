//! A tiny pseudo-random sequence whose values are fixed forever.

/// xorshift64*: a deterministic pseudo-random sequence for generated test inputs and benchmark
/// batches. Unlike `rand`'s generators its output can never change with a dependency update, so
/// the same seed gives the same inputs in every build. The seed must not be 0 (that sequence is
/// all zeros).
#[derive(Clone, Debug)]
pub struct XorShift(pub u64);

impl XorShift {
    /// The next value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// The next value reduced below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// The next value reduced to an index below `len` (0 when `len` is 0).
    pub fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_is_pinned() {
        let mut rng = XorShift(1);
        let first: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
        assert_eq!(
            first,
            [
                0x47e4_ce4b_896c_dd1d,
                0xabcf_a6a8_e079_651d,
                0xb9d1_0d8f_eb73_1f57
            ]
        );
        assert_eq!(XorShift(7).below(0), 0);
        assert!((0..100).all(|_| rng.index(3) < 3));
    }
}
