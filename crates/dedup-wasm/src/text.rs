//! The normalized character stream every gram-based pass reads.
//!
//! Source text is lowercased and each run of whitespace becomes one space, so "Hello   World" and
//! "hello world" repeat each other. Each normalized char remembers where its source char starts, in
//! UTF-8 bytes and in UTF-16 units, so findings map back to the caller's text exactly.
//!
//! Positions are absolute (counted from the start of the stream, as `u64`, so endless streams never
//! wrap). Only the last `retain` chars are kept; older ones are dropped in amortized O(1).

/// Where a normalized char came from in the source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct SourcePos {
    /// Byte offset of the source char's first byte.
    pub byte: u64,
    /// UTF-16 offset of the source char's first unit.
    pub utf16: u64,
}

/// A half-open range of the source text, in both units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct SourceSpan {
    pub start: SourcePos,
    pub end: SourcePos,
}

/// One normalized char and the start of its source char. The source char's byte length (1..=4) is
/// kept too; its UTF-16 length follows from it (4 bytes in UTF-8 is a surrogate pair in UTF-16).
#[derive(Clone, Copy)]
struct Entry {
    ch: u32,
    len: u8,
    src: SourcePos,
}

pub(crate) struct NormStream {
    base: u64,
    entries: Vec<Entry>,
    retain: usize,
    /// Length at which the oldest chars are dropped (1.5 × retain), so dropping is amortized O(1).
    compact_at: usize,
    in_space: bool,
    /// Source position just past the last source char consumed.
    consumed: SourcePos,
}

impl NormStream {
    /// A stream keeping at least the last `retain` normalized chars (`usize::MAX`: keep all).
    pub(crate) fn new(retain: usize) -> Self {
        NormStream::with_capacity(retain, 0)
    }

    /// Like [`NormStream::new`], reserving room for `expected` chars up front (a batch knows its size).
    pub(crate) fn with_capacity(retain: usize, expected: usize) -> Self {
        let reserve = expected.min(retain);
        NormStream {
            base: 0,
            entries: Vec::with_capacity(reserve),
            retain,
            compact_at: retain.saturating_add(retain / 2),
            in_space: false,
            consumed: SourcePos::default(),
        }
    }

    /// Absolute position of the next normalized char.
    #[inline]
    pub(crate) fn end(&self) -> u64 {
        self.base + self.entries.len() as u64
    }

    /// Absolute position of the oldest retained char.
    #[inline]
    pub(crate) fn base(&self) -> u64 {
        self.base
    }

    /// The normalized char at absolute position `pos` (must be retained).
    #[inline]
    pub(crate) fn at(&self, pos: u64) -> u32 {
        self.entries[(pos - self.base) as usize].ch
    }

    /// The normalized chars of `[start, end)` (both retained).
    #[inline]
    pub(crate) fn chars(&self, start: u64, end: u64) -> impl Iterator<Item = u32> + '_ {
        self.entries[(start - self.base) as usize..(end - self.base) as usize].iter().map(|e| e.ch)
    }

    /// True when the next char appended drops the oldest chars (amortized: once every `retain / 2`).
    #[inline]
    pub(crate) fn drops_next(&self) -> bool {
        self.entries.len() >= self.compact_at
    }

    /// Source position just past everything consumed so far.
    pub(crate) fn consumed(&self) -> SourcePos {
        self.consumed
    }

    /// Source span of the normalized range `[start, end)` (both retained, `start < end`).
    pub(crate) fn span(&self, start: u64, end: u64) -> SourceSpan {
        let first = self.entries[(start - self.base) as usize].src;
        let last = self.entries[(end - 1 - self.base) as usize];
        let blen = u64::from(last.len);
        let last = last.src;
        let ulen = if blen == 4 { 2 } else { 1 };
        SourceSpan { start: first, end: SourcePos { byte: last.byte + blen, utf16: last.utf16 + ulen } }
    }

    /// Consumes one source char; calls `emit(pos, ch)` for each normalized char it produces (none for
    /// the second and later whitespace of a run, several for chars whose lowercase form is longer).
    #[inline]
    pub(crate) fn push(&mut self, c: char, mut emit: impl FnMut(&mut Self, u64, u32)) {
        let at = self.consumed;
        let blen = c.len_utf8() as u8;
        self.consumed.byte += u64::from(blen);
        self.consumed.utf16 += if blen == 4 { 2 } else { 1 };
        if crate::tokenize::is_whitespace(c) {
            if self.in_space {
                return;
            }
            self.in_space = true;
            let pos = self.append(' ' as u32, at, blen);
            emit(self, pos, ' ' as u32);
            return;
        }
        self.in_space = false;
        if c.is_ascii() {
            let l = c.to_ascii_lowercase() as u32;
            let pos = self.append(l, at, blen);
            emit(self, pos, l);
        } else {
            for l in crate::lowercase::lowercase(c) {
                let pos = self.append(l as u32, at, blen);
                emit(self, pos, l as u32);
            }
        }
    }

    #[inline]
    fn append(&mut self, ch: u32, at: SourcePos, blen: u8) -> u64 {
        if self.entries.len() >= self.compact_at {
            let drop = self.entries.len() - self.retain;
            self.entries.drain(..drop);
            self.base += drop as u64;
        }
        self.entries.push(Entry { ch, len: blen, src: at });
        self.end() - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(text: &str) -> (NormStream, String) {
        let mut s = NormStream::new(usize::MAX);
        let mut out = String::new();
        for c in text.chars() {
            s.push(c, |_, _, ch| out.push(char::from_u32(ch).unwrap()));
        }
        (s, out)
    }

    #[test]
    fn lowercases_and_collapses_whitespace() {
        assert_eq!(norm("Hello \t\n World").1, "hello world");
    }

    #[test]
    fn spans_map_back_to_bytes_and_utf16() {
        let text = "a😀b 你";
        let (s, n) = norm(text);
        assert_eq!(n, "a😀b 你");
        let sp = s.span(1, 3); // "😀b"
        assert_eq!((sp.start.byte, sp.end.byte), (1, 6));
        assert_eq!((sp.start.utf16, sp.end.utf16), (1, 4));
        let all = s.span(0, s.end());
        assert_eq!(all.end.byte as usize, text.len());
        assert_eq!(all.end.utf16 as usize, text.encode_utf16().count());
    }

    #[test]
    fn retains_a_bounded_tail_with_absolute_positions() {
        let mut s = NormStream::new(10);
        for _ in 0..100 {
            s.push('x', |_, _, _| {});
        }
        assert_eq!(s.end(), 100);
        assert!(s.base() >= 85 && s.base() <= 90);
        assert_eq!(s.at(99), 'x' as u32);
    }
}
