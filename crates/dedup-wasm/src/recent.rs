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
//!   by which time its old position has left the window;
//! - the ring starts small and doubles before any position wraps around it.

use crate::table::{nonzero_key, zeroed};

/// Positions the ring starts with, unless told how many to expect. It doubles until it holds the
/// whole window, so a check of a short text does not zero tables sized for a long one.
const FIRST_RING: usize = 64;

pub(crate) struct RecentIndex {
    /// Per bucket, 1 + the newest position inserted in it (0: none). Eight times as many buckets as
    /// ring slots: a fresh gram then finds its bucket empty or stale nine times in ten, so the walk
    /// stops at once and the branch that ends it is predictable. With twice as many, four buckets in
    /// ten held some other live gram, so the text decided whether the walk went on, and the
    /// mispredicted branch cost more than the larger table's cache misses do.
    heads: Vec<u64>,
    /// 64 minus the bits of a bucket number (buckets are the top bits of a key).
    bucket_shift: u32,
    /// Per ring slot (`pos % slots.len()`): the key inserted at that position (0: none), and 1 + the
    /// previous position of its bucket (0: none).
    slots: Vec<[u64; 2]>,
    /// `window - 1`; the window is a power of two.
    window_mask: u64,
    /// The position at which the ring doubles (`u64::MAX` once it holds the whole window).
    grow_at: u64,
}

impl RecentIndex {
    /// An index over the last `window` positions (a power of two).
    #[cfg(test)]
    pub(crate) fn new(window: u64) -> Self {
        RecentIndex::with_expected(window, 0)
    }

    /// An index over the last `window` positions (a power of two), sized at once for `expected`
    /// positions (a batch knows its length): a 10 KB check would otherwise double the ring five
    /// times, relinking it each time.
    pub(crate) fn with_expected(window: u64, expected: usize) -> Self {
        debug_assert!(window.is_power_of_two());
        let ring = expected.checked_next_power_of_two().unwrap_or(usize::MAX).max(FIRST_RING).min(window as usize);
        let mut index = RecentIndex { heads: Vec::new(), bucket_shift: 63, slots: zeroed(ring), window_mask: window - 1, grow_at: 0 };
        index.size_buckets();
        index
    }

    #[inline]
    fn bucket(&self, key: u64) -> usize {
        (key >> self.bucket_shift) as usize
    }

    /// Records `key` at `pos` (greater than every position inserted before) and returns the newest
    /// earlier position of `key` that is less than `window` positions back.
    #[inline(always)]
    pub(crate) fn insert(&mut self, key: u64, pos: u64) -> Option<u64> {
        if pos >= self.grow_at {
            self.grow(pos);
        }
        let key = nonzero_key(key);
        let bucket = self.bucket(key);
        let ring_mask = self.slots.len() as u64 - 1;
        let oldest = pos.saturating_sub(self.window_mask);
        let head = self.heads[bucket];
        // Whether a bucket holds a live position, and whether it is this key, depends on the text,
        // so the walk takes one branch per step: "stop here". The slot is read before knowing whether
        // the link is live (index masked, value unused when it is not); an empty link (0) wraps to
        // `u64::MAX` and is outside `oldest..pos` like any stale one.
        let mut link = head;
        let found = loop {
            let p = link.wrapping_sub(1);
            let [k, next] = self.slots[(p & ring_mask) as usize];
            let live = p.wrapping_sub(oldest) < pos - oldest;
            if !live | (k == key) {
                break if live { Some(p) } else { None };
            }
            link = next;
        };
        self.slots[(pos & ring_mask) as usize] = [key, head];
        self.heads[bucket] = pos + 1;
        found
    }

    /// Doubles the ring until it holds `pos`, or the whole window. Until the ring is full size no
    /// position has wrapped, so position `p` sits in slot `p` and stays there as the ring grows; only
    /// the buckets (one more bit) need linking again.
    #[cold]
    fn grow(&mut self, pos: u64) {
        let window = self.window_mask + 1;
        let mut len = self.slots.len() as u64;
        while len <= pos && len < window {
            len *= 2;
        }
        self.slots.resize(len as usize, [0, 0]);
        self.relink();
    }

    /// Rebuilds the buckets for the ring's size from the keys in it (positions in slot order, which
    /// is position order while nothing has wrapped).
    fn relink(&mut self) {
        let len = self.slots.len();
        self.size_buckets();
        for p in 0..len {
            let key = self.slots[p][0];
            if key != 0 {
                let bucket = self.bucket(key);
                self.slots[p][1] = self.heads[bucket];
                self.heads[bucket] = p as u64 + 1;
            }
        }
    }

    /// Empty buckets for the ring's size: all a new, empty ring needs (it has no keys to link).
    fn size_buckets(&mut self) {
        let len = self.slots.len();
        self.bucket_shift = 64 - (8 * len).trailing_zeros();
        self.heads = zeroed(8 * len);
        self.grow_at = if len as u64 > self.window_mask { u64::MAX } else { len as u64 };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the index must answer, by brute force over everything inserted.
    fn model(keys: &[u64], pos: usize, window: usize) -> Option<u64> {
        let oldest = pos.saturating_sub(window - 1);
        (oldest..pos).rev().find(|&p| nonzero_key(keys[p]) == nonzero_key(keys[pos])).map(|p| p as u64)
    }

    #[test]
    fn agrees_with_a_brute_force_search_over_colliding_keys() {
        // Few distinct keys, and keys that share their top bits (one bucket), so chains are long and
        // positions leave the window in the middle of them. A window larger than the first ring makes
        // the ring grow (and the buckets relink) while keys are in it.
        for window in [8usize, 64, 1024] {
            let mut index = RecentIndex::new(window as u64);
            let mut keys = Vec::new();
            let mut seed = 0x2545_f491_4f6c_dd1du64;
            for pos in 0..6_000usize {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let key = match seed % 4 {
                    0 => seed % 7,                   // small keys, 0 and 1 among them
                    1 => (seed % 5) | (0xABC << 52), // one bucket at every ring size
                    _ => crate::hash::mix64(seed % 97),
                };
                keys.push(key);
                assert_eq!(index.insert(key, pos as u64), model(&keys, pos, window), "window {} at {}", window, pos);
            }
            assert_eq!(index.slots.len(), window);
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

    #[test]
    fn a_presized_ring_gives_the_same_answers_as_a_growing_one() {
        let mut growing = RecentIndex::new(1024);
        let mut presized = RecentIndex::with_expected(1024, 5000);
        assert_eq!(presized.slots.len(), 1024);
        for pos in 0..3000u64 {
            let key = crate::hash::mix64(pos % 211) | u64::from(pos % 3 == 0);
            assert_eq!(growing.insert(key, pos), presized.insert(key, pos), "at {}", pos);
        }
        assert_eq!(RecentIndex::with_expected(1024, 100).slots.len(), 128);
        assert_eq!(RecentIndex::with_expected(1024, 0).slots.len(), FIRST_RING);
    }
}
