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
            scratch: Vec::new(),
        }
    }

    /// Number of similar pairs found so far (corroborated or not).
    pub(crate) fn pairs_seen(&self) -> u64 {
        self.pairs_seen
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
        let best = self
            .recent
            .iter()
            .map(|e| (jaccard_sorted(&e.tokens, &tokens), e.span))
            .filter(|(sim, _)| *sim >= self.threshold)
            .fold(None, |best: Option<(f64, SourceSpan)>, cur| match best {
                Some(b) if b.0 >= cur.0 => Some(b),
                _ => Some(cur),
            });
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
