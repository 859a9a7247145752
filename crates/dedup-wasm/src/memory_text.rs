//! Normalization and content hashing of memory entries (the exact tier of memory dedup).
//!
//! The host applies Unicode NFKC first (JavaScript has it built in; the core has no Unicode tables
//! for it). This module then case-folds, drops sentence punctuation that does not change a fact, and
//! collapses whitespace, keeping letters, digits and marks of every script and all symbols:
//!
//! - `"User likes coffee."` and `"user  likes coffee"` normalize alike;
//! - `"$3.50"` stays `"$3.50"` and `"3 50"` stays `"3 50"`: a currency sign is a symbol (kept) and a
//!   point between digits is part of the token (kept);
//! - Chinese, Russian or Arabic text keeps all its letters, so two different memories never
//!   normalize to the same string.
//!
//! The hash is 128 bits (two independent 64-bit hashes), printed as 32 hex digits. A hash hit is
//! only a candidate: callers confirm it by comparing normalized texts.

use crate::hash::{mix64, SeqHasher};

/// Sentence punctuation: dropped at token edges, kept inside a token (`3.50`, `don't`, `e-mail`).
fn is_soft_punct(c: char) -> bool {
    matches!(c,
        '.' | ',' | ';' | ':' | '!' | '?' | '\'' | '"' | '(' | ')' | '[' | ']' | '{' | '}' | '-' | '_'
        | '\u{A1}' | '\u{AB}' | '\u{B7}' | '\u{BB}' | '\u{BF}'
        | '\u{55A}'..='\u{55F}' | '\u{589}'
        | '\u{5BE}' | '\u{5C0}' | '\u{5C3}' | '\u{5F3}' | '\u{5F4}'
        | '\u{60C}' | '\u{61B}' | '\u{61F}' | '\u{66B}' | '\u{66C}' | '\u{6D4}'
        | '\u{964}' | '\u{965}' | '\u{E4F}' | '\u{E5A}' | '\u{E5B}' | '\u{104A}' | '\u{104B}'
        | '\u{1361}'..='\u{1368}'
        | '\u{2010}'..='\u{2027}' | '\u{2039}'..='\u{205E}'
        | '\u{3001}'..='\u{3003}' | '\u{3008}'..='\u{3011}' | '\u{3014}'..='\u{301F}' | '\u{3030}'
    )
}

/// Case folding beyond `to_lowercase` for the letters whose folded form differs from the lowercase one.
fn push_folded(c: char, out: &mut Vec<char>) {
    for l in crate::lowercase::lowercase(c) {
        match l {
            '\u{DF}' => {
                out.push('s');
                out.push('s');
            }
            '\u{3C2}' => out.push('\u{3C3}'),
            '\u{2018}' | '\u{2019}' | '\u{2BC}' => out.push('\''),
            '\u{201C}' | '\u{201D}' => out.push('"'),
            other => out.push(other),
        }
    }
}

/// Normalizes an (already NFKC) text for exact comparison. See the module docs for the rules.
///
/// ```
/// use dedup_wasm::normalize_memory_text as n;
/// assert_eq!(n("  User LIKES coffee. "), "user likes coffee");
/// assert_ne!(n("$3.50"), n("3 50"));
/// assert_ne!(n("用户喜欢咖啡"), n("用户喜欢茶"));
/// assert_eq!(n("Straße"), n("STRASSE"));
/// ```
pub fn normalize_memory_text(text: &str) -> String {
    let mut chars: Vec<char> = Vec::with_capacity(text.len());
    for c in text.chars() {
        push_folded(c, &mut chars);
    }
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        let sep = if c.is_whitespace() || c.is_control() {
            true
        } else if is_soft_punct(c) {
            let next_alnum = next.map_or(false, char::is_alphanumeric);
            let inside = !out.is_empty() && !pending_space && next_alnum;
            let sign = (c == '-' || c == '.') && next.map_or(false, |n| n.is_numeric());
            !(inside || sign)
        } else {
            false
        };
        if sep {
            pending_space = !out.is_empty();
            continue;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        out.push(c);
    }
    out
}

/// 128-bit hash of a normalized text as 32 lowercase hex digits.
pub fn memory_text_hash(normalized: &str) -> String {
    let mut a = SeqHasher::new();
    let mut b: u64 = 0x6a09_e667_f3bc_c909;
    let mut n: u64 = 0;
    for c in normalized.chars() {
        a.push(c as u32);
        b = mix64(b ^ (u64::from(c as u32) | (n << 32)));
        n += 1;
    }
    let hi = a.finish();
    let lo = mix64(b ^ n.rotate_left(17));
    format!("{:016x}{:016x}", hi, lo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn punctuation_at_edges_and_case_do_not_matter() {
        assert_eq!(normalize_memory_text("User likes coffee!"), normalize_memory_text("user likes COFFEE"));
        assert_eq!(normalize_memory_text("\"Hello,\" world…"), "hello world");
        assert_eq!(normalize_memory_text("a\t\n  b"), "a b");
    }

    #[test]
    fn numbers_signs_and_symbols_are_kept() {
        assert_eq!(normalize_memory_text("$3.50"), "$3.50");
        assert_eq!(normalize_memory_text("3 50"), "3 50");
        assert_ne!(normalize_memory_text("-5 degrees"), normalize_memory_text("5 degrees"));
        assert_ne!(normalize_memory_text("50%"), normalize_memory_text("50"));
        assert_eq!(normalize_memory_text("don’t"), normalize_memory_text("don't"));
    }

    #[test]
    fn every_script_keeps_its_letters() {
        let texts = ["用户住在北京", "用户住在上海", "Пользователь живёт в Москве", "Пользователь живёт в Казани", "المستخدم يعيش في القاهرة", "المستخدم يعيش في دبي", "उपयोगकर्ता दिल्ली में रहता है"];
        for (i, a) in texts.iter().enumerate() {
            let na = normalize_memory_text(a);
            assert!(!na.is_empty());
            for b in &texts[i + 1..] {
                let nb = normalize_memory_text(b);
                assert_ne!(na, nb);
                assert_ne!(memory_text_hash(&na), memory_text_hash(&nb));
            }
        }
        assert_eq!(normalize_memory_text("用户住在北京。"), "用户住在北京");
        assert_eq!(normalize_memory_text("ΣΟΦΟΣ"), normalize_memory_text("σοφοσ"));
    }

    #[test]
    fn hash_is_128_bits_of_hex_and_stable() {
        let h = memory_text_hash("user likes coffee");
        assert_eq!(h.len(), 32);
        assert!(h.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(h, memory_text_hash("user likes coffee"));
        assert_ne!(h, memory_text_hash("user likes cofee"));
        assert_eq!(memory_text_hash("").len(), 32);
    }
}
