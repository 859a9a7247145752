//! `PosTable`: an open-addressing map from 64-bit fingerprints to the most recent position where they
//! occurred. It is the index behind every "have we seen this gram before, and where" question.
//!
//! Invariants:
//! - keys are already well-mixed 64-bit hashes, so the slot is just the low bits;
//! - key 0 marks an empty slot, so a real key of 0 is stored as 1 (a deliberate, harmless collision
//!   that callers tolerate because every hit is verified against the text);
//! - there is no deletion: a table that outgrows what it must remember is rebuilt by `retain`.

/// What a table starts with: every table grows as keys arrive, so a batch check of a short text
/// does not zero tables sized for a megabyte stream (a fixed cost that dominated short checks).
pub(crate) const SMALL_TABLE: usize = 64;

/// A key as the indexes store it: 0 marks an empty slot, so a key of 0 is read as 1. Every index
/// reads keys through this, so they all agree on every key.
#[inline]
pub(crate) fn nonzero_key(key: u64) -> u64 {
    if key == 0 {
        1
    } else {
        key
    }
}

/// `n` zeroed values in a new vector, filled in place rather than allocated zeroed: in wasm the
/// allocator zeroes memory through the standard library's `memset`, a loop built without bulk
/// memory, where a fill here compiles to one `memory.fill`.
pub(crate) fn zeroed<T: Copy + Default>(n: usize) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    v.resize(n, T::default());
    v
}

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
        PosTable { slots: zeroed(slots), len: 0, mask: slots - 1 }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(crate) fn get(&self, key: u64) -> Option<u64> {
        let key = nonzero_key(key);
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
        let key = nonzero_key(key);
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

    /// The key of every slot, in slot order: a key as stored (see [`nonzero_key`]), or 0 for an
    /// empty slot.
    pub(crate) fn slot_keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.slots.iter().map(|s| s[0])
    }

    /// Keeps only entries whose value satisfies `keep` (used to drop positions that left a window).
    pub(crate) fn retain(&mut self, keep: impl Fn(u64) -> bool) {
        let mut old = std::mem::take(&mut self.slots);
        let live = compact(&mut old, |[k, v]| k != 0 && keep(v));
        *self = PosTable::with_capacity(live.max(old.len() / 4));
        self.place_all(&old[..live]);
    }

    fn grow(&mut self) {
        let mut old = std::mem::take(&mut self.slots);
        let slots = old.len() * 2;
        self.slots = zeroed(slots);
        self.mask = slots - 1;
        let live = compact(&mut old, |[k, _]| k != 0);
        self.place_all(&old[..live]);
    }

    /// Fills the table, empty and large enough, with entries whose keys are distinct (a rebuild).
    /// With no key to find, a probe only looks for an empty slot.
    fn place_all(&mut self, entries: &[Slot]) {
        for &entry in entries {
            let mut i = (entry[0] as usize) & self.mask;
            while self.slots[i][0] != 0 {
                i = (i + 1) & self.mask;
            }
            self.slots[i] = entry;
        }
        self.len = entries.len();
    }
}

/// Moves the slots satisfying `keep` to the front of `slots`, in order, and returns how many there
/// are. Which slots are occupied is as random as the keys, so a branch on it would be mispredicted
/// about every other slot: each slot is written forward unconditionally and the count advanced by
/// the test's result.
fn compact(slots: &mut [Slot], keep: impl Fn(Slot) -> bool) -> usize {
    let mut n = 0;
    for i in 0..slots.len() {
        let s = slots[i];
        slots[n] = s;
        n += usize::from(keep(s));
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_stays_reachable_as_the_table_grows() {
        let mut t = PosTable::with_capacity(4);
        for k in 0..1000u64 {
            assert_eq!(t.insert(crate::hash::mix64(k), k), None);
        }
        for k in (0..1000u64).step_by(3) {
            assert_eq!(t.insert(crate::hash::mix64(k), k + 5000), Some(k));
        }
        for k in 0..1000u64 {
            let expect = if k % 3 == 0 { k + 5000 } else { k };
            assert_eq!(t.get(crate::hash::mix64(k)), Some(expect), "key {}", k);
        }
        assert_eq!(t.len(), 1000);
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
