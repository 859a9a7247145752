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
    /// The last check's sections version and evidence fingerprint, to tell the host what changed.
    last_sections: u64,
    last_evidence: u64,
}

/// Identity of a check's evidence: when it changes, the host re-reads it.
fn evidence_print(check: &StreamCheck) -> u64 {
    let mut h = crate::hash::SeqHasher::new();
    if let Some(e) = &check.evidence {
        e.rule.chars().for_each(|c| h.push(c as u32));
        for v in [e.start, e.at] {
            h.push(v as u32);
            h.push((v >> 32) as u32);
        }
    }
    h.finish()
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
            s.map.insert(id, StreamSlot { state, last_sections: 0, last_evidence: 0 });
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

/// Feeds a chunk to a stream (`channel` 0 = content, 1 = reasoning). Returns a packed status:
/// bits 0-1 the action (0 none, 1 steer, 2 abort), bit 2 `repeated`, bit 3 set when the list of
/// sections changed (re-read it with `dw_stream_sections`), bit 4 when the evidence changed
/// (`dw_stream_evidence`), bit 5 when a section is still growing (`dw_stream_live` gives its current
/// extent without re-reading the list). -1 on error.
#[no_mangle]
pub extern "C" fn dw_stream_feed(handle: u32, ptr: *const u8, len: usize, channel: u32) -> i32 {
    let chunk = match read_str(ptr, len, "chunk") {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    let r = with_stream(handle, |slot| {
        let check = if channel == 1 { slot.state.feed_reasoning_chunk(chunk) } else { slot.state.feed_chunk(chunk) };
        let sections_changed = check.sections_version != slot.last_sections;
        slot.last_sections = check.sections_version;
        let evidence = evidence_print(&check);
        let evidence_changed = evidence != slot.last_evidence;
        slot.last_evidence = evidence;
        let action = match check.action {
            crate::StreamAction::None => 0,
            crate::StreamAction::Steer => 1,
            crate::StreamAction::Abort => 2,
        };
        let live = slot.state.live_section_spans().is_some();
        action | (i32::from(check.repeated) << 2) | (i32::from(sections_changed) << 3) | (i32::from(evidence_changed) << 4) | (i32::from(live) << 5)
    });
    r.unwrap_or_else(|e| fail(&e))
}

/// Share of the stream that repeats (the last check's `ratio`); negative for an unknown handle.
#[no_mangle]
pub extern "C" fn dw_stream_ratio(handle: u32) -> f64 {
    with_stream(handle, |slot| slot.state.last_check().map_or(0.0, |c| c.ratio)).unwrap_or(-1.0)
}

/// Writes the stream's recent sections as a JSON array (UTF-16 offsets).
#[no_mangle]
pub extern "C" fn dw_stream_sections(handle: u32) -> i32 {
    match with_stream(handle, |slot| Value::Array(slot.state.recent_sections().iter().map(section_json).collect())) {
        Ok(v) => ok_json(&v),
        Err(e) => fail(&e),
    }
}

/// Writes the last check's evidence as JSON (or `null`).
#[no_mangle]
pub extern "C" fn dw_stream_evidence(handle: u32) -> i32 {
    let r = with_stream(handle, |slot| slot.state.last_check().and_then(|c| c.evidence.as_ref()).map_or(Value::Null, evidence_json));
    match r {
        Ok(v) => ok_json(&v),
        Err(e) => fail(&e),
    }
}

/// Writes the section still growing as five little-endian f64 in the output buffer
/// (originalStart, originalEnd, repeatStart, repeatEnd, similarity; UTF-16 offsets) and returns 1, or
/// returns 0 when there is none.
#[no_mangle]
pub extern "C" fn dw_stream_live(handle: u32) -> i32 {
    match with_stream(handle, |slot| slot.state.live_section_spans()) {
        Ok(Some(s)) => {
            let mut out = Vec::with_capacity(40);
            for v in [s.original.start.utf16 as f64, s.original.end.utf16 as f64, s.repeat.start.utf16 as f64, s.repeat.end.utf16 as f64, s.similarity] {
                out.extend_from_slice(&v.to_le_bytes());
            }
            set_out(out);
            1
        }
        Ok(None) => 0,
        Err(e) => fail(&e),
    }
}

/// Forgets everything a stream has seen (same settings).
#[no_mangle]
pub extern "C" fn dw_stream_reset(handle: u32) -> i32 {
    match with_stream(handle, |slot| {
        slot.state.reset();
        slot.last_sections = 0;
        slot.last_evidence = 0;
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

// ---- toolcalls ---------------------------------------------------------------------------------

thread_local! {
    static TOOL_MONITORS: RefCell<ToolMonitors> = RefCell::new(ToolMonitors { next: 1, map: BTreeMap::new() });
}

struct ToolMonitors {
    next: u32,
    map: BTreeMap<u32, crate::ToolCallMonitor>,
}

fn with_tool_monitor<R>(handle: u32, f: impl FnOnce(&mut crate::ToolCallMonitor) -> R) -> Result<R, DedupError> {
    TOOL_MONITORS.with(|s| match s.borrow_mut().map.get_mut(&handle) {
        Some(m) => Ok(f(m)),
        None => Err(DedupError::argument("handle", "must be a known handle", handle)),
    })
}

/// Creates a tool-call monitor from options JSON (null or an object of overrides); returns its
/// handle (> 0), or 0 with an error in the output buffer. On success the output buffer holds the
/// resolved options JSON.
#[no_mangle]
pub extern "C" fn dw_toolcalls_new(cfg_ptr: *const u8, cfg_len: usize) -> u32 {
    let made = read_json(cfg_ptr, cfg_len, "options")
        .and_then(|v| crate::ToolCallConfig::default().merge_json(&v))
        .and_then(crate::ToolCallMonitor::new);
    match made {
        Ok(m) => {
            ok_json(&serde_json::to_value(m.config()).unwrap_or(Value::Null));
            TOOL_MONITORS.with(|s| {
                let mut s = s.borrow_mut();
                let id = s.next;
                s.next = s.next.checked_add(1).unwrap_or(1).max(1);
                s.map.insert(id, m);
                id
            })
        }
        Err(e) => {
            fail(&e);
            0
        }
    }
}

/// Records a call given as JSON `{"name": string, "args": any}`. Returns the action (0 none,
/// 1 steer, 2 abort) and writes `{"action", "evidence"}` to the output buffer; -1 on error.
#[no_mangle]
pub extern "C" fn dw_toolcalls_record(handle: u32, ptr: *const u8, len: usize) -> i32 {
    let run = || -> Result<(i32, Value), DedupError> {
        let call = read_json(ptr, len, "call")?;
        let obj = match &call {
            Value::Object(m) => m,
            other => return Err(DedupError::argument("call", "must be an object", crate::settings::kind_of(other))),
        };
        let name = match obj.get("name") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            Some(Value::String(_)) => return Err(DedupError::argument("name", "must be a non-empty string", "an empty string")),
            other => return Err(DedupError::argument("name", "must be a string", other.map_or("nothing", crate::settings::kind_of))),
        };
        let args = obj.get("args").cloned().unwrap_or(Value::Null);
        with_tool_monitor(handle, |m| {
            let v = m.record(&name, &args);
            let code = match v.action {
                crate::StreamAction::None => 0,
                crate::StreamAction::Steer => 1,
                crate::StreamAction::Abort => 2,
            };
            (code, json!({"action": v.action, "evidence": v.evidence}))
        })
    };
    match run() {
        Ok((code, v)) => {
            ok_json(&v);
            code
        }
        Err(e) => fail(&e),
    }
}

/// Forgets every call a tool-call monitor has seen (same options).
#[no_mangle]
pub extern "C" fn dw_toolcalls_reset(handle: u32) -> i32 {
    match with_tool_monitor(handle, |m| m.reset()) {
        Ok(()) => 0,
        Err(e) => fail(&e),
    }
}

/// Frees a tool-call monitor. Freeing an unknown handle is a no-op (returns 0 either way).
#[no_mangle]
pub extern "C" fn dw_toolcalls_free(handle: u32) -> i32 {
    TOOL_MONITORS.with(|s| s.borrow_mut().map.remove(&handle));
    0
}

/// Number of live tool-call monitors (for leak tests).
#[no_mangle]
pub extern "C" fn dw_toolcalls_count() -> u32 {
    TOOL_MONITORS.with(|s| s.borrow().map.len() as u32)
}

/// A copy of the output buffer, for native tests of the protocol.
#[cfg(test)]
pub(crate) fn out_bytes() -> Vec<u8> {
    OUT.with(|o| o.borrow().clone())
}
