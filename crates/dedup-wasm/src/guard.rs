//! Repeated-block removal for agent input.
//!
//! Multi-agent pipelines paste the same history into a prompt again and again. This module splits
//! one or more documents into blocks, decides which blocks repeat an earlier (or, with
//! [`Keep::Last`], a later) block, and says which byte ranges of each document survive.
//!
//! ## Blocks
//! A document (or a block being split further) is split by the first strategy that yields more than
//! one non-blank block: `[Turn N]` markers at line starts, then blank lines, then line breaks. Fenced
//! code (```` ``` ```` / `~~~`) is never split, so code is only ever removed as a whole fence-bounded
//! unit. A separator is always whitespace that starts at a line break, so removing a block together
//! with the separator before it never doubles or loses a line break of the text that stays.
//!
//! ## Decisions
//! Blocks are compared in whitespace-collapsed, lowercased form. A block is removed when it is at
//! least `min_block_chars` chars long (counted on the original text) and either
//! - its normalized form equals a kept block's, or
//! - its first `similarity_chars` normalized chars equal a kept block's, its similarity to that block
//!   ([`crate::similarity::text_similarity`]) is at least `near_duplicate`, **and** its information
//!   units (words, numbers with their sign, decimals, currency and percent, CJK chars) occur in the
//!   kept block in the same order — so removing it loses nothing. "tests PASSED" never goes as a
//!   copy of "tests FAILED", nor "$4.7M" as a copy of "$4.2M".
//!
//! ## Fixpoint
//! When removals leave a document with a single block, that block is split by the next strategy
//! and decisions are taken again, so running the guard on its own output changes nothing.

use crate::error::DedupError;
use crate::hash::{DetMap, SeqHasher};
use crate::settings::{count_field, float_field, kind_of};
use crate::similarity::text_similarity;
use crate::tokenize::is_cjk;
use serde_json::Value;

/// Default share of [`text_similarity`] a prefix-sharing block needs to count as a near-duplicate.
pub const DEFAULT_NEAR_DUPLICATE: f64 = 0.8;
/// Kept blocks with the same prefix that a block is compared with (the most recent ones).
pub const MAX_NEAR_CANDIDATES: usize = 32;
/// Decision passes at most (one, plus one per block that had to be split further).
const MAX_PASSES: usize = 8;
/// Largest count option accepted.
const MAX_COUNT: usize = 1 << 30;

/// Which occurrence of a repeated block survives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// The earliest occurrence (history order).
    First,
    /// The latest occurrence (a repeated status line where the newest wins).
    Last,
}

/// Options of [`dedup_documents`].
#[derive(Debug, Clone, PartialEq)]
pub struct GuardOptions {
    /// Leading normalized chars two blocks must share before they are compared as near-duplicates.
    pub similarity_chars: usize,
    /// Blocks shorter than this many chars (of the original text) are never removed.
    pub min_block_chars: usize,
    /// Which occurrence survives.
    pub keep: Keep,
    /// Similarity threshold in (0, 1] for near-duplicates; `None` removes exact repeats only.
    pub near_duplicate: Option<f64>,
}

impl Default for GuardOptions {
    fn default() -> Self {
        GuardOptions { similarity_chars: 60, min_block_chars: 40, keep: Keep::First, near_duplicate: Some(DEFAULT_NEAR_DUPLICATE) }
    }
}

impl GuardOptions {
    /// Checks ranges: `similarity_chars >= 1`, `near_duplicate` finite in (0, 1].
    pub fn validate(&self) -> Result<(), DedupError> {
        if self.similarity_chars == 0 {
            return Err(DedupError::setting("similarity_chars", "must be at least 1", 0));
        }
        if let Some(t) = self.near_duplicate {
            if !t.is_finite() {
                return Err(DedupError::setting("near_duplicate", "must be finite", t));
            }
            if !(t > 0.0 && t <= 1.0) {
                return Err(DedupError::setting("near_duplicate", "must be in (0, 1]", t));
            }
        }
        Ok(())
    }

    /// Applies camelCase JSON overrides (`similarityChars`, `minBlockChars`, `keep`,
    /// `nearDuplicate` as a boolean or a number), then validates.
    pub fn merge_json(mut self, v: &Value) -> Result<Self, DedupError> {
        let obj = match v {
            Value::Null => return self.validate().map(|_| self),
            Value::Object(m) => m,
            other => return Err(DedupError::argument("options", "must be an object", kind_of(other))),
        };
        for (key, value) in obj {
            match key.as_str() {
                "similarityChars" => self.similarity_chars = bounded(count_field("similarity_chars", value)?, "similarity_chars")?,
                "minBlockChars" => self.min_block_chars = bounded(count_field("min_block_chars", value)?, "min_block_chars")?,
                "keep" => {
                    self.keep = match value {
                        Value::String(s) if s == "first" => Keep::First,
                        Value::String(s) if s == "last" => Keep::Last,
                        Value::String(s) => return Err(DedupError::setting("keep", "must be 'first' or 'last'", s)),
                        other => return Err(DedupError::setting("keep", "must be a string", kind_of(other))),
                    }
                }
                "nearDuplicate" => {
                    self.near_duplicate = match value {
                        Value::Bool(true) => Some(DEFAULT_NEAR_DUPLICATE),
                        Value::Bool(false) => None,
                        Value::Null => None,
                        other => Some(float_field("near_duplicate", other).map_err(|_| DedupError::setting("near_duplicate", "must be a number", kind_of(other)))?),
                    }
                }
                _ => return Err(DedupError::argument("options", "has no field of this name", key)),
            }
        }
        self.validate()?;
        Ok(self)
    }
}

fn bounded(n: usize, field: &'static str) -> Result<usize, DedupError> {
    if n > MAX_COUNT {
        return Err(DedupError::setting(field, "must be at most 2^30", n));
    }
    Ok(n)
}

// ---- splitting -----------------------------------------------------------------------------------

/// How a text was split into blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitMode {
    /// At `[Turn N]` markers that start a line.
    Turn,
    /// At blank lines.
    Paragraph,
    /// At line breaks.
    Line,
}

/// A block or separator: a byte range of its document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seg {
    pub start: usize,
    pub end: usize,
    /// True for a block, false for a separator. Segments alternate, starting and ending with a block.
    pub block: bool,
}

#[inline]
fn is_break(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

/// Byte ranges `[start, end)` inside which no split may happen (fenced code).
fn fences(text: &str, s: usize, e: usize) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut open: Option<(usize, u8, usize)> = None; // (start, fence char, run length)
    let mut ls = s;
    while ls < e {
        let le = bytes[ls..e].iter().position(|&b| is_break(b)).map_or(e, |k| ls + k);
        let mut p = ls;
        while p < le && (bytes[p] == b' ' || bytes[p] == b'\t') {
            p += 1;
        }
        if p < le && (bytes[p] == b'`' || bytes[p] == b'~') {
            let ch = bytes[p];
            let mut q = p;
            while q < le && bytes[q] == ch {
                q += 1;
            }
            let run = q - p;
            if run >= 3 {
                match open {
                    None => open = Some((ls, ch, run)),
                    Some((start, och, orun)) => {
                        if ch == och && run >= orun && bytes[q..le].iter().all(|b| *b == b' ' || *b == b'\t') {
                            out.push((start, le));
                            open = None;
                        }
                    }
                }
            }
        }
        // Next line: skip one line break ("\r\n" counts as one).
        if le < e && bytes[le] == b'\r' && le + 1 < e && bytes[le + 1] == b'\n' {
            ls = le + 2;
        } else {
            ls = le + 1;
        }
    }
    if let Some((start, _, _)) = open {
        out.push((start, e));
    }
    out
}

fn in_fence(f: &[(usize, usize)], pos: usize) -> bool {
    // Fences are sorted and disjoint.
    let i = f.partition_point(|&(_, end)| end <= pos);
    i < f.len() && f[i].0 <= pos
}

/// Decodes the char starting at byte `i` when it may be whitespace: ASCII bytes directly, and the
/// lead bytes of the non-ASCII whitespace chars (U+0085, U+00A0, U+1680, U+2000..U+3000). Returns
/// `(is_whitespace, byte length)`.
#[inline]
fn ws_at(text: &str, i: usize) -> (bool, usize) {
    let b = text.as_bytes()[i];
    if b < 0x80 {
        return (matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c), 1);
    }
    let len = if b >= 0xF0 {
        4
    } else if b >= 0xE0 {
        3
    } else {
        2
    };
    if matches!(b, 0xC2 | 0xE1 | 0xE2 | 0xE3) {
        if let Some(c) = text[i..].chars().next() {
            return (c.is_whitespace(), c.len_utf8());
        }
    }
    (false, len)
}

/// A maximal whitespace run that holds at least one line break.
struct BreakRun {
    /// Start of the first line break in the run.
    first_break: usize,
    /// Just past the last line break in the run.
    after_last_break: usize,
    breaks: usize,
    /// True when a `[Turn N]` marker follows the run (so it starts a line).
    marker_next: bool,
}

/// Every whitespace run in `[s, e)` that holds a line break, in one pass: jump to the next line
/// break (the first of its run, since the scan resumes after the previous run) and extend forward.
fn break_runs(text: &str, s: usize, e: usize) -> Vec<BreakRun> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = s;
    while i < e {
        let first_break = match bytes[i..e].iter().position(|&b| is_break(b)) {
            Some(k) => i + k,
            None => break,
        };
        let (mut j, mut after_last, mut breaks) = (first_break, first_break, 0usize);
        while j < e {
            let bj = bytes[j];
            if bj == b'\n' || bj == b'\r' {
                j += if bj == b'\r' && j + 1 < e && bytes[j + 1] == b'\n' { 2 } else { 1 };
                breaks += 1;
                after_last = j;
                continue;
            }
            let (w, l) = ws_at(text, j);
            if !w {
                break;
            }
            j += l;
        }
        out.push(BreakRun { first_break, after_last_break: after_last, breaks, marker_next: j < e && marker_at(bytes, j, e) });
        i = j;
    }
    out
}

/// Leading whitespace up to the last line break in it, and trailing whitespace from its first line
/// break: `(a, b)` with `[s, a)` and `[b, e)` the two separators (possibly empty). `None` when the
/// range is blank.
fn core_range(text: &str, s: usize, e: usize) -> Option<(usize, usize)> {
    let slice = &text[s..e];
    let first_non_ws = slice.char_indices().find(|(_, c)| !c.is_whitespace())?.0 + s;
    let last_non_ws = {
        let (i, c) = slice.char_indices().rev().find(|(_, c)| !c.is_whitespace())?;
        s + i + c.len_utf8()
    };
    let bytes = text.as_bytes();
    let a = (s..first_non_ws).rev().find(|&i| bytes[i] == b'\n' || bytes[i] == b'\r').map_or(s, |i| i + 1);
    let b = (last_non_ws..e).find(|&i| is_break(bytes[i])).unwrap_or(e);
    Some((a, b))
}

/// If a `[Turn N]` marker (ASCII, case-insensitive, spaces or tabs before the number) starts at
/// `p`, its length.
fn marker_at(bytes: &[u8], p: usize, e: usize) -> bool {
    let word = b"[turn";
    if p + word.len() > e {
        return false;
    }
    for (k, w) in word.iter().enumerate() {
        if bytes[p + k].to_ascii_lowercase() != *w {
            return false;
        }
    }
    let mut q = p + word.len();
    let sp = q;
    while q < e && (bytes[q] == b' ' || bytes[q] == b'\t') {
        q += 1;
    }
    if q == sp {
        return false;
    }
    let dg = q;
    while q < e && bytes[q].is_ascii_digit() {
        q += 1;
    }
    q > dg && q < e && bytes[q] == b']'
}

/// Separators of a core range for one mode, from its break runs, as byte ranges in order.
fn separators(runs: &[BreakRun], mode: SplitMode, fence: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut seps = Vec::new();
    for r in runs {
        if in_fence(fence, r.first_break) {
            continue;
        }
        match mode {
            // A turn separator runs from the first line break up to the marker.
            SplitMode::Turn if r.marker_next => seps.push((r.first_break, r.first_break)),
            SplitMode::Paragraph if r.breaks >= 2 => seps.push((r.first_break, r.after_last_break)),
            SplitMode::Line => seps.push((r.first_break, r.after_last_break)),
            _ => {}
        }
    }
    seps
}

/// Splits `[s, e)` of `text` by the first strategy that yields more than one non-blank block.
/// Returns the mode and the alternating segments (block, separator, …, block) covering `[s, e)`,
/// or `None` when no strategy splits it.
pub fn split_range(text: &str, s: usize, e: usize) -> Option<(SplitMode, Vec<Seg>)> {
    let (a, b) = core_range(text, s, e)?;
    let fence = fences(text, a, b);
    let runs = break_runs(text, a, b);
    for &mode in &[SplitMode::Turn, SplitMode::Paragraph, SplitMode::Line] {
        let mut seps = separators(&runs, mode, &fence);
        if mode == SplitMode::Turn {
            // The separator ends where the marker starts: after the run's trailing whitespace.
            for sep in seps.iter_mut() {
                let mut j = sep.0;
                while j < b {
                    let (w, l) = ws_at(text, j);
                    if !w {
                        break;
                    }
                    j += l;
                }
                sep.1 = j;
            }
        }
        if seps.is_empty() {
            continue;
        }
        let mut segs = Vec::with_capacity(seps.len() * 2 + 5);
        if a > s {
            segs.push(Seg { start: s, end: s, block: true });
            segs.push(Seg { start: s, end: a, block: false });
        }
        let mut cur = a;
        for &(x, y) in &seps {
            segs.push(Seg { start: cur, end: x, block: true });
            segs.push(Seg { start: x, end: y, block: false });
            cur = y;
        }
        segs.push(Seg { start: cur, end: b, block: true });
        if b < e {
            segs.push(Seg { start: b, end: e, block: false });
            segs.push(Seg { start: e, end: e, block: true });
        }
        return Some((mode, segs));
    }
    None
}

/// Splits a whole text; a text no strategy splits is one block.
pub fn split_text(text: &str) -> (Option<SplitMode>, Vec<Seg>) {
    match split_range(text, 0, text.len()) {
        Some((m, segs)) => (Some(m), segs),
        None => (None, vec![Seg { start: 0, end: text.len(), block: true }]),
    }
}

// ---- comparison ----------------------------------------------------------------------------------

#[derive(Clone)]
struct BlockInfo {
    doc: usize,
    start: usize,
    end: usize,
    pinned: bool,
    /// False for blocks of whitespace only (never removed).
    nonblank: bool,
    /// Hash of the whitespace-collapsed, lowercased text.
    hash: u64,
    /// Hash of the first `similarity_chars` normalized chars, when the block has that many.
    prefix: Option<u64>,
    raw_chars: usize,
}

/// Writes the whitespace-collapsed, lowercased form of `text` (UTF-8) into `out`.
fn normalize_into(text: &str, out: &mut Vec<u8>) {
    out.clear();
    let mut pending_space = false;
    let mut buf = [0u8; 4];
    for c in text.chars() {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        if pending_space {
            out.push(b' ');
            pending_space = false;
        }
        if c.is_ascii() {
            out.push((c as u8).to_ascii_lowercase());
        } else if caseless(c) {
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        } else {
            for l in crate::lowercase::lowercase(c) {
                out.extend_from_slice(l.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
}

/// True when two texts are equal once whitespace is collapsed and case folded (`bufs` are scratch).
fn norm_eq(a: &str, b: &str, bufs: &mut (Vec<u8>, Vec<u8>)) -> bool {
    if a == b {
        return true;
    }
    let (a, b) = (a.trim(), b.trim());
    if a == b {
        return true;
    }
    normalize_into(a, &mut bufs.0);
    normalize_into(b, &mut bufs.1);
    bufs.0 == bufs.1
}

fn block_info(text: &str, doc: usize, start: usize, end: usize, pinned: bool, prefix_chars: usize) -> BlockInfo {
    let bytes = &text.as_bytes()[start..end];
    let mut h = SeqHasher::new();
    let mut ph = SeqHasher::new();
    let (mut n, mut prefix, mut raw_chars) = (0usize, None, 0usize);
    let (mut pending_space, mut nonblank) = (false, false);
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let c: u32;
        let mut lower: Option<crate::lowercase::Lowercase> = None;
        if b < 0x80 {
            i += 1;
            raw_chars += 1;
            if matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
                pending_space = nonblank;
                continue;
            }
            c = u32::from(b.to_ascii_lowercase());
        } else {
            let ch = match text[start + i..end].chars().next() {
                Some(ch) => ch,
                None => break,
            };
            i += ch.len_utf8();
            raw_chars += 1;
            if ch.is_whitespace() {
                pending_space = nonblank;
                continue;
            }
            if caseless(ch) {
                c = ch as u32;
            } else {
                let mut l = crate::lowercase::lowercase(ch);
                c = l.next().map_or(ch as u32, |x| x as u32);
                lower = Some(l);
            }
        }
        if pending_space {
            h.push(' ' as u32);
            if n < prefix_chars {
                ph.push(' ' as u32);
                n += 1;
            }
            pending_space = false;
        }
        nonblank = true;
        h.push(c);
        if n < prefix_chars {
            ph.push(c);
            n += 1;
        }
        if let Some(rest) = lower {
            for x in rest {
                h.push(x as u32);
                if n < prefix_chars {
                    ph.push(x as u32);
                    n += 1;
                }
            }
        }
        if n == prefix_chars && prefix.is_none() {
            prefix = Some(ph.finish());
        }
    }
    if n == prefix_chars && prefix.is_none() && prefix_chars > 0 {
        prefix = Some(ph.finish());
    }
    BlockInfo { doc, start, end, pinned, nonblank, hash: h.finish(), prefix, raw_chars }
}

/// True for chars of caseless scripts (CJK, kana, hangul, Yi), so lowercasing can skip its tables.
#[inline]
fn caseless(c: char) -> bool {
    let u = c as u32;
    (0x2E80..=0xA4CF).contains(&u) || (0xAC00..=0xD7FF).contains(&u) || (0xF900..=0xFAFF).contains(&u) || u >= 0x20000
}

#[inline]
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || ('\u{300}'..='\u{36F}').contains(&c)
}

#[inline]
fn is_currency(c: char) -> bool {
    matches!(c, '$' | '€' | '£' | '¥' | '₹' | '₩' | '₽' | '¢' | '₿' | '₺' | '₴' | '₦' | '₱' | '฿')
}

#[inline]
fn sign_of(c: char) -> Option<char> {
    match c {
        '-' | '−' | '‒' | '–' => Some('-'),
        '+' => Some('+'),
        _ => None,
    }
}

/// The information units of a text, hashed, in order: words (lowercased), numbers with their sign,
/// currency sign, inner `.`/`,`/`:` and a trailing `%`, and each CJK char. A block whose units all
/// occur, in order, in another block says nothing that block does not.
pub(crate) fn info_units(text: &str) -> Vec<u64> {
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len();
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        let c = chars[i];
        if is_cjk(c) {
            let mut h = SeqHasher::new();
            h.push(c as u32);
            out.push(h.finish());
            i += 1;
            continue;
        }
        let prev_word = i > 0 && is_word_char(chars[i - 1]);
        // A number may carry a sign and/or a currency sign right before its first digit.
        let mut prefix: Vec<char> = Vec::new();
        let mut j = i;
        if !prev_word {
            while j < n && j < i + 2 && (sign_of(chars[j]).is_some() || is_currency(chars[j])) {
                prefix.push(sign_of(chars[j]).unwrap_or(chars[j]));
                j += 1;
            }
            if !(j < n && chars[j].is_numeric()) {
                prefix.clear();
                j = i;
            }
        }
        if !(j < n && is_word_char(chars[j])) {
            i += 1;
            continue;
        }
        let mut h = SeqHasher::new();
        for p in &prefix {
            h.push(*p as u32);
        }
        let mut k = j;
        while k < n {
            let ck = chars[k];
            if is_cjk(ck) {
                break;
            }
            if is_word_char(ck) {
                if ck.is_ascii() {
                    h.push(u32::from((ck as u8).to_ascii_lowercase()));
                } else {
                    for l in crate::lowercase::lowercase(ck) {
                        h.push(l as u32);
                    }
                }
                k += 1;
            } else if matches!(ck, '.' | ',' | ':') && k > j && chars[k - 1].is_numeric() && k + 1 < n && chars[k + 1].is_numeric() {
                h.push(ck as u32);
                k += 1;
            } else {
                break;
            }
        }
        if k < n && chars[k] == '%' && chars[k - 1].is_numeric() {
            h.push('%' as u32);
            k += 1;
        }
        out.push(h.finish());
        i = k;
    }
    out
}

/// True when `needle` is a subsequence of `hay`.
fn is_subsequence(needle: &[u64], hay: &[u64]) -> bool {
    let mut it = hay.iter();
    needle.iter().all(|x| it.any(|y| y == x))
}

/// True when removing `cand` as a near-duplicate of `kept` loses nothing: similar enough, and every
/// unit of `cand` occurs in `kept` in the same order.
pub fn covers(kept: &str, cand: &str, threshold: f64) -> bool {
    covers_units(kept, &info_units(kept), cand, &info_units(cand), threshold)
}

fn covers_units(kept: &str, uk: &[u64], cand: &str, uc: &[u64], threshold: f64) -> bool {
    uc.len() <= uk.len() && is_subsequence(uc, uk) && text_similarity(kept, cand) >= threshold
}

/// What a removed block repeats: `(doc, start, end)`.
type Target = (usize, usize, usize);

/// For each block: the range it repeats when it is removed, `None` when kept.
///
/// With several documents, each document's kept text as a whole also counts as an original once
/// its blocks are decided, so a paragraph that quotes a whole earlier message (split there into
/// lines, say) is recognized.
fn decide(texts: &[&str], blocks: &[BlockInfo], opts: &GuardOptions) -> Vec<Option<Target>> {
    let n = blocks.len();
    let mut out: Vec<Option<Target>> = vec![None; n];
    // Values below `n` are blocks; `n + p` is whole document `p` of `wholes`.
    let mut exact: DetMap<u64, usize> = DetMap::default();
    exact.reserve(n);
    let mut wholes: Vec<(String, Target)> = Vec::new();
    // Prefix hash -> index into `prefix_lists` (kept blocks with that prefix, in order). The maps
    // of this module share key and value types, so the wasm carries one hash table per key type.
    let mut by_prefix: DetMap<u64, usize> = DetMap::default();
    let mut prefix_lists: Vec<Vec<usize>> = Vec::new();
    // Information units, computed at most once per block and only for near-duplicate candidates.
    let mut units: Vec<Option<Vec<u64>>> = vec![None; n];
    let text_of = |k: usize| &texts[blocks[k].doc][blocks[k].start..blocks[k].end];
    let target_of = |k: usize| (blocks[k].doc, blocks[k].start, blocks[k].end);
    let mut bufs = (Vec::new(), Vec::new());
    let multi = texts.len() > 1;
    let forward = opts.keep == Keep::First;
    for step in 0..n {
        let i = if forward { step } else { n - 1 - step };
        let b = &blocks[i];
        if b.nonblank {
            let mut dup: Option<Target> = None;
            let mut seen_hash = false;
            if !b.pinned && b.raw_chars >= opts.min_block_chars {
                if let Some(&k) = exact.get(&b.hash) {
                    seen_hash = true;
                    if k < n {
                        if norm_eq(text_of(k), text_of(i), &mut bufs) {
                            dup = Some(target_of(k));
                        }
                    } else if norm_eq(&wholes[k - n].0, text_of(i), &mut bufs) {
                        dup = Some(wholes[k - n].1);
                    }
                }
                if dup.is_none() {
                    if let (Some(t), Some(p)) = (opts.near_duplicate, b.prefix) {
                        if let Some(&list) = by_prefix.get(&p) {
                            let cand = text_of(i);
                            let uc = units[i].get_or_insert_with(|| info_units(cand)).clone();
                            for &k in prefix_lists[list].iter().rev().take(MAX_NEAR_CANDIDATES) {
                                let kept = text_of(k);
                                let uk = units[k].get_or_insert_with(|| info_units(kept));
                                if covers_units(kept, uk, cand, &uc, t) {
                                    dup = Some(target_of(k));
                                    break;
                                }
                            }
                        }
                    }
                }
            } else {
                seen_hash = exact.contains_key(&b.hash);
            }
            match dup {
                Some(t) => out[i] = Some(t),
                None => {
                    if !seen_hash {
                        exact.insert(b.hash, i);
                    }
                    if let Some(p) = b.prefix {
                        let next = prefix_lists.len();
                        let list = *by_prefix.entry(p).or_insert(next);
                        if list == next {
                            prefix_lists.push(Vec::new());
                        }
                        prefix_lists[list].push(i);
                    }
                }
            }
        }
        // Leaving a document: register its kept text as a whole.
        let last_of_doc = if forward { i + 1 == n || blocks[i + 1].doc != b.doc } else { i == 0 || blocks[i - 1].doc != b.doc };
        if multi && last_of_doc {
            let (lo, hi) = if forward {
                let mut lo = i;
                while lo > 0 && blocks[lo - 1].doc == b.doc {
                    lo -= 1;
                }
                (lo, i + 1)
            } else {
                let mut hi = i + 1;
                while hi < n && blocks[hi].doc == b.doc {
                    hi += 1;
                }
                (i, hi)
            };
            let kept: Vec<usize> = (lo..hi).filter(|&k| blocks[k].nonblank && out[k].is_none()).collect();
            if kept.len() >= 2 {
                let mut whole = String::new();
                for &k in &kept {
                    if !whole.is_empty() {
                        whole.push(' ');
                    }
                    whole.push_str(text_of(k));
                }
                let h = block_info(&whole, 0, 0, whole.len(), false, 0).hash;
                if let std::collections::hash_map::Entry::Vacant(v) = exact.entry(h) {
                    v.insert(n + wholes.len());
                    let (first, last) = (kept[0], kept[kept.len() - 1]);
                    wholes.push((whole, (b.doc, blocks[first].start, blocks[last].end)));
                }
            }
        }
    }
    out
}

// ---- documents -----------------------------------------------------------------------------------

/// One input document of [`dedup_documents`].
#[derive(Debug, Clone, Copy)]
pub struct Doc<'a> {
    pub text: &'a str,
    /// A pinned document is never changed; its blocks still count as kept originals (tool output
    /// that other messages quote, say).
    pub pinned: bool,
}

/// A removed block and the block it repeats (byte ranges; `doc` indexes the input documents).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Removed {
    pub doc: usize,
    pub start: usize,
    pub end: usize,
    pub dup_doc: usize,
    pub dup_start: usize,
    pub dup_end: usize,
}

/// What [`dedup_documents`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DedupOutcome {
    /// For each document, the byte ranges that remain, in order (their concatenation is the
    /// cleaned document).
    pub kept: Vec<Vec<(usize, usize)>>,
    /// Removed blocks in document order.
    pub removed: Vec<Removed>,
    /// For each document, how many non-blank blocks remain (0: all of its text was repeats).
    pub kept_blocks: Vec<usize>,
}

/// True when `s` is whitespace only (`s.trim().is_empty()`, compiled once).
#[inline(never)]
fn is_blank(s: &str) -> bool {
    s.chars().all(char::is_whitespace)
}

/// Removes repeated blocks across `docs` (in order): see the module docs.
pub fn dedup_documents(docs: &[Doc<'_>], opts: &GuardOptions) -> Result<DedupOutcome, DedupError> {
    opts.validate()?;
    let texts: Vec<&str> = docs.iter().map(|d| d.text).collect();
    let mut segs: Vec<Vec<Seg>> = docs
        .iter()
        .map(|d| split_text(d.text).1)
        .collect();
    let mut removed: Vec<Removed> = Vec::new();
    // Block facts survive passes: only blocks of re-split documents are new. (doc, start, end) ->
    // index into `info_list`.
    let mut infos: DetMap<Target, usize> = DetMap::default();
    let mut info_list: Vec<BlockInfo> = Vec::new();
    for _ in 0..MAX_PASSES {
        let mut blocks = Vec::new();
        let mut where_: Vec<(usize, usize)> = Vec::new(); // (doc, seg index)
        for (d, list) in segs.iter().enumerate() {
            for (si, s) in list.iter().enumerate() {
                if s.block {
                    let next = info_list.len();
                    let at = *infos.entry((d, s.start, s.end)).or_insert(next);
                    if at == next {
                        info_list.push(block_info(texts[d], d, s.start, s.end, docs[d].pinned, opts.similarity_chars));
                    }
                    blocks.push(info_list[at].clone());
                    where_.push((d, si));
                }
            }
        }
        let dup = decide(&texts, &blocks, opts);
        if dup.iter().all(|d| d.is_none()) {
            break;
        }
        let mut gone: Vec<Vec<bool>> = segs.iter().map(|l| vec![false; l.len()]).collect();
        for (i, d) in dup.iter().enumerate() {
            if let Some((dup_doc, dup_start, dup_end)) = *d {
                let b = &blocks[i];
                removed.push(Removed { doc: b.doc, start: b.start, end: b.end, dup_doc, dup_start, dup_end });
                let (doc, si) = where_[i];
                gone[doc][si] = true;
            }
        }
        let mut refined = false;
        for (d, list) in segs.iter_mut().enumerate() {
            if !gone[d].iter().any(|g| *g) {
                continue;
            }
            let kept_idx: Vec<usize> = (0..list.len()).filter(|&i| list[i].block && !gone[d][i]).collect();
            let mut next = Vec::with_capacity(kept_idx.len() * 2);
            for (j, &i) in kept_idx.iter().enumerate() {
                if j > 0 {
                    next.push(list[i - 1]);
                }
                next.push(list[i]);
            }
            *list = next;
            // A document left with one non-blank block is split further, so the result is a fixpoint.
            let nonblank: Vec<usize> = (0..list.len()).filter(|&i| list[i].block && !is_blank(&texts[d][list[i].start..list[i].end])).collect();
            if nonblank.len() == 1 && !docs[d].pinned {
                let i = nonblank[0];
                if let Some((_, sub)) = split_range(texts[d], list[i].start, list[i].end) {
                    // Replace segment i by its pieces (without `splice`, whose machinery is large).
                    let tail = list.split_off(i + 1);
                    list.pop();
                    list.extend(sub);
                    list.extend(tail);
                    refined = true;
                }
            }
        }
        if !refined {
            break;
        }
    }
    // A block may repeat one that a later pass removed in turn: point at the surviving original.
    let dups: Vec<Target> = removed.iter().map(|r| (r.dup_doc, r.dup_start, r.dup_end)).collect();
    let mut target: DetMap<Target, usize> = DetMap::default(); // removed block -> index into `dups`
    for (i, r) in removed.iter().enumerate() {
        target.insert((r.doc, r.start, r.end), i);
    }
    for (r, &first) in removed.iter_mut().zip(&dups) {
        let mut t = first;
        for _ in 0..MAX_PASSES * 2 {
            match target.get(&t) {
                Some(&n) => t = dups[n],
                None => break,
            }
        }
        r.dup_doc = t.0;
        r.dup_start = t.1;
        r.dup_end = t.2;
    }
    crate::order::sort_stable_by(&mut removed, |a, b| (a.doc, a.start, a.end).cmp(&(b.doc, b.start, b.end)));
    let kept_blocks = segs
        .iter()
        .enumerate()
        .map(|(d, list)| list.iter().filter(|g| g.block && !is_blank(&texts[d][g.start..g.end])).count())
        .collect();
    let kept = segs
        .iter()
        .map(|list| {
            let mut ranges: Vec<(usize, usize)> = Vec::new();
            for s in list {
                if s.start == s.end {
                    continue;
                }
                match ranges.last_mut() {
                    Some(last) if last.1 == s.start => last.1 = s.end,
                    _ => ranges.push((s.start, s.end)),
                }
            }
            ranges
        })
        .collect();
    Ok(DedupOutcome { kept, removed, kept_blocks })
}

/// Cleans one text (convenience over [`dedup_documents`]): the cleaned text and the removed blocks.
pub fn deduplicate_text(text: &str, opts: &GuardOptions) -> Result<(String, Vec<Removed>), DedupError> {
    let out = dedup_documents(&[Doc { text, pinned: false }], opts)?;
    let mut s = String::with_capacity(text.len());
    for &(a, b) in &out.kept[0] {
        s.push_str(&text[a..b]);
    }
    Ok((s, out.removed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clean(text: &str) -> String {
        deduplicate_text(text, &GuardOptions::default()).unwrap().0
    }

    fn clean_with(text: &str, f: impl FnOnce(&mut GuardOptions)) -> (String, usize) {
        let mut o = GuardOptions::default();
        f(&mut o);
        let (s, r) = deduplicate_text(text, &o).unwrap();
        (s, r.len())
    }

    fn blocks(text: &str) -> Vec<&str> {
        split_text(text).1.iter().filter(|s| s.block).map(|s| &text[s.start..s.end]).collect()
    }

    #[test]
    fn splits_turns_then_paragraphs_then_lines() {
        let t = "[Turn 1] a\nb\n\n[Turn 2] c";
        assert_eq!(split_text(t).0, Some(SplitMode::Turn));
        assert_eq!(blocks(t), vec!["[Turn 1] a\nb", "[Turn 2] c"]);
        assert_eq!(split_text("a\nb\n\nc").0, Some(SplitMode::Paragraph));
        assert_eq!(blocks("a\nb\n\nc"), vec!["a\nb", "c"]);
        assert_eq!(blocks("a\nb\r\nc"), vec!["a", "b", "c"]);
        assert_eq!(split_text("one line").0, None);
    }

    #[test]
    fn leading_and_trailing_whitespace_are_separators() {
        let t = "\n\nA\nB\n";
        let (_, segs) = split_text(t);
        let texts: Vec<(&str, bool)> = segs.iter().map(|s| (&t[s.start..s.end], s.block)).collect();
        assert_eq!(texts, vec![("", true), ("\n\n", false), ("A", true), ("\n", false), ("B", true), ("\n", false), ("", true)]);
    }

    #[test]
    fn fences_are_not_split() {
        let t = "intro line\n```\nx = 1\n\ny = 2\n```\noutro";
        assert_eq!(blocks(t), vec!["intro line", "```\nx = 1\n\ny = 2\n```", "outro"]);
    }

    #[test]
    fn exact_repeats_go_with_their_separator() {
        let long = "The report says revenue grew by ten percent this quarter.";
        let t = format!("{}\n\nOther paragraph here.\n\n{}\n", long, long);
        assert_eq!(clean(&t), format!("{}\n\nOther paragraph here.\n", long));
    }

    #[test]
    fn turn_history_rejoins_without_doubled_newlines() {
        let t = "[Turn 1] User: Summarise the quarterly report please.\n[Turn 2] Assistant: The report says revenue grew.\n[Turn 1] User: Summarise the quarterly report please.\n[Turn 2] Assistant: The report says revenue grew.\n[Turn 3] Supervisor: Refine.";
        assert_eq!(
            clean(t),
            "[Turn 1] User: Summarise the quarterly report please.\n[Turn 2] Assistant: The report says revenue grew.\n[Turn 3] Supervisor: Refine."
        );
    }

    #[test]
    fn prefix_sharing_blocks_that_say_something_new_stay() {
        let p = "Build step 4 of the release pipeline for the payments service: tests ";
        let t = format!("{}PASSED\n{}FAILED", p, p);
        assert_eq!(clean(&t), t);
        let t = "Q3 revenue was $4.2M according to the finance team's quarterly summary.\nQ3 revenue was $4.7M according to the finance team's quarterly summary.";
        assert_eq!(clean(t), t);
        let t = "Order 1182 for the customer in Lisbon has been shipped by the warehouse.\nOrder 1182 for the customer in Lisbon has been delivered by the warehouse.";
        assert_eq!(clean(t), t);
    }

    #[test]
    fn prefix_sharing_blocks_that_add_nothing_go() {
        let a = "The deployment of version 2.3 to the staging cluster finished without errors, all checks green.";
        let b = "The deployment of version 2.3 to the staging cluster finished without errors; all checks green!";
        let t = format!("{}\n{}", a, b);
        assert_eq!(clean(&t), a);
        let (s, n) = clean_with(&t, |o| o.near_duplicate = None);
        assert_eq!((s.as_str(), n), (t.as_str(), 0));
    }

    #[test]
    fn numbers_keep_sign_and_decimals() {
        assert_ne!(info_units("-5 C"), info_units("5 C"));
        assert_ne!(info_units("$4.2M"), info_units("$4.7M"));
        assert_eq!(info_units("4.2m"), info_units("4.2M"));
        assert_eq!(info_units("a-5"), info_units("a 5"));
        assert_ne!(info_units("50%"), info_units("50"));
    }

    #[test]
    fn keep_last_keeps_the_newest() {
        let a = "Status of the nightly job: running, ETA unknown, owner on call.";
        let t = format!("{}\nother line\n{}", a, a);
        assert_eq!(clean_with(&t, |o| o.keep = Keep::Last).0, format!("other line\n{}", a));
    }

    #[test]
    fn short_blocks_stay() {
        let t = "        return None\nx = 1\n        return None";
        assert_eq!(clean(t), t);
    }

    #[test]
    fn collapsed_documents_are_split_further_and_result_is_a_fixpoint() {
        let l = "This line is long enough to count as a block on its own.";
        let x = format!("{}\nmiddle\n{}", l, l);
        let t = format!("{}\n\n{}", x, x);
        let once = clean(&t);
        assert_eq!(once, format!("{}\nmiddle", l));
        assert_eq!(clean(&once), once);
    }

    #[test]
    fn pinned_documents_are_originals_but_never_change() {
        let a = "The tool printed exactly this line of output for the caller.";
        let docs = [Doc { text: a, pinned: true }, Doc { text: a, pinned: false }, Doc { text: a, pinned: true }];
        let out = dedup_documents(&docs, &GuardOptions::default()).unwrap();
        assert_eq!(out.kept[0], vec![(0, a.len())]);
        assert!(out.kept[1].is_empty());
        assert_eq!(out.kept[2], vec![(0, a.len())]);
        assert_eq!(out.removed.len(), 1);
    }

    #[test]
    fn a_block_repeating_a_whole_earlier_document_goes() {
        let file = "def total(xs):\n    return sum(x.amount for x in xs)  # in cents, always";
        let quote = format!("The file says:\n\n{}\n\nIt sums.", file);
        let docs = [Doc { text: file, pinned: true }, Doc { text: &quote, pinned: false }];
        let out = dedup_documents(&docs, &GuardOptions::default()).unwrap();
        assert_eq!(out.removed.len(), 1);
        assert_eq!((out.removed[0].dup_doc, out.removed[0].dup_start, out.removed[0].dup_end), (0, 0, file.len()));
        let kept: String = out.kept[1].iter().map(|&(a, b)| &quote[a..b]).collect();
        assert_eq!(kept, "The file says:\n\nIt sums.");
    }

    #[test]
    fn options_parse_and_validate() {
        let o = GuardOptions::default().merge_json(&serde_json::json!({"keep": "last", "nearDuplicate": 0.9, "minBlockChars": 0})).unwrap();
        assert_eq!((o.keep, o.near_duplicate, o.min_block_chars), (Keep::Last, Some(0.9), 0));
        assert_eq!(GuardOptions::default().merge_json(&serde_json::json!({"nearDuplicate": false})).unwrap().near_duplicate, None);
        for bad in [
            serde_json::json!({"keep": "newest"}),
            serde_json::json!({"nearDuplicate": 0}),
            serde_json::json!({"nearDuplicate": "NaN"}),
            serde_json::json!({"similarityChars": 0}),
            serde_json::json!({"minBlockChars": -1}),
            serde_json::json!({"minblockchars": 3}),
        ] {
            assert!(GuardOptions::default().merge_json(&bad).is_err(), "{}", bad);
        }
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        fn text_strategy() -> impl Strategy<Value = String> {
            let piece = prop_oneof![
                Just("alpha beta gamma delta epsilon".to_string()),
                Just("Alpha  beta gamma delta EPSILON".to_string()),
                Just("alpha beta gamma delta epsilon zeta".to_string()),
                Just("[Turn 1] hello there".to_string()),
                Just("```".to_string()),
                Just("x".to_string()),
                Just("".to_string()),
                Just(" ".to_string()),
                Just("你好世界你好世界".to_string()),
                "[a-c \\n\\r]{0,6}",
                any::<String>(),
            ];
            let sep = prop_oneof![Just("\n"), Just("\n\n"), Just("\r\n"), Just(" "), Just("\n \n")];
            prop::collection::vec((piece, sep), 0..12).prop_map(|v| v.into_iter().map(|(p, s)| format!("{}{}", p, s)).collect())
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]
            #[test]
            fn idempotent_and_only_removes(text in text_strategy(), min in 0usize..12, last in any::<bool>()) {
                let mut o = GuardOptions::default();
                o.min_block_chars = min;
                o.similarity_chars = 8;
                if last { o.keep = Keep::Last; }
                let (once, removed) = deduplicate_text(&text, &o).unwrap();
                if removed.is_empty() { prop_assert_eq!(&once, &text); }
                let (twice, again) = deduplicate_text(&once, &o).unwrap();
                prop_assert_eq!(&twice, &once);
                prop_assert!(again.is_empty());
                // Every removed block's original survives.
                for r in &removed {
                    prop_assert!(r.start <= r.end && r.end <= text.len());
                }
            }

            #[test]
            fn segments_cover_the_text(text in text_strategy()) {
                let (_, segs) = split_text(&text);
                let mut pos = 0;
                for (i, s) in segs.iter().enumerate() {
                    prop_assert_eq!(s.start, pos);
                    prop_assert_eq!(s.block, i % 2 == 0);
                    pos = s.end;
                }
                prop_assert_eq!(pos, text.len());
                prop_assert!(segs.last().unwrap().block);
            }
        }
    }
}
