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
pub(crate) fn is_word_char(c: char) -> bool {
    is_alphanumeric(c) || c == '_' || ('\u{300}'..='\u{36F}').contains(&c)
}

/// Exactly `char::is_alphanumeric`, without its Unicode tables for ASCII and for the CJK blocks in
/// which every char is a letter. The splitter, the tokenizer and the loop rules ask this of every
/// char, and for a char outside ASCII the tables cost a search each time; CJK text is all such chars.
#[inline]
pub(crate) fn is_alphanumeric(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    if in_letter_block(c) {
        return true;
    }
    if in_ranges(&NO_ALPHANUMERICS, c) {
        return false;
    }
    c.is_alphanumeric()
}

/// Ranges without a single letter or digit that prose outside ASCII is full of: curly quotes, dashes
/// and ellipses (English text from a model uses them throughout), CJK punctuation and brackets, and
/// the full-width forms of ASCII punctuation. The table search costs hundreds of instructions a char.
const NO_ALPHANUMERICS: [(u32, u32); 7] = [
    (0x2010, 0x2027),
    (0x3000, 0x3004),
    (0x3008, 0x3020),
    (0xFF01, 0xFF0F),
    (0xFF1A, 0xFF20),
    (0xFF3B, 0xFF40),
    (0xFF5B, 0xFF65),
];

/// True for a char of a block whose every code point is a letter without case (CJK ideographs, hangul
/// syllables): such a char is alphanumeric, is no whitespace, and is its own lowercase.
#[inline]
pub(crate) fn in_letter_block(c: char) -> bool {
    in_ranges(&ALL_LETTERS, c)
}

/// True when `c` lies in one of the inclusive code point ranges.
#[inline]
fn in_ranges(ranges: &[(u32, u32)], c: char) -> bool {
    ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&(c as u32)))
}

/// Exactly `char::is_whitespace`, without its Unicode table: outside ASCII, White_Space is these
/// eighteen code points (a test checks every code point against the standard library). The
/// normalizer and the splitter ask this of every char.
#[inline]
pub(crate) fn is_whitespace(c: char) -> bool {
    match c as u32 {
        0x09..=0x0D | 0x20 => true,
        0..=0x7F => false,
        n => matches!(n, 0x85 | 0xA0 | 0x1680 | 0x2000..=0x200A | 0x2028 | 0x2029 | 0x202F | 0x205F | 0x3000),
    }
}

/// Blocks whose every code point is a letter without case (CJK extension A, CJK unified ideographs,
/// hangul syllables). Tests check each code point against the standard library.
const ALL_LETTERS: [(u32, u32); 3] = [(0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7A3)];

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
            for l in crate::lowercase::lowercase(c) {
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

/// The tokenizer of [`for_each_token`], fed one already-lowercased char at a time (the normalized
/// stream). It yields the same token hashes as [`for_each_token`] on the source text.
#[derive(Default)]
pub(crate) struct TokenStream {
    word: Option<SeqHasher>,
    word_is_number: bool,
}

impl TokenStream {
    /// Feeds one lowercased char; calls `emit(hash, is_number, includes_this_char)` for each token it
    /// completes: the word this char ends (which does not include it), then the char itself when it is
    /// CJK (which does).
    #[inline]
    pub(crate) fn push(&mut self, ch: u32, mut emit: impl FnMut(u64, bool, bool)) {
        // ASCII (most of the text in most outputs) is classified without the Unicode tables: a word
        // char is a letter, a digit or '_', and no ASCII char is CJK.
        let (word_char, cjk) = if ch < 0x80 {
            let b = ch as u8;
            (b.is_ascii_alphanumeric() || b == b'_', false)
        } else {
            let c = char::from_u32(ch).unwrap_or(' ');
            let cjk = is_cjk(c);
            (!cjk && is_word_char(c), cjk)
        };
        if word_char {
            if self.word.is_none() {
                self.word = Some(SeqHasher::new());
                self.word_is_number = true;
            }
            if let Some(w) = self.word.as_mut() {
                w.push(ch);
            }
            self.word_is_number &= (0x30..=0x39).contains(&ch);
            return;
        }
        if let Some(w) = self.word.take() {
            emit(w.finish(), self.word_is_number, false);
        }
        if cjk {
            let mut h = SeqHasher::new();
            h.push(ch);
            emit(h.finish(), false, true);
        }
    }

    /// Completes the word in progress, if any (at the end of a text).
    pub(crate) fn flush(&mut self, mut emit: impl FnMut(u64, bool)) {
        if let Some(w) = self.word.take() {
            emit(w.finish(), self.word_is_number);
        }
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
    for_each_token(text, |t| out.push(crate::lowercase::lowercase_str(&text[t.start..t.end])));
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
    fn the_incremental_tokenizer_matches_the_batch_one_on_normalized_text() {
        let text = "Déjà vu: 42 cats_and dogs, 你好 ΣΊΣΥΦΟΣ";
        let mut stream = TokenStream::default();
        let mut got = Vec::new();
        for c in text.chars().flat_map(crate::lowercase::lowercase) {
            stream.push(c as u32, |h, _, _| got.push(h));
        }
        stream.flush(|h, _| got.push(h));
        assert_eq!(got, token_hashes(text));
    }

    #[test]
    fn the_fast_alphanumeric_test_agrees_with_the_standard_library() {
        for &(lo, hi) in ALL_LETTERS.iter() {
            for c in (lo..=hi).filter_map(char::from_u32) {
                assert!(c.is_alphanumeric(), "U+{:04X} is not alphanumeric", c as u32);
            }
        }
        for c in (0..=0x2FFFFu32).filter_map(char::from_u32) {
            assert_eq!(is_alphanumeric(c), c.is_alphanumeric(), "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn the_punctuation_ranges_hold_no_letter_or_digit() {
        for &(lo, hi) in NO_ALPHANUMERICS.iter() {
            for c in (lo..=hi).filter_map(char::from_u32) {
                assert!(!c.is_alphanumeric(), "U+{:04X} is alphanumeric", c as u32);
            }
        }
    }

    #[test]
    fn letter_blocks_hold_caseless_letters_only() {
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32).filter(|&c| in_letter_block(c)) {
            assert!(c.is_alphanumeric() && !c.is_whitespace(), "U+{:04X}", c as u32);
            assert!(c.to_lowercase().eq(std::iter::once(c)), "U+{:04X} has a lowercase form", c as u32);
        }
    }

    #[test]
    fn the_fast_whitespace_test_agrees_with_the_standard_library() {
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            assert_eq!(is_whitespace(c), c.is_whitespace(), "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn hashes_match_lowercased_token_text() {
        let a = token_hashes("Alpha BETA");
        let b = token_hashes("alpha beta");
        assert_eq!(a, b);
        assert_ne!(a[0], a[1]);
    }
}
