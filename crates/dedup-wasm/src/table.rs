//! `PosTable`: an open-addressing map from 64-bit fingerprints to the most recent position where they
//! occurred. It is the index behind every "have we seen this gram before, and where" question.
//!
//! Invariants:
//! - keys are already well-mixed 64-bit hashes, so the slot is just the low bits;
//! - key 0 marks an empty slot, so a real key of 0 is stored as 1 (a deliberate, harmless collision
//!   that callers tolerate because every hit is verified against the text);
//! - deletion uses backward shifting (no tombstones), so lookups stay short however long a stream runs.

/// What a table starts with: every table grows as keys arrive, so a batch check of a short text
/// does not zero tables sized for a megabyte stream (a fixed cost that dominated short checks).
pub(crate) const SMALL_TABLE: usize = 64;

/// One slot: a key (0 = empty) and its value side by side, so a probe touches one cache line.
type Slot = [u64; 2];

#[derive(Clone)]
pub(crate) struct PosTable {
    slots: Vec<Slot>,
    len: usize,
    mask: usize,
}

impl PosTable {
    /// A table that holds `expected` keys at a load of at most one half before growing.
    pub(crate) fn with_capacity(expected: usize) -> Self {
        let slots = (expected.max(8) * 2).next_power_of_two();
        PosTable { slots: vec![[0, 0]; slots], len: 0, mask: slots - 1 }
    }

    #[inline]
    fn norm(key: u64) -> u64 {
        if key == 0 {
            1
        } else {
            key
        }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(crate) fn get(&self, key: u64) -> Option<u64> {
        let key = Self::norm(key);
        let mut i = (key as usize) & self.mask;
        loop {
            let [k, v] = self.slots[i];
            if k == key {
                return Some(v);
            }
            if k == 0 {
                return None;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Sets `key` to `val`, returning the previous value. Always inlined: it runs up to four times per
    /// char, and the wasm backend otherwise keeps it a call.
    #[inline(always)]
    pub(crate) fn insert(&mut self, key: u64, val: u64) -> Option<u64> {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let key = Self::norm(key);
        let mut i = (key as usize) & self.mask;
        loop {
            let slot = &mut self.slots[i];
            if slot[0] == key {
                let old = slot[1];
                slot[1] = val;
                return Some(old);
            }
            if slot[0] == 0 {
                *slot = [key, val];
                self.len += 1;
                return None;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Removes `key` only if it still maps to `val` (a newer occurrence keeps its entry).
    pub(crate) fn remove_if(&mut self, key: u64, val: u64) {
        let key = Self::norm(key);
        let mut i = (key as usize) & self.mask;
        loop {
            let [k, v] = self.slots[i];
            if k == 0 {
                return;
            }
            if k == key {
                if v != val {
                    return;
                }
                break;
            }
            i = (i + 1) & self.mask;
        }
        // Backward-shift deletion: pull later members of the probe run into the hole.
        let mut hole = i;
        let mut j = i;
        loop {
            j = (j + 1) & self.mask;
            let k = self.slots[j][0];
            if k == 0 {
                break;
            }
            let home = (k as usize) & self.mask;
            // Move k into the hole unless its home lies cyclically in (hole, j].
            let in_range = if hole <= j { hole < home && home <= j } else { hole < home || home <= j };
            if !in_range {
                self.slots[hole] = self.slots[j];
                hole = j;
            }
        }
        self.slots[hole] = [0, 0];
        self.len -= 1;
    }

    /// Keeps only entries whose value satisfies `keep` (used to drop positions that left a window).
    pub(crate) fn retain(&mut self, keep: impl Fn(u64) -> bool) {
        let old = std::mem::take(&mut self.slots);
        let live = old.iter().filter(|[k, v]| *k != 0 && keep(*v)).count();
        *self = PosTable::with_capacity(live.max(old.len() / 4));
        for [k, v] in old {
            if k != 0 && keep(v) {
                self.insert(k, v);
            }
        }
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        let slots = old.len() * 2;
        self.slots = vec![[0, 0]; slots];
        self.mask = slots - 1;
        self.len = 0;
        for [k, v] in old {
            if k != 0 {
                self.insert(k, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_get_remove_keep_other_keys_reachable() {
        let mut t = PosTable::with_capacity(4);
        for k in 0..1000u64 {
            t.insert(crate::hash::mix64(k), k);
        }
        for k in (0..1000u64).step_by(3) {
            t.remove_if(crate::hash::mix64(k), k);
        }
        for k in 0..1000u64 {
            let expect = if k % 3 == 0 { None } else { Some(k) };
            assert_eq!(t.get(crate::hash::mix64(k)), expect, "key {}", k);
        }
        assert_eq!(t.len(), 1000 - 334);
    }

    #[test]
    fn remove_if_spares_a_newer_value() {
        let mut t = PosTable::with_capacity(4);
        t.insert(42, 1);
        t.insert(42, 7);
        t.remove_if(42, 1);
        assert_eq!(t.get(42), Some(7));
    }

    #[test]
    fn retain_drops_old_positions() {
        let mut t = PosTable::with_capacity(4);
        for k in 1..100u64 {
            t.insert(k * 7919, k);
        }
        t.retain(|v| v >= 50);
        assert_eq!(t.len(), 50);
        assert_eq!(t.get(49 * 7919), None);
        assert_eq!(t.get(50 * 7919), Some(50));
    }
}
