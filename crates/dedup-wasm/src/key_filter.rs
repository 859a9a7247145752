//! `KeyFilter`: a Bloom filter over 64-bit fingerprints, answering "certainly absent" from a bit
//! array small enough to stay in cache.
//!
//! It sits in front of the n-gram pass's sparse index. That index is asked about every char that
//! has no recent match, and in a long text it outgrows the caches (a megabyte of text indexes 40,000
//! grams in 2 MB of slots), so nearly every question costs a miss to main memory, while nearly every
//! answer is "never seen". The filter answers most of those from 8 bits per key.
//!
//! Invariants:
//! - no false negatives: every key added since the filter was made reports present;
//! - keys are well-mixed hashes, and the two bits of a key come from its high bits, which the index
//!   (slot = low bits) does not use, so a filter hit says nothing about where the index probes.

use crate::table::{nonzero_key, zeroed};

/// Bits per key the filter is sized for. With two bits set per key, a filter at its capacity
/// answers "maybe" for about one absent key in twenty.
const BITS_PER_KEY: usize = 8;
/// The smallest filter, in bits (512 bytes).
const MIN_BITS: usize = 4096;

pub(crate) struct KeyFilter {
    words: Vec<u64>,
    /// 64 minus the bits of a bit index.
    shift: u32,
    /// Keys it is sized for; the owner makes a larger one past that.
    capacity: usize,
}

impl KeyFilter {
    /// An empty filter sized for `keys` keys.
    pub(crate) fn with_capacity(keys: usize) -> Self {
        let bits = keys.saturating_mul(BITS_PER_KEY).next_power_of_two().max(MIN_BITS);
        KeyFilter { words: zeroed(bits / 64), shift: 64 - bits.trailing_zeros(), capacity: keys }
    }

    /// A filter sized for `room` keys holding the keys of a table's slots, where 0 is an empty slot
    /// and adds nothing. Which slots are empty is as random as the keys, so the zeros are masked out
    /// rather than branched over.
    pub(crate) fn of_slot_keys(slot_keys: impl Iterator<Item = u64>, room: usize) -> Self {
        let mut filter = KeyFilter::with_capacity(room);
        for k in slot_keys {
            filter.set_bits(k, u64::from(k != 0).wrapping_neg());
        }
        filter
    }

    /// Keys it is sized for.
    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// The two bit indexes of `key`: its top bits, and the bits below the top 21 (disjoint from the
    /// top ones for filters of up to 2^21 bits).
    #[inline]
    fn bits(&self, key: u64) -> [usize; 2] {
        let key = nonzero_key(key);
        [(key >> self.shift) as usize, ((key << 21) >> self.shift) as usize]
    }

    #[inline]
    pub(crate) fn add(&mut self, key: u64) {
        self.set_bits(key, u64::MAX);
    }

    /// Sets the bits of `key` where `mask` is all ones; with a mask of 0 it sets nothing. (A constant
    /// mask, as `add` passes, compiles away.)
    #[inline]
    fn set_bits(&mut self, key: u64, mask: u64) {
        for b in self.bits(key) {
            self.words[b / 64] |= (1 << (b % 64)) & mask;
        }
    }

    /// False when `key` was certainly never added; true when it may have been.
    #[inline]
    pub(crate) fn may_contain(&self, key: u64) -> bool {
        self.bits(key).iter().all(|&b| self.words[b / 64] & (1 << (b % 64)) != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::mix64;

    #[test]
    fn every_added_key_is_present_and_most_others_are_not() {
        let mut f = KeyFilter::with_capacity(10_000);
        for k in 0..10_000u64 {
            f.add(mix64(k));
        }
        assert!((0..10_000u64).all(|k| f.may_contain(mix64(k))));
        let false_hits = (10_000..110_000u64).filter(|&k| f.may_contain(mix64(k))).count();
        // Two bits per key at 8+ bits per key: about 5% of absent keys hit at capacity.
        assert!(false_hits < 8_000, "{} false hits in 100,000", false_hits);
    }

    #[test]
    fn zero_is_the_key_one_as_in_the_index() {
        let mut f = KeyFilter::with_capacity(8);
        f.add(0);
        assert!(f.may_contain(1));
        assert!(f.may_contain(0));
    }

    #[test]
    fn a_filter_made_of_slot_keys_holds_them_and_no_empty_slot() {
        let keys: Vec<u64> = (0..500u64).map(|k| if k % 3 == 0 { 0 } else { mix64(k) }).collect();
        let f = KeyFilter::of_slot_keys(keys.iter().copied(), 1000);
        assert_eq!(f.capacity(), 1000);
        assert!(keys.iter().filter(|&&k| k != 0).all(|&k| f.may_contain(k)));
        let empty = KeyFilter::of_slot_keys(std::iter::repeat(0).take(100), 1000);
        assert!(empty.words.iter().all(|&w| w == 0));
    }
}
