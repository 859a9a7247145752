//! `RecentIndex`: for a fingerprint inserted at a position, the newest earlier position of the same
//! fingerprint among the last `window` positions. It backs the n-gram pass's dense index, which asks
//! that question for every char.
//!
//! It uses hash chains, as LZ77 compressors do to find matches: a head per bucket holds the newest
//! position that hashed there, and each position links to the previous one of its bucket. Compared
//! with a hash map that deletes each position as it leaves the window, an insert is two writes and no
//! probing, and nothing is ever deleted.
//!
//! Invariants:
//! - positions are inserted one at a time in increasing order;
//! - a chain runs strictly backward in position, so a walk stops at the first position outside the
//!   window, before reading anything that position's ring slot may now hold;
//! - a ring slot is reused by the position `window` later, and only after the walk of that insert,
//!   by which time its old position has left the window.

/// Bits of the bucket number: twice as many buckets as positions in a 2,048-char window, so chains
/// are short (half a position on average).
const BUCKET_BITS: u32 = 12;

pub(crate) struct RecentIndex {
    /// Per bucket, 1 + the newest position inserted in it (0: none).
    heads: Vec<u64>,
    /// Per ring slot (`pos % window`): the key inserted at that position, and 1 + the previous
    /// position of its bucket (0: none).
    slots: Vec<[u64; 2]>,
    /// `window - 1`; the window is a power of two.
    mask: u64,
}

impl RecentIndex {
    /// An index over the last `window` positions (a power of two).
    pub(crate) fn new(window: u64) -> Self {
        debug_assert!(window.is_power_of_two());
        RecentIndex { heads: vec![0; 1 << BUCKET_BITS], slots: vec![[0, 0]; window as usize], mask: window - 1 }
    }

    /// Key 0 is read as 1, as `PosTable` reads it, so both indexes agree on every key. (Keys are mixed
    /// hashes; every hit is verified against the text anyway.)
    #[inline]
    fn norm(key: u64) -> u64 {
        if key == 0 {
            1
        } else {
            key
        }
    }

    /// Records `key` at `pos` (greater than every position inserted before) and returns the newest
    /// earlier position of `key` that is less than `window` positions back.
    #[inline(always)]
    pub(crate) fn insert(&mut self, key: u64, pos: u64) -> Option<u64> {
        let key = Self::norm(key);
        let bucket = (key >> (64 - BUCKET_BITS)) as usize;
        let oldest = pos.saturating_sub(self.mask);
        let head = self.heads[bucket];
        let mut link = head;
        let mut found = None;
        while link != 0 {
            let p = link - 1;
            if p < oldest {
                break;
            }
            let [k, next] = self.slots[(p & self.mask) as usize];
            if k == key {
                found = Some(p);
                break;
            }
            link = next;
        }
        self.slots[(pos & self.mask) as usize] = [key, head];
        self.heads[bucket] = pos + 1;
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the index must answer, by brute force over everything inserted.
    fn model(keys: &[u64], pos: usize, window: usize) -> Option<u64> {
        let norm = |k: u64| if k == 0 { 1 } else { k };
        let oldest = pos.saturating_sub(window - 1);
        (oldest..pos).rev().find(|&p| norm(keys[p]) == norm(keys[pos])).map(|p| p as u64)
    }

    #[test]
    fn agrees_with_a_brute_force_search_over_colliding_keys() {
        // Few distinct keys, and keys that share their top bits (one bucket), so chains are long and
        // positions leave the window in the middle of them.
        let window = 64usize;
        let mut index = RecentIndex::new(window as u64);
        let mut keys = Vec::new();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for pos in 0..20_000usize {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let key = match seed % 4 {
                0 => seed % 7,                              // small keys, 0 and 1 among them
                1 => (seed % 5) | (0xABC << 52),            // one bucket
                _ => crate::hash::mix64(seed % 97),
            };
            keys.push(key);
            assert_eq!(index.insert(key, pos as u64), model(&keys, pos, window), "at {}", pos);
        }
    }

    #[test]
    fn the_window_boundary_is_exact() {
        let mut index = RecentIndex::new(8);
        assert_eq!(index.insert(42, 0), None);
        for p in 1..7 {
            index.insert(1000 + p, p);
        }
        // Position 0 is 7 back from 7: still inside a window of 8.
        assert_eq!(index.insert(42, 7), Some(0));
        for p in 8..15 {
            index.insert(2000 + p, p);
        }
        // 8 back from 15 is outside; the slot of 7 was since reused by 15.
        assert_eq!(index.insert(42, 15), None);
        assert_eq!(index.insert(42, 16), Some(15));
    }
}
