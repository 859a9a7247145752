//! The wasm ABI: plain C exports over linear memory. This is the only module with `unsafe`, and the
//! only place that knows about pointers.
//!
//! ## Protocol
//! - The host reserves input space with `dw_alloc(len)`, writes UTF-8 (or little-endian f32) there,
//!   passes `(ptr, len)` to a call, and releases it with `dw_free(ptr, len)`.
//! - Calls return an `i32` status. `>= 0` is success (some calls pack a small result in it); `-1`
//!   means failure, and the *output buffer* holds a JSON error
//!   `{"kind","field","rule","value","message","errorClass":"range"|"type"}`.
//! - Rich results are JSON in the output buffer, read with `dw_out_ptr()` / `dw_out_len()` and valid
//!   until the next call. Offsets in results are UTF-16 code units, ready for `String.prototype.slice`.
//! - Streams are handles (`u32`, never 0); a handle that was freed or never existed is an error, not
//!   a trap.
//!
//! No export panics on any input: bad UTF-8, bad JSON, bad settings and bad handles all come back as
//! errors. (A panic would trap the instance; the TS bridge would then throw and instantiate afresh.)

use crate::deduplicate::{check_sections, Section, StreamCheck, StreamingState};
use crate::error::DedupError;
use crate::period::LoopEvidence;
use crate::presets::{resolve_dedup_preset, DedupPresetName};
use crate::settings::DedupSettings;
use crate::tokenize::tokenize;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::BTreeMap;

thread_local! {
    static OUT: RefCell<Vec<u8>> = RefCell::new(Vec::new());
    static STREAMS: RefCell<Streams> = RefCell::new(Streams { next: 1, map: BTreeMap::new() });
}

struct StreamSlot {
    state: StreamingState,
    /// Fingerprint of the last check's sections and evidence, to tell the host when they changed.
    last_print: u64,
}

struct Streams {
    next: u32,
    map: BTreeMap<u32, StreamSlot>,
}

fn set_out(bytes: Vec<u8>) {
    OUT.with(|o| *o.borrow_mut() = bytes);
}

fn ok_json(v: &Value) -> i32 {
    set_out(serde_json::to_vec(v).unwrap_or_default());
    0
}

fn fail(e: &DedupError) -> i32 {
    let (kind, field, rule, value) = match e {
        DedupError::InvalidSetting { field, rule, value } => ("invalid_setting", *field, *rule, value.clone()),
        DedupError::InvalidArgument { field, rule, value } => ("invalid_argument", *field, *rule, value.clone()),
    };
    let type_rules = ["must be a number", "must be a string", "must be an object", "has no field of this name", "must be valid UTF-8", "must be a known handle"];
    let class = if type_rules.contains(&rule) { "type" } else { "range" };
    ok_json(&json!({"kind": kind, "field": field, "rule": rule, "value": value, "message": e.to_string(), "errorClass": class}));
    -1
}

/// Borrows `len` bytes at `ptr` as UTF-8.
fn read_str<'a>(ptr: *const u8, len: usize, field: &'static str) -> Result<&'a str, DedupError> {
    if len == 0 {
        return Ok("");
    }
    if ptr.is_null() {
        return Err(DedupError::argument(field, "must be valid UTF-8", "a null pointer"));
    }
    // SAFETY: the host wrote `len` bytes at `ptr` (memory it obtained from `dw_alloc`) and keeps them
    // alive and unaliased for the duration of this call.
    let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
    std::str::from_utf8(bytes).map_err(|e| DedupError::argument(field, "must be valid UTF-8", e))
}

fn read_json(ptr: *const u8, len: usize, field: &'static str) -> Result<Value, DedupError> {
    let s = read_str(ptr, len, field)?;
    if s.trim().is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_str(s).map_err(|e| DedupError::argument(field, "must be valid JSON", e))
}

/// Settings from a JSON value: `null` (defaults), a preset name, or an object of overrides whose
/// optional `preset` field names the base.
fn settings_from(v: &Value) -> Result<DedupSettings, DedupError> {
    match v {
        Value::Null => Ok(DedupSettings::default()),
        Value::String(name) => Ok(resolve_dedup_preset(DedupPresetName::parse(name)?)),
        Value::Object(map) => {
            let mut overrides = map.clone();
            let base = match overrides.remove("preset") {
                None | Some(Value::Null) => DedupSettings::default(),
                Some(Value::String(name)) => resolve_dedup_preset(DedupPresetName::parse(&name)?),
                Some(_) => return Err(DedupError::argument("preset", "must be one of default, relaxed, sensitive", "a non-string")),
            };
            base.merge_json(&Value::Object(overrides))
        }
        _ => Err(DedupError::argument("settings", "must be an object", "a non-object")),
    }
}

fn section_json(s: &Section) -> Value {
    json!({
        "originalStart": s.original.start.utf16,
        "originalEnd": s.original.end.utf16,
        "repeatStart": s.repeat.start.utf16,
        "repeatEnd": s.repeat.end.utf16,
        "similarity": s.similarity,
        "source": s.source,
    })
}

fn evidence_json(e: &LoopEvidence) -> Value {
    json!({
        "rule": e.rule,
        "detail": e.detail,
        "sample": e.sample,
        "severity": e.severity,
        "start": e.start_utf16,
        "at": e.at_utf16,
    })
}

// ---- memory ------------------------------------------------------------------------------------

/// Reserves `len` bytes for the host to write into. Returns null when `len` is 0 or memory is out.
#[no_mangle]
pub extern "C" fn dw_alloc(len: usize) -> *mut u8 {
    if len == 0 {
        return std::ptr::null_mut();
    }
    let mut v: Vec<u8> = Vec::new();
    if v.try_reserve_exact(len).is_err() {
        return std::ptr::null_mut();
    }
    // SAFETY: capacity is at least `len`; the bytes are plain u8 the host will overwrite.
    unsafe { v.set_len(len) };
    let mut b = v.into_boxed_slice();
    let p = b.as_mut_ptr();
    std::mem::forget(b);
    p
}

/// Releases memory from `dw_alloc` (same `len`).
#[no_mangle]
pub extern "C" fn dw_free(ptr: *mut u8, len: usize) {
    if ptr.is_null() || len == 0 {
        return;
    }
    // SAFETY: `ptr` and `len` come from `dw_alloc`, which leaked a boxed slice of exactly `len` bytes.
    unsafe { drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len))) };
}

/// Address of the output buffer (valid until the next call).
#[no_mangle]
pub extern "C" fn dw_out_ptr() -> *const u8 {
    OUT.with(|o| o.borrow().as_ptr())
}

/// Length of the output buffer.
#[no_mangle]
pub extern "C" fn dw_out_len() -> usize {
    OUT.with(|o| o.borrow().len())
}

// ---- settings and text -------------------------------------------------------------------------

/// Resolves settings JSON (null, a preset name, or overrides) into the full settings JSON, or an error.
#[no_mangle]
pub extern "C" fn dw_settings_resolve(ptr: *const u8, len: usize) -> i32 {
    match read_json(ptr, len, "settings").and_then(|v| settings_from(&v)) {
        Ok(s) => ok_json(&serde_json::to_value(s).unwrap_or(Value::Null)),
        Err(e) => fail(&e),
    }
}

/// Tokens of a text as a JSON array of strings.
#[no_mangle]
pub extern "C" fn dw_tokenize(ptr: *const u8, len: usize) -> i32 {
    match read_str(ptr, len, "text") {
        Ok(t) => ok_json(&json!(tokenize(t))),
        Err(e) => fail(&e),
    }
}

/// Similarity of two texts in [0, 1] (token Jaccard, trigram fallback); negative on bad input.
#[no_mangle]
pub extern "C" fn dw_text_similarity(a_ptr: *const u8, a_len: usize, b_ptr: *const u8, b_len: usize) -> f64 {
    match (read_str(a_ptr, a_len, "a"), read_str(b_ptr, b_len, "b")) {
        (Ok(a), Ok(b)) => crate::similarity::text_similarity(a, b),
        (Err(e), _) | (_, Err(e)) => {
            fail(&e);
            -1.0
        }
    }
}

/// Batch check; the result JSON is `{repeated, ratio, sections}` with UTF-16 offsets.
#[no_mangle]
pub extern "C" fn dw_check_repetition(text_ptr: *const u8, text_len: usize, settings_ptr: *const u8, settings_len: usize) -> i32 {
    let run = || -> Result<Value, DedupError> {
        let text = read_str(text_ptr, text_len, "text")?;
        let settings = settings_from(&read_json(settings_ptr, settings_len, "settings")?)?;
        let (sections, ratio) = check_sections(text, &settings)?;
        Ok(json!({
            "repeated": !sections.is_empty(),
            "ratio": ratio,
            "sections": sections.iter().map(section_json).collect::<Vec<_>>(),
        }))
    };
    match run() {
        Ok(v) => ok_json(&v),
        Err(e) => fail(&e),
    }
}

/// True (1) when the text's last window has collapsed to a few chars and fragments; 0 otherwise;
/// -1 on bad input. `config` is loop-rule JSON overrides (or empty).
#[no_mangle]
pub extern "C" fn dw_is_char_collapsed(text_ptr: *const u8, text_len: usize, cfg_ptr: *const u8, cfg_len: usize) -> i32 {
    let run = || -> Result<bool, DedupError> {
        let text = read_str(text_ptr, text_len, "text")?;
        let cfg = crate::period::LoopConfig::default().merge_json(&read_json(cfg_ptr, cfg_len, "config")?)?;
        Ok(crate::period::is_char_collapsed(text, &cfg))
    };
    match run() {
        Ok(b) => i32::from(b),
        Err(e) => fail(&e),
    }
}

// ---- streams -----------------------------------------------------------------------------------

/// Creates a stream monitor; returns its handle (> 0), or 0 with an error in the output buffer.
#[no_mangle]
pub extern "C" fn dw_stream_new(settings_ptr: *const u8, settings_len: usize) -> u32 {
    let made = read_json(settings_ptr, settings_len, "settings").and_then(|v| settings_from(&v)).and_then(StreamingState::new);
    match made {
        Ok(state) => STREAMS.with(|s| {
            let mut s = s.borrow_mut();
            let id = s.next;
            s.next = s.next.checked_add(1).unwrap_or(1).max(1);
            s.map.insert(id, StreamSlot { state, last_print: 0 });
            id
        }),
        Err(e) => {
            fail(&e);
            0
        }
    }
}

fn with_stream<R>(handle: u32, f: impl FnOnce(&mut StreamSlot) -> R) -> Result<R, DedupError> {
    STREAMS.with(|s| match s.borrow_mut().map.get_mut(&handle) {
        Some(slot) => Ok(f(slot)),
        None => Err(DedupError::argument("handle", "must be a known handle", handle)),
    })
}

fn print_of(check: &StreamCheck, state: &StreamingState) -> u64 {
    let mut h = crate::hash::SeqHasher::new();
    for s in &check.sections {
        h.push(s.repeat_start as u32);
        h.push(s.repeat_end as u32);
        h.push(s.original_start as u32);
    }
    if let Some(e) = &check.evidence {
        e.rule.chars().for_each(|c| h.push(c as u32));
        h.push(e.start as u32);
    }
    let _ = state;
    h.finish()
}

/// Feeds a chunk to a stream (`channel` 0 = content, 1 = reasoning). Returns a packed status:
/// bits 0-1 the action (0 none, 1 steer, 2 abort), bit 2 `repeated`, bit 3 set when sections or
/// evidence changed since the previous feed (then `dw_stream_check` has news). -1 on error.
#[no_mangle]
pub extern "C" fn dw_stream_feed(handle: u32, ptr: *const u8, len: usize, channel: u32) -> i32 {
    let chunk = match read_str(ptr, len, "chunk") {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    let r = with_stream(handle, |slot| {
        let check = if channel == 1 { slot.state.feed_reasoning_chunk(chunk) } else { slot.state.feed_chunk(chunk) };
        let print = print_of(&check, &slot.state);
        let changed = print != slot.last_print;
        slot.last_print = print;
        let action = match check.action {
            crate::StreamAction::None => 0,
            crate::StreamAction::Steer => 1,
            crate::StreamAction::Abort => 2,
        };
        action | (i32::from(check.repeated) << 2) | (i32::from(changed) << 3)
    });
    r.unwrap_or_else(|e| fail(&e))
}

/// Share of the stream that repeats (the last check's `ratio`); negative for an unknown handle.
#[no_mangle]
pub extern "C" fn dw_stream_ratio(handle: u32) -> f64 {
    with_stream(handle, |slot| slot.state.last_check().map_or(0.0, |c| c.ratio)).unwrap_or(-1.0)
}

/// Writes the last check as JSON `{repeated, ratio, action, sections, evidence, charsSeen}` (UTF-16).
#[no_mangle]
pub extern "C" fn dw_stream_check(handle: u32) -> i32 {
    let r = with_stream(handle, |slot| {
        let d = slot.state.content_detector();
        let sections: Vec<Value> = d.sections().iter().rev().take(crate::MAX_STREAM_SECTIONS).rev().map(section_json).collect();
        let check = slot.state.last_check();
        json!({
            "repeated": !sections.is_empty(),
            "ratio": check.map_or(0.0, |c| c.ratio),
            "action": check.map_or(crate::StreamAction::None, |c| c.action),
            "sections": sections,
            "evidence": check.and_then(|c| c.evidence.as_ref()).map(evidence_json),
            "charsSeen": d.consumed_utf16(),
            "reasoningCharsSeen": slot.state.reasoning_detector().map_or(0, |r| r.consumed_utf16()),
        })
    });
    match r {
        Ok(v) => ok_json(&v),
        Err(e) => fail(&e),
    }
}

/// Forgets everything a stream has seen (same settings).
#[no_mangle]
pub extern "C" fn dw_stream_reset(handle: u32) -> i32 {
    match with_stream(handle, |slot| {
        slot.state.reset();
        slot.last_print = 0;
    }) {
        Ok(()) => 0,
        Err(e) => fail(&e),
    }
}

/// Frees a stream. Freeing an unknown handle is a no-op (returns 0 either way).
#[no_mangle]
pub extern "C" fn dw_stream_free(handle: u32) -> i32 {
    STREAMS.with(|s| s.borrow_mut().map.remove(&handle));
    0
}

/// Number of live streams (for leak tests).
#[no_mangle]
pub extern "C" fn dw_stream_count() -> u32 {
    STREAMS.with(|s| s.borrow().map.len() as u32)
}

// ---- guard -------------------------------------------------------------------------------------

/// Borrows `len` raw bytes at `ptr`.
fn read_bytes<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if len == 0 || ptr.is_null() {
        return &[];
    }
    // SAFETY: as in `read_str`: the host wrote `len` bytes at `ptr` and keeps them alive for the call.
    unsafe { std::slice::from_raw_parts(ptr, len) }
}

fn le_u32(bytes: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([bytes[i * 4], bytes[i * 4 + 1], bytes[i * 4 + 2], bytes[i * 4 + 3]])
}

fn set_out_u32(words: &[u32]) {
    let mut bytes = Vec::with_capacity(words.len() * 4);
    for w in words {
        bytes.extend_from_slice(&w.to_le_bytes());
    }
    set_out(bytes);
}

/// UTF-16 units of a run of whole UTF-8 chars: one per char, two for 4-byte chars. Counts eight
/// bytes at a time: continuation bytes (`10xxxxxx`) add nothing, 4-byte leads (`11110xxx`) add two.
fn utf16_len(bytes: &[u8]) -> u32 {
    const LOW: u64 = 0x0101_0101_0101_0101;
    let mut units = 0u32;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        let cont = (w >> 7) & !(w >> 6) & LOW;
        let lead4 = (w >> 7) & (w >> 6) & (w >> 5) & (w >> 4) & LOW;
        units += 8 - cont.count_ones() + lead4.count_ones();
    }
    for &b in chunks.remainder() {
        units += u32::from(b & 0xC0 != 0x80) + u32::from(b >= 0xF0);
    }
    units
}

/// UTF-16 offsets of sorted, deduplicated byte offsets (char boundaries) of `text`.
fn utf16_of(text: &str, sorted: &[usize]) -> Vec<u32> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(sorted.len());
    let (mut pos, mut units) = (0usize, 0u32);
    for &p in sorted {
        let p = p.min(bytes.len());
        if p > pos {
            units += utf16_len(&bytes[pos..p]);
            pos = p;
        }
        out.push(units);
    }
    out
}

/// Byte-to-UTF-16 offset maps, one per document, for the offsets a result mentions.
struct Utf16Maps {
    keys: Vec<Vec<usize>>,
    vals: Vec<Vec<u32>>,
}

impl Utf16Maps {
    fn new(texts: &[&str], wanted: Vec<Vec<usize>>) -> Self {
        let mut keys = wanted;
        let mut vals = Vec::with_capacity(keys.len());
        for (d, k) in keys.iter_mut().enumerate() {
            k.sort_unstable();
            k.dedup();
            vals.push(utf16_of(texts[d], k));
        }
        Utf16Maps { keys, vals }
    }
    fn get(&self, doc: usize, byte: usize) -> u32 {
        match self.keys[doc].binary_search(&byte) {
            Ok(i) => self.vals[doc][i],
            Err(_) => 0,
        }
    }
}

/// Removes repeated blocks across documents. The text buffer holds the documents' UTF-8 back to
/// back; `docs` holds `docs_count` pairs of little-endian u32 `(byte length, flags)` (flag bit 0:
/// pinned — never changed, but its blocks count as originals). `opts` is JSON options
/// (`similarityChars`, `minBlockChars`, `keep`, `nearDuplicate`) or empty.
///
/// The output buffer holds little-endian u32s, offsets in UTF-16 units of each document:
/// `n_docs`, then per document `n_ranges, n_nonblank_blocks_kept, (start, end)*` (what remains, in
/// order); then
/// `n_removed, (doc, start, end, dup_doc, dup_start, dup_end)*`.
#[no_mangle]
pub extern "C" fn dw_guard_dedup(text_ptr: *const u8, text_len: usize, docs_ptr: *const u8, docs_count: usize, opts_ptr: *const u8, opts_len: usize) -> i32 {
    let run = || -> Result<Vec<u32>, DedupError> {
        let text = read_str(text_ptr, text_len, "text")?;
        let opts = crate::guard::GuardOptions::default().merge_json(&read_json(opts_ptr, opts_len, "options")?)?;
        let meta_len = docs_count.checked_mul(8).ok_or_else(|| DedupError::argument("docs", "must list (length, flags) per document", docs_count))?;
        let meta = read_bytes(docs_ptr, meta_len);
        if meta.len() != meta_len {
            return Err(DedupError::argument("docs", "must list (length, flags) per document", docs_count));
        }
        let mut docs = Vec::with_capacity(docs_count);
        let mut at = 0usize;
        for i in 0..docs_count {
            let len = le_u32(meta, i * 2) as usize;
            let flags = le_u32(meta, i * 2 + 1);
            let end = at.checked_add(len).filter(|&e| e <= text.len() && text.is_char_boundary(e));
            let end = match end {
                Some(e) => e,
                None => return Err(DedupError::argument("docs", "lengths must split the text at char boundaries", len)),
            };
            docs.push(crate::guard::Doc { text: &text[at..end], pinned: flags & 1 == 1 });
            at = end;
        }
        if at != text.len() {
            return Err(DedupError::argument("docs", "lengths must add up to the text length", at));
        }
        let out = crate::guard::dedup_documents(&docs, &opts)?;
        let texts: Vec<&str> = docs.iter().map(|d| d.text).collect();
        let mut wanted: Vec<Vec<usize>> = out.kept.iter().map(|r| r.iter().flat_map(|&(a, b)| [a, b]).collect()).collect();
        for r in &out.removed {
            wanted[r.doc].extend_from_slice(&[r.start, r.end]);
            wanted[r.dup_doc].extend_from_slice(&[r.dup_start, r.dup_end]);
        }
        let maps = Utf16Maps::new(&texts, wanted);
        let mut words: Vec<u32> = vec![out.kept.len() as u32];
        for (d, ranges) in out.kept.iter().enumerate() {
            words.push(ranges.len() as u32);
            words.push(out.kept_blocks[d] as u32);
            for &(a, b) in ranges {
                words.push(maps.get(d, a));
                words.push(maps.get(d, b));
            }
        }
        words.push(out.removed.len() as u32);
        for r in &out.removed {
            words.extend_from_slice(&[
                r.doc as u32,
                maps.get(r.doc, r.start),
                maps.get(r.doc, r.end),
                r.dup_doc as u32,
                maps.get(r.dup_doc, r.dup_start),
                maps.get(r.dup_doc, r.dup_end),
            ]);
        }
        Ok(words)
    };
    match run() {
        Ok(words) => {
            set_out_u32(&words);
            0
        }
        Err(e) => fail(&e),
    }
}

/// How the guard splits a text into blocks. The output buffer holds little-endian u32s: the mode
/// (0 unsplit, 1 turns, 2 paragraphs, 3 lines), then `n_segments, (start, end, is_block)*` in
/// UTF-16 units. Segments alternate block / separator and cover the text.
#[no_mangle]
pub extern "C" fn dw_guard_split(text_ptr: *const u8, text_len: usize) -> i32 {
    let text = match read_str(text_ptr, text_len, "text") {
        Ok(t) => t,
        Err(e) => return fail(&e),
    };
    let (mode, segs) = crate::guard::split_text(text);
    let maps = Utf16Maps::new(&[text], vec![segs.iter().flat_map(|s| [s.start, s.end]).collect()]);
    let mut words = vec![
        match mode {
            None => 0,
            Some(crate::guard::SplitMode::Turn) => 1,
            Some(crate::guard::SplitMode::Paragraph) => 2,
            Some(crate::guard::SplitMode::Line) => 3,
        },
        segs.len() as u32,
    ];
    for s in &segs {
        words.extend_from_slice(&[maps.get(0, s.start), maps.get(0, s.end), u32::from(s.block)]);
    }
    set_out_u32(&words);
    0
}

#[cfg(test)]
mod guard_tests {
    use super::*;

    fn words() -> Vec<u32> {
        OUT.with(|o| o.borrow().chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }

    #[test]
    fn dedup_reports_utf16_ranges_across_documents() {
        let a = "😀 the first document has this exactly repeated line of text";
        let text = format!("{}{}\nnew", a, a);
        let meta: Vec<u8> = [a.len() as u32, 0, (a.len() + 4) as u32, 0].iter().flat_map(|w| w.to_le_bytes()).collect();
        let st = dw_guard_dedup(text.as_ptr(), text.len(), meta.as_ptr(), 2, std::ptr::null(), 0);
        assert_eq!(st, 0);
        let a16 = a.encode_utf16().count() as u32;
        // doc 0 whole; doc 1 keeps "new"; one removal pointing at doc 0.
        assert_eq!(words(), vec![2, 1, 1, 0, a16, 1, 1, a16 + 1, a16 + 4, 1, 1, 0, a16, 0, 0, a16]);
    }

    #[test]
    fn bad_lengths_and_options_are_errors_not_traps() {
        let text = "héllo";
        let meta: Vec<u8> = [2u32, 0].iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(dw_guard_dedup(text.as_ptr(), text.len(), meta.as_ptr(), 1, std::ptr::null(), 0), -1);
        assert_eq!(dw_guard_dedup(text.as_ptr(), text.len(), meta.as_ptr(), usize::MAX, std::ptr::null(), 0), -1);
        let meta: Vec<u8> = [text.len() as u32, 0].iter().flat_map(|w| w.to_le_bytes()).collect();
        let opts = br#"{"keep":"newest"}"#;
        assert_eq!(dw_guard_dedup(text.as_ptr(), text.len(), meta.as_ptr(), 1, opts.as_ptr(), opts.len()), -1);
        let err: Value = serde_json::from_slice(&OUT.with(|o| o.borrow().clone())).unwrap();
        assert_eq!(err["field"], "keep");
    }

    #[test]
    fn utf16_len_counts_units() {
        for t in ["", "abc", "héllo wörld, 你好, 😀😀 x", "😀", "aaaaaaaaaaaaaaaaé😀你"] {
            assert_eq!(utf16_len(t.as_bytes()) as usize, t.encode_utf16().count(), "{}", t);
        }
    }

    #[test]
    fn split_reports_mode_and_segments() {
        let text = "a\n\nb";
        assert_eq!(dw_guard_split(text.as_ptr(), text.len()), 0);
        assert_eq!(words(), vec![2, 3, 0, 1, 1, 1, 3, 0, 3, 4, 1]);
    }
}
