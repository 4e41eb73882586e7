//! Stage 1 of the envelope scan: a structural index of a message, 64 bytes at a time.
//!
//! This is simdjson's first stage (Langdale and Lemire, "Parsing Gigabytes of JSON per Second"):
//! each 64-byte block is classified into bit masks (quotes, backslashes, whitespace, the
//! structural characters `{}[]:,`, control characters), and plain integer arithmetic on the masks
//! finds which characters are escaped (odd runs of backslashes), which bytes are inside strings
//! (a prefix XOR of the unescaped quotes) and where each token starts. The index lists, in order,
//! the offset of every structural character outside strings, of every string's opening quote (a
//! string ends at the last quote before the next entry: only whitespace can stand between them,
//! anything else would start a token) and of the first byte of every other
//! token (numbers, `true`, `false`, `null`, or garbage that stage 2 rejects). Stage 2
//! (`envelope::walk`) reads the message through this index instead of byte by byte.
//!
//! The classification is vectorised: SSE2 (always present on x86_64), AVX2, or AVX-512 (F and
//! BW) when the CPU has them, detected at run time since the library is shipped prebuilt;
//! elsewhere a scalar loop. With AVX-512 the masks come straight out of compares into mask
//! registers, and the index entries are written 16 at a time by compressing the set bits' offsets
//! (`vpcompressd`, four per block) instead of one `tzcnt` per entry; with VBMI2 (Ice Lake, Zen 4)
//! one byte compress (`vpcompressb`) gathers a whole block's offsets, widened 16 at a time only
//! as far as the block has entries (simdjson's Ice Lake kernel). All paths produce the same masks
//! and the same index (tested against each other and against a byte-by-byte tokenizer). The
//! prefix XOR is the portable shift-and-XOR ladder (six steps), not a carry-less multiply, which
//! needs a further CPU feature for little gain at this size.
//!
//! Stage 1 checks what it sees for free: every string is closed, holds no raw control character
//! and only valid escapes (`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u` and four hex
//! digits). A message failing these is not indexed, and the caller falls back to serde_json,
//! which then reports the error in its words. Grammar, numbers and literals are stage 2's.

/// The structural index of one message, reused from message to message.
#[derive(Debug, Default)]
pub(crate) struct Index {
    /// The offsets, in the first `len` entries; longer than the longest message indexed yet plus
    /// a block, so that a block's entries are written without growing it.
    positions: Vec<u32>,
    len: usize,
    /// The offsets of the escaped bytes inside strings (the byte after each escaping backslash),
    /// in order: few in most messages, and they tell which strings need unescaping.
    escapes: Vec<u32>,
    ascii: bool,
}

impl Index {
    /// Indexes `input`; false (and nothing usable) when a string is unclosed, holds a control
    /// character or a bad escape, or the input is too long for 32-bit offsets.
    pub(crate) fn build(&mut self, input: &[u8]) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            if x86::has_vbmi2() {
                // SAFETY: the CPU has what it needs (checked just above).
                return unsafe { x86::build_vbmi2(self, input) };
            }
            if x86::has_avx512() {
                // SAFETY: the CPU has what it needs (checked just above).
                return unsafe { x86::build_avx512(self, input) };
            }
            if x86::has_avx2() {
                // SAFETY: the CPU has what it needs (checked just above).
                return unsafe { x86::build_avx2(self, input) };
            }
            // SAFETY: SSE2 is part of the x86_64 baseline.
            unsafe { x86::build_sse2(self, input) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        self.build_with(input, classify_scalar, flatten_scalar)
    }

    /// The offsets of the tokens, in order (see the module docs).
    pub(crate) fn positions(&self) -> &[u32] {
        &self.positions[..self.len]
    }

    /// The offsets of the escaped bytes inside strings, in order.
    pub(crate) fn escapes(&self) -> &[u32] {
        &self.escapes
    }

    /// Whether the message is all ASCII (then no span needs a UTF-8 check).
    pub(crate) fn ascii(&self) -> bool {
        self.ascii
    }

    /// [`Index::build`] with the given block classifier and writer of a block's entries.
    #[inline(always)]
    fn build_with(
        &mut self,
        input: &[u8],
        classify: impl Fn(&[u8; 64]) -> Masks,
        flatten: impl Fn(&mut [u32; 64], u32, u64),
    ) -> bool {
        self.len = 0;
        self.escapes.clear();
        if u32::try_from(input.len()).is_err() {
            return false;
        }
        // Each entry is a distinct byte: at most one per byte before the block being indexed.
        let room = input.len() + 64;
        if self.positions.len() < room {
            self.positions.resize(room, 0);
        }
        let mut carry = Carry::default();
        let mut high = 0;
        let mut chunks = input.chunks_exact(64);
        for (n, chunk) in chunks.by_ref().enumerate() {
            let block: &[u8; 64] = chunk.try_into().expect("64 bytes");
            let masks = classify(block);
            high |= masks.high;
            if !self.block(input, n * 64, &masks, &mut carry, &flatten) {
                return false;
            }
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            // Padding with spaces, which stand outside every token.
            let mut block = [b' '; 64];
            block[..rest.len()].copy_from_slice(rest);
            let masks = classify(&block);
            high |= masks.high;
            let offset = input.len() - rest.len();
            if !self.block(input, offset, &masks, &mut carry, &flatten) {
                return false;
            }
        }
        self.ascii = high == 0;
        carry.in_string == 0
    }

    /// Indexes the block at `offset` of `input`; false when it breaks a string rule.
    #[inline(always)]
    fn block(
        &mut self,
        input: &[u8],
        offset: usize,
        m: &Masks,
        carry: &mut Carry,
        flatten: &impl Fn(&mut [u32; 64], u32, u64),
    ) -> bool {
        let tokens = carry.next(m);
        if tokens.invalid != 0 || !self.valid_escapes(input, offset, tokens.escaped) {
            return false;
        }
        // In bounds: `len` <= `offset` and the positions have room for the input and a block.
        let out = (&mut self.positions[self.len..self.len + 64])
            .try_into()
            .expect("64 entries");
        // Fits: the input length was checked to fit in u32.
        flatten(out, offset as u32, tokens.starts);
        self.len += tokens.starts.count_ones() as usize;
        true
    }

    /// Whether every escaped byte of the block at `offset` (bits of `escaped`) makes a valid
    /// escape; each one's offset is kept.
    #[inline(always)]
    fn valid_escapes(&mut self, input: &[u8], offset: usize, mut escaped: u64) -> bool {
        while escaped != 0 {
            let at = offset + escaped.trailing_zeros() as usize;
            escaped &= escaped - 1;
            let valid = match input.get(at) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => true,
                Some(b'u') => input
                    .get(at + 1..at + 5)
                    .is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)),
                _ => false,
            };
            if !valid {
                return false;
            }
            // Fits: the input length was checked to fit in u32.
            self.escapes.push(at as u32);
        }
        true
    }
}

/// One block's bytes by class: bit `i` stands for byte `i`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Masks {
    quote: u64,
    backslash: u64,
    /// Space, tab, line feed, carriage return.
    space: u64,
    /// `{`, `}`, `[`, `]`, `:`, `,`.
    op: u64,
    /// Bytes below 0x20.
    control: u64,
    /// Bytes of 0x80 and above.
    high: u64,
}

/// What a block leaves for the next one.
#[derive(Default)]
struct Carry {
    /// 1 when the block ended in an odd run of backslashes (its next byte is escaped).
    backslash: u64,
    /// All ones when the block ended inside a string.
    in_string: u64,
    /// 1 when the block ended inside a token other than a string.
    scalar: u64,
}

/// One block's findings.
struct Tokens {
    /// The index entries.
    starts: u64,
    /// Bytes escaped by a backslash inside strings (to check).
    escaped: u64,
    /// Control characters inside strings.
    invalid: u64,
}

/// Every odd bit.
const ODD: u64 = 0xaaaa_aaaa_aaaa_aaaa;

impl Carry {
    /// The tokens of the block classified as `m`, carrying state to the next block.
    #[inline(always)]
    fn next(&mut self, m: &Masks) -> Tokens {
        let escaped = self.escaped(m.backslash);
        let quotes = m.quote & !escaped;
        // Inside: from an opening quote (included) to its closing quote (excluded).
        let inside = prefix_xor(quotes) ^ self.in_string;
        self.in_string = ((inside as i64) >> 63) as u64;
        let scalar = !inside & !(m.op | m.space | quotes);
        let scalar_starts = scalar & !((scalar << 1) | self.scalar);
        self.scalar = scalar >> 63;
        Tokens {
            starts: (m.op & !inside) | (quotes & inside) | scalar_starts,
            escaped: escaped & inside,
            invalid: m.control & inside,
        }
    }

    /// The bytes escaped by a backslash (simdjson's escape scanner): in a run of backslashes,
    /// every other one escapes the byte after it, starting with the run's first one unless that
    /// one is itself escaped by the previous block. Subtracting each escaping backslash from
    /// the odd bits carries through the run and flips exactly the bits it escapes.
    #[inline(always)]
    fn escaped(&mut self, backslash: u64) -> u64 {
        if backslash == 0 {
            return std::mem::take(&mut self.backslash);
        }
        let potential = backslash & !self.backslash;
        let codes = (((potential << 1) | ODD).wrapping_sub(potential)) ^ ODD;
        let escaped = codes ^ (backslash | self.backslash);
        self.backslash = (codes & backslash) >> 63;
        escaped
    }
}

/// Each bit set to the XOR of itself and all lower bits.
#[inline(always)]
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// Writes the offsets of the set bits of `bits`, a block at `base`, to the start of `out`, in
/// order; entries past their count are overwritten at will.
#[inline(always)]
fn flatten_scalar(out: &mut [u32; 64], base: u32, mut bits: u64) {
    let count = bits.count_ones() as usize;
    // simdjson's flattening: eight entries at a time, written whether or not the block has that
    // many, so the loop exits mispredicted once per eight entries rather than once per block.
    // Never past 64: `k` < `count` <= 64.
    let mut k = 0;
    while k < count {
        for slot in &mut out[k & 56..][..8] {
            *slot = base.wrapping_add(bits.trailing_zeros());
            bits &= bits.wrapping_sub(1);
        }
        k += 8;
    }
}

/// The masks of one block, a byte at a time (the reference for the SIMD classifiers).
#[cfg(any(test, not(target_arch = "x86_64")))]
fn classify_scalar(block: &[u8; 64]) -> Masks {
    let mut m = Masks::default();
    for (i, &b) in block.iter().enumerate() {
        let bit = 1u64 << i;
        match b {
            b'"' => m.quote |= bit,
            b'\\' => m.backslash |= bit,
            b' ' | b'\t' | b'\n' | b'\r' => m.space |= bit,
            b'{' | b'}' | b'[' | b']' | b':' | b',' => m.op |= bit,
            _ => {}
        }
        if b < 0x20 {
            m.control |= bit;
        }
        if b >= 0x80 {
            m.high |= bit;
        }
    }
    m
}

/// The SIMD classifiers: the same masks as `classify_scalar`, 16, 32 or 64 bytes per
/// instruction; and the AVX-512 writer of a block's entries.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{flatten_scalar, Index, Masks};
    use std::arch::x86_64::*;

    /// Whether the CPU has what [`build_avx512`] uses: AVX-512 F and BW, and the bit counting
    /// instructions (without them `count_ones` and `trailing_zeros` are emulated, a quarter of
    /// the scan's time).
    pub(super) fn has_avx512() -> bool {
        has_bit_counts()
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
    }

    /// Whether the CPU has what [`build_vbmi2`] uses: [`has_avx512`]'s and AVX-512 VBMI2 (Ice
    /// Lake, Zen 4 and later), whose byte compress writes a block's entries in one step.
    pub(super) fn has_vbmi2() -> bool {
        has_avx512() && std::arch::is_x86_feature_detected!("avx512vbmi2")
    }

    /// Whether the CPU has what [`build_avx2`] uses: AVX2 and the bit counting instructions
    /// (every AVX2 CPU has them, but each is a feature of its own).
    pub(super) fn has_avx2() -> bool {
        has_bit_counts() && std::arch::is_x86_feature_detected!("avx2")
    }

    /// `popcnt` and BMI1's `tzcnt`.
    fn has_bit_counts() -> bool {
        std::arch::is_x86_feature_detected!("popcnt") && std::arch::is_x86_feature_detected!("bmi1")
    }

    /// [`Index::build`] with AVX-512: 64 bytes per instruction, entries 16 at a time.
    ///
    /// # Safety
    /// The CPU must have what [`has_avx512`] checks.
    #[target_feature(enable = "avx512f,avx512bw,popcnt,bmi1")]
    pub(super) unsafe fn build_avx512(index: &mut Index, input: &[u8]) -> bool {
        // SAFETY: this function only runs on a CPU with these features (its caller's contract).
        index.build_with(
            input,
            |block| unsafe { classify_avx512(block) },
            |out, base, bits| unsafe { flatten_avx512(out, base, bits) },
        )
    }

    /// [`build_avx512`] with a block's entries written by [`flatten_vbmi2`].
    ///
    /// # Safety
    /// The CPU must have what [`has_vbmi2`] checks.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,popcnt,bmi1")]
    pub(super) unsafe fn build_vbmi2(index: &mut Index, input: &[u8]) -> bool {
        // SAFETY: this function only runs on a CPU with these features (its caller's contract).
        index.build_with(
            input,
            |block| unsafe { classify_avx512(block) },
            |out, base, bits| unsafe { flatten_vbmi2(out, base, bits) },
        )
    }

    /// [`Index::build`] with AVX2.
    ///
    /// # Safety
    /// The CPU must have what [`has_avx2`] checks.
    #[target_feature(enable = "avx2,popcnt,bmi1")]
    pub(super) unsafe fn build_avx2(index: &mut Index, input: &[u8]) -> bool {
        // SAFETY: this function only runs on a CPU with these features (its caller's contract).
        index.build_with(
            input,
            |block| unsafe { classify_avx2(block) },
            flatten_scalar,
        )
    }

    /// [`Index::build`] with SSE2.
    ///
    /// # Safety
    /// The CPU must have SSE2 (every x86_64 CPU does).
    #[target_feature(enable = "sse2")]
    pub(super) unsafe fn build_sse2(index: &mut Index, input: &[u8]) -> bool {
        // SAFETY: this function only runs with SSE2 (its caller's contract).
        index.build_with(
            input,
            |block| unsafe { classify_sse2(block) },
            flatten_scalar,
        )
    }

    /// The masks of one block, 32 bytes per instruction.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) unsafe fn classify_avx2(block: &[u8; 64]) -> Masks {
        // SAFETY: two unaligned loads of 32 bytes within the 64-byte block.
        let (lo, hi) = unsafe {
            (
                _mm256_loadu_si256(block.as_ptr().cast()),
                _mm256_loadu_si256(block.as_ptr().add(32).cast()),
            )
        };
        // SAFETY: the caller's contract.
        let (lo, hi) = unsafe { (half_avx2(lo), half_avx2(hi)) };
        let join = |l: u32, h: u32| u64::from(l) | u64::from(h) << 32;
        Masks {
            quote: join(lo[0], hi[0]),
            backslash: join(lo[1], hi[1]),
            space: join(lo[2], hi[2]),
            op: join(lo[3], hi[3]),
            control: join(lo[4], hi[4]),
            high: join(lo[5], hi[5]),
        }
    }

    /// The masks of 32 bytes, in the order of [`Masks`]'s fields.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn half_avx2(v: __m256i) -> [u32; 6] {
        let is = |c: u8| _mm256_cmpeq_epi8(v, _mm256_set1_epi8(c as i8));
        // simdjson's lookups: a byte is whitespace (or, with the 0x20 bit set, which folds `[`
        // `]` onto `{` `}`, an operator) when the table entry at its low nibble is the byte
        // itself; bytes of 0x80 and above look up 0 and never match.
        let table = |t: [u8; 16]| {
            let t = t.map(|b| b as i8);
            _mm256_setr_epi8(
                t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10], t[11], t[12],
                t[13], t[14], t[15], t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9],
                t[10], t[11], t[12], t[13], t[14], t[15],
            )
        };
        let lookup = |t: __m256i, x: __m256i| _mm256_cmpeq_epi8(_mm256_shuffle_epi8(t, x), x);
        let space = lookup(table(SPACE_TABLE), v);
        let control = _mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8(0x1f)), v);
        // The fold also maps 0x0c and 0x1a onto `,` and `:`: control characters, not operators.
        let folded = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
        let op = _mm256_andnot_si256(control, lookup(table(OP_TABLE), folded));
        let bits = |x: __m256i| opaque(_mm256_movemask_epi8(x));
        [
            bits(is(b'"')),
            bits(is(b'\\')),
            bits(space),
            bits(op),
            bits(control),
            bits(v),
        ]
    }

    /// The masks of one block, 64 bytes per instruction, straight from compares into masks.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F and BW.
    #[target_feature(enable = "avx512f,avx512bw")]
    #[inline]
    pub(super) unsafe fn classify_avx512(block: &[u8; 64]) -> Masks {
        // SAFETY: an unaligned load of the 64-byte block.
        let v = unsafe { _mm512_loadu_si512(block.as_ptr().cast()) };
        let is = |c: u8| opaque64(_mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(c as i8)));
        // The same lookups as `half_avx2`, the table in each 128-bit lane (the shuffle's reach).
        // SAFETY: an unaligned load of a 16-byte table.
        let table =
            |t: &[u8; 16]| _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(t.as_ptr().cast()) });
        let lookup = |t: __m512i, x: __m512i| _mm512_cmpeq_epi8_mask(_mm512_shuffle_epi8(t, x), x);
        let control = _mm512_cmple_epu8_mask(v, _mm512_set1_epi8(0x1f));
        let folded = _mm512_or_si512(v, _mm512_set1_epi8(0x20));
        Masks {
            quote: is(b'"'),
            backslash: is(b'\\'),
            space: opaque64(lookup(table(&SPACE_TABLE), v)),
            op: opaque64(lookup(table(&OP_TABLE), folded) & !control),
            control: opaque64(control),
            high: opaque64(_mm512_movepi8_mask(v)),
        }
    }

    /// [`flatten_scalar`]'s result, 16 entries per step: for each quarter of the block, the
    /// offsets of its 16 bytes with the quarter's bits compressed to the front and stored whole
    /// (to a register and then memory: the compress-to-memory form is slow on some CPUs).
    ///
    /// # Safety
    /// The CPU must have AVX-512 F.
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub(super) unsafe fn flatten_avx512(out: &mut [u32; 64], base: u32, bits: u64) {
        let lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        let mut k = 0;
        for quarter in 0..4 {
            let mask = (bits >> (16 * quarter)) as u16;
            let first = base.wrapping_add(16 * quarter) as i32;
            let offsets = _mm512_add_epi32(lanes, _mm512_set1_epi32(first));
            let packed = _mm512_maskz_compress_epi32(mask, offsets);
            // In bounds: the quarters before this one hold at most 16 entries each, so `k` <=
            // 16 * quarter and the 16 entries stored end at 64 at most.
            let at = &mut out[k..k + 16];
            // SAFETY: an unaligned store of 16 entries to `at`, which has 16.
            unsafe { _mm512_storeu_si512(at.as_mut_ptr().cast(), packed) };
            k += mask.count_ones() as usize;
        }
    }

    /// [`flatten_scalar`]'s result with VBMI2: the offsets within the block of all its set bits
    /// compressed to the front as bytes in one instruction (simdjson's Ice Lake kernel), then
    /// widened to 32 bits, based and stored 16 at a time, only as many times as there are entries.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F and VBMI2.
    #[target_feature(enable = "avx512f,avx512vbmi2")]
    #[inline]
    pub(super) unsafe fn flatten_vbmi2(out: &mut [u32; 64], base: u32, bits: u64) {
        let lanes = _mm512_set_epi8(
            63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42,
            41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20,
            19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0,
        );
        let packed = _mm512_maskz_compress_epi8(bits, lanes);
        let base = _mm512_set1_epi32(base as i32);
        let count = bits.count_ones();
        let store = |at: &mut [u32], bytes: __m128i| {
            let wide = _mm512_add_epi32(_mm512_cvtepu8_epi32(bytes), base);
            // SAFETY: an unaligned store of 16 entries to `at`, which has 16.
            unsafe { _mm512_storeu_si512(at.as_mut_ptr().cast(), wide) };
        };
        store(&mut out[..16], _mm512_castsi512_si128(packed));
        if count > 16 {
            store(&mut out[16..32], _mm512_extracti32x4_epi32::<1>(packed));
            if count > 32 {
                store(&mut out[32..48], _mm512_extracti32x4_epi32::<2>(packed));
                if count > 48 {
                    store(&mut out[48..], _mm512_extracti32x4_epi32::<3>(packed));
                }
            }
        }
    }

    /// A mask's bits, hidden from the optimiser: told where they come from, LLVM turns the
    /// integer shifts of stage 1 back into byte shuffles of the compared vectors, one
    /// instruction per byte (measured: half of the scan's time).
    #[inline(always)]
    fn opaque64(mask: u64) -> u64 {
        let mut bits = mask;
        // SAFETY: an empty assembly block that only claims to change a register.
        unsafe {
            std::arch::asm!(
                "/* {0} */",
                inout(reg) bits,
                options(pure, nomem, nostack, preserves_flags)
            )
        };
        bits
    }

    /// By low nibble: the whitespace byte with that nibble, or a byte that never has it.
    const SPACE_TABLE: [u8; 16] = [
        b' ', 100, 100, 100, 17, 100, 113, 2, 100, b'\t', b'\n', 112, 100, b'\r', 100, 100,
    ];

    /// By low nibble: the operator (with the 0x20 bit set) with that nibble, or 0.
    const OP_TABLE: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, b':', b'{', b',', b'}', 0, 0];

    /// [`opaque64`] for a 32-bit movemask.
    #[inline(always)]
    fn opaque(mask: i32) -> u32 {
        // The 32-bit mask zero-extended; the barrier is the same, the high half stays zero.
        opaque64(u64::from(mask as u32)) as u32
    }

    /// The masks of one block, 16 bytes per instruction.
    ///
    /// # Safety
    /// The CPU must have SSE2.
    #[target_feature(enable = "sse2")]
    #[inline]
    pub(super) unsafe fn classify_sse2(block: &[u8; 64]) -> Masks {
        let mut m = Masks::default();
        for (i, chunk) in block.chunks_exact(16).enumerate() {
            // SAFETY: an unaligned load of a 16-byte chunk.
            let v = unsafe { _mm_loadu_si128(chunk.as_ptr().cast()) };
            let is = |c: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
            let folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
            let bracket = _mm_or_si128(
                _mm_cmpeq_epi8(folded, _mm_set1_epi8(b'{' as i8)),
                _mm_cmpeq_epi8(folded, _mm_set1_epi8(b'}' as i8)),
            );
            let op = _mm_or_si128(bracket, _mm_or_si128(is(b':'), is(b',')));
            let space = _mm_or_si128(
                _mm_or_si128(is(b' '), is(b'\t')),
                _mm_or_si128(is(b'\n'), is(b'\r')),
            );
            let control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
            let shift = 16 * i as u32;
            let bits = |x: __m128i| u64::from(opaque(_mm_movemask_epi8(x))) << shift;
            m.quote |= bits(is(b'"'));
            m.backslash |= bits(is(b'\\'));
            m.space |= bits(space);
            m.op |= bits(op);
            m.control |= bits(control);
            m.high |= bits(v);
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdcjoin_workload::XorShift;

    /// The index a byte-by-byte tokenizer finds, with simdjson's rule that a backslash escapes
    /// the next byte outside strings too; `None` where [`Index::build`] must refuse.
    fn reference(input: &[u8]) -> Option<Vec<u32>> {
        let mut out = Vec::new();
        let (mut i, mut in_token) = (0, false);
        while i < input.len() {
            match input[i] {
                b'"' => {
                    out.push(i as u32);
                    i = string_end(input, i + 1)?;
                    in_token = false;
                }
                b'{' | b'}' | b'[' | b']' | b':' | b',' => {
                    out.push(i as u32);
                    in_token = false;
                }
                b' ' | b'\t' | b'\n' | b'\r' => in_token = false,
                b => {
                    if !in_token {
                        out.push(i as u32);
                    }
                    in_token = true;
                    // A quote or backslash escaped outside a string is part of the token.
                    if b == b'\\' && matches!(input.get(i + 1), Some(b'"' | b'\\')) {
                        i += 1;
                    }
                }
            }
            i += 1;
        }
        Some(out)
    }

    /// The offset of the quote closing the string whose content starts at `i`.
    fn string_end(input: &[u8], mut i: usize) -> Option<usize> {
        loop {
            match *input.get(i)? {
                b'"' => return Some(i),
                b'\\' => {
                    let valid = match *input.get(i + 1)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => true,
                        b'u' => input
                            .get(i + 2..i + 6)
                            .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)),
                        _ => false,
                    };
                    if !valid {
                        return None;
                    }
                    i += 2;
                }
                c if c < 0x20 => return None,
                _ => i += 1,
            }
        }
    }

    /// Random bytes, mostly the ones that matter to stage 1 (long runs of backslashes included).
    fn random_input(rng: &mut XorShift) -> Vec<u8> {
        const ALPHABET: &[u8] =
            b"\"\"\"\\\\\\\\{}[]:, \t\n\ratu0123456789AbFn-.eE\x01\x0c\x1a\x1f\x7f\xc3\xa9\xff";
        let len = rng.index(300);
        (0..len)
            .map(|_| ALPHABET[rng.index(ALPHABET.len())])
            .collect()
    }

    /// Strings that stage 1 accepts: quoted runs of valid escapes and plain bytes, between
    /// tokens, so that accepted inputs are common.
    fn random_valid_strings(rng: &mut XorShift) -> Vec<u8> {
        const ESCAPES: &[&[u8]] = &[b"\\\\", b"\\\"", b"\\n", b"\\u00e9", b"\\/"];
        const PLAIN: &[&[u8]] = &[b"a", b"{", b":", b" ", b"\xc3\xa9", b"12"];
        let mut out = Vec::new();
        for _ in 0..rng.index(40) {
            out.push(b'"');
            for _ in 0..rng.index(80) {
                let part = if rng.below(3) == 0 {
                    ESCAPES[rng.index(ESCAPES.len())]
                } else {
                    PLAIN[rng.index(PLAIN.len())]
                };
                out.extend_from_slice(part);
            }
            out.extend_from_slice(b"\", 12 ,");
        }
        out
    }

    fn all_paths(input: &[u8]) -> Vec<(bool, Vec<u32>, bool)> {
        let mut runs = Vec::new();
        let mut index = Index::default();
        let ok = index.build_with(input, classify_scalar, flatten_scalar);
        runs.push((ok, index.positions().to_vec(), index.ascii));
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: SSE2 is in the x86_64 baseline; AVX2, AVX-512 and VBMI2 only when detected.
            let ok = unsafe { x86::build_sse2(&mut index, input) };
            runs.push((ok, index.positions().to_vec(), index.ascii));
            if x86::has_avx2() {
                let ok = unsafe { x86::build_avx2(&mut index, input) };
                runs.push((ok, index.positions().to_vec(), index.ascii));
            }
            if x86::has_avx512() {
                let ok = unsafe { x86::build_avx512(&mut index, input) };
                runs.push((ok, index.positions().to_vec(), index.ascii));
            }
            if x86::has_vbmi2() {
                let ok = unsafe { x86::build_vbmi2(&mut index, input) };
                runs.push((ok, index.positions().to_vec(), index.ascii));
            }
        }
        runs
    }

    #[test]
    fn simd_and_scalar_classify_alike() {
        let mut rng = XorShift(0x5eed_0001);
        for _ in 0..2000 {
            let block: [u8; 64] = std::array::from_fn(|_| rng.next_u64() as u8);
            let scalar = classify_scalar(&block);
            #[cfg(target_arch = "x86_64")]
            {
                // SAFETY: as in `all_paths`.
                assert_eq!(unsafe { x86::classify_sse2(&block) }, scalar);
                if std::arch::is_x86_feature_detected!("avx2") {
                    assert_eq!(unsafe { x86::classify_avx2(&block) }, scalar);
                }
                if x86::has_avx512() {
                    assert_eq!(unsafe { x86::classify_avx512(&block) }, scalar);
                }
            }
        }
    }

    #[test]
    fn every_flattening_writes_the_set_bits_in_order() {
        let mut rng = XorShift(0x5eed_0003);
        let masks = [0, 1, 1 << 63, u64::MAX, 0xffff_0000_ffff_0000];
        let random: Vec<u64> = (0..2000)
            .map(|n| rng.next_u64() & rng.next_u64() >> (n % 64))
            .collect();
        for bits in masks.into_iter().chain(random) {
            let base = rng.next_u64() as u32 & !63;
            let expected: Vec<u32> = (0..64)
                .filter(|i| bits >> i & 1 == 1)
                .map(|i| base.wrapping_add(i))
                .collect();
            let mut out = [0; 64];
            flatten_scalar(&mut out, base, bits);
            assert_eq!(out[..expected.len()], expected[..], "{bits:#x}");
            #[cfg(target_arch = "x86_64")]
            if x86::has_avx512() {
                let mut out = [0; 64];
                // SAFETY: AVX-512 detected.
                unsafe { x86::flatten_avx512(&mut out, base, bits) };
                assert_eq!(out[..expected.len()], expected[..], "{bits:#x}");
            }
            #[cfg(target_arch = "x86_64")]
            if x86::has_vbmi2() {
                let mut out = [0; 64];
                // SAFETY: AVX-512 VBMI2 detected.
                unsafe { x86::flatten_vbmi2(&mut out, base, bits) };
                assert_eq!(out[..expected.len()], expected[..], "{bits:#x}");
            }
        }
    }

    #[test]
    fn every_path_finds_the_reference_tokens() {
        let mut rng = XorShift(0x5eed_0002);
        let mut accepted = 0;
        for n in 0..20_000 {
            let input = if n % 2 == 0 {
                random_input(&mut rng)
            } else {
                random_valid_strings(&mut rng)
            };
            let expected = reference(&input);
            let ascii = input.is_ascii();
            for (ok, positions, seen_ascii) in all_paths(&input) {
                assert_eq!(
                    ok,
                    expected.is_some(),
                    "{:?}",
                    String::from_utf8_lossy(&input)
                );
                if let Some(expected) = &expected {
                    assert_eq!(
                        &positions,
                        expected,
                        "{:?}",
                        String::from_utf8_lossy(&input)
                    );
                    assert_eq!(seen_ascii, ascii);
                }
            }
            accepted += usize::from(expected.is_some());
        }
        assert!(accepted > 10_000, "only {accepted} inputs accepted");
    }

    #[test]
    fn tokens_and_refusals() {
        let mut index = Index::default();
        assert!(index.build(br#"{"a\"b":[1, -2.5e3,"x\\"], "c" :null}"#));
        assert_eq!(
            index.positions(),
            &[0, 1, 7, 8, 9, 10, 12, 18, 19, 24, 25, 27, 31, 32, 36]
        );
        assert!(index.ascii());
        assert!(index.build("[\"é\"]".as_bytes()));
        assert!(!index.ascii());
        for refused in [
            &br#"["abc]"#[..],
            br#"["a\"]"#,
            b"[\"a\tb\"]",
            br#"["\x"]"#,
            br#"["\u12"]"#,
            br#"["\u12G4"]"#,
        ] {
            assert!(
                !index.build(refused),
                "{}",
                String::from_utf8_lossy(refused)
            );
        }
    }
}
