//! The n-gram pass: near-exact repeated sections found through rolling-hash fingerprints.
//!
//! Every normalized position `i` gets the Rabin–Karp hash of the [`GRAM`]-char gram ending at `i`.
//! Two indexes answer "where did this gram last occur":
//! - a *dense* index of every gram of the last [`DENSE_WINDOW`] chars (the most recent occurrence is
//!   what reveals a loop's period), and
//! - a *sparse* index of every `step_size`-th gram of everything retained, for repeats far apart.
//!
//! A hit (verified char by char, so hash collisions cannot create findings) opens a *segment*: an exact
//! match on diagonal `d` (text at `i` equals text at `i - d`), extended backward to where it really
//! starts and forward one char at a time as text arrives. Segments on nearly the same diagonal, separated
//! by gaps of at most `window_size` chars, are chained as long as the chain stays at least
//! `ngram_threshold` similar (matched chars / span): that is a near-exact repeat with an edited word
//! or a counter in it. While a segment is open no lookups are needed, so a loop costs one char
//! comparison per char.
//!
//! Cost: O(1) amortized per char (one hash update, at most two table lookups, one insert); memory:
//! O(DENSE_WINDOW + retained / step_size).

use crate::hash::{mix64, pow_wrapping, ROLL_BASE};
use crate::key_filter::KeyFilter;
use crate::recent::RecentIndex;
use crate::table::{PosTable, SMALL_TABLE};
use crate::text::NormStream;

/// Length in chars of the fingerprinted grams; also the shortest exact match that can seed a segment.
pub const GRAM: usize = 16;
/// Every gram of this many most recent chars is indexed.
pub const DENSE_WINDOW: u64 = 2048;

/// An exact or near-exact repeat: the text of `[start, end)` matches the text `period` chars earlier
/// (the period may drift by a few chars along a chain, when the repeat has insertions or deletions).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Chain {
    /// Diagonal of the first segment: `start - first_period` is where the original begins.
    pub first_period: u64,
    /// Diagonal of the last segment: `end - period` is where the original ends.
    pub period: u64,
    pub start: u64,
    pub end: u64,
    /// Chars inside exact segments (the rest of the span is gaps).
    pub matched: u64,
}

impl Chain {
    #[inline]
    pub(crate) fn len(&self) -> u64 {
        self.end - self.start
    }
    /// Matched chars over the span.
    pub(crate) fn similarity(&self) -> f64 {
        self.matched as f64 / self.len().max(1) as f64
    }
}

#[derive(Clone, Copy)]
struct Segment {
    d: u64,
    start: u64,
    end: u64,
}

pub(crate) struct NgramPass {
    threshold: f64,
    max_gap: u64,
    step: u64,
    roll: u64,
    /// ROLL_BASE^GRAM: the weight of the char leaving the gram.
    out_weight: u64,
    dense: RecentIndex,
    sparse: PosTable,
    /// Every key of `sparse`: most grams were never sampled, and the filter says so without a
    /// probe of the index, which a long text makes larger than the caches.
    sparse_filter: KeyFilter,
    /// Next position whose gram goes into the sparse index (a multiple of `step`; kept so the hot
    /// path needs no division).
    next_sparse: u64,
    open: Option<Segment>,
    chain: Option<Chain>,
    /// Distance back to the previous occurrence of the gram ending at the last position (None when
    /// it never occurred, as far as the indexes know).
    last_distance: Option<u64>,
}

/// Drift of the diagonal tolerated inside one chain: an inserted or deleted word, not a new alignment.
/// Proportional to the period for short units, but never more than [`MAX_DRIFT`] chars: at a period of
/// thousands of chars a proportional bound would join unrelated matches.
#[inline]
fn drift_ok(a: u64, b: u64) -> bool {
    let diff = if a > b { a - b } else { b - a };
    diff <= 2.max(a.min(b) / 16).min(MAX_DRIFT)
}

/// Largest drift of the diagonal inside one chain, in chars (a phrase inserted or deleted).
const MAX_DRIFT: u64 = 32;

impl NgramPass {
    /// A pass joining repeats at least `threshold` similar across gaps up to `max_gap`, sampling the
    /// sparse index every `step` chars, with its dense index sized for `expected` chars (0: unknown).
    pub(crate) fn new(threshold: f64, max_gap: usize, step: usize, expected: usize) -> Self {
        let sparse_keys = (expected / step.max(1)).max(SMALL_TABLE);
        NgramPass {
            threshold,
            max_gap: max_gap as u64,
            step: step as u64,
            roll: 0,
            out_weight: pow_wrapping(ROLL_BASE, GRAM as u32),
            dense: RecentIndex::with_expected(DENSE_WINDOW, expected),
            // The sparse index takes one gram in `step`: a batch knows how many it will hold.
            sparse: PosTable::with_capacity(sparse_keys),
            sparse_filter: KeyFilter::with_capacity(sparse_keys),
            next_sparse: 0,
            open: None,
            chain: None,
            last_distance: None,
        }
    }

    /// The chain being built, including the segment still open.
    pub(crate) fn live_chain(&self) -> Option<Chain> {
        match (self.chain, self.open) {
            (Some(c), Some(s)) if self.can_join(&c, &s) => Some(self.joined(&c, &s)),
            (_, Some(s)) => Some(Chain { first_period: s.d, period: s.d, start: s.start, end: s.end, matched: s.end - s.start }),
            (c, None) => c,
        }
    }

    /// Distance to the previous occurrence of the gram ending at the position just stepped.
    #[inline]
    pub(crate) fn last_distance(&self) -> Option<u64> {
        self.last_distance
    }

    /// The exact match still growing, as a one-segment chain.
    pub(crate) fn open_segment(&self) -> Option<Chain> {
        self.open.map(|s| Chain { first_period: s.d, period: s.d, start: s.start, end: s.end, matched: s.end - s.start })
    }

    fn can_join(&self, c: &Chain, s: &Segment) -> bool {
        if s.start < c.end || s.start - c.end > self.max_gap || !drift_ok(c.period, s.d) {
            return false;
        }
        let j = self.joined(c, s);
        j.similarity() >= self.threshold
    }

    fn joined(&self, c: &Chain, s: &Segment) -> Chain {
        Chain { first_period: c.first_period, period: s.d, start: c.start, end: s.end, matched: c.matched + (s.end - s.start) }
    }

    /// Processes the normalized char at `pos` (already appended to `text`). Returns a chain that was
    /// just completed (it can no longer grow), if any.
    #[inline]
    pub(crate) fn step(&mut self, text: &NormStream, pos: u64, ch: u32) -> Option<Chain> {
        // The gram ending here is whole and retained (the base is never negative, so this also says
        // that `GRAM` chars have arrived).
        let gram_ready = pos + 1 >= text.base() + GRAM as u64;
        self.roll = self.roll.wrapping_mul(ROLL_BASE).wrapping_add(u64::from(ch) + 1);
        if pos >= GRAM as u64 {
            let leaving = if pos - (GRAM as u64) >= text.base() { text.at(pos - GRAM as u64) } else { 0 };
            self.roll = self.roll.wrapping_sub(self.out_weight.wrapping_mul(u64::from(leaving) + 1));
        }
        let mut finished = None;
        self.last_distance = None;

        // Extend the open segment, or close it at the first mismatch.
        if let Some(mut seg) = self.open {
            if pos - seg.d >= text.base() && text.at(pos - seg.d) == ch {
                seg.end = pos + 1;
                self.open = Some(seg);
            } else {
                self.open = None;
                finished = self.close_segment(seg);
            }
        }

        if gram_ready {
            let g = mix64(self.roll);
            // Indexing first: the dense table hands back the gram's previous occurrence.
            let prev = self.index(g, pos);
            if let Some(seg) = self.open {
                if seg.end - seg.start >= GRAM as u64 {
                    self.last_distance = Some(seg.d);
                }
            } else {
                let hit = prev.or_else(|| self.sparse_get(g).filter(|&j| j + 1 >= text.base() + GRAM as u64));
                self.last_distance = hit.filter(|&j| j < pos).map(|j| pos - j);
                if let Some(j) = hit {
                    if j < pos && self.verify(text, j, pos) {
                        let d = pos - j;
                        let mut start = pos + 1 - GRAM as u64;
                        // Recover the part of the match that preceded the seed (a sparse hit comes late,
                        // and after an edit the gram needs GRAM clean chars before it can fire).
                        let floor = self.chain.map_or(0, |c| c.end).max(text.base() + d);
                        while start > floor && text.at(start - 1) == text.at(start - 1 - d) {
                            start -= 1;
                        }
                        self.open = Some(Segment { d, start, end: pos + 1 });
                    }
                }
            }
        }
        finished
    }

    fn verify(&self, text: &NormStream, j: u64, i: u64) -> bool {
        let g = GRAM as u64;
        if j + 1 < g || j + 1 - g < text.base() {
            return false;
        }
        (0..g).all(|k| text.at(j - k) == text.at(i - k))
    }

    /// Indexes the gram ending at `pos`; returns its previous occurrence within the dense window.
    #[inline]
    fn index(&mut self, g: u64, pos: u64) -> Option<u64> {
        if pos >= self.next_sparse {
            if pos == self.next_sparse {
                self.sparse.insert(g, pos);
                self.sparse_filter.add(g);
                if self.sparse.len() > self.sparse_filter.capacity() {
                    self.refilter();
                }
            }
            self.next_sparse = (pos / self.step + 1) * self.step;
        }
        self.dense.insert(g, pos)
    }

    /// The sparse index's entry for `key`, asked of the index only when the filter cannot rule it out.
    #[inline]
    fn sparse_get(&self, key: u64) -> Option<u64> {
        if self.sparse_filter.may_contain(key) {
            self.sparse.get(key)
        } else {
            None
        }
    }

    /// Drops sparse entries older than `base` once they make up most of the table.
    pub(crate) fn forget_before(&mut self, base: u64, retained: u64) {
        let live_estimate = retained / self.step + 64;
        if self.sparse.len() as u64 > 2 * live_estimate {
            self.sparse.retain(|v| v >= base + GRAM as u64);
            // The filter forgets nothing, so it is made again from what the index kept.
            self.refilter();
        }
    }

    /// Makes the sparse index's filter again from its keys, with room for as many again.
    fn refilter(&mut self) {
        self.sparse_filter = KeyFilter::of_slot_keys(self.sparse.slot_keys(), 2 * self.sparse.len().max(SMALL_TABLE));
    }

    /// Joins a closed segment to the current chain or starts a new chain; returns the chain that
    /// this retires, if any.
    fn close_segment(&mut self, seg: Segment) -> Option<Chain> {
        match self.chain {
            Some(c) if self.can_join(&c, &seg) => {
                self.chain = Some(self.joined(&c, &seg));
                None
            }
            prev => {
                self.chain = Some(Chain { first_period: seg.d, period: seg.d, start: seg.start, end: seg.end, matched: seg.end - seg.start });
                prev
            }
        }
    }

    /// Closes everything (end of a batch text); returns the chains still pending, oldest first.
    pub(crate) fn finish(&mut self) -> Vec<Chain> {
        let mut out = Vec::new();
        if let Some(seg) = self.open.take() {
            if let Some(c) = self.close_segment(seg) {
                out.push(c);
            }
        }
        if let Some(c) = self.chain.take() {
            out.push(c);
        }
        out
    }

    /// The chain currently building is stale when no segment is open and text has moved past its gap.
    pub(crate) fn retire_stale(&mut self, pos: u64) -> Option<Chain> {
        match (self.open, self.chain) {
            (None, Some(c)) if pos > c.end + self.max_gap => self.chain.take(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `text` through the normalizer and the pass the way the detector does; returns every chain
    /// in the order it was completed (stale chains and the final flush included).
    fn chains_with(text: &str, threshold: f64, gap: usize, step: usize, retain: usize) -> Vec<Chain> {
        let mut norm = NormStream::new(retain);
        let mut pass = NgramPass::new(threshold, gap, step, 0);
        let mut out = Vec::new();
        for c in text.chars() {
            norm.push(c, |t, pos, ch| {
                if let Some(done) = pass.step(t, pos, ch) {
                    out.push(done);
                }
            });
            if let Some(stale) = pass.retire_stale(norm.end()) {
                out.push(stale);
            }
        }
        out.extend(pass.finish());
        out
    }

    fn chains(text: &str) -> Vec<Chain> {
        chains_with(text, 0.95, 100, 25, usize::MAX)
    }

    /// A deterministic stretch of distinct, non-repeating lowercase text (no 16-char gram recurs).
    fn noise(seed: u64, n: usize) -> String {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (b'a' + (x % 26) as u8) as char
            })
            .collect()
    }

    #[test]
    fn text_shorter_than_a_gram_finds_nothing() {
        assert!(chains("abcabcabcab").is_empty());
        assert!(chains("").is_empty());
    }

    #[test]
    fn unique_text_finds_nothing() {
        assert!(chains(&noise(1, 5000)).is_empty());
    }

    #[test]
    fn an_exact_repeat_is_one_chain_with_the_right_period() {
        let unit = noise(2, 120);
        let text = format!("{}{}{}", unit, unit, noise(3, 40));
        let found = chains(&text);
        assert_eq!(found.len(), 1, "{:?}", found);
        let c = found[0];
        assert_eq!((c.start, c.end), (120, 240));
        assert_eq!((c.first_period, c.period), (120, 120));
        assert_eq!(c.matched, 120);
        assert_eq!(c.similarity(), 1.0);
    }

    #[test]
    fn a_back_to_back_loop_is_one_chain_at_the_unit_period() {
        let unit = noise(4, 30);
        let text = unit.repeat(10);
        let found = chains(&text);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].period, 30);
        assert_eq!((found[0].start, found[0].end), (30, 300));
    }

    #[test]
    fn case_and_whitespace_do_not_break_a_match() {
        let unit = noise(5, 80);
        let shouty: String = unit.chars().enumerate().map(|(i, c)| if i % 10 == 9 { ' ' } else { c.to_ascii_uppercase() }).collect();
        let quiet: String = crate::lowercase::lowercase_str(&shouty).replace(' ', " \t\n ");
        let found = chains(&format!("{} {}", shouty, quiet));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].similarity(), 1.0);
        assert!(found[0].len() >= 80);
    }

    #[test]
    fn an_edited_char_is_bridged_when_the_chain_stays_similar() {
        let unit = noise(6, 300);
        let mut edited: Vec<char> = unit.chars().collect();
        edited[150] = if edited[150] == 'z' { 'y' } else { 'z' };
        let edited: String = edited.into_iter().collect();
        let found = chains(&format!("{}{}", unit, edited));
        assert_eq!(found.len(), 1, "{:?}", found);
        let c = found[0];
        assert_eq!((c.start, c.end), (300, 600));
        assert_eq!(c.matched, 299);
        assert!(c.similarity() > 0.99 && c.similarity() < 1.0);
    }

    #[test]
    fn an_edit_is_not_bridged_when_the_threshold_forbids_it() {
        let unit = noise(7, 300);
        let mut edited: Vec<char> = unit.chars().collect();
        edited[150] = if edited[150] == 'z' { 'y' } else { 'z' };
        let edited: String = edited.into_iter().collect();
        let found = chains_with(&format!("{}{}", unit, edited), 1.0, 100, 25, usize::MAX);
        assert_eq!(found.len(), 2, "{:?}", found);
        assert!(found.iter().all(|c| c.similarity() == 1.0));
    }

    #[test]
    fn an_inserted_word_keeps_one_chain_with_a_drifted_period() {
        let unit = noise(8, 400);
        let inserted = format!("{}xyz{}", &unit[..200], &unit[200..]);
        let found = chains(&format!("{}{}", unit, inserted));
        assert_eq!(found.len(), 1, "{:?}", found);
        assert_eq!(found[0].first_period, 400);
        assert_eq!(found[0].period, 403);
    }

    #[test]
    fn a_repeat_beyond_the_dense_window_is_found_through_the_sparse_index() {
        let unit = noise(9, 200);
        let gap = noise(10, 3 * DENSE_WINDOW as usize);
        let text = format!("{}{}{}", unit, gap, unit);
        let found = chains(&text);
        assert_eq!(found.len(), 1, "{:?}", found);
        let c = found[0];
        let d = (200 + gap.len()) as u64;
        assert_eq!(c.first_period, d);
        // The seed comes late (every 25th gram is indexed), but the start is recovered backward.
        assert_eq!((c.start, c.end), (d, d + 200));
    }

    #[test]
    fn a_repeat_of_forgotten_text_is_not_found() {
        let unit = noise(11, 200);
        let gap = noise(12, 10_000);
        let found = chains_with(&format!("{}{}{}", unit, gap, unit), 0.95, 100, 25, 4096);
        assert!(found.is_empty(), "{:?}", found);
    }

    #[test]
    fn chains_are_completed_in_text_order_and_never_overlap() {
        let a = noise(13, 100);
        let b = noise(14, 100);
        let text = format!("{a}{}{a}{}{b}{}{b}", noise(15, 300), noise(16, 300), noise(17, 300), a = a, b = b);
        let found = chains(&text);
        assert_eq!(found.len(), 2, "{:?}", found);
        assert!(found[0].end <= found[1].start);
        assert_eq!(found[0].len(), 100);
        assert_eq!(found[1].len(), 100);
    }

    #[test]
    fn forget_before_drops_sparse_entries_only_when_they_dominate() {
        let mut norm = NormStream::new(4096);
        let mut pass = NgramPass::new(0.95, 100, 1, 0);
        for c in noise(18, 20_000).chars() {
            norm.push(c, |t, pos, ch| {
                pass.step(t, pos, ch);
            });
            let end = norm.end();
            if end % 4096 == 0 {
                pass.forget_before(norm.base(), end - norm.base());
            }
        }
        // Step 1 indexes every gram; after housekeeping the sparse index holds about the retained text.
        let retained = (norm.end() - norm.base()) as usize;
        assert!(pass.sparse.len() <= 2 * (retained + 64) + 4096, "sparse {} retained {}", pass.sparse.len(), retained);
    }
}
