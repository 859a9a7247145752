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
    let type_rules = ["must be a number", "must be an object", "has no field of this name", "must be valid UTF-8", "must be a known handle"];
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

// ---- memory dedup: vector index, normalization, lexical embedder --------------------------------

use crate::vector_index::{IndexConfig, VectorIndex};

thread_local! {
    static INDEXES: RefCell<Indexes> = RefCell::new(Indexes { next: 1, map: BTreeMap::new() });
}

struct Indexes {
    next: u32,
    map: BTreeMap<u32, VectorIndex>,
}

/// Reads `len` bytes at `ptr` as little-endian f32 values (any alignment).
fn read_f32s(ptr: *const u8, len: usize, field: &'static str) -> Result<Vec<f32>, DedupError> {
    if len % 4 != 0 {
        return Err(DedupError::argument(field, "must be a whole number of f32 values", format!("{} bytes", len)));
    }
    if len == 0 {
        return Ok(Vec::new());
    }
    if ptr.is_null() {
        return Err(DedupError::argument(field, "must be a whole number of f32 values", "a null pointer"));
    }
    // SAFETY: the host wrote `len` bytes at `ptr` (memory from `dw_alloc`) and keeps them alive and
    // unaliased for the duration of this call. Reading as bytes needs no alignment.
    let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
    Ok(bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

fn f32s_to_out(values: &[f32]) {
    let mut out = Vec::with_capacity(values.len() * 4);
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
    set_out(out);
}

fn with_index<R>(handle: u32, f: impl FnOnce(&mut VectorIndex) -> Result<R, DedupError>) -> Result<R, DedupError> {
    INDEXES.with(|s| match s.borrow_mut().map.get_mut(&handle) {
        Some(idx) => f(idx),
        None => Err(DedupError::argument("handle", "must be a known handle", handle)),
    })
}

fn threshold_arg(t: f64) -> Result<f32, DedupError> {
    if t.is_finite() && (-1.0..=1.0).contains(&t) {
        Ok(t as f32)
    } else {
        Err(DedupError::argument("threshold", "must be a finite number in [-1, 1]", t))
    }
}

/// Creates a vector index of dimension `dim`; 0 for any other parameter means its default
/// (graph above 1,024 vectors, m 24, ef_construction 64, ef_search 64). Returns a handle (> 0),
/// or 0 with an error in the output buffer.
#[no_mangle]
pub extern "C" fn dw_index_new(dim: u32, ann_threshold: u32, m: u32, ef_construction: u32, ef_search: u32) -> u32 {
    let d = IndexConfig::new(dim as usize);
    let pick = |v: u32, default: usize| if v == 0 { default } else { v as usize };
    let cfg = IndexConfig {
        dim: dim as usize,
        ann_threshold: pick(ann_threshold, d.ann_threshold),
        m: pick(m, d.m),
        ef_construction: pick(ef_construction, d.ef_construction),
        ef_search: pick(ef_search, d.ef_search),
    };
    match VectorIndex::new(cfg) {
        Ok(idx) => INDEXES.with(|s| {
            let mut s = s.borrow_mut();
            let id = s.next;
            s.next = s.next.checked_add(1).unwrap_or(1).max(1);
            s.map.insert(id, idx);
            id
        }),
        Err(e) => {
            fail(&e);
            0
        }
    }
}

/// Adds one vector (`len` bytes of f32); returns its key (>= 0) or -1.
#[no_mangle]
pub extern "C" fn dw_index_add(handle: u32, ptr: *const u8, len: usize) -> i32 {
    let r = read_f32s(ptr, len, "embedding").and_then(|v| {
        with_index(handle, |idx| {
            let key = idx.add(&v)?;
            if key > i32::MAX as u32 {
                idx.remove(key);
                return Err(DedupError::argument("embedding", "must fit in the index (2^31 keys)", key));
            }
            Ok(key as i32)
        })
    });
    r.unwrap_or_else(|e| fail(&e))
}

/// Adds `count` vectors laid out back to back. All are validated first, so either all are added
/// (keys as u32 in the output buffer, the count returned) or none (-1).
#[no_mangle]
pub extern "C" fn dw_index_add_many(handle: u32, ptr: *const u8, len: usize, count: u32) -> i32 {
    let r = read_f32s(ptr, len, "embeddings").and_then(|v| {
        with_index(handle, |idx| {
            let dim = idx.config().dim;
            if v.len() != dim * count as usize {
                return Err(DedupError::argument("embeddings", "must hold count vectors of the index's dimension", format!("{} values for {} x {}", v.len(), count, dim)));
            }
            for row in v.chunks_exact(dim) {
                crate::vector::inverse_norm(row, dim)?;
            }
            let mut out = Vec::with_capacity(count as usize * 4);
            for row in v.chunks_exact(dim) {
                out.extend_from_slice(&idx.add(row)?.to_le_bytes());
            }
            set_out(out);
            Ok(count as i32)
        })
    });
    r.unwrap_or_else(|e| fail(&e))
}

/// Removes a key: 1 when removed, 0 when not stored, -1 for a bad handle.
#[no_mangle]
pub extern "C" fn dw_index_remove(handle: u32, key: u32) -> i32 {
    with_index(handle, |idx| Ok(i32::from(idx.remove(key)))).unwrap_or_else(|e| fail(&e))
}

/// Writes the vector under `key` to the output buffer (f32) and returns its dimension; 0 when the
/// key is not stored; -1 for a bad handle.
#[no_mangle]
pub extern "C" fn dw_index_get(handle: u32, key: u32) -> i32 {
    let r = with_index(handle, |idx| {
        Ok(match idx.get(key) {
            Some(v) => {
                f32s_to_out(v);
                v.len() as i32
            }
            None => 0,
        })
    });
    r.unwrap_or_else(|e| fail(&e))
}

/// The `k` best matches of a query; returns how many, with `(u32 key, f32 cosine)` pairs in the
/// output buffer, best first. -1 on a bad query or handle.
#[no_mangle]
pub extern "C" fn dw_index_search(handle: u32, ptr: *const u8, len: usize, k: u32) -> i32 {
    let r = read_f32s(ptr, len, "embedding").and_then(|q| {
        with_index(handle, |idx| {
            let found = idx.search(&q, (k as usize).min(4096))?;
            let mut out = Vec::with_capacity(found.len() * 8);
            for (key, s) in &found {
                out.extend_from_slice(&key.to_le_bytes());
                out.extend_from_slice(&s.to_le_bytes());
            }
            set_out(out);
            Ok(found.len() as i32)
        })
    });
    r.unwrap_or_else(|e| fail(&e))
}

/// Cosine similarity of two stored vectors; -2 when either key is not stored or the handle is bad.
#[no_mangle]
pub extern "C" fn dw_index_score(handle: u32, a: u32, b: u32) -> f64 {
    with_index(handle, |idx| Ok(idx.score(a, b).map_or(-2.0, f64::from))).unwrap_or(-2.0)
}

/// Every pair with cosine >= `threshold`; returns how many, with `(u32 a, u32 b, f32 cosine)`
/// triples in the output buffer (a < b, most similar first). -1 on error.
#[no_mangle]
pub extern "C" fn dw_index_pairs(handle: u32, threshold: f64) -> i32 {
    let r = threshold_arg(threshold).and_then(|t| {
        with_index(handle, |idx| {
            let pairs = idx.pairs(t);
            let mut out = Vec::with_capacity(pairs.len() * 12);
            for (a, b, s) in &pairs {
                out.extend_from_slice(&a.to_le_bytes());
                out.extend_from_slice(&b.to_le_bytes());
                out.extend_from_slice(&s.to_le_bytes());
            }
            set_out(out);
            Ok(pairs.len() as i32)
        })
    });
    r.unwrap_or_else(|e| fail(&e))
}

/// Clusters without chaining (see `VectorIndex::clusters`); returns how many, with u32 values in
/// the output buffer: for each cluster its size, then its keys (leader first). -1 on error.
#[no_mangle]
pub extern "C" fn dw_index_clusters(handle: u32, threshold: f64) -> i32 {
    let r = threshold_arg(threshold).and_then(|t| {
        with_index(handle, |idx| {
            let clusters = idx.clusters(t);
            let mut out = Vec::new();
            for c in &clusters {
                out.extend_from_slice(&(c.len() as u32).to_le_bytes());
                for k in c {
                    out.extend_from_slice(&k.to_le_bytes());
                }
            }
            set_out(out);
            Ok(clusters.len() as i32)
        })
    });
    r.unwrap_or_else(|e| fail(&e))
}

/// Live vectors in an index; -1 for a bad handle.
#[no_mangle]
pub extern "C" fn dw_index_len(handle: u32) -> i32 {
    with_index(handle, |idx| Ok(idx.len() as i32)).unwrap_or_else(|e| fail(&e))
}

/// Removes every vector (keys keep increasing); -1 for a bad handle.
#[no_mangle]
pub extern "C" fn dw_index_clear(handle: u32) -> i32 {
    with_index(handle, |idx| {
        idx.clear();
        Ok(0)
    })
    .unwrap_or_else(|e| fail(&e))
}

/// Frees an index. Freeing an unknown handle is a no-op.
#[no_mangle]
pub extern "C" fn dw_index_free(handle: u32) -> i32 {
    INDEXES.with(|s| s.borrow_mut().map.remove(&handle));
    0
}

/// Number of live indexes (for leak tests).
#[no_mangle]
pub extern "C" fn dw_index_count() -> u32 {
    INDEXES.with(|s| s.borrow().map.len() as u32)
}

/// Cosine similarity of two vectors of equal dimension; -2 with an error when either is not a valid
/// embedding.
#[no_mangle]
pub extern "C" fn dw_vector_cosine(a_ptr: *const u8, a_len: usize, b_ptr: *const u8, b_len: usize) -> f64 {
    let r = read_f32s(a_ptr, a_len, "a").and_then(|a| read_f32s(b_ptr, b_len, "b").and_then(|b| crate::vector::cosine_similarity(&a, &b)));
    match r {
        Ok(s) => f64::from(s),
        Err(e) => {
            fail(&e);
            -2.0
        }
    }
}

/// Normalizes a memory text (already NFKC) for the exact tier. The output buffer holds the 32 hex
/// digits of its 128-bit hash followed by the normalized text (UTF-8). 0, or -1 on bad UTF-8.
#[no_mangle]
pub extern "C" fn dw_memory_normalize(ptr: *const u8, len: usize) -> i32 {
    match read_str(ptr, len, "content") {
        Ok(t) => {
            let n = crate::memory_text::normalize_memory_text(t);
            let mut out = crate::memory_text::memory_text_hash(&n).into_bytes();
            out.extend_from_slice(n.as_bytes());
            set_out(out);
            0
        }
        Err(e) => fail(&e),
    }
}

/// Embeds a text with the lexical embedder into `dims` f32 values (output buffer); returns `dims`,
/// or -1 on bad input.
#[no_mangle]
pub extern "C" fn dw_lexical_embed(ptr: *const u8, len: usize, dims: u32) -> i32 {
    let r = read_str(ptr, len, "text").and_then(|t| crate::lexical_embed::lexical_embed(t, dims as usize));
    match r {
        Ok(v) => {
            f32s_to_out(&v);
            v.len() as i32
        }
        Err(e) => fail(&e),
    }
}

/// Adds one vector and reports its `k` best matches among the vectors stored before it (as
/// `dw_index_search` would have). Returns the new key (>= 0) or -1; the output buffer holds a u32
/// count, then `(u32 key, f32 cosine)` pairs, best first.
#[no_mangle]
pub extern "C" fn dw_index_add_search(handle: u32, ptr: *const u8, len: usize, k: u32) -> i32 {
    let r = read_f32s(ptr, len, "embedding").and_then(|v| {
        with_index(handle, |idx| {
            let (key, found) = idx.add_search(&v, (k as usize).min(4096))?;
            if key > i32::MAX as u32 {
                idx.remove(key);
                return Err(DedupError::argument("embedding", "must fit in the index (2^31 keys)", key));
            }
            let mut out = Vec::with_capacity(4 + found.len() * 8);
            out.extend_from_slice(&(found.len() as u32).to_le_bytes());
            for (key, s) in &found {
                out.extend_from_slice(&key.to_le_bytes());
                out.extend_from_slice(&s.to_le_bytes());
            }
            set_out(out);
            Ok(key as i32)
        })
    });
    r.unwrap_or_else(|e| fail(&e))
}

#[cfg(test)]
mod memory_ffi_tests {
    use super::*;

    fn out() -> Vec<u8> {
        OUT.with(|o| o.borrow().clone())
    }

    fn put(v: &[f32]) -> (*mut u8, usize) {
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        let p = dw_alloc(bytes.len());
        // SAFETY: `p` holds `bytes.len()` writable bytes from `dw_alloc`.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
        (p, bytes.len())
    }

    #[test]
    fn index_round_trip_through_raw_f32() {
        let h = dw_index_new(3, 0, 0, 0, 0);
        assert!(h > 0);
        let (a, al) = put(&[1.0, 0.0, 0.0]);
        let (b, bl) = put(&[0.0, 2.0, 0.0]);
        assert_eq!(dw_index_add(h, a, al), 0);
        assert_eq!(dw_index_add(h, b, bl), 1);
        assert_eq!(dw_index_search(h, a, al, 5), 2);
        let o = out();
        assert_eq!(u32::from_le_bytes([o[0], o[1], o[2], o[3]]), 0);
        assert_eq!(f32::from_le_bytes([o[4], o[5], o[6], o[7]]), 1.0);
        assert_eq!(dw_index_get(h, 1), 3);
        assert_eq!(out(), [0f32, 2.0, 0.0].iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>());
        assert_eq!(dw_index_remove(h, 1), 1);
        assert_eq!(dw_index_remove(h, 1), 0);
        assert_eq!(dw_index_len(h), 1);
        dw_free(a, al);
        dw_free(b, bl);
        assert_eq!(dw_index_free(h), 0);
        assert_eq!(dw_index_len(h), -1);
    }

    #[test]
    fn bad_vectors_and_handles_are_errors_not_traps() {
        let h = dw_index_new(2, 0, 0, 0, 0);
        let (z, zl) = put(&[0.0, 0.0]);
        assert_eq!(dw_index_add(h, z, zl), -1);
        assert!(String::from_utf8(out()).unwrap().contains("zero vector"));
        let (w, wl) = put(&[1.0, 0.0, 0.0]);
        assert_eq!(dw_index_add(h, w, wl), -1);
        assert!(String::from_utf8(out()).unwrap().contains("dimension"));
        assert_eq!(dw_index_add(h, w, 5), -1);
        assert_eq!(dw_index_search(9999, w, wl, 1), -1);
        assert_eq!(dw_index_pairs(h, f64::NAN), -1);
        assert_eq!(dw_index_new(0, 0, 0, 0, 0), 0);
        assert_eq!(dw_index_add_many(h, w, 8, 2), -1);
        assert_eq!(dw_index_len(h), 0);
        dw_free(z, zl);
        dw_free(w, wl);
        dw_index_free(h);
    }

    #[test]
    fn normalize_and_embed_exports() {
        let text = "User LIKES coffee.";
        let p = dw_alloc(text.len());
        // SAFETY: `p` holds `text.len()` writable bytes from `dw_alloc`.
        unsafe { std::ptr::copy_nonoverlapping(text.as_ptr(), p, text.len()) };
        assert_eq!(dw_memory_normalize(p, text.len()), 0);
        let o = String::from_utf8(out()).unwrap();
        assert_eq!(&o[32..], "user likes coffee");
        assert_eq!(dw_lexical_embed(p, text.len(), 16), 16);
        assert_eq!(out().len(), 64);
        assert_eq!(dw_lexical_embed(p, text.len(), 0), -1);
        dw_free(p, text.len());
    }
}
