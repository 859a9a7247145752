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
//!
//! ## Two modules
//! The exports come in two groups, each behind a cargo feature: [`detect`] (`abi-detect`: repetition
//! checks, streams, tool calls, the guard) and [`memory`] (`abi-memory`: the vector index, memory
//! text normalization, the lexical embedder). The wasm build compiles each group into its own module,
//! so an app that only watches model output never downloads the vector index. Both modules share the
//! protocol and the allocation exports; handles of one module mean nothing to the other.

// With neither group of exports enabled, the shared plumbing below has no user.
#![cfg_attr(not(any(feature = "abi-detect", feature = "abi-memory")), allow(dead_code))]

use crate::error::DedupError;
use serde_json::Value;
use std::cell::RefCell;

thread_local! {
    static OUT: RefCell<Vec<u8>> = RefCell::new(Vec::new());
}

/// Objects the host holds by handle: ids start at 1 (0 means "failed") and are never reused while
/// the module lives, so a stale handle is an error rather than someone else's object.
///
/// A host holds a handful of objects, so a vector sorted by id serves them; its code is the same
/// for every kind of object (boxed), where a map would be compiled once per kind.
struct Handles<T> {
    next: u32,
    slots: Vec<(u32, Box<T>)>,
}

impl<T> Handles<T> {
    fn new() -> Self {
        Handles { next: 1, slots: Vec::new() }
    }

    fn insert(&mut self, value: T) -> u32 {
        let id = self.next;
        self.next = self.next.checked_add(1).unwrap_or(1).max(1);
        match self.slots.binary_search_by_key(&id, |s| s.0) {
            Ok(i) => self.slots[i].1 = Box::new(value),
            Err(i) => self.slots.insert(i, (id, Box::new(value))),
        }
        id
    }

    fn get_mut(&mut self, id: u32) -> Option<&mut T> {
        match self.slots.binary_search_by_key(&id, |s| s.0) {
            Ok(i) => Some(&mut *self.slots[i].1),
            Err(_) => None,
        }
    }

    /// Drops the object behind `id`, if any.
    fn remove(&mut self, id: u32) {
        if let Ok(i) = self.slots.binary_search_by_key(&id, |s| s.0) {
            drop(self.slots.remove(i));
        }
    }

    fn len(&self) -> u32 {
        self.slots.len() as u32
    }
}

/// Runs `f` on the object behind `handle` in the table `table`, or reports an unknown handle.
fn with_handle<T: 'static, R>(table: &'static std::thread::LocalKey<RefCell<Handles<T>>>, handle: u32, f: impl FnOnce(&mut T) -> R) -> Result<R, DedupError> {
    table.with(|t| match t.borrow_mut().get_mut(handle) {
        Some(v) => Ok(f(v)),
        None => Err(DedupError::argument("handle", "must be a known handle", handle)),
    })
}

fn set_out(bytes: Vec<u8>) {
    OUT.with(|o| *o.borrow_mut() = bytes);
}

fn ok_json(v: &Value) -> i32 {
    let mut bytes = Vec::new();
    let written = crate::json_num::write_json(&mut bytes, v);
    set_out(if written { bytes } else { Vec::new() });
    0
}

fn fail(e: &DedupError) -> i32 {
    let (kind, field, rule, value) = match e {
        DedupError::InvalidSetting { field, rule, value } => ("invalid_setting", *field, *rule, value.clone()),
        DedupError::InvalidArgument { field, rule, value } => ("invalid_argument", *field, *rule, value.clone()),
    };
    let type_rules = ["must be a number", "must be a string", "must be an object", "has no field of this name", "must be valid UTF-8", "must be a known handle"];
    let class = if type_rules.contains(&rule) { "type" } else { "range" };
    ok_json(&object(vec![
        ("kind", kind.into()),
        ("field", field.into()),
        ("rule", rule.into()),
        ("value", value.into()),
        ("message", e.to_string().into()),
        ("errorClass", class.into()),
    ]));
    -1
}

/// A JSON object from `(key, value)` pairs. (The map orders its keys, as `json!` objects are.)
/// Results are assembled from plain values rather than through `json!`, whose serializer calls and
/// their `unwrap` would be compiled for every value type.
fn object(pairs: Vec<(&str, Value)>) -> Value {
    let mut map = serde_json::Map::new();
    for (k, v) in pairs {
        map.insert(k.to_string(), v);
    }
    Value::Object(map)
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
    // Streams arrive in chunks of a few bytes, mostly ASCII, where `from_utf8`'s set-up costs more
    // than the check itself: a short ASCII run is tested byte by byte instead.
    if len <= SHORT_CHUNK && bytes.iter().all(|&b| b < 0x80) {
        // SAFETY: every byte is below 0x80, so the bytes are ASCII, and ASCII is valid UTF-8.
        return Ok(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    std::str::from_utf8(bytes).map_err(|e| DedupError::argument(field, "must be valid UTF-8", e))
}

/// Longest input [`read_str`] checks byte by byte before handing it to `from_utf8`.
const SHORT_CHUNK: usize = 32;

// ---- linear memory ------------------------------------------------------------------------------

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

// ---- detection: settings, text, streams, tool calls, guard --------------------------------------

/// The exports of output and input detection (the `dedup_wasm.wasm` build).
#[cfg(feature = "abi-detect")]
pub mod detect {
    use super::*;
    use crate::deduplicate::{check_sections, Section, SectionSource, StreamingState};
    use crate::period::LoopEvidence;
    use crate::presets::{resolve_dedup_preset, DedupPresetName};
    use crate::settings::DedupSettings;
    use crate::tokenize::tokenize;
    use crate::period::Severity;
    use crate::StreamAction;

    thread_local! {
        static STREAMS: RefCell<Handles<StreamSlot>> = RefCell::new(Handles::new());
    }

    struct StreamSlot {
        state: StreamingState,
        /// The sections version and evidence serial the host last saw, to tell it what changed.
        last_sections: u64,
        last_evidence: u64,
    }

    /// The JSON names of the enums (as their serde derives spell them).
    fn severity_name(s: Severity) -> &'static str {
        match s {
            Severity::Steer => "steer",
            Severity::Abort => "abort",
        }
    }

    fn action_name(a: StreamAction) -> &'static str {
        match a {
            StreamAction::None => "none",
            StreamAction::Steer => "steer",
            StreamAction::Abort => "abort",
        }
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
                let base = match map.get("preset") {
                    None | Some(Value::Null) => DedupSettings::default(),
                    Some(Value::String(name)) => resolve_dedup_preset(DedupPresetName::parse(name)?),
                    Some(_) => return Err(DedupError::argument("preset", "must be one of default, relaxed, sensitive", "a non-string")),
                };
                base.merge_json_skipping(v, Some("preset"))
            }
            _ => Err(DedupError::argument("settings", "must be an object", "a non-object")),
        }
    }

    /// f64 values per section in the binary section format: originalStart, originalEnd, repeatStart,
    /// repeatEnd (UTF-16 offsets), similarity, and the source (0 ngram, 1 sentence, 2 period).
    const SECTION_F64S: usize = 6;

    /// Writes `head` then each section as [`SECTION_F64S`] little-endian f64 to the output buffer. A
    /// result of thousands of sections crosses the boundary as one copy, with no JSON to print or parse.
    fn set_out_sections(head: &[f64], sections: &[Section]) {
        let mut out = Vec::with_capacity((head.len() + sections.len() * SECTION_F64S) * 8);
        for v in head {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for s in sections {
            let source = match s.source {
                SectionSource::Ngram => 0.0,
                SectionSource::Sentence => 1.0,
                SectionSource::Period => 2.0,
            };
            for v in [s.original.start.utf16 as f64, s.original.end.utf16 as f64, s.repeat.start.utf16 as f64, s.repeat.end.utf16 as f64, s.similarity, source] {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        set_out(out);
    }

    #[inline(never)]
    fn evidence_json(e: &LoopEvidence) -> Value {
        object(vec![
            ("rule", e.rule.as_str().into()),
            ("detail", e.detail.as_str().into()),
            ("sample", e.sample.as_str().into()),
            ("severity", severity_name(e.severity).into()),
            ("start", e.start_utf16.into()),
            ("at", e.at_utf16.into()),
        ])
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
            Ok(t) => ok_json(&Value::Array(tokenize(t).into_iter().map(Value::String).collect())),
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

    /// Batch check. Returns the number of sections (or -1 on error) and writes the ratio as one f64, then
    /// the sections in the binary section format (see [`set_out_sections`]).
    #[no_mangle]
    pub extern "C" fn dw_check_repetition(text_ptr: *const u8, text_len: usize, settings_ptr: *const u8, settings_len: usize) -> i32 {
        let run = || -> Result<(Vec<Section>, f64), DedupError> {
            let text = read_str(text_ptr, text_len, "text")?;
            let settings = settings_from(&read_json(settings_ptr, settings_len, "settings")?)?;
            check_sections(text, &settings)
        };
        match run() {
            Ok((sections, ratio)) => {
                set_out_sections(&[ratio], &sections);
                i32::try_from(sections.len()).unwrap_or(i32::MAX)
            }
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
            Ok(state) => STREAMS.with(|s| s.borrow_mut().insert(StreamSlot { state, last_sections: 0, last_evidence: 0 })),
            Err(e) => {
                fail(&e);
                0
            }
        }
    }

    fn with_stream<R>(handle: u32, f: impl FnOnce(&mut StreamSlot) -> R) -> Result<R, DedupError> {
        with_handle(&STREAMS, handle, f)
    }

    /// Feeds a chunk to a stream (`channel` 0 = content, 1 = reasoning). Returns a packed status:
    /// bits 0-1 the action (0 none, 1 steer, 2 abort), bit 2 `repeated`, bit 3 set when the list of
    /// sections changed (re-read it with `dw_stream_sections`), bit 4 when the evidence changed
    /// (`dw_stream_evidence`), bit 5 when a section is still growing (`dw_stream_live` gives its current
    /// extent without re-reading the list), bit 6 when the ratio is above 0 (only then is
    /// `dw_stream_ratio` worth a call: most chunks of most streams repeat nothing). -1 on error.
    #[no_mangle]
    pub extern "C" fn dw_stream_feed(handle: u32, ptr: *const u8, len: usize, channel: u32) -> i32 {
        let chunk = match read_str(ptr, len, "chunk") {
            Ok(c) => c,
            Err(e) => return fail(&e),
        };
        let r = with_stream(handle, |slot| {
            let check = slot.state.feed(chunk, channel == 1);
            let (version, repeated, some_ratio) = (check.sections_version, check.repeated, check.ratio > 0.0);
            let action = match check.action {
                crate::StreamAction::None => 0,
                crate::StreamAction::Steer => 1,
                crate::StreamAction::Abort => 2,
            };
            let sections_changed = version != slot.last_sections;
            slot.last_sections = version;
            let evidence = slot.state.evidence_serial();
            let evidence_changed = evidence != slot.last_evidence;
            slot.last_evidence = evidence;
            let live = slot.state.has_live_section();
            action
                | (i32::from(repeated) << 2)
                | (i32::from(sections_changed) << 3)
                | (i32::from(evidence_changed) << 4)
                | (i32::from(live) << 5)
                | (i32::from(some_ratio) << 6)
        });
        r.unwrap_or_else(|e| fail(&e))
    }

    /// Share of the stream that repeats (the last check's `ratio`); negative for an unknown handle.
    #[no_mangle]
    pub extern "C" fn dw_stream_ratio(handle: u32) -> f64 {
        with_stream(handle, |slot| slot.state.last_check().map_or(0.0, |c| c.ratio)).unwrap_or(-1.0)
    }

    /// Writes the stream's recent sections in the binary section format and returns how many there are.
    #[no_mangle]
    pub extern "C" fn dw_stream_sections(handle: u32) -> i32 {
        match with_stream(handle, |slot| slot.state.recent_sections()) {
            Ok(sections) => {
                set_out_sections(&[], &sections);
                sections.len() as i32
            }
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

    /// Writes the section still growing in the binary section format and returns 1, or returns 0 when
    /// there is none.
    #[no_mangle]
    pub extern "C" fn dw_stream_live(handle: u32) -> i32 {
        match with_stream(handle, |slot| slot.state.live_section_spans()) {
            Ok(Some(s)) => {
                set_out_sections(&[], &[s]);
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
        STREAMS.with(|s| s.borrow_mut().remove(handle));
        0
    }

    /// Number of live streams (for leak tests).
    #[no_mangle]
    pub extern "C" fn dw_stream_count() -> u32 {
        STREAMS.with(|s| s.borrow().len())
    }

    // ---- toolcalls ---------------------------------------------------------------------------------

    thread_local! {
        static TOOL_MONITORS: RefCell<Handles<crate::ToolCallMonitor>> = RefCell::new(Handles::new());
    }


    fn with_tool_monitor<R>(handle: u32, f: impl FnOnce(&mut crate::ToolCallMonitor) -> R) -> Result<R, DedupError> {
        with_handle(&TOOL_MONITORS, handle, f)
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
                TOOL_MONITORS.with(|s| s.borrow_mut().insert(m))
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
            let args = obj.get("args").unwrap_or(&Value::Null);
            with_tool_monitor(handle, |m| {
                let v = m.record(&name, args);
                let code = match v.action {
                    crate::StreamAction::None => 0,
                    crate::StreamAction::Steer => 1,
                    crate::StreamAction::Abort => 2,
                };
                (code, object(vec![("action", action_name(v.action).into()), ("evidence", serde_json::to_value(&v.evidence).unwrap_or(Value::Null))]))
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
        TOOL_MONITORS.with(|s| s.borrow_mut().remove(handle));
        0
    }

    /// Number of live tool-call monitors (for leak tests).
    #[no_mangle]
    pub extern "C" fn dw_toolcalls_count() -> u32 {
        TOOL_MONITORS.with(|s| s.borrow().len())
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

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::check_repetition;
        use serde_json::json;

        /// The output buffer as JSON (read through the exported pointer and length, as a host would).
        fn out() -> Value {
            let (ptr, len) = (dw_out_ptr(), dw_out_len());
            assert!(len > 0, "empty output buffer");
            // SAFETY: the buffer is valid until the next call into this module, and none happens here.
            let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
            serde_json::from_slice(bytes).expect("output is JSON")
        }

        fn resolve(json: &str) -> (i32, Value) {
            let code = dw_settings_resolve(json.as_ptr(), json.len());
            (code, out())
        }

        /// The output buffer in the binary section format: `head` leading f64, then the sections as
        /// JSON objects with the field names the TS API uses.
        fn out_sections(head: usize) -> (Vec<f64>, Vec<Value>) {
            let (ptr, len) = (dw_out_ptr(), dw_out_len());
            // SAFETY: the buffer is valid until the next call into this module, and none happens here.
            let bytes = if len == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(ptr, len) } };
            assert_eq!(bytes.len() % 8, 0);
            let values: Vec<f64> = bytes.chunks(8).map(|b| f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])).collect();
            assert_eq!((values.len() - head) % SECTION_F64S, 0);
            let sections = values[head..]
                .chunks(SECTION_F64S)
                .map(|v| {
                    let source = ["ngram", "sentence", "period"][v[5] as usize];
                    json!({"originalStart": v[0] as u64, "originalEnd": v[1] as u64, "repeatStart": v[2] as u64, "repeatEnd": v[3] as u64, "similarity": v[4], "source": source})
                })
                .collect();
            (values[..head].to_vec(), sections)
        }

        /// A batch check through the ABI: the status and `{repeated, ratio, sections}`.
        fn check(text: &str, settings: &str) -> (i32, Value) {
            let code = dw_check_repetition(text.as_ptr(), text.len(), settings.as_ptr(), settings.len());
            if code < 0 {
                return (code, out());
            }
            let (head, sections) = out_sections(1);
            assert_eq!(sections.len(), code as usize);
            (0, json!({"repeated": !sections.is_empty(), "ratio": head[0], "sections": sections}))
        }

        /// The stream's sections through the ABI.
        fn stream_sections(h: u32) -> Vec<Value> {
            let n = dw_stream_sections(h);
            assert!(n >= 0);
            let (_, sections) = out_sections(0);
            assert_eq!(sections.len(), n as usize);
            sections
        }

        #[test]
        fn enum_names_match_their_serde_form() {
            for v in [Severity::Steer, Severity::Abort] {
                assert_eq!(serde_json::to_value(v).unwrap(), json!(severity_name(v)));
            }
            for v in [StreamAction::None, StreamAction::Steer, StreamAction::Abort] {
                assert_eq!(serde_json::to_value(v).unwrap(), json!(action_name(v)));
            }
        }

        #[test]
        fn alloc_and_free_round_trip() {
            assert!(dw_alloc(0).is_null());
            let p = dw_alloc(64);
            assert!(!p.is_null());
            // SAFETY: `p` points to 64 writable bytes from dw_alloc.
            unsafe { std::ptr::write_bytes(p, 0xab, 64) };
            dw_free(p, 64);
            dw_free(std::ptr::null_mut(), 10);
            dw_free(p, 0);
            assert!(dw_alloc(usize::MAX).is_null());
        }

        #[test]
        fn settings_resolve_accepts_null_presets_and_overrides() {
            let (code, v) = resolve("");
            assert_eq!(code, 0);
            assert_eq!(v, serde_json::to_value(DedupSettings::default()).unwrap());
            let (code, v) = resolve("\"sensitive\"");
            assert_eq!(code, 0);
            assert_eq!(v["minRepeatLength"], json!(30));
            let (code, v) = resolve(r#"{"preset":"relaxed","stepSize":7,"loop":{"maxChars":0}}"#);
            assert_eq!(code, 0);
            assert_eq!(v["stepSize"], json!(7));
            assert_eq!(v["minRepeatLength"], json!(80));
            assert_eq!(v["loop"]["maxChars"], json!(0));
        }

        #[test]
        fn bad_settings_report_field_rule_and_error_class() {
            let cases: [(&str, &str, &str); 8] = [
                (r#"{"ngramThreshold":"NaN"}"#, "ngram_threshold", "range"),
                (r#"{"sentenceThreshold":1.5}"#, "sentence_threshold", "range"),
                (r#"{"windowSize":0}"#, "window_size", "range"),
                (r#"{"stepSize":"7"}"#, "step_size", "type"),
                (r#"{"bogus":1}"#, "settings", "type"),
                (r#"{"loop":{"bogus":1}}"#, "loop", "type"),
                (r#""aggressive""#, "preset", "range"),
                (r#"[1,2]"#, "settings", "type"),
            ];
            for (json, field, class) in cases {
                let (code, v) = resolve(json);
                assert_eq!(code, -1, "{}", json);
                assert_eq!(v["field"], json!(field), "{}", json);
                assert_eq!(v["errorClass"], json!(class), "{}", json);
                assert!(v["message"].as_str().unwrap().contains(field), "{}", json);
            }
            let (code, v) = resolve("{not json");
            assert_eq!(code, -1);
            assert_eq!(v["rule"], json!("must be valid JSON"));
        }

        #[test]
        fn bad_utf8_and_null_pointers_are_errors_not_panics() {
            let bad = [0x66u8, 0xff, 0xfe, 0x67];
            assert_eq!(dw_tokenize(bad.as_ptr(), bad.len()), -1);
            assert_eq!(out()["rule"], json!("must be valid UTF-8"));
            assert_eq!(dw_tokenize(std::ptr::null(), 5), -1);
            assert_eq!(out()["field"], json!("text"));
            assert_eq!(dw_check_repetition(bad.as_ptr(), bad.len(), std::ptr::null(), 0), -1);
            assert_eq!(dw_text_similarity(bad.as_ptr(), bad.len(), bad.as_ptr(), 0), -1.0);
            assert_eq!(out()["field"], json!("a"));
            assert_eq!(dw_stream_new(bad.as_ptr(), bad.len()), 0);
            assert_eq!(out()["field"], json!("settings"));
            // Empty input with a null pointer is just the empty string.
            assert_eq!(dw_tokenize(std::ptr::null(), 0), 0);
            assert_eq!(out(), json!([]));
        }

        #[test]
        fn tokenize_and_similarity() {
            let t = "Hello, World! 你好";
            assert_eq!(dw_tokenize(t.as_ptr(), t.len()), 0);
            assert_eq!(out(), json!(["hello", "world", "你", "好"]));
            let (a, b) = ("the cache was stale today", "today the cache was stale");
            assert_eq!(dw_text_similarity(a.as_ptr(), a.len(), b.as_ptr(), b.len()), 1.0);
        }

        #[test]
        fn check_repetition_reports_utf16_offsets() {
            let unit = "😀 The 缓存 was stale after the deploy, again and again! ";
            let text = format!("前言😀 {}", unit.repeat(4));
            let (code, v) = check(&text, "");
            assert_eq!(code, 0);
            assert_eq!(v["repeated"], json!(true));
            let units: Vec<u16> = text.encode_utf16().collect();
            let native = check_repetition(&text, &DedupSettings::default()).unwrap();
            let sections = v["sections"].as_array().unwrap();
            assert_eq!(sections.len(), native.sections.len());
            for (s, n) in sections.iter().zip(&native.sections) {
                let to16 = |byte: usize| text[..byte].encode_utf16().count() as u64;
                assert_eq!(s["repeatStart"].as_u64().unwrap(), to16(n.repeat_start));
                assert_eq!(s["repeatEnd"].as_u64().unwrap(), to16(n.repeat_end));
                assert_eq!(s["originalStart"].as_u64().unwrap(), to16(n.original_start));
                assert_eq!(s["originalEnd"].as_u64().unwrap(), to16(n.original_end));
                assert!(s["repeatEnd"].as_u64().unwrap() as usize <= units.len());
            }
            assert_eq!(v["ratio"].as_f64().unwrap(), native.ratio);
        }

        #[test]
        fn is_char_collapsed_codes() {
            let t = "哈哈，".repeat(100);
            assert_eq!(dw_is_char_collapsed(t.as_ptr(), t.len(), std::ptr::null(), 0), 1);
            let p = "A sentence with many different words, letters and no collapse at all in it.";
            assert_eq!(dw_is_char_collapsed(p.as_ptr(), p.len(), std::ptr::null(), 0), 0);
            let cfg = r#"{"windowChars":1}"#;
            assert_eq!(dw_is_char_collapsed(t.as_ptr(), t.len(), cfg.as_ptr(), cfg.len()), -1);
            assert_eq!(out()["field"], json!("window_chars"));
        }

        #[test]
        fn stream_lifecycle_and_packed_status() {
            let before = dw_stream_count();
            let h = dw_stream_new(std::ptr::null(), 0);
            assert!(h > 0);
            assert_eq!(dw_stream_count(), before + 1);
            let unit = "I will check the configuration file again. ";
            let mut codes = Vec::new();
            for _ in 0..20 {
                let code = dw_stream_feed(h, unit.as_ptr(), unit.len(), 0);
                assert!(code >= 0);
                codes.push(code);
            }
            let last = *codes.last().unwrap();
            assert_eq!(last & 3, 2, "abort");
            assert_eq!(last & 4, 4, "repeated");
            assert!(codes.iter().any(|c| c & 8 == 8), "some feed changed the details");
            assert!(dw_stream_ratio(h) > 0.5);
            assert_eq!(dw_stream_evidence(h), 0);
            assert!(out()["rule"].as_str().unwrap().contains("loop"));
            let sections = stream_sections(h);
            assert!(!sections.is_empty());
            assert!(sections.len() <= crate::MAX_STREAM_SECTIONS);

            assert_eq!(dw_stream_feed(h, unit.as_ptr(), unit.len(), 1) & 3, 2, "a reasoning feed keeps the abort");

            assert_eq!(dw_stream_reset(h), 0);
            assert_eq!(dw_stream_ratio(h), 0.0);
            assert_eq!(dw_stream_evidence(h), 0);
            assert_eq!(out(), Value::Null);
            assert_eq!(dw_stream_feed(h, unit.as_ptr(), unit.len(), 0) & 7, 0, "none, nothing repeated");

            assert_eq!(dw_stream_free(h), 0);
            assert_eq!(dw_stream_count(), before);
            assert_eq!(dw_stream_free(h), 0, "double free is a no-op");
        }

        #[test]
        fn unknown_handles_are_errors() {
            let unit = "text";
            for h in [0u32, 9_999, u32::MAX] {
                assert_eq!(dw_stream_feed(h, unit.as_ptr(), unit.len(), 0), -1);
                assert_eq!(out()["rule"], json!("must be a known handle"));
                assert_eq!(out()["errorClass"], json!("type"));
                assert_eq!(dw_stream_sections(h), -1);
                assert_eq!(dw_stream_evidence(h), -1);
                assert_eq!(dw_stream_live(h), -1);
                assert_eq!(dw_stream_reset(h), -1);
                assert_eq!(dw_stream_ratio(h), -1.0);
            }
        }

        #[test]
        fn stream_utf16_offsets_match_the_concatenated_chunks() {
            let h = dw_stream_new(std::ptr::null(), 0);
            let chunks = ["😀😀 emoji ", "and 中文 text. ", "I will check the configuration file again. "];
            let mut text = String::new();
            for c in chunks.iter().chain(std::iter::repeat(&chunks[2]).take(6)) {
                text.push_str(c);
                assert!(dw_stream_feed(h, c.as_ptr(), c.len(), 0) >= 0);
            }
            let sections = stream_sections(h);
            let units: Vec<u16> = text.encode_utf16().collect();
            assert!(!sections.is_empty());
            let unit16: Vec<u16> = chunks[2].encode_utf16().collect();
            for s in &sections {
                let (a, b) = (s["repeatStart"].as_u64().unwrap() as usize, s["repeatEnd"].as_u64().unwrap() as usize);
                assert!(a < b && b <= units.len());
                // Every repeat starts inside the looped unit, at a char it shares with the unit.
                let head = chunks[0].encode_utf16().count() + chunks[1].encode_utf16().count();
                let off = (a - head) % unit16.len();
                assert_eq!(units[a], unit16[off]);
            }
            dw_stream_free(h);
        }
    }
}
#[cfg(feature = "abi-detect")]
pub use detect::*;

// ---- memory dedup: vector index, normalization, lexical embedder --------------------------------

/// The exports of memory dedup (the `dedup_memory.wasm` build).
#[cfg(feature = "abi-memory")]
pub mod memory {
    use super::*;

    use crate::vector_index::{IndexConfig, VectorIndex};

    thread_local! {
        static INDEXES: RefCell<Handles<VectorIndex>> = RefCell::new(Handles::new());
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
        with_handle(&INDEXES, handle, f).and_then(|r| r)
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
            Ok(idx) => INDEXES.with(|s| s.borrow_mut().insert(idx)),
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
        INDEXES.with(|s| s.borrow_mut().remove(handle));
        0
    }

    /// Number of live indexes (for leak tests).
    #[no_mangle]
    pub extern "C" fn dw_index_count() -> u32 {
        INDEXES.with(|s| s.borrow().len())
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
}
#[cfg(feature = "abi-memory")]
pub use memory::*;

/// A copy of the output buffer, for native tests of the protocol.
#[cfg(all(test, feature = "abi-detect"))]
pub(crate) fn out_bytes() -> Vec<u8> {
    OUT.with(|o| o.borrow().clone())
}
