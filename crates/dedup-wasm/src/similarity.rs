//! Similarity measures between two texts.
//!
//! Token Jaccard is the primary measure: it ignores order and formatting and reads "the same words".
//! When either side has too few tokens for Jaccard to mean anything (a short line, a run of symbols),
//! the measure falls back to Jaccard over character trigrams of the whitespace-collapsed, lowercased
//! text, which still tells "PASSED" from "FAILED".

use crate::hash::SeqHasher;
use crate::tokenize::token_hashes;

/// Below this many distinct tokens on either side, [`text_similarity`] uses character trigrams.
pub const MIN_TOKENS_FOR_JACCARD: usize = 4;

/// Jaccard similarity of two sets given as (unsorted, possibly repeated) hash lists:
/// |A ∩ B| / |A ∪ B|. Two empty sets are identical (1.0).
pub(crate) fn jaccard_of_hashes(a: &[u64], b: &[u64]) -> f64 {
    let a = sorted_unique(a);
    let b = sorted_unique(b);
    jaccard_sorted(&a, &b)
}

pub(crate) fn sorted_unique(v: &[u64]) -> Vec<u64> {
    let mut s = v.to_vec();
    s.sort_unstable();
    s.dedup();
    s
}

/// Jaccard of two sorted, deduplicated lists.
pub(crate) fn jaccard_sorted(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    // Branch-free merge: which side advances depends on the data, so a branch on it would be
    // mispredicted about every other step.
    let (mut i, mut j, mut inter) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        inter += usize::from(x == y);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    inter as f64 / (a.len() + b.len() - inter) as f64
}

/// Hashes of the character trigrams of `text` after lowercasing and collapsing whitespace.
/// Texts shorter than three chars yield one "gram" of the whole text, so they still compare.
pub(crate) fn char_trigram_hashes(text: &str) -> Vec<u64> {
    let mut norm: Vec<u32> = Vec::with_capacity(text.len());
    let mut in_space = true;
    for c in text.chars() {
        if c.is_whitespace() {
            if !in_space {
                norm.push(' ' as u32);
            }
            in_space = true;
        } else {
            in_space = false;
            norm.extend(crate::lowercase::lowercase(c).map(|l| l as u32));
        }
    }
    if norm.last() == Some(&(' ' as u32)) {
        norm.pop();
    }
    if norm.len() < 3 {
        let mut h = SeqHasher::new();
        norm.iter().for_each(|&c| h.push(c));
        return if norm.is_empty() { Vec::new() } else { vec![h.finish()] };
    }
    norm.windows(3)
        .map(|w| {
            let mut h = SeqHasher::new();
            w.iter().for_each(|&c| h.push(c));
            h.finish()
        })
        .collect()
}

/// Similarity of two texts in [0, 1]: token Jaccard, or character-trigram Jaccard when either side has
/// fewer than [`MIN_TOKENS_FOR_JACCARD`] distinct tokens.
///
/// ```
/// use dedup_wasm::text_similarity;
/// assert_eq!(text_similarity("the cat sat on the mat", "The cat sat on the mat!"), 1.0);
/// assert!(text_similarity("tests PASSED", "tests FAILED") < 0.75);
/// ```
pub fn text_similarity(a: &str, b: &str) -> f64 {
    let ta = sorted_unique(&token_hashes(a));
    let tb = sorted_unique(&token_hashes(b));
    if ta.len() < MIN_TOKENS_FOR_JACCARD || tb.len() < MIN_TOKENS_FOR_JACCARD {
        return jaccard_of_hashes(&char_trigram_hashes(a), &char_trigram_hashes(b));
    }
    jaccard_sorted(&ta, &tb)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_after_case_and_punctuation_is_one() {
        assert_eq!(text_similarity("Hello there, my friend", "hello THERE my friend."), 1.0);
    }

    #[test]
    fn disjoint_texts_are_zero() {
        assert_eq!(text_similarity("alpha beta gamma delta", "one two three four"), 0.0);
    }

    #[test]
    fn jaccard_counts_sets_not_multisets() {
        assert_eq!(jaccard_of_hashes(&[1, 1, 2], &[2, 1]), 1.0);
        assert!((jaccard_of_hashes(&[1, 2, 3], &[3, 4]) - 0.25).abs() < 1e-12);
    }

    #[test]
    fn short_texts_fall_back_to_trigrams() {
        let s = text_similarity("PASSED", "FAILED");
        assert!(s < 0.3, "{}", s);
        assert!(text_similarity("tests  PASSED", "Tests passed") > 0.99);
        assert_eq!(text_similarity("ok", "OK"), 1.0);
        assert_eq!(text_similarity("", ""), 1.0);
    }

    #[test]
    fn cjk_compares_per_character() {
        let s = text_similarity("今天天气很好我们去公园", "今天天气很好我们去海边");
        assert!(s > 0.6 && s < 1.0, "{}", s);
    }
}
