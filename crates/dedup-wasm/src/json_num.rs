//! Float text in the form JSON writers use: the shortest digits that read back to the same number,
//! plain from 1e-5 up to 1e16 ("0.001234", "12.5", "3.0") and with an exponent outside ("1e-7",
//! "1.5e20"). The digits come from the standard library's shortest formatting (`Display`), so the
//! wasm carries one float printer (the one `format!` needs anyway) instead of two; the text is the
//! same as serde_json's own float output (checked by the tests below against it).
//!
//! The two printers differ in one case only: when the number lies exactly halfway between the two
//! shortest candidates, the standard library rounds the last digit up and JSON writers pick the
//! even one. [`even_tie`] finds that case with exact integer arithmetic and picks the even digit.

use std::fmt::Write;

/// serde_json's compact output with floats printed by [`push_f64`] / [`push_f32`] (same text).
struct OutFormatter;

impl serde_json::ser::Formatter for OutFormatter {
    fn write_f64<W: ?Sized + std::io::Write>(&mut self, writer: &mut W, value: f64) -> std::io::Result<()> {
        let mut s = String::new();
        push_f64(&mut s, value);
        writer.write_all(s.as_bytes())
    }

    fn write_f32<W: ?Sized + std::io::Write>(&mut self, writer: &mut W, value: f32) -> std::io::Result<()> {
        let mut s = String::new();
        push_f32(&mut s, value);
        writer.write_all(s.as_bytes())
    }
}

/// Appends `v` as compact JSON (serde_json's text); false if it cannot be written. Every JSON the
/// crate writes goes through this one serializer type, so its code is in the wasm once.
pub(crate) fn write_json<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) -> bool {
    v.serialize(&mut serde_json::Serializer::with_formatter(out, OutFormatter)).is_ok()
}

/// Appends `s` as a JSON string literal (quoted and escaped as serde_json does).
pub(crate) fn push_json_str(out: &mut String, s: &str) {
    let mut bytes = Vec::with_capacity(s.len() + 2);
    write_json(&mut bytes, s);
    // serde_json writes valid UTF-8.
    if let Ok(text) = std::str::from_utf8(&bytes) {
        out.push_str(text);
    }
}

/// Appends finite `v` in JSON writers' form (see the module docs).
pub(crate) fn push_f64(out: &mut String, v: f64) {
    let mut plain = String::new();
    let _ = write!(plain, "{}", v);
    let bits = v.to_bits();
    let (frac, exp) = (bits & ((1 << 52) - 1), ((bits >> 52) & 0x7ff) as i32);
    let (m, e2) = if exp == 0 { (frac, -1074) } else { (frac | (1 << 52), exp - 1075) };
    push_shortest(out, &plain, 16, -5, (m, e2, m == 1 << 52 && exp > 1));
}

/// Appends finite `v` as JSON writers print an `f32` (shortest `f32` digits; exponent form
/// from 1e13 up and below 1e-6).
pub(crate) fn push_f32(out: &mut String, v: f32) {
    let mut plain = String::new();
    let _ = write!(plain, "{}", v);
    let bits = v.to_bits();
    let (frac, exp) = (u64::from(bits & ((1 << 23) - 1)), ((bits >> 23) & 0xff) as i32);
    let (m, e2) = if exp == 0 { (frac, -149) } else { (frac | (1 << 23), exp - 150) };
    push_shortest(out, &plain, 13, -6, (m, e2, m == 1 << 23 && exp > 1));
}

/// `|v| = m * 2^e2`; `narrow_below`: `v` is a power of two, so the gap to the next float down is
/// half the gap up.
type Binary = (u64, i32, bool);

/// The shortest digits JSON writers give when `digits` (the standard library's shortest digits of
/// `v`) is one of two candidates exactly as close to `v`: the even candidate. `None` when `v` is
/// not such a tie or `digits` already is the even one.
fn even_tie(digits: &str, (m_full, e2, narrow_below): Binary) -> Option<String> {
    // A tie needs the exact decimal expansion of v to have one digit more than `digits`. Only a
    // fraction can end in the 5 that makes it halfway: v = m * 2^-f = (m * 5^f) / 10^f with m odd.
    if m_full == 0 {
        return None;
    }
    let (mut m, mut f) = (m_full, -e2);
    while m & 1 == 0 {
        m >>= 1;
        f -= 1;
    }
    if f <= 0 || f > 27 {
        return None;
    }
    let exact = 5u64.checked_pow(f as u32).and_then(|p| p.checked_mul(m)).filter(|&x| x < 1_000_000_000_000_000_000)?;
    if decimal_len(exact) != digits.len() + 1 {
        return None;
    }
    let (lo, hi) = (exact / 10, exact / 10 + 1);
    if decimal_len(hi) != digits.len() {
        return None;
    }
    // Both candidates lie 5 units of the exact expansion's last digit (10^-f) from v. A candidate
    // reads back as v when that distance is inside the half-gap to the neighbouring float
    // (inclusive when m is even, as round-half-even parsing then lands on v):
    // half-gap up = 2^(e2-1) = 5^f / 2^(1 - e2 - f) units.
    let shift = (1 - e2 - f) as u32;
    let inclusive = m_full & 1 == 0;
    let half = 5u64.pow(f as u32);
    let fits = |shift: u32| match 5u64.checked_shl(shift).filter(|d| d >> shift == 5) {
        Some(dist) => dist < half || (inclusive && dist == half),
        None => false,
    };
    let (lo_ok, hi_ok) = (fits(if narrow_below { shift + 1 } else { shift }), fits(shift));
    let pick = match (lo_ok, hi_ok) {
        (true, true) if lo % 2 == 0 => lo,
        (true, true) => hi,
        (true, false) => lo,
        (false, true) => hi,
        (false, false) => return None,
    };
    let mut text = String::new();
    let _ = write!(text, "{}", pick);
    if text == digits {
        None
    } else {
        Some(text)
    }
}

/// Decimal digits of `x`.
fn decimal_len(mut x: u64) -> usize {
    let mut n = 1;
    while x >= 10 {
        x /= 10;
        n += 1;
    }
    n
}

/// Rewrites `plain` (the standard library's shortest text, `-ddd.ddd` without exponent) in JSON
/// writers' layout. `max_kk` is the largest decimal exponent (+1) printed plainly, `min_kk` the
/// smallest (exclusive) one printed as `0.000ddd`.
#[inline(never)]
fn push_shortest(out: &mut String, plain: &str, max_kk: i32, min_kk: i32, binary: Binary) {
    let (negative, body) = match plain.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, plain),
    };
    if negative {
        out.push_str("-");
    }
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    // Significant digits: no leading zeros, and (being shortest) no trailing zeros but padding.
    let mut digits = String::with_capacity(body.len());
    digits.push_str(int);
    digits.push_str(frac);
    let lead = digits.len() - digits.trim_start_matches('0').len();
    let mut digits = digits[lead..].trim_end_matches('0').to_string();
    if digits.is_empty() {
        out.push_str("0.0");
        return;
    }
    // 10^(kk-1) <= |v| < 10^kk
    let kk = int.len() as i32 - lead as i32;
    if let Some(even) = even_tie(&digits, binary) {
        digits = even;
    }
    let length = digits.len() as i32;
    let k = kk - length;
    if 0 <= k && kk <= max_kk {
        // 1234e7 -> 12340000000.0
        out.push_str(&digits);
        (0..k).for_each(|_| out.push_str("0"));
        out.push_str(".0");
    } else if 0 < kk && kk <= max_kk {
        // 1234e-2 -> 12.34
        let (int, frac) = digits.split_at(kk as usize);
        out.push_str(int);
        out.push_str(".");
        out.push_str(frac);
    } else if min_kk < kk && kk <= 0 {
        // 1234e-6 -> 0.001234
        out.push_str("0.");
        (0..-kk).for_each(|_| out.push_str("0"));
        out.push_str(&digits);
    } else {
        // 1e30, 1234e30 -> 1.234e33
        let (first, rest) = digits.split_at(1);
        out.push_str(first);
        if !rest.is_empty() {
            out.push_str(".");
            out.push_str(rest);
        }
        let _ = write!(out, "e{}", kk - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::mix64;

    fn ours64(v: f64) -> String {
        let mut s = String::new();
        push_f64(&mut s, v);
        s
    }

    fn ours32(v: f32) -> String {
        let mut s = String::new();
        push_f32(&mut s, v);
        s
    }

    #[test]
    fn matches_serde_json_on_chosen_values() {
        let chosen = [
            0.0, -0.0, 1.0, -1.0, 0.5, 0.1, 0.2 + 0.1, 1.0 / 3.0, 12.5, 100.0, 1234.5678, 0.95, 0.75, 1e-5, 1.5e-5, 1e-4, 0.000123,
            9.999e-6, 1e15, 1e16, 1.5e16, 1e17, 123456789012345680.0, 9007199254740993.0, 1e21, 1e22, 1e100, 1e300, 1.7976931348623157e308,
            5e-324, 2.2250738585072014e-308, -4.25e-7, 65536.0, 0.333, 1e-6, 0.000009, 1234567890123456.25, 1234567890123456.75,
        ];
        for &v in &chosen {
            assert_eq!(ours64(v), serde_json::to_string(&v).unwrap(), "{:e}", v);
        }
        for &v in &[0.0f32, 1.0, 0.1, 0.95, 1e-6, 1.5e-6, 1e-7, 1e12, 1e13, 3.4028235e38, 1e-45, -2.5] {
            assert_eq!(ours32(v), serde_json::to_string(&v).unwrap(), "{:e}", v);
        }
    }

    #[test]
    fn matches_serde_json_on_powers_of_two() {
        for k in -1074..1024 {
            let v = 2f64.powi(k);
            assert_eq!(ours64(v), serde_json::to_string(&v).unwrap(), "2^{}", k);
        }
        for k in -149..128 {
            let v = 2f32.powi(k);
            assert_eq!(ours32(v), serde_json::to_string(&v).unwrap(), "2^{}", k);
        }
    }

    #[test]
    fn matches_serde_json_on_many_bit_patterns() {
        let mut state = 0x1234_5678_9abc_def0u64;
        for i in 0..200_000u64 {
            state = mix64(state ^ i);
            let v = f64::from_bits(state);
            if v.is_finite() {
                assert_eq!(ours64(v), serde_json::to_string(&v).unwrap(), "{:e}", v);
            }
            // Values of the size results carry: scores, ratios, counts.
            let w = (state >> 11) as f64 / (1u64 << 53) as f64 * 10f64.powi((state % 40) as i32 - 20);
            assert_eq!(ours64(w), serde_json::to_string(&w).unwrap(), "{:e}", w);
            // Exact fractions of 53-bit significands: where halfway ties live.
            let t = ((state >> 11) | (1 << 52)) as f64 / (1u64 << (1 + state % 8)) as f64;
            assert_eq!(ours64(t), serde_json::to_string(&t).unwrap(), "{:e}", t);
            let f = f32::from_bits(state as u32);
            if f.is_finite() {
                assert_eq!(ours32(f), serde_json::to_string(&f).unwrap(), "{:e}", f);
            }
        }
    }
}
