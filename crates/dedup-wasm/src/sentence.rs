//! The sentence pass: loose, semantic repetition ("the same statement in other words").
//!
//! Each completed sentence with at least `min_sentence_tokens` distinct tokens is compared (token
//! Jaccard) with the eligible sentences before it, but only with the last `context_gap_max` of them:
//! proximity gating. A restatement far away is a summary or a callback, not a loop, and the gate keeps
//! the pass linear.
//!
//! A similar pair is not reported on its own. It needs corroboration: a second similar pair anywhere
//! in the text (then both are reported), or a similarity of at least [`STRONG_PAIR`] together with an
//! overlapping n-gram finding (checked by the caller). This is what keeps one echoed phrase from
//! counting as repetition.

use crate::similarity::jaccard_sorted;
use crate::split_sentences::{SentenceEnd, SentenceSplitter};
use crate::text::SourceSpan;
use std::collections::VecDeque;

/// A pair this similar may be confirmed by an overlapping n-gram finding instead of a second pair.
pub const STRONG_PAIR: f64 = 0.9;

/// How many of the latest eligible sentences [`SentencePass::mostly_recycled`] looks at, and how many of
/// them must restate an earlier sentence.
const RECENT_SENTENCES: u32 = 8;
const RECYCLED_OF_RECENT: u32 = 8;

/// Sentences longer than this many bytes are cut by the splitter (bounded memory on text without
/// punctuation).
const MAX_SENTENCE_BYTES: usize = 4096;

/// Two sentences judged to say the same thing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SentencePair {
    pub original: SourceSpan,
    pub repeat: SourceSpan,
    pub similarity: f64,
}

struct Eligible {
    tokens: Vec<u64>,
    span: SourceSpan,
}

pub(crate) struct SentencePass {
    threshold: f64,
    gap: usize,
    min_tokens: usize,
    splitter: SentenceSplitter,
    recent: VecDeque<Eligible>,
    /// A lone pair waiting for corroboration.
    held: Option<SentencePair>,
    pairs_seen: u64,
    /// Tokens of the sentence in progress.
    current: Vec<u64>,
    /// Bit i: the i-th latest eligible sentence was similar to one before it.
    similar_flags: u32,
    /// Eligible sentences judged so far.
    judged: u64,
    scratch: Vec<u64>,
}

impl SentencePass {
    pub(crate) fn new(threshold: f64, gap: usize, min_tokens: usize) -> Self {
        SentencePass {
            threshold,
            gap,
            min_tokens,
            splitter: SentenceSplitter::new(MAX_SENTENCE_BYTES),
            recent: VecDeque::new(),
            held: None,
            pairs_seen: 0,
            current: Vec::new(),
            similar_flags: 0,
            judged: 0,
            scratch: Vec::new(),
        }
    }

    /// Number of similar pairs found so far (corroborated or not).
    pub(crate) fn pairs_seen(&self) -> u64 {
        self.pairs_seen
    }

    /// True when most of the latest eligible sentences (at least [`RECYCLED_OF_RECENT`] of the last
    /// [`RECENT_SENTENCES`]) restated a sentence before them: the text is going round in circles,
    /// whatever the word order.
    pub(crate) fn mostly_recycled(&self) -> bool {
        self.similar_flags.count_ones() >= RECYCLED_OF_RECENT && self.judged >= RECENT_SENTENCES as u64
    }

    /// The pair awaiting corroboration, if any.
    pub(crate) fn held(&self) -> Option<SentencePair> {
        self.held
    }

    /// Feeds one source char to the splitter, before its tokens arrive. When the char completes a
    /// sentence (it belongs to the next one), the sentence is judged and reportable pairs are pushed
    /// onto `reported`; returns whether a sentence ended.
    pub(crate) fn push_char(&mut self, c: char, reported: &mut Vec<SentencePair>) -> bool {
        match self.splitter.push(c) {
            Some(s) => {
                self.judge(&s, reported);
                true
            }
            None => false,
        }
    }

    /// Adds a token (from the shared tokenizer) to the sentence in progress.
    #[inline]
    pub(crate) fn push_token(&mut self, hash: u64) {
        self.current.push(hash);
    }

    /// Ends the text: judges the last sentence.
    pub(crate) fn finish(&mut self, reported: &mut Vec<SentencePair>) -> bool {
        match self.splitter.finish() {
            Some(s) => {
                self.judge(&s, reported);
                true
            }
            None => false,
        }
    }

    fn judge(&mut self, s: &SentenceEnd, reported: &mut Vec<SentencePair>) {
        // The sentence's tokens; the buffer left behind is recycled from the sentence that last left
        // the gate window.
        let mut tokens = std::mem::replace(&mut self.current, std::mem::take(&mut self.scratch));
        self.current.clear();
        tokens.sort_unstable();
        tokens.dedup();
        if tokens.len() < self.min_tokens {
            self.scratch = tokens;
            return;
        }
        let span = SourceSpan { start: s.start, end: s.end };
        let (n, threshold) = (tokens.len(), self.threshold);
        let best = self
            .recent
            .iter()
            .filter(|e| could_reach(e.tokens.len(), n, threshold))
            .map(|e| (jaccard_sorted(&e.tokens, &tokens), e.span))
            .filter(|(sim, _)| *sim >= self.threshold)
            .fold(None, |best: Option<(f64, SourceSpan)>, cur| match best {
                Some(b) if b.0 >= cur.0 => Some(b),
                _ => Some(cur),
            });
        self.judged += 1;
        self.similar_flags = ((self.similar_flags << 1) | u32::from(best.is_some())) & ((1 << RECENT_SENTENCES) - 1);
        if let Some((similarity, original)) = best {
            let pair = SentencePair { original, repeat: span, similarity };
            self.pairs_seen += 1;
            if self.pairs_seen >= 2 {
                if let Some(h) = self.held.take() {
                    reported.push(h);
                }
                reported.push(pair);
            } else {
                self.held = Some(pair);
            }
        }
        self.recent.push_back(Eligible { tokens, span });
        if self.recent.len() > self.gap {
            if let Some(old) = self.recent.pop_front() {
                self.scratch = old.tokens;
            }
        }
    }

    /// Releases the held pair when the caller confirmed it with an n-gram finding.
    pub(crate) fn confirm_held(&mut self) -> Option<SentencePair> {
        match self.held {
            Some(h) if h.similarity >= STRONG_PAIR => self.held.take(),
            _ => None,
        }
    }
}

/// False when two token sets of sizes `a` and `b` cannot reach a Jaccard of `threshold`: their
/// intersection is at most the smaller set and their union at least the larger, so the Jaccard is
/// at most `min / max`. Exact (the same division [`jaccard_sorted`] makes with the largest
/// intersection), so skipping such pairs changes no result; most sentences near each other differ
/// enough in length for it to skip the merge.
#[inline]
fn could_reach(a: usize, b: usize, threshold: f64) -> bool {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    hi == 0 || lo as f64 / hi as f64 >= threshold
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `text` (and ends it); returns the reported pairs and the pass.
    fn run(text: &str, threshold: f64, gap: usize, min_tokens: usize) -> (Vec<SentencePair>, SentencePass) {
        // Driven as the detector drives it: the splitter sees each char first, then the char's tokens
        // (from the lowercased stream) join the sentence in progress.
        let mut pass = SentencePass::new(threshold, gap, min_tokens);
        let mut tokens = crate::tokenize::TokenStream::default();
        let mut reported = Vec::new();
        for c in text.chars() {
            pass.push_char(c, &mut reported);
            for l in crate::lowercase::lowercase(c) {
                tokens.push(l as u32, |h, _, _| pass.push_token(h));
            }
        }
        tokens.flush(|h, _| pass.push_token(h));
        pass.finish(&mut reported);
        (reported, pass)
    }

    fn slice<'a>(text: &'a str, s: &SourceSpan) -> &'a str {
        &text[s.start.byte as usize..s.end.byte as usize]
    }

    #[test]
    fn a_lone_similar_pair_is_held_not_reported() {
        let text = "The cache was stale after the deploy. We restarted the workers. After the deploy the cache was stale.";
        let (reported, pass) = run(text, 0.75, 8, 4);
        assert!(reported.is_empty());
        assert_eq!(pass.pairs_seen(), 1);
        let held = pass.held().expect("a held pair");
        assert_eq!(held.similarity, 1.0);
        assert_eq!(slice(text, &held.original), "The cache was stale after the deploy.");
        assert_eq!(slice(text, &held.repeat), "After the deploy the cache was stale.");
    }

    #[test]
    fn a_second_pair_corroborates_and_reports_both() {
        let text = "The cache was stale after the deploy. Workers kept the old config file. \
                    After the deploy the cache was stale. The old config file kept workers.";
        let (reported, pass) = run(text, 0.75, 8, 4);
        assert_eq!(pass.pairs_seen(), 2);
        assert_eq!(reported.len(), 2);
        assert!(pass.held().is_none());
        assert_eq!(slice(text, &reported[0].repeat), "After the deploy the cache was stale.");
        assert_eq!(slice(text, &reported[1].original), "Workers kept the old config file.");
        assert!(reported[0].repeat.start.byte < reported[1].repeat.start.byte);
    }

    #[test]
    fn dissimilar_sentences_make_no_pair() {
        let text = "The cache was stale after the deploy. Our metrics dashboard shows latency spikes. \
                    Nobody on the team could reproduce it locally. The fix landed on Friday afternoon.";
        let (reported, pass) = run(text, 0.75, 8, 4);
        assert!(reported.is_empty());
        assert_eq!(pass.pairs_seen(), 0);
    }

    #[test]
    fn sentences_beyond_the_context_gap_are_not_compared() {
        let fillers = [
            "Alpha bravo charlie delta echo.",
            "Foxtrot golf hotel india juliet.",
            "Kilo lima mike november oscar.",
            "Papa quebec romeo sierra tango.",
        ];
        let text = format!("The cache was stale after the deploy. {} After the deploy the cache was stale.", fillers.join(" "));
        let (_, near) = run(&text, 0.75, 5, 4);
        assert_eq!(near.pairs_seen(), 1);
        let (_, far) = run(&text, 0.75, 4, 4);
        assert_eq!(far.pairs_seen(), 0);
    }

    #[test]
    fn short_sentences_are_ignored() {
        let text = "Yes sure. Yes sure. Yes sure. Yes sure.";
        assert_eq!(run(text, 0.75, 8, 4).1.pairs_seen(), 0);
        assert_eq!(run(text, 0.75, 8, 2).1.pairs_seen(), 3);
    }

    #[test]
    fn the_best_match_is_the_original() {
        let text = "The red cache was stale after deploy. The blue cache was stale after the deploy. The blue cache was stale after the deploy!";
        // The first two differ in one of 8 tokens (0.75): below this threshold, so only the third pairs.
        let (_, pass) = run(text, 0.8, 8, 4);
        assert_eq!(pass.pairs_seen(), 1);
        let held = pass.held().unwrap();
        assert_eq!(slice(text, &held.original), "The blue cache was stale after the deploy.");
        assert_eq!(held.similarity, 1.0);
    }

    #[test]
    fn only_a_strong_held_pair_can_be_confirmed_by_an_ngram_finding() {
        let strong = "The cache was stale after the deploy. After the deploy the cache was stale.";
        let (_, mut pass) = run(strong, 0.75, 8, 4);
        assert!(pass.confirm_held().is_some());
        assert!(pass.held().is_none());
        // 7 shared of 9 distinct tokens (0.78): similar enough to hold, too weak to confirm alone.
        let weak = "The cache was stale after the deploy on monday. The cache was stale after the deploy on friday.";
        let (_, mut pass) = run(weak, 0.75, 8, 4);
        let held = pass.held().expect("held");
        assert!(held.similarity < STRONG_PAIR);
        assert!(pass.confirm_held().is_none());
        assert!(pass.held().is_some());
    }

    #[test]
    fn cjk_sentences_compare_by_character_tokens() {
        let text = "今天天气很好我们去公园。我们去公园今天天气很好。";
        let (_, pass) = run(text, 0.75, 8, 4);
        let held = pass.held().expect("held");
        assert_eq!(held.similarity, 1.0);
        assert_eq!(slice(text, &held.repeat), "我们去公园今天天气很好。");
        assert_eq!(held.repeat.start.utf16, 12);
    }

    #[test]
    fn the_length_bound_never_skips_a_pair_that_reaches_the_threshold() {
        for threshold in [0.05, 0.5, 0.75, 0.9, 1.0] {
            let mut skipped = 0;
            for a in 1..40usize {
                for b in 1..40usize {
                    let (x, y): (Vec<u64>, Vec<u64>) = ((0..a as u64).collect(), (0..b as u64).collect());
                    // The best overlap sizes a and b allow: one set inside the other.
                    let best = jaccard_sorted(&x, &y);
                    if best >= threshold {
                        assert!(could_reach(a, b, threshold), "{} {} {}", a, b, threshold);
                    } else {
                        assert!(!could_reach(a, b, threshold), "{} {} {}", a, b, threshold);
                        skipped += 1;
                    }
                }
            }
            assert!(threshold < 0.1 || skipped > 0);
        }
    }
}
