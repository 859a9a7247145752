//! Prints `src/lowercase_table.rs`: the lowercase mapping of the standard library this example is
//! built with, in the compact form `src/lowercase.rs` reads. Regenerate with
//!
//! `cargo run --example gen_lowercase > crates/dedup-wasm/src/lowercase_table.rs`
//!
//! then run the `lowercase` tests (they compare every char with the standard library).
//!
//! Three tables come out:
//! - `RUNS`: every char whose lowercase is one other char, as runs of chars `start + k * stride`
//!   (`k < len`, stride 1 or 2: the alternating upper/lower blocks use 2) that all move by the same
//!   delta. Each run is one `u32` (start in bits 0..21, `len - 1` in bits 21..31, stride 2 when bit 31
//!   is set) and one `i32` delta.
//! - `MULTI`: the few chars whose lowercase is more than one char.
//! - `IGNORABLE` and `CASED`: the char classes of the final-sigma rule of `str::to_lowercase`, read off
//!   the standard library's own behaviour with probe strings (see `sigma_classes`). Each is a list of
//!   boundaries (chars where membership flips, starting outside), stored as deltas in LEB128 bytes.

use std::fmt::Write;

/// A char whose std lowercase is exactly one char different from itself: (char, lowercase).
fn single_mappings() -> (Vec<(u32, u32)>, Vec<(u32, Vec<char>)>) {
    let mut single = Vec::new();
    let mut multi = Vec::new();
    for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
        let lower: Vec<char> = c.to_lowercase().collect();
        if lower.len() == 1 {
            if lower[0] != c {
                single.push((c as u32, lower[0] as u32));
            }
        } else {
            multi.push((c as u32, lower));
        }
    }
    (single, multi)
}

/// Packs the single mappings into runs of equal delta and constant stride 1 or 2.
fn runs(single: &[(u32, u32)]) -> Vec<(u32, u32, u32, i64)> {
    // (start, len, stride, delta)
    let mut out: Vec<(u32, u32, u32, i64)> = Vec::new();
    for &(c, l) in single {
        let delta = i64::from(l) - i64::from(c);
        if let Some(last) = out.last_mut() {
            let (start, len, stride, d) = *last;
            let next = start + len * stride;
            if d == delta && len < 1024 {
                if len == 1 && (c - start == 1 || c - start == 2) {
                    *last = (start, 2, c - start, d);
                    continue;
                }
                if len > 1 && c == next {
                    last.1 += 1;
                    continue;
                }
            }
        }
        out.push((c, 1, 1, delta));
    }
    out
}

/// The classes the final-sigma rule of `str::to_lowercase` gives each char. A capital sigma is final
/// when, looking back, the first char that is not case-ignorable is cased, and, looking ahead, it is
/// not. Only that outcome matters, so a char is one of: skipped (case-ignorable), a cased stop (cased
/// and not case-ignorable) or another stop. Two probes tell them apart:
/// `"XΣ"` ends in a final sigma only for a cased stop; `"AXΣ"` does for a cased stop or a skipped char.
fn sigma_classes() -> (Vec<bool>, Vec<bool>) {
    let mut ignorable = vec![false; 0x110000];
    let mut cased = vec![false; 0x110000];
    for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
        let stop_cased = format!("{}Σ", c).to_lowercase().ends_with('ς');
        let skip_or_cased = format!("A{}Σ", c).to_lowercase().ends_with('ς');
        cased[c as usize] = stop_cased;
        ignorable[c as usize] = skip_or_cased && !stop_cased;
    }
    (ignorable, cased)
}

/// Membership flips of `set`, as LEB128 deltas from the previous flip (the first from 0).
fn boundary_bytes(set: &[bool]) -> (Vec<u8>, usize) {
    let mut bytes = Vec::new();
    let mut prev = 0u32;
    let mut inside = false;
    let mut ranges = 0;
    for (i, &b) in set.iter().enumerate() {
        if b != inside {
            let mut d = i as u32 - prev;
            loop {
                let low = (d & 0x7f) as u8;
                d >>= 7;
                if d == 0 {
                    bytes.push(low);
                    break;
                }
                bytes.push(low | 0x80);
            }
            prev = i as u32;
            inside = b;
            ranges += usize::from(b);
        }
    }
    (bytes, ranges)
}

fn bytes_table(out: &mut String, name: &str, doc: &str, bytes: &[u8]) {
    let _ = writeln!(out, "/// {}", doc);
    let _ = writeln!(out, "pub(super) static {}: [u8; {}] = [", name, bytes.len());
    for line in bytes.chunks(24) {
        let items: Vec<String> = line.iter().map(|b| b.to_string()).collect();
        let _ = writeln!(out, "    {},", items.join(", "));
    }
    let _ = writeln!(out, "];\n");
}

fn main() {
    let (single, multi) = single_mappings();
    let runs = runs(&single);
    let (ignorable, cased) = sigma_classes();
    let (ign_bytes, ign_ranges) = boundary_bytes(&ignorable);
    let (cased_bytes, cased_ranges) = boundary_bytes(&cased);
    let (a, b, c) = char::UNICODE_VERSION;

    let mut out = String::new();
    out.push_str("// Generated by `cargo run --example gen_lowercase`; do not edit.\n");
    let _ = writeln!(out, "// {} chars map to one other char ({} runs); {} map to more than one.\n", single.len(), runs.len(), multi.len());
    let _ = writeln!(out, "/// The Unicode version of the standard library the tables were read from.");
    let _ = writeln!(out, "#[cfg_attr(not(test), allow(dead_code))]");
    let _ = writeln!(out, "pub(super) const UNICODE_VERSION: (u8, u8, u8) = ({}, {}, {});\n", a, b, c);
    let _ = writeln!(out, "/// Runs of chars with one lowercase char: start | (len - 1) << 21 | stride-2 flag << 31.");
    let _ = writeln!(out, "pub(super) static RUNS: [u32; {}] = [", runs.len());
    for line in runs.chunks(6) {
        let items: Vec<String> = line
            .iter()
            .map(|&(start, len, stride, _)| {
                assert!(start < 1 << 21 && (1..=1024).contains(&len) && (stride == 1 || stride == 2));
                format!("0x{:08X}", start | (len - 1) << 21 | u32::from(stride == 2) << 31)
            })
            .collect();
        let _ = writeln!(out, "    {},", items.join(", "));
    }
    let _ = writeln!(out, "];\n");
    let _ = writeln!(out, "/// Lowercase minus char, for each run of [`RUNS`].");
    let _ = writeln!(out, "pub(super) static DELTAS: [i32; {}] = [", runs.len());
    for line in runs.chunks(12) {
        let items: Vec<String> = line.iter().map(|r| r.3.to_string()).collect();
        let _ = writeln!(out, "    {},", items.join(", "));
    }
    let _ = writeln!(out, "];\n");
    let _ = writeln!(out, "/// Chars whose lowercase is more than one char.");
    let _ = writeln!(out, "pub(super) static MULTI: [(char, [char; 3]); {}] = [", multi.len());
    for (c, l) in &multi {
        assert!(l.len() <= 3);
        let mut three = ['\0'; 3];
        three[..l.len()].copy_from_slice(l);
        let items: Vec<String> = three.iter().map(|x| format!("'\\u{{{:X}}}'", *x as u32)).collect();
        let _ = writeln!(out, "    ('\\u{{{:X}}}', [{}]),", c, items.join(", "));
    }
    let _ = writeln!(out, "];\n");
    bytes_table(&mut out, "IGNORABLE", &format!("Case-ignorable chars, as the final-sigma rule skips them ({} ranges).", ign_ranges), &ign_bytes);
    bytes_table(&mut out, "CASED", &format!("Cased chars that are not case-ignorable ({} ranges).", cased_ranges), &cased_bytes);
    print!("{}", out.trim_end());
    println!();
}
