//! Sliding-window statistics for the window rules, each kept up to date in O(1) per char:
//! distinct chars, fragment kinds (text between separators) and char-trigram redundancy.
//!
//! Distinct counts are kept in [`BUCKETS`] hashed buckets. A collision can only merge two kinds into
//! one, so the text can look slightly *more* repetitive than it is, never less; with a window of
//! 1,600 chars the error is a few percent of the count, far from the rules' thresholds, and it is
//! deterministic (the same text always gives the same counts).

use crate::hash::SeqHasher;
use std::collections::VecDeque;

/// Buckets per distinct-count.
pub(crate) const BUCKETS: usize = 1 << BUCKET_BITS;
const BUCKET_BITS: u32 = 12;

/// A multiset of hashed kinds: how many members, how many distinct buckets occupied.
struct Kinds {
    /// An array rather than a Vec: every bucket index is below its length by construction, and the
    /// compiler can see that, so the hot path has no bounds checks.
    counts: Box<[u32; BUCKETS]>,
    distinct: usize,
}

impl Kinds {
    fn new() -> Self {
        Kinds { counts: Box::new([0; BUCKETS]), distinct: 0 }
    }
    /// Multiply-shift hashing into the buckets (the top bits of an odd multiple spread well).
    #[inline]
    fn bucket(h: u64) -> usize {
        (h.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - BUCKET_BITS)) as usize
    }
    // Whether a bucket was empty is as random as the hash, so it is added, not branched on.
    #[inline]
    fn add(&mut self, b: usize) {
        self.distinct += usize::from(self.counts[b] == 0);
        self.counts[b] += 1;
    }
    #[inline]
    fn remove(&mut self, b: usize) {
        self.counts[b] -= 1;
        self.distinct -= usize::from(self.counts[b] == 0);
    }
}

/// True for chars that end a fragment: spaces and punctuation (Latin and CJK).
#[inline]
pub(crate) fn is_fragment_separator(c: char) -> bool {
    if c.is_ascii() {
        return ASCII_SEPARATORS[c as usize];
    }
    matches!(c, '，' | '。' | '！' | '？' | '、' | '；' | '：' | '…' | '“' | '”' | '‘' | '’' | '（' | '）' | '《' | '》' | '「' | '」' | '—')
}

/// The ASCII separators, by code: the space and every punctuation char but `_`. Built at compile
/// time, so the per-char test is one load.
const ASCII_SEPARATORS: [bool; 128] = {
    let mut table = [false; 128];
    let mut c = 0u8;
    while c < 128 {
        table[c as usize] = c == b' ' || (c.is_ascii_punctuation() && c != b'_');
        c += 1;
    }
    table
};

/// What the ring keeps of a char in the window: its bucket in `char_kinds`, and the bucket in
/// `trigrams` of the trigram that ends with it ([`NO_TRIGRAM`] for the first two chars after a
/// clear). Buckets rather than chars: a char leaving the window costs two loads, no rehashing.
type RingEntry = [u16; 2];

/// Bucket numbers have [`BUCKET_BITS`] bits, so this is none of them.
const NO_TRIGRAM: u16 = u16::MAX;

pub(crate) struct WindowStats {
    window: usize,
    /// The window as a ring of a power-of-two size (at least `window`), so a slot is a mask away:
    /// `ring[(start + i) & mask]` is the i-th oldest char's entry.
    ring: Vec<RingEntry>,
    mask: usize,
    start: usize,
    len: usize,
    /// The last two chars pushed, oldest first (meaningful once `len >= 2`).
    last_two: [u32; 2],
    char_kinds: Kinds,
    trigrams: Kinds,
    fragments: Kinds,
    /// Fragments that ended inside the window: (end position, bucket, length).
    fragment_queue: VecDeque<(u64, usize, u32)>,
    fragment: SeqHasher,
    fragment_len: u32,
}

impl WindowStats {
    pub(crate) fn new(window: usize) -> Self {
        let window = window.max(3);
        let ring = window.next_power_of_two();
        WindowStats {
            window,
            ring: vec![[0, NO_TRIGRAM]; ring],
            mask: ring - 1,
            start: 0,
            len: 0,
            last_two: [0, 0],
            char_kinds: Kinds::new(),
            trigrams: Kinds::new(),
            fragments: Kinds::new(),
            fragment_queue: VecDeque::new(),
            fragment: SeqHasher::new(),
            fragment_len: 0,
        }
    }

    /// Empties the window, keeping its allocations (the window rules restart it whenever the text
    /// turns low-gain again).
    pub(crate) fn clear(&mut self) {
        self.start = 0;
        self.len = 0;
        for kinds in [&mut self.char_kinds, &mut self.trigrams, &mut self.fragments] {
            kinds.counts.fill(0);
            kinds.distinct = 0;
        }
        self.fragment_queue.clear();
        self.fragment = SeqHasher::new();
        self.fragment_len = 0;
    }

    #[inline]
    fn trigram_bucket(a: u32, b: u32, c: u32) -> usize {
        Kinds::bucket(((u64::from(a) << 42) ^ (u64::from(b) << 21) ^ u64::from(c)).wrapping_mul(0xff51_afd7_ed55_8ccd) ^ u64::from(a))
    }

    /// Ring index of `start + i`.
    #[inline]
    fn slot(&self, i: usize) -> usize {
        self.start.wrapping_add(i) & self.mask
    }

    /// Adds the normalized chars at positions `first, first + 1, ...`, then lets go of the fragments
    /// that ended a window or more before the last of them. The readers below describe the window
    /// ending at that last char.
    ///
    /// Fragments leave here, once per call, rather than per char: nothing reads the counts between
    /// two chars of a run, and a fragment out of the window at one position is out at every later one.
    pub(crate) fn extend(&mut self, first: u64, chars: impl Iterator<Item = u32>) {
        let mut pos = first;
        for ch in chars {
            self.push(pos, ch);
            pos += 1;
        }
        if pos > first {
            self.expire_fragments(pos - 1);
        }
    }

    #[inline]
    fn push(&mut self, pos: u64, ch: u32) {
        if self.len == self.window {
            // The oldest char leaves, and with it the trigram it starts, which is the one recorded
            // as ending two chars later (the window holds at least three chars).
            let oldest = self.ring[self.start][0];
            let trigram = self.ring[self.slot(2)][1];
            debug_assert_ne!(trigram, NO_TRIGRAM);
            self.char_kinds.remove(usize::from(oldest));
            self.trigrams.remove(usize::from(trigram));
            self.start = self.slot(1);
            self.len -= 1;
        }
        let trigram = if self.len >= 2 {
            let b = Self::trigram_bucket(self.last_two[0], self.last_two[1], ch);
            self.trigrams.add(b);
            b as u16
        } else {
            NO_TRIGRAM
        };
        let char_bucket = Kinds::bucket(u64::from(ch));
        self.char_kinds.add(char_bucket);
        let j = self.slot(self.len);
        self.ring[j] = [char_bucket as u16, trigram];
        self.len += 1;
        self.last_two = [self.last_two[1], ch];

        if is_fragment_separator(char::from_u32(ch).unwrap_or(' ')) {
            if self.fragment_len > 0 {
                let b = Kinds::bucket(self.fragment.finish());
                self.fragments.add(b);
                self.fragment_queue.push_back((pos, b, self.fragment_len));
            }
            self.fragment = SeqHasher::new();
            self.fragment_len = 0;
        } else {
            self.fragment.push(ch);
            self.fragment_len = self.fragment_len.saturating_add(1);
        }
    }

    /// Drops the fragments that ended a window or more before `pos`.
    fn expire_fragments(&mut self, pos: u64) {
        while let Some(&(end, b, _)) = self.fragment_queue.front() {
            if end + self.window as u64 <= pos {
                self.fragments.remove(b);
                self.fragment_queue.pop_front();
            } else {
                break;
            }
        }
    }

    /// Distinct chars in the window.
    pub(crate) fn distinct_chars(&self) -> usize {
        self.char_kinds.distinct
    }

    /// Distinct chars over window length.
    pub(crate) fn char_ratio(&self) -> f64 {
        self.char_kinds.distinct as f64 / self.len.max(1) as f64
    }

    /// Kinds of fragment that ended in the window (the one still open is not counted).
    pub(crate) fn fragment_kinds(&self) -> usize {
        self.fragments.distinct
    }

    /// Median length of the fragments that ended in the window (0 when there are none). O(k log k).
    pub(crate) fn median_fragment(&self) -> usize {
        let mut lengths: Vec<u32> = self.fragment_queue.iter().map(|f| f.2).collect();
        if lengths.is_empty() {
            return 0;
        }
        lengths.sort_unstable();
        lengths[lengths.len() / 2] as usize
    }

    /// 1 − distinct trigrams / trigrams.
    pub(crate) fn trigram_redundancy(&self) -> f64 {
        let total = self.len.saturating_sub(2);
        if total == 0 {
            return 0.0;
        }
        1.0 - self.trigrams.distinct as f64 / total as f64
    }

    /// Few distinct chars, short fragments, few kinds of fragment (the median is computed last, only
    /// when the cheap gates pass).
    pub(crate) fn collapsed(&self, max_ratio: f64, max_median: usize, max_kinds: usize) -> bool {
        self.len > 0
            && self.char_ratio() < max_ratio
            && self.fragment_kinds() <= max_kinds
            && self.fragment_kinds() > 0
            && self.median_fragment() < max_median
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(text: &str, window: usize) -> WindowStats {
        let mut w = WindowStats::new(window);
        w.extend(0, text.chars().map(u32::from));
        w
    }

    #[test]
    fn a_phrase_loop_collapses_and_prose_does_not() {
        let looped = feed(&"好的，好，好的执行。".repeat(40), 1600);
        assert!(looped.char_ratio() < 0.02);
        assert!(looped.fragment_kinds() <= 3);
        assert!(looped.collapsed(0.10, 10, 6));
        assert!(looped.trigram_redundancy() > 0.95);
        let prose = feed("The quick brown fox jumps over the lazy dog while the band plays a waltz in the square.", 1600);
        assert!(!prose.collapsed(0.10, 10, 6));
        assert!(prose.trigram_redundancy() < 0.2);
    }

    #[test]
    fn counts_follow_the_window() {
        let w = feed(&format!("{}{}", "abcdefghij".repeat(50), "x".repeat(100)), 100);
        assert_eq!(w.len, 100);
        assert_eq!(w.distinct_chars(), 1);
        assert!(w.trigram_redundancy() > 0.98);
    }

    #[test]
    fn a_cleared_window_is_a_new_one() {
        let text = "好的，好，好的执行。 aa bbbb, cc. ".repeat(30);
        let mut reused = feed(&"The quick brown fox, jumps; over it. ".repeat(20), 200);
        reused.clear();
        reused.extend(0, text.chars().map(u32::from));
        let fresh = feed(&text, 200);
        assert_eq!(reused.distinct_chars(), fresh.distinct_chars());
        assert_eq!(reused.fragment_kinds(), fresh.fragment_kinds());
        assert_eq!(reused.median_fragment(), fresh.median_fragment());
        assert_eq!(reused.trigram_redundancy(), fresh.trigram_redundancy());
        assert_eq!(reused.char_ratio(), fresh.char_ratio());
    }

    #[test]
    fn the_median_fragment_is_over_fragments_in_the_window() {
        let w = feed("aa bbbb cccccc dd ", 1600);
        assert_eq!(w.fragment_kinds(), 4);
        assert_eq!(w.median_fragment(), 4);
    }

    #[test]
    fn the_ascii_separator_table_is_space_and_punctuation_but_underscore() {
        for c in (0u8..128).map(char::from) {
            assert_eq!(is_fragment_separator(c), c == ' ' || (c.is_ascii_punctuation() && c != '_'), "{:?}", c);
        }
        assert!(is_fragment_separator('。') && !is_fragment_separator('好'));
    }

    #[test]
    fn runs_fed_in_pieces_describe_the_same_window_as_one_run() {
        // Fragments leave at the end of each run, so any cut of the text must give the same counts.
        let text: Vec<u32> = "aa bbbb, cc. 好的，好。 dd ee ff gg, hh ii. ".repeat(25).chars().map(u32::from).collect();
        let whole = {
            let mut w = WindowStats::new(90);
            w.extend(0, text.iter().copied());
            w
        };
        for cut in [1, 7, 128] {
            let mut pieces = WindowStats::new(90);
            for (i, piece) in text.chunks(cut).enumerate() {
                pieces.extend((i * cut) as u64, piece.iter().copied());
            }
            assert_eq!(pieces.distinct_chars(), whole.distinct_chars());
            assert_eq!(pieces.fragment_kinds(), whole.fragment_kinds());
            assert_eq!(pieces.median_fragment(), whole.median_fragment());
            assert_eq!(pieces.trigram_redundancy(), whole.trigram_redundancy());
        }
        assert!(whole.fragment_kinds() > 0 && whole.median_fragment() > 0);
    }
}
