//! Information gain: how much of a stretch of text says something not said before.
//!
//! The unit of "something" is a token bigram (two consecutive tokens, see [`crate::tokenize`]):
//! single tokens recur too easily (every CJK char is a token), longer n-grams make one edited word
//! look like a lot of news. A stretch of text whose bigrams all occurred earlier in the retained text
//! adds no information; a counter ("step 97", "step 98") or a new name adds one bigram per change.
//!
//! This is what separates a loop from templated output that repeats as much: 99 verses of a song that
//! count down keep producing a new number, a model stuck on "Thank you." does not.
//!
//! A second ledger masks numbers ([`Gain::NumbersMasked`]): a unit that only changes a number each
//! time adds nothing there. The loop rules use it for *steering* only — a counter stuck in a loop and
//! a table whose rows differ in numbers have the same shape, and the table must never be aborted.

use crate::hash::mix64;
use crate::table::{PosTable, SMALL_TABLE};
use std::collections::VecDeque;

/// Which bigrams count as news.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Gain {
    /// Every token as written: a changed number is news.
    Exact,
    /// Numbers masked: "step 97" and "step 98" are the same bigram. A counter adds nothing.
    NumbersMasked,
}

/// The bigrams seen, of both kinds, by the position where each was last seen.
///
/// One table serves both kinds. A bigram of two words is the same bigram in both, and most bigrams
/// are of words, so two tables would hold the same keys twice and probe for them twice; one with a
/// number differs between the kinds (the masked one has [`NUMBER_TOKEN`], which no exact bigram
/// has), so the kinds never answer for each other.
struct Seen {
    table: PosTable,
    /// The base the table was last pruned to: every entry since holds a position at or after it.
    pruned_to: u64,
}

impl Seen {
    /// Records `bigram` at `end`; true when it was never seen (since pruning, see [`Seen::forget_before`]).
    /// Always inlined, as is the per-token path that calls it: the wasm build otherwise keeps each a
    /// call, once or twice per token, and the calls cost 3–6% of a 1 MB batch check.
    #[inline(always)]
    fn first_sight(&mut self, bigram: u64, end: u64) -> bool {
        self.table.insert(bigram, end).is_none()
    }

    /// Drops the bigrams last seen before `base`. Pruning to the base of the last time would drop
    /// nothing, so then it does nothing: text with a token per char (CJK) keeps more bigrams than
    /// the pruning threshold for good, and each housekeeping would otherwise rebuild the table to
    /// no effect (quadratic in a batch, whose base never moves).
    fn forget_before(&mut self, base: u64) {
        if base > self.pruned_to {
            self.table.retain(|v| v >= base);
            self.pruned_to = base;
        }
    }
}

/// Where the never-seen bigrams of one kind ended.
struct Ledger {
    /// The last token, as this kind sees it.
    prev: u64,
    /// Positions (normalized chars) where a never-seen bigram ended, oldest first.
    novel: VecDeque<u64>,
}

impl Ledger {
    fn new() -> Self {
        Ledger { prev: 0, novel: VecDeque::new() }
    }

    /// The bigram that token `t` ends.
    #[inline]
    fn bigram(&mut self, t: u64) -> u64 {
        let bigram = mix64(self.prev.rotate_left(29) ^ t);
        self.prev = t;
        bigram
    }

    #[inline]
    fn record(&mut self, novel: bool, end: u64, horizon: u64) {
        if novel {
            self.novel.push_back(end);
        }
        while let Some(&front) = self.novel.front() {
            if front + horizon < end {
                self.novel.pop_front();
            } else {
                break;
            }
        }
    }

    /// Novel bigrams at or after `start`, counting at most `limit + 1` of them (enough to tell
    /// "at most `limit`"), walking back from the newest: O(limit) however long the text.
    fn novel_since(&self, start: u64, limit: usize) -> usize {
        self.novel.iter().rev().take(limit + 1).take_while(|&&p| p >= start).count()
    }

    #[cfg(test)]
    fn novel_in(&self, start: u64, end: u64) -> usize {
        let lo = self.novel.partition_point(|&p| p < start);
        let hi = self.novel.partition_point(|&p| p < end);
        hi.saturating_sub(lo)
    }
}

pub(crate) struct Novelty {
    seen: Seen,
    exact: Ledger,
    masked: Ledger,
    horizon: u64,
}

/// Hash standing for any all-digit token when numbers are masked.
const NUMBER_TOKEN: u64 = 0x6e75_6d62_6572_2323;

impl Novelty {
    /// Tracks novelty; positions of novel bigrams are kept for `horizon` chars.
    #[cfg(test)]
    pub(crate) fn new(horizon: u64) -> Self {
        Novelty::with_expected(horizon, 0)
    }

    /// Like [`Novelty::new`], with its table sized at once for a text of `expected` chars (a batch
    /// knows its length; 0: unknown). Otherwise a batch check grows the table a dozen times, and
    /// each growth rehashes it.
    pub(crate) fn with_expected(horizon: u64, expected: usize) -> Self {
        // About one new bigram per 16 chars: prose has a word every six chars, and repeats some
        // bigrams; a looping text has far fewer, and its table is zeroed, never filled.
        let capacity = (expected / 16).max(SMALL_TABLE);
        Novelty { seen: Seen { table: PosTable::with_capacity(capacity), pruned_to: 0 }, exact: Ledger::new(), masked: Ledger::new(), horizon }
    }

    /// Records a token (from [`crate::tokenize::TokenStream`]) that ended at normalized position `end`.
    #[inline(always)]
    pub(crate) fn token(&mut self, hash: u64, is_number: bool, end: u64) {
        let exact = self.exact.bigram(hash);
        let masked = self.masked.bigram(if is_number { NUMBER_TOKEN } else { hash });
        let exact_novel = self.seen.first_sight(exact, end);
        // Equal keys are the same bigram (two words): it was just looked up.
        let masked_novel = if masked == exact { exact_novel } else { self.seen.first_sight(masked, end) };
        self.exact.record(exact_novel, end, self.horizon);
        self.masked.record(masked_novel, end, self.horizon);
    }

    /// Number of novel bigrams that ended in `[start, end)` (within the horizon).
    #[cfg(test)]
    pub(crate) fn novel_in(&self, start: u64, end: u64) -> usize {
        self.novel_in_by(Gain::Exact, start, end)
    }

    /// Whether at most `limit` novel bigrams of the chosen kind ended at or after `start`: the
    /// question the loop rules ask about the text up to now, answered in O(limit).
    #[inline]
    pub(crate) fn at_most_since(&self, gain: Gain, start: u64, limit: usize) -> bool {
        let ledger = match gain {
            Gain::Exact => &self.exact,
            Gain::NumbersMasked => &self.masked,
        };
        ledger.novel_since(start, limit) <= limit
    }

    /// Like [`Novelty::novel_in`], for the chosen kind of gain.
    #[cfg(test)]
    pub(crate) fn novel_in_by(&self, gain: Gain, start: u64, end: u64) -> usize {
        match gain {
            Gain::Exact => self.exact.novel_in(start, end),
            Gain::NumbersMasked => self.masked.novel_in(start, end),
        }
    }

    /// Forgets bigrams last seen before `base` once they dominate the table.
    pub(crate) fn forget_before(&mut self, base: u64, retained: u64) {
        if self.seen.table.len() as u64 > retained / 2 + 1024 {
            self.seen.forget_before(base);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(text: &str) -> Novelty {
        let mut n = Novelty::new(u64::MAX / 2);
        let mut tokens = crate::tokenize::TokenStream::default();
        for (i, c) in text.chars().chain(std::iter::once(' ')).enumerate() {
            tokens.push(c as u32, |h, num, this| n.token(h, num, i as u64 + u64::from(this)));
        }
        n
    }

    #[test]
    fn pruning_forgets_what_was_last_seen_before_the_base_and_only_that() {
        let mut n = Novelty::new(u64::MAX / 2);
        // Token t at position t: bigram (t - 1, t) last seen at t, one entry for both kinds.
        for t in 1..=1000u64 {
            n.token(t, false, t);
        }
        assert_eq!(n.seen.table.len(), 1000);
        n.seen.forget_before(600);
        assert_eq!(n.seen.table.len(), 401);
        assert_eq!(n.seen.pruned_to, 600);
        // A bigram last seen before the base is news again, to both kinds; one after it is not.
        let (exact, masked) = (n.exact.novel.len(), n.masked.novel.len());
        n.exact.prev = 99;
        n.masked.prev = 99;
        n.token(100, false, 1001);
        assert_eq!((n.exact.novel.len(), n.masked.novel.len()), (exact + 1, masked + 1));
        n.exact.prev = 699;
        n.masked.prev = 699;
        n.token(700, false, 1002);
        assert_eq!((n.exact.novel.len(), n.masked.novel.len()), (exact + 1, masked + 1));
        // Pruning to the same base again has nothing to drop, and is skipped; a later base prunes.
        n.seen.forget_before(600);
        assert_eq!(n.seen.table.get(mix64(99u64.rotate_left(29) ^ 100)), Some(1001));
        n.seen.forget_before(1001);
        assert_eq!(n.seen.pruned_to, 1001);
        assert_eq!(n.seen.table.len(), 2);
    }

    #[test]
    fn one_table_answers_each_kind_as_two_would() {
        // "step 1", "step 2": new to the exact kind each time, and to the masked kind once; words
        // around them are new once to both.
        let text = "run step 1 now. run step 2 now. run step 3 now. ";
        let n = feed(text);
        let first = text.find("step 2").unwrap() as u64;
        // From "step 2" on, exact sees "step 2", "2 now", "step 3" and "3 now" as new.
        assert_eq!(n.novel_in_by(Gain::Exact, first, text.len() as u64 + 1), 4);
        assert_eq!(n.novel_in_by(Gain::NumbersMasked, first, text.len() as u64 + 1), 0);
        // Masked keys of number bigrams are held apart from every exact key.
        let words_only = feed("run step now. run step now. ");
        assert!(n.seen.table.len() > words_only.seen.table.len() + 4);
    }

    #[test]
    fn a_verbatim_repeat_adds_nothing_after_its_first_boundary() {
        let unit = "thank you for watching. ";
        let text = unit.repeat(5);
        let n = feed(&text);
        let u = unit.len() as u64;
        // The bigram "watching thank" is new once, at the start of the second copy.
        assert_eq!(n.novel_in(2 * u, 5 * u + 1), 0);
        assert_eq!(n.novel_in(u, 2 * u), 1);
    }

    #[test]
    fn a_counter_adds_one_bigram_per_step() {
        let text: String = (0..10).map(|i| format!("step {} done. ", i)).collect();
        let n = feed(&text);
        let half = text.len() as u64 / 2;
        assert!(n.novel_in(half, text.len() as u64 + 1) >= 5);
    }

    #[test]
    fn masking_numbers_makes_a_counter_silent() {
        let text: String = (0..12).map(|i| format!("attempt {} failed, retrying. ", i)).collect();
        let n = feed(&text);
        let len = text.len() as u64;
        assert!(n.novel_in_by(Gain::Exact, len / 2, len + 1) > 0);
        assert_eq!(n.novel_in_by(Gain::NumbersMasked, len / 2, len + 1), 0);
    }

    #[test]
    fn cjk_chars_are_tokens() {
        let n = feed("该项检查通过。该项检查通过。该项检查通过。");
        assert_eq!(n.novel_in(14, 22), 0);
        assert!(n.novel_in(0, 7) >= 5);
    }
}
