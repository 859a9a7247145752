//! A deterministic, offline lexical embedder: feature hashing of words, word pairs and character
//! trigrams of the normalized text into a fixed number of dimensions, L2-normalized.
//!
//! What it measures is shared wording, not meaning. It scores near-duplicates, reordered sentences,
//! changed punctuation or case, and light rewording (a word added, dropped or inflected) high; it
//! cannot know that "NYC" and "New York City" are the same place. For paraphrase, use a model.

use crate::error::DedupError;
use crate::hash::{mix64, SeqHasher};
use crate::memory_text::normalize_memory_text;
use crate::tokenize::is_cjk;

/// Largest dimension accepted.
pub const MAX_LEXICAL_DIMS: usize = 65536;

const WORD_WEIGHT: f32 = 1.0;
const PAIR_WEIGHT: f32 = 0.5;
const TRIGRAM_WEIGHT: f32 = 0.3;

fn add_feature(out: &mut [f32], h: u64, w: f32) {
    let m = mix64(h);
    let idx = (m % out.len() as u64) as usize;
    let sign = if m >> 63 == 0 { 1.0 } else { -1.0 };
    out[idx] += sign * w;
}

fn hash_chars(tag: u32, chars: &[char]) -> u64 {
    let mut h = SeqHasher::new();
    h.push(tag);
    for &c in chars {
        h.push(c as u32);
    }
    h.finish()
}

/// Embeds `text` (already NFKC-normalized by the host) into `dims` values of unit length. A text
/// with no letters, digits or symbols gets a fixed vector shared by all such texts.
///
/// ```
/// let a = dedup_wasm::lexical_embed("User likes strong coffee", 256).unwrap();
/// let b = dedup_wasm::lexical_embed("strong coffee, the user likes", 256).unwrap();
/// let c = dedup_wasm::lexical_embed("Server runs on port 3000", 256).unwrap();
/// let cos = |x: &[f32], y: &[f32]| x.iter().zip(y).map(|(p, q)| p * q).sum::<f32>();
/// assert!(cos(&a, &b) > 0.8 && cos(&a, &c) < 0.3);
/// ```
pub fn lexical_embed(text: &str, dims: usize) -> Result<Vec<f32>, DedupError> {
    if dims == 0 || dims > MAX_LEXICAL_DIMS {
        return Err(DedupError::setting("dims", "must be an integer in [1, 65536]", dims));
    }
    let norm = normalize_memory_text(text);
    let mut out = vec![0f32; dims];
    // Words: maximal runs of non-space chars, with each CJK char its own word.
    let mut words: Vec<Vec<char>> = Vec::new();
    let mut cur: Vec<char> = Vec::new();
    for c in norm.chars() {
        if c == ' ' || is_cjk(c) {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            if c != ' ' {
                words.push(vec![c]);
            }
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    let word_hashes: Vec<u64> = words.iter().map(|w| hash_chars(1, w)).collect();
    for &h in &word_hashes {
        add_feature(&mut out, h, WORD_WEIGHT);
    }
    for pair in word_hashes.windows(2) {
        add_feature(&mut out, mix64(pair[0] ^ pair[1].rotate_left(29)) ^ 2, PAIR_WEIGHT);
    }
    // Character trigrams over the whole normalized text with boundary marks: they carry inflection
    // and spelling variants, and give CJK text (no spaces) its word-like units.
    let mut chars: Vec<char> = Vec::with_capacity(norm.len() + 2);
    chars.push('\u{2}');
    chars.extend(norm.chars());
    chars.push('\u{3}');
    for g in chars.windows(3) {
        add_feature(&mut out, hash_chars(3, g), TRIGRAM_WEIGHT);
    }
    let sum: f64 = out.iter().map(|&x| f64::from(x) * f64::from(x)).sum();
    if sum == 0.0 {
        out[0] = 1.0;
        return Ok(out);
    }
    let inv = (1.0 / sum.sqrt()) as f32;
    out.iter_mut().for_each(|x| *x *= inv);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn unit_length_and_deterministic() {
        let a = lexical_embed("The quick brown fox", 384).unwrap();
        let n: f32 = a.iter().map(|x| x * x).sum();
        assert!((n - 1.0).abs() < 1e-4);
        assert_eq!(a, lexical_embed("The quick brown fox", 384).unwrap());
        assert_eq!(lexical_embed("", 16).unwrap(), lexical_embed("...", 16).unwrap());
    }

    #[test]
    fn near_duplicates_score_high_and_unrelated_low() {
        let base = lexical_embed("User lives in Berlin and works as a nurse", 512).unwrap();
        let same_case = lexical_embed("user lives in berlin and works as a nurse.", 512).unwrap();
        let reordered = lexical_embed("User works as a nurse and lives in Berlin", 512).unwrap();
        let other = lexical_embed("The deploy pipeline failed on step three", 512).unwrap();
        assert!(cos(&base, &same_case) > 0.999);
        assert!(cos(&base, &reordered) > 0.8, "{}", cos(&base, &reordered));
        assert!(cos(&base, &other) < 0.3);
    }

    #[test]
    fn different_cjk_memories_are_apart() {
        let a = lexical_embed("用户住在北京，喜欢喝茶", 384).unwrap();
        let b = lexical_embed("用户住在北京，喜欢喝茶。", 384).unwrap();
        let c = lexical_embed("服务器在上海机房运行", 384).unwrap();
        assert!(cos(&a, &b) > 0.99);
        assert!(cos(&a, &c) < 0.4);
    }

    #[test]
    fn bad_dims_are_errors() {
        assert!(lexical_embed("x", 0).is_err());
        assert!(lexical_embed("x", MAX_LEXICAL_DIMS + 1).is_err());
    }
}
