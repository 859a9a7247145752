//! Sentence segmentation for Latin and CJK text.
//!
//! A sentence ends at `.`, `!`, `?`, `;`, `…` (and their full-width forms `。！？；`) or at a newline.
//! A period does not end a sentence inside a number ("3.14"), after a single capital letter ("J. R.")
//! or after a common abbreviation ("e.g.", "Dr.", "etc."), and closing quotes or brackets after a
//! terminator stay with the sentence they close.

use crate::text::SourcePos;
use crate::tokenize::{is_alphanumeric, is_whitespace};

/// Abbreviations (lowercase, without the final dot) after which a period is not a sentence end.
const ABBREVIATIONS: &[&str] = &[
    "e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "no", "fig", "al",
    "approx", "cf", "inc", "ltd", "co", "corp", "dept", "est", "jan", "feb", "mar", "apr", "jun", "jul",
    "aug", "sep", "sept", "oct", "nov", "dec", "u.s", "a.m", "p.m",
];

#[inline]
fn is_terminator(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | ';' | '…' | '。' | '！' | '？' | '；' | '\n')
}

#[inline]
fn is_closer(c: char) -> bool {
    matches!(c, '"' | '\'' | ')' | ']' | '}' | '”' | '’' | '」' | '』' | '）' | '》' | '】')
}

/// True when a '.' preceded by `prev`, ending the word `word` (the run of letters, digits and dots
/// before it), and followed by `next` does not end a sentence.
fn dot_is_internal(prev: Option<char>, word: &str, next: Option<char>) -> bool {
    // Decimal or version number: "3.14", "v1.2.3".
    if prev.map_or(false, |c| c.is_ascii_digit()) && next.map_or(false, |c| c.is_ascii_digit()) {
        return true;
    }
    // A dot followed directly by a letter or digit is inside a token: "example.com", "a.b".
    if next.map_or(false, is_alphanumeric) {
        return true;
    }
    if word.is_empty() {
        return false;
    }
    // A single capital initial: "J. R. R. Tolkien".
    let mut chars = word.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        if c.is_uppercase() {
            return true;
        }
    }
    if word.is_ascii() {
        return ABBREVIATIONS.iter().any(|a| a.eq_ignore_ascii_case(word));
    }
    let lower = crate::lowercase::lowercase_str(word);
    ABBREVIATIONS.iter().any(|a| *a == lower)
}

/// Where a finished sentence lies in the stream, trimmed of surrounding whitespace, in bytes and
/// UTF-16 units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SentenceEnd {
    pub start: SourcePos,
    pub end: SourcePos,
}

/// Longest word kept for the abbreviation test (longer words are no abbreviation).
const MAX_WORD_BYTES: usize = 16;

/// The word before a dot, kept inline: pushing a char must not allocate.
#[derive(Clone, Copy, Default)]
struct Word {
    bytes: [u8; MAX_WORD_BYTES],
    len: usize,
}

impl Word {
    /// Appends `c` when it fits; returns false when it does not.
    #[inline]
    fn push(&mut self, c: char) -> bool {
        let n = c.len_utf8();
        if self.len + n > MAX_WORD_BYTES {
            return false;
        }
        // Nearly every char of a word is ASCII, and `encode_utf8` is not inlined in wasm builds.
        if n == 1 {
            self.bytes[self.len] = c as u8;
        } else {
            c.encode_utf8(&mut self.bytes[self.len..self.len + n]);
        }
        self.len += n;
        true
    }

    fn as_str(&self) -> &str {
        // Only whole chars are ever pushed, so the bytes are valid UTF-8.
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }
}

/// Splits a stream of chars into sentences as they complete, keeping no text but the current word.
/// The decision about a '.' waits for the next char, and a terminator swallows following terminators
/// and closing quotes, so the result does not depend on how the text was chunked.
pub(crate) struct SentenceSplitter {
    /// Source position just past the last char pushed.
    at: SourcePos,
    /// First and past-the-last non-whitespace positions of the sentence in progress.
    first: Option<SourcePos>,
    last_end: SourcePos,
    bytes: usize,
    /// The run of letters, digits and dots ending at the last char, and the char before it.
    word: Word,
    word_overflow: bool,
    prev: Option<char>,
    /// A '.' is the last char and awaits the next one to be judged: the char and word before it.
    dot_waiting: Option<(Option<char>, Word)>,
    /// A terminator was seen; closers and further terminators still join this sentence.
    closing: bool,
    /// Sentences longer than this are cut (a stream without punctuation must not grow without bound).
    max_bytes: usize,
}

impl SentenceSplitter {
    pub(crate) fn new(max_bytes: usize) -> Self {
        SentenceSplitter {
            at: SourcePos::default(),
            first: None,
            last_end: SourcePos::default(),
            bytes: 0,
            word: Word::default(),
            word_overflow: false,
            prev: None,
            dot_waiting: None,
            closing: false,
            max_bytes,
        }
    }

    /// Feeds one char; returns the sentence it completed (the char itself belongs to the next one).
    pub(crate) fn push(&mut self, c: char) -> Option<SentenceEnd> {
        // The common case, an ASCII letter or digit in the middle of a sentence: it only extends the
        // sentence and the current word (the steps of `append` without its char tests; calling
        // `append` here costs about 5% more instructions per char of the whole stream).
        if c.is_ascii_alphanumeric() && !self.closing && self.dot_waiting.is_none() {
            if self.first.is_none() {
                self.first = Some(self.at);
            }
            self.at.byte += 1;
            self.at.utf16 += 1;
            self.bytes += 1;
            self.last_end = self.at;
            if !self.word.push(c) {
                self.word_overflow = true;
            }
            self.prev = Some(c);
            return None;
        }
        let mut done = None;
        if let Some((prev, word)) = self.dot_waiting.take() {
            if !dot_is_internal(prev, word.as_str(), Some(c)) {
                self.closing = true;
            }
        }
        if self.closing {
            if (is_terminator(c) && c != '\n') || is_closer(c) {
                self.append(c);
                return None;
            }
            self.closing = false;
            done = self.take();
        }
        if c == '.' {
            let word = if self.word_overflow { Word::default() } else { self.word };
            self.dot_waiting = Some((self.prev, word));
        }
        self.append(c);
        if c == '.' {
            // judged when the next char arrives
        } else if is_terminator(c) {
            self.closing = true;
        } else if self.bytes >= self.max_bytes && !is_alphanumeric(c) {
            done = done.or_else(|| self.take());
        }
        done
    }

    /// Ends the stream: returns the last sentence, if any.
    pub(crate) fn finish(&mut self) -> Option<SentenceEnd> {
        self.dot_waiting = None;
        self.closing = false;
        self.take()
    }

    #[inline]
    fn append(&mut self, c: char) {
        let len = c.len_utf8();
        let start = self.at;
        self.at.byte += len as u64;
        self.at.utf16 += c.len_utf16() as u64;
        self.bytes += len;
        if !is_whitespace(c) {
            if self.first.is_none() {
                self.first = Some(start);
            }
            self.last_end = self.at;
        }
        if is_alphanumeric(c) || c == '.' {
            if !self.word.push(c) {
                self.word_overflow = true;
            }
        } else {
            self.word.len = 0;
            self.word_overflow = false;
        }
        self.prev = Some(c);
    }

    fn take(&mut self) -> Option<SentenceEnd> {
        let first = self.first.take();
        self.bytes = 0;
        first.map(|start| SentenceEnd { start, end: self.last_end })
    }
}

/// Byte ranges of the sentences of `text`, trimmed of surrounding whitespace; empty pieces are skipped.
///
/// ```
/// let text = "Dr. Smith paid $3.50. Then he left! 然后呢？好。";
/// let parts: Vec<&str> = dedup_wasm::split_sentences(text).into_iter().map(|(s, e)| &text[s..e]).collect();
/// assert_eq!(parts, vec!["Dr. Smith paid $3.50.", "Then he left!", "然后呢？", "好。"]);
/// ```
pub fn split_sentences(text: &str) -> Vec<(usize, usize)> {
    let mut splitter = SentenceSplitter::new(usize::MAX);
    let mut out = Vec::new();
    for c in text.chars() {
        if let Some(s) = splitter.push(c) {
            out.push((s.start.byte as usize, s.end.byte as usize));
        }
    }
    if let Some(s) = splitter.finish() {
        out.push((s.start.byte as usize, s.end.byte as usize));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str) -> Vec<&str> {
        split_sentences(text).into_iter().map(|(s, e)| &text[s..e]).collect()
    }

    #[test]
    fn splits_on_latin_terminators_and_newlines() {
        assert_eq!(pieces("One. Two! Three?\nFour; five"), vec!["One.", "Two!", "Three?", "Four;", "five"]);
    }

    #[test]
    fn keeps_decimals_abbreviations_initials_and_urls_whole() {
        assert_eq!(pieces("Pi is 3.14 e.g. here. J. R. Tolkien wrote it. See example.com now."),
            vec!["Pi is 3.14 e.g. here.", "J. R. Tolkien wrote it.", "See example.com now."]);
    }

    #[test]
    fn splits_cjk_punctuation_and_ellipsis() {
        assert_eq!(pieces("你好。你是谁？我不知道！好吧；嗯…"), vec!["你好。", "你是谁？", "我不知道！", "好吧；", "嗯…"]);
    }

    #[test]
    fn closing_quotes_and_repeated_terminators_stay_attached() {
        assert_eq!(pieces("He said \"stop.\" Why?! Wait..."), vec!["He said \"stop.\"", "Why?!", "Wait..."]);
    }

    #[test]
    fn chunking_does_not_change_the_split() {
        let text = "Version 1.2 is out. Dr. Who said \"hi.\" Then 3.5 more… 好。";
        let whole = split_sentences(text);
        let mut sp = SentenceSplitter::new(usize::MAX);
        let mut parts = Vec::new();
        for c in text.chars() {
            parts.extend(sp.push(c).map(|s| (s.start.byte as usize, s.end.byte as usize)));
        }
        parts.extend(sp.finish().map(|s| (s.start.byte as usize, s.end.byte as usize)));
        assert_eq!(whole, parts);
    }

    #[test]
    fn blank_input_has_no_sentences() {
        assert!(split_sentences("  \n\n ").is_empty());
    }
}
