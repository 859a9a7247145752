//! Tokenization shared by every pass.
//!
//! A token is a maximal run of letters, digits and joining marks (lowercased), except that each
//! ideograph, kana or hangul syllable is a token of its own: CJK text has no spaces, and one char per
//! token is what makes Jaccard similarity meaningful for it. Punctuation and whitespace separate
//! tokens and are not tokens.

use crate::hash::SeqHasher;

/// True for scripts written without spaces between words, where each char is one token.
#[inline]
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // hiragana, katakana
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xAC00..=0xD7AF    // hangul syllables
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0x20000..=0x2FA1F  // CJK extensions B..F, compatibility supplement
    )
}

#[inline]
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || ('\u{300}'..='\u{36F}').contains(&c)
}

/// One token found by [`for_each_token`]: byte range in the source and a hash of its lowercased form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TokenSpan {
    pub start: usize,
    pub end: usize,
    pub hash: u64,
}

/// Calls `f` for each token of `text`, in order, without allocating.
pub(crate) fn for_each_token(text: &str, mut f: impl FnMut(TokenSpan)) {
    let mut start: Option<usize> = None;
    let mut h = SeqHasher::new();
    for (i, c) in text.char_indices() {
        if is_cjk(c) {
            if let Some(s) = start.take() {
                f(TokenSpan { start: s, end: i, hash: h.finish() });
            }
            let mut one = SeqHasher::new();
            one.push(c as u32);
            f(TokenSpan { start: i, end: i + c.len_utf8(), hash: one.finish() });
            h = SeqHasher::new();
        } else if is_word_char(c) {
            if start.is_none() {
                start = Some(i);
                h = SeqHasher::new();
            }
            for l in c.to_lowercase() {
                h.push(l as u32);
            }
        } else if let Some(s) = start.take() {
            f(TokenSpan { start: s, end: i, hash: h.finish() });
        }
    }
    if let Some(s) = start {
        f(TokenSpan { start: s, end: text.len(), hash: h.finish() });
    }
}

/// Hashes of the tokens of `text`, in order.
pub(crate) fn token_hashes(text: &str) -> Vec<u64> {
    let mut out = Vec::new();
    for_each_token(text, |t| out.push(t.hash));
    out
}

/// The tokens of `text`, lowercased, in order.
///
/// ```
/// assert_eq!(dedup_wasm::tokenize("Hello, World! 你好"), vec!["hello", "world", "你", "好"]);
/// ```
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |t| out.push(text[t.start..t.end].to_lowercase()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_lowercased_and_punctuation_splits() {
        assert_eq!(tokenize("Don't STOP-me now."), vec!["don", "t", "stop", "me", "now"]);
    }

    #[test]
    fn each_cjk_char_is_a_token_and_latin_runs_stay_whole() {
        assert_eq!(tokenize("用Rust写代码"), vec!["用", "rust", "写", "代", "码"]);
        assert_eq!(tokenize("カタカナ"), vec!["カ", "タ", "カ", "ナ"]);
    }

    #[test]
    fn digits_and_other_scripts_are_words() {
        assert_eq!(tokenize("$4.2M в Москве"), vec!["4", "2m", "в", "москве"]);
        assert_eq!(tokenize("مرحبا بالعالم"), vec!["مرحبا", "بالعالم"]);
    }

    #[test]
    fn empty_and_symbol_only_texts_have_no_tokens() {
        assert!(tokenize("").is_empty());
        assert!(tokenize(" ,.;!?—\u{1F600}\n").is_empty());
    }

    #[test]
    fn hashes_match_lowercased_token_text() {
        let a = token_hashes("Alpha BETA");
        let b = token_hashes("alpha beta");
        assert_eq!(a, b);
        assert_ne!(a[0], a[1]);
    }
}
