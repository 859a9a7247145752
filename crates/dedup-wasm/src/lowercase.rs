//! Lowercasing of chars and strings with the results of the standard library's `char::to_lowercase`
//! and `str::to_lowercase` (final sigma included), from our own compact tables.
//!
//! Why: the standard library's lowercase table is about 23 KB of the wasm, more than any other piece
//! of data in it. The same mapping fits in about 3 KB as runs (chars `start + k * stride`, stride 1 or
//! 2 for the alternating upper/lower blocks, that all move by one delta), one multi-char exception
//! (U+0130 → "i\u{307}") and the two char classes of the final-sigma rule. Every lowercasing in the
//! crate goes through here, so the standard library's table is left out of the build.
//!
//! A second gain: the mapping no longer depends on the toolchain. Native builds and wasm builds made
//! with different Rust versions (hence different Unicode versions) lowercase every char the same way
//! by construction. The tables are generated from the standard library by
//! `cargo run --example gen_lowercase` (see there), and the tests below compare every char with the
//! standard library the tests are built with.

mod table {
    include!("lowercase_table.rs");
}

use table::{CASED, DELTAS, IGNORABLE, MULTI, RUNS};

const START_BITS: u32 = 0x1F_FFFF;

/// The lowercase of one char: one to three chars, like `std::char::ToLowercase`.
#[derive(Clone, Debug)]
pub(crate) struct Lowercase {
    chars: [char; 3],
    pos: u8,
    len: u8,
}

impl Lowercase {
    #[inline]
    fn one(c: char) -> Self {
        Lowercase { chars: [c, '\0', '\0'], pos: 0, len: 1 }
    }
}

impl Iterator for Lowercase {
    type Item = char;

    #[inline]
    fn next(&mut self) -> Option<char> {
        if self.pos < self.len {
            let c = self.chars[usize::from(self.pos)];
            self.pos += 1;
            Some(c)
        } else {
            None
        }
    }
}

/// The lowercase of `c` (what `char::to_lowercase` gives).
#[inline]
pub(crate) fn lowercase(c: char) -> Lowercase {
    if c.is_ascii() {
        Lowercase::one(c.to_ascii_lowercase())
    } else if crate::tokenize::in_letter_block(c) {
        // CJK text is nearly all such chars, and they have no case: no table search.
        Lowercase::one(c)
    } else {
        lowercase_non_ascii(c)
    }
}

// Kept out of line: the callers' ASCII paths stay small and the table search is in the wasm once.
#[inline(never)]
fn lowercase_non_ascii(c: char) -> Lowercase {
    let u = c as u32;
    // The runs are sorted and their spans do not overlap: only the last run starting at or before
    // `u` can hold it.
    let i = RUNS.partition_point(|&r| r & START_BITS <= u);
    if i > 0 {
        let r = RUNS[i - 1];
        let off = u - (r & START_BITS);
        let len = ((r >> 21) & 0x3FF) + 1;
        let (k, on_stride) = if r >> 31 == 1 { (off >> 1, off & 1 == 0) } else { (off, true) };
        if on_stride && k < len {
            let l = (u as i32).wrapping_add(DELTAS[i - 1]) as u32;
            return Lowercase::one(char::from_u32(l).unwrap_or(c));
        }
    }
    for &(m, chars) in MULTI.iter() {
        if m == c {
            let len = chars.iter().take_while(|&&x| x != '\0').count() as u8;
            return Lowercase { chars, pos: 0, len };
        }
    }
    Lowercase::one(c)
}

/// The lowercase of `s` (what `str::to_lowercase` gives): each char lowercased, and a capital sigma
/// that ends a word becomes a final sigma.
pub(crate) fn lowercase_str(s: &str) -> String {
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.char_indices() {
        if c == 'Σ' {
            out.push(if final_sigma(s, i) { 'ς' } else { 'σ' });
        } else {
            out.extend(lowercase(c));
        }
    }
    out
}

/// The Final_Sigma condition of the Unicode standard (chapter 3, default case conversion) for the
/// capital sigma at byte `i`: a cased char before it and none after it, skipping case-ignorable chars
/// both ways.
#[inline(never)]
fn final_sigma(s: &str, i: usize) -> bool {
    cased_after_ignorables(s[..i].chars().rev()) && !cased_after_ignorables(s[i + 'Σ'.len_utf8()..].chars())
}

fn cased_after_ignorables(chars: impl Iterator<Item = char>) -> bool {
    for c in chars {
        if !in_set(&IGNORABLE, c) {
            return in_set(&CASED, c);
        }
    }
    false
}

/// True when `c` lies in the set given by `flips`: LEB128 deltas between the chars where membership
/// flips, starting outside the set at 0.
fn in_set(flips: &[u8], c: char) -> bool {
    let u = c as u32;
    let (mut at, mut delta, mut shift, mut inside) = (0u32, 0u32, 0u32, false);
    for &b in flips {
        delta |= u32::from(b & 0x7F) << shift;
        if b & 0x80 != 0 {
            shift += 7;
            continue;
        }
        at += delta;
        if at > u {
            break;
        }
        inside = !inside;
        delta = 0;
        shift = 0;
    }
    inside
}

#[cfg(test)]
mod tests {
    use super::table::UNICODE_VERSION;
    use super::*;
    use crate::hash::mix64;

    fn ours(c: char) -> Vec<char> {
        lowercase(c).collect()
    }

    fn std_lower(c: char) -> Vec<char> {
        c.to_lowercase().collect()
    }

    /// Every char against the standard library. With the Unicode version the tables were read from,
    /// the mapping must be the same for every char. With another version, a char may differ only where
    /// one side leaves it unchanged (a case pair one version has and the other lacks); the count is
    /// printed.
    #[test]
    fn every_char_matches_the_standard_library() {
        let same_version = char::UNICODE_VERSION == UNICODE_VERSION;
        let std_newer = char::UNICODE_VERSION > UNICODE_VERSION;
        let mut differ = 0usize;
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            let (a, b) = (ours(c), std_lower(c));
            if a == b {
                continue;
            }
            differ += 1;
            assert!(!same_version, "{:?} (U+{:04X}): ours {:?}, std {:?}", c, c as u32, a, b);
            let unchanged = if std_newer { a == [c] } else { b == [c] };
            assert!(unchanged, "{:?} (U+{:04X}) maps differently: ours {:?}, std {:?}", c, c as u32, a, b);
        }
        if !same_version {
            println!(
                "lowercase: std has Unicode {:?}, the tables {:?}: {} chars differ (each left unchanged by the older side)",
                char::UNICODE_VERSION,
                UNICODE_VERSION,
                differ
            );
        }
    }

    /// The final-sigma classes of every char, through four probes that reach both directions of the
    /// rule: a char before the sigma (as the stop or skipped before a cased "A") and a char after it
    /// (as the stop or skipped before a cased "A"). With the tables' Unicode version every probe must
    /// match. Other versions add cased and case-ignorable chars and also reclassify a few old ones
    /// (Unicode 16 made some IPA letters lowercase, hence cased), so there the differing chars are
    /// counted and the first ones printed.
    #[test]
    fn final_sigma_classes_match_the_standard_library_for_every_char() {
        let same_version = char::UNICODE_VERSION == UNICODE_VERSION;
        let mut differ = Vec::new();
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            let probes = [format!("{}Σ", c), format!("A{}Σ", c), format!("AΣ{}", c), format!("AΣ{}A", c)];
            let mismatch = probes.iter().find(|p| lowercase_str(p) != p.to_lowercase());
            if let Some(p) = mismatch {
                assert!(!same_version, "{:?} (U+{:04X}): ours {:?}, std {:?}", p, c as u32, lowercase_str(p), p.to_lowercase());
                differ.push(c as u32);
            }
        }
        if !same_version {
            let first: Vec<String> = differ.iter().take(8).map(|c| format!("U+{:04X}", c)).collect();
            println!(
                "final sigma: std has Unicode {:?}, the tables {:?}: {} chars classed differently (first: {})",
                char::UNICODE_VERSION,
                UNICODE_VERSION,
                differ.len(),
                first.join(" ")
            );
        }
    }

    #[test]
    fn known_mappings() {
        assert_eq!(lowercase_str("HELLO World"), "hello world");
        assert_eq!(ours('İ'), ['i', '\u{307}']);
        assert_eq!(ours('Ā'), ['ā']);
        assert_eq!(ours('ā'), ['ā']);
        assert_eq!(ours('K'), ['k']); // Kelvin sign
        assert_eq!(ours('Ω'), ['ω']); // ohm sign
        assert_eq!(ours('Ꞑ'), ['ꞑ']);
        assert_eq!(ours('𐐀'), ['𐐨']);
        assert_eq!(ours('你'), ['你']);
        assert_eq!(lowercase_str("ΣΊΣΥΦΟΣ"), "σίσυφος");
        assert_eq!(lowercase_str("ΌΣΟΣ Σ ΑΣ'Σ"), "όσος σ ασ'ς"); // the apostrophe is case-ignorable
        assert_eq!(lowercase_str("İSTANBUL"), "i\u{307}stanbul");
    }

    /// Strings mixing the chars the rules care about (Greek capitals and sigmas, combining marks,
    /// apostrophes, spaces, dotted capital I, letters of other scripts) against `str::to_lowercase`.
    #[test]
    fn strings_match_str_to_lowercase() {
        const PARTS: &[char] = &['Σ', 'σ', 'ς', 'Α', 'ά', '\u{301}', '\u{345}', '\'', '.', ' ', '1', 'a', 'B', 'İ', 'Ж', 'ʰ', '\u{200D}', '你', '_', 'ǅ', '\u{1F600}'];
        for seed in 0..20_000u64 {
            let len = (mix64(seed) % 9) as usize;
            let s: String = (0..len).map(|k| PARTS[(mix64(seed * 31 + k as u64 + 1) % PARTS.len() as u64) as usize]).collect();
            assert_eq!(lowercase_str(&s), s.to_lowercase(), "{:?}", s);
        }
    }
}
