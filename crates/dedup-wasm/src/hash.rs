//! Deterministic hashing. No random seeds anywhere: the same text hashes to the same values natively
//! and in wasm, run after run, which is what lets the shared fixtures prove both builds agree.

/// Multiplier of the polynomial rolling hash (odd, so multiplication mod 2^64 is invertible).
pub(crate) const ROLL_BASE: u64 = 0x100_0000_01b3_u64.wrapping_mul(0x9e37_79b9);

/// A strong 64-bit finalizer (the SplitMix64 mixing step): spreads the bits of a value so that
/// low bits can index a table.
#[inline]
pub(crate) fn mix64(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Incremental hash of a sequence of `u32` symbols (chars or token ids). Order-sensitive.
#[derive(Clone, Copy)]
pub(crate) struct SeqHasher(u64);

impl SeqHasher {
    #[inline]
    pub(crate) fn new() -> Self {
        SeqHasher(0xcbf2_9ce4_8422_2325)
    }
    #[inline]
    pub(crate) fn push(&mut self, symbol: u32) {
        self.0 = (self.0 ^ u64::from(symbol)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    #[inline]
    pub(crate) fn finish(self) -> u64 {
        mix64(self.0)
    }
}

/// `base^exp mod 2^64`, used to remove the oldest symbol from a rolling hash.
pub(crate) fn pow_wrapping(base: u64, mut exp: u32) -> u64 {
    let mut result: u64 = 1;
    let mut b = base;
    while exp > 0 {
        if exp & 1 == 1 {
            result = result.wrapping_mul(b);
        }
        b = b.wrapping_mul(b);
        exp >>= 1;
    }
    result
}

/// A deterministic `Hasher` for std maps keyed by chars or pre-mixed hashes (std's default hasher
/// is randomly seeded, which would make iteration order differ between runs).
#[derive(Default, Clone, Copy)]
pub(crate) struct DetHasher(u64);

impl std::hash::Hasher for DetHasher {
    #[inline]
    fn finish(&self) -> u64 {
        mix64(self.0)
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    #[inline]
    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }
}

/// `HashMap` with [`DetHasher`].
pub(crate) type DetMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<DetHasher>>;
