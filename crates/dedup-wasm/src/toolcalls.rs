//! Tool-call loops: an agent that calls the same tool (or the same few tools) over and over without
//! getting anywhere.
//!
//! Every call is keyed twice:
//! - the **exact key**: the tool name and a canonical form of the arguments (object keys sorted,
//!   JSON formatting ignored, runs of whitespace inside strings collapsed), so `{"a":1,"b":2}` and
//!   `{ "b": 2, "a": 1 }` are the same call;
//! - the **volatile key**: the same, with the parts a looping agent changes without meaning to
//!   masked: UUIDs, ISO-8601 dates and times, epoch timestamps (seconds or milliseconds, as numbers
//!   or digit runs), values under volatile-sounding keys (`timestamp`, `nonce`, `attempt`,
//!   `requestId`, `…At`/`…_at`, plus any the host names), and counters written after such a word in
//!   free text (`"attempt 3"`, `retry=2`).
//!
//! After each call, the recent sequence of keys is searched for a cycle of 1 to `max_cycle_len`
//! calls repeated back to back at its end (A A A…, A B A B…, A B C A B C…). The cycle's number of
//! complete repetitions decides the action: `steer_repeats` / `abort_repeats` for exact keys, the
//! (higher) `volatile_steer_repeats` / `volatile_abort_repeats` for volatile keys, because a call
//! that varies only in a timestamp may be legitimate polling. An abort latches until `reset`.
//!
//! Memory is bounded: only the last `max_cycle_len * (max abort repeats + 1)` calls are kept.

use crate::error::DedupError;
use crate::hash::SeqHasher;
use crate::period::Severity;
use crate::settings::{count_field, kind_of, overrides_object};
use crate::StreamAction;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::VecDeque;

/// Longest cycle the monitor can look for.
pub const MAX_CYCLE_LEN: usize = 16;
/// Largest repeat threshold accepted.
pub const MAX_REPEATS: usize = 1000;
/// Chars of canonical arguments kept in evidence (longer ones are cut, with `…`).
const EVIDENCE_ARGS_CHARS: usize = 200;

/// Key names (compared lowercased, without `_`, `-` and spaces) whose values are volatile.
const VOLATILE_KEYS: &[&str] = &[
    "timestamp", "time", "ts", "date", "datetime", "now", "nonce", "seed", "salt", "attempt", "attempts",
    "attemptnumber", "retry", "retries", "retrycount", "try", "tries", "iteration", "iter", "counter",
    "seq", "seqno", "sequence", "requestid", "traceid", "spanid", "correlationid", "idempotencykey",
    "uuid", "guid", "cachebuster", "cachebust", "random", "rand", "elapsed", "elapsedms",
];

/// Thresholds of the tool-call monitor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ToolCallConfig {
    /// Longest cycle looked for, in calls (1 = only the same call back to back). In 1..=16.
    pub max_cycle_len: usize,
    /// Back-to-back repetitions of an identical cycle that steer. At least 2.
    pub steer_repeats: usize,
    /// Back-to-back repetitions of an identical cycle that abort. At least `steer_repeats`.
    pub abort_repeats: usize,
    /// Repetitions of a cycle whose calls differ only in volatile parts that steer. At least 2.
    pub volatile_steer_repeats: usize,
    /// Repetitions of a cycle whose calls differ only in volatile parts that abort. At least
    /// `volatile_steer_repeats`.
    pub volatile_abort_repeats: usize,
    /// More key names whose values are volatile (matched like the built-in ones: case, `_`, `-`
    /// and spaces ignored).
    pub volatile_keys: Vec<String>,
}

impl Default for ToolCallConfig {
    fn default() -> Self {
        ToolCallConfig {
            max_cycle_len: 5,
            steer_repeats: 3,
            abort_repeats: 5,
            volatile_steer_repeats: 4,
            volatile_abort_repeats: 8,
            volatile_keys: Vec::new(),
        }
    }
}

impl ToolCallConfig {
    /// Checks every field; the error names the first field at fault and its rule.
    pub fn validate(&self) -> Result<(), DedupError> {
        if self.max_cycle_len < 1 || self.max_cycle_len > MAX_CYCLE_LEN {
            return Err(DedupError::setting("max_cycle_len", "must be in 1..=16", self.max_cycle_len));
        }
        for (field, v) in [
            ("steer_repeats", self.steer_repeats),
            ("abort_repeats", self.abort_repeats),
            ("volatile_steer_repeats", self.volatile_steer_repeats),
            ("volatile_abort_repeats", self.volatile_abort_repeats),
        ] {
            if v < 2 {
                return Err(DedupError::setting(field, "must be at least 2", v));
            }
            if v > MAX_REPEATS {
                return Err(DedupError::setting(field, "must be at most 1000", v));
            }
        }
        if self.abort_repeats < self.steer_repeats {
            return Err(DedupError::setting("abort_repeats", "must be at least steer_repeats", self.abort_repeats));
        }
        if self.volatile_abort_repeats < self.volatile_steer_repeats {
            return Err(DedupError::setting("volatile_abort_repeats", "must be at least volatile_steer_repeats", self.volatile_abort_repeats));
        }
        Ok(())
    }

    /// Applies a partial JSON object (camelCase names) over `self`, then validates.
    pub fn merge_json(mut self, overrides: &Value) -> Result<Self, DedupError> {
        let obj = match overrides_object(overrides, "options")? {
            Some(m) => m,
            None => return self.validate().map(|_| self),
        };
        for (key, value) in obj {
            match key.as_str() {
                "maxCycleLen" => self.max_cycle_len = count_field("max_cycle_len", value)?,
                "steerRepeats" => self.steer_repeats = count_field("steer_repeats", value)?,
                "abortRepeats" => self.abort_repeats = count_field("abort_repeats", value)?,
                "volatileSteerRepeats" => self.volatile_steer_repeats = count_field("volatile_steer_repeats", value)?,
                "volatileAbortRepeats" => self.volatile_abort_repeats = count_field("volatile_abort_repeats", value)?,
                "volatileKeys" => {
                    let items = match value {
                        Value::Array(items) => items,
                        other => return Err(DedupError::setting("volatile_keys", "must be an array of strings", kind_of(other))),
                    };
                    let mut keys = Vec::with_capacity(items.len());
                    for item in items {
                        match item {
                            Value::String(s) if !s.trim().is_empty() => keys.push(s.clone()),
                            other => return Err(DedupError::setting("volatile_keys", "must be an array of non-empty strings", kind_of(other))),
                        }
                    }
                    self.volatile_keys = keys;
                }
                _ => return Err(DedupError::argument("options", "has no field of this name", key)),
            }
        }
        self.validate()?;
        Ok(self)
    }

    fn history_len(&self) -> usize {
        self.max_cycle_len * (self.abort_repeats.max(self.volatile_abort_repeats) + 1)
    }
}

/// Which key a cycle was found on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CycleKind {
    /// The calls are identical (after canonicalization).
    Exact,
    /// The calls differ only in volatile parts (timestamps, counters, UUIDs…).
    Volatile,
}

/// One call of a detected cycle, as keyed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CycleCall {
    /// Tool name.
    pub name: String,
    /// Canonical arguments (volatile parts masked for a volatile cycle), cut at 200 chars.
    pub args: String,
}

/// Why the monitor steers or aborts.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallEvidence {
    /// Exact or volatile repetition.
    pub kind: CycleKind,
    /// Calls in the repeated cycle (1 = the same call back to back).
    pub period: usize,
    /// Complete back-to-back repetitions of the cycle, the current one included.
    pub repeats: usize,
    /// The calls of the cycle, oldest first.
    pub cycle: Vec<CycleCall>,
    /// Index (0-based, counted since creation or reset) of the first call of the repeated stretch.
    pub start: u64,
    /// Index of the call that produced this verdict.
    pub at: u64,
    /// `steer` or `abort`.
    pub severity: Severity,
    /// What was seen, in words.
    pub detail: String,
}

/// The verdict on a recorded call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallVerdict {
    /// What the host should do.
    pub action: StreamAction,
    /// The cycle behind a steer or abort.
    pub evidence: Option<ToolCallEvidence>,
}

struct Entry {
    exact: u64,
    volatile: u64,
    name: String,
    exact_args: String,
    volatile_args: String,
}

/// Watches an agent's tool calls for loops. See the module documentation.
pub struct ToolCallMonitor {
    config: ToolCallConfig,
    volatile_keys: Vec<String>,
    history: VecDeque<Entry>,
    count: u64,
    latched: Option<ToolCallEvidence>,
}

impl ToolCallMonitor {
    /// A monitor with validated `config`.
    pub fn new(config: ToolCallConfig) -> Result<Self, DedupError> {
        config.validate()?;
        let mut volatile_keys: Vec<String> = VOLATILE_KEYS.iter().map(|s| s.to_string()).collect();
        volatile_keys.extend(config.volatile_keys.iter().map(|k| normalize_key(k)));
        Ok(ToolCallMonitor { config, volatile_keys, history: VecDeque::new(), count: 0, latched: None })
    }

    /// The configuration in force.
    pub fn config(&self) -> &ToolCallConfig {
        &self.config
    }

    /// Calls recorded since creation or the last reset.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Forgets every call; the configuration stays.
    pub fn reset(&mut self) {
        self.history.clear();
        self.count = 0;
        self.latched = None;
    }

    /// Records a call. `args` is the arguments as JSON (a JSON string holding an object or array,
    /// as OpenAI-style APIs send them, is parsed first). Never fails.
    pub fn record(&mut self, name: &str, args: &Value) -> ToolCallVerdict {
        let parsed;
        let args = match args {
            Value::String(s) => match serde_json::from_str::<Value>(s) {
                Ok(v @ Value::Object(_)) | Ok(v @ Value::Array(_)) => {
                    parsed = v;
                    &parsed
                }
                _ => args,
            },
            _ => args,
        };
        let name = collapse_ws(name);
        let mut exact_args = String::new();
        canonical(args, None, None, &mut exact_args);
        let mut volatile_args = String::new();
        canonical(args, Some(&self.volatile_keys), None, &mut volatile_args);
        let entry = Entry {
            exact: key_hash(&name, &exact_args),
            volatile: key_hash(&name, &volatile_args),
            name,
            exact_args,
            volatile_args,
        };
        self.history.push_back(entry);
        while self.history.len() > self.config.history_len() {
            self.history.pop_front();
        }
        let at = self.count;
        self.count += 1;
        if let Some(e) = &self.latched {
            let mut e = e.clone();
            e.at = at;
            return ToolCallVerdict { action: StreamAction::Abort, evidence: Some(e) };
        }
        let exact = self.best_cycle(CycleKind::Exact, at);
        let volatile = self.best_cycle(CycleKind::Volatile, at);
        let best = match (exact, volatile) {
            (Some(a), Some(b)) => Some(if rank(b.severity) > rank(a.severity) { b } else { a }),
            (a, b) => a.or(b),
        };
        match best {
            None => ToolCallVerdict { action: StreamAction::None, evidence: None },
            Some(e) => {
                let action = match e.severity {
                    Severity::Abort => StreamAction::Abort,
                    Severity::Steer => StreamAction::Steer,
                };
                if action == StreamAction::Abort {
                    self.latched = Some(e.clone());
                }
                ToolCallVerdict { action, evidence: Some(e) }
            }
        }
    }

    /// The strongest cycle at the end of the history on one kind of key (ties: the shortest cycle).
    fn best_cycle(&self, kind: CycleKind, at: u64) -> Option<ToolCallEvidence> {
        let (steer, abort) = match kind {
            CycleKind::Exact => (self.config.steer_repeats, self.config.abort_repeats),
            CycleKind::Volatile => (self.config.volatile_steer_repeats, self.config.volatile_abort_repeats),
        };
        let key = |e: &Entry| match kind {
            CycleKind::Exact => e.exact,
            CycleKind::Volatile => e.volatile,
        };
        let n = self.history.len();
        let mut best: Option<(Severity, usize, usize)> = None;
        for p in 1..=self.config.max_cycle_len.min(n / 2) {
            // Trailing run of positions that equal the position one period earlier.
            let mut run = 0;
            while run + p < n && key(&self.history[n - 1 - run]) == key(&self.history[n - 1 - run - p]) {
                run += 1;
            }
            let repeats = (run + p) / p;
            let severity = if repeats >= abort {
                Severity::Abort
            } else if repeats >= steer {
                Severity::Steer
            } else {
                continue;
            };
            if best.map_or(true, |(s, _, _)| rank(severity) > rank(s)) {
                best = Some((severity, p, repeats));
            }
        }
        let (severity, period, repeats) = best?;
        let cycle = (n - period..n)
            .map(|i| {
                let e = &self.history[i];
                let args = match kind {
                    CycleKind::Exact => &e.exact_args,
                    CycleKind::Volatile => &e.volatile_args,
                };
                CycleCall { name: e.name.clone(), args: cut(args, EVIDENCE_ARGS_CHARS) }
            })
            .collect();
        let span = (period * repeats) as u64;
        let what = match (kind, period) {
            (CycleKind::Exact, 1) => "the same call".to_string(),
            (CycleKind::Exact, p) => format!("the same cycle of {} calls", p),
            (CycleKind::Volatile, 1) => "a call differing only in volatile values".to_string(),
            (CycleKind::Volatile, p) => format!("a cycle of {} calls differing only in volatile values", p),
        };
        let limit = if severity == Severity::Abort { abort } else { steer };
        Some(ToolCallEvidence {
            kind,
            period,
            repeats,
            cycle,
            start: at + 1 - span,
            at,
            severity,
            detail: format!("{} repeated {} times in a row (threshold {})", what, repeats, limit),
        })
    }
}

fn rank(s: Severity) -> u8 {
    match s {
        Severity::Steer => 1,
        Severity::Abort => 2,
    }
}

fn key_hash(name: &str, args: &str) -> u64 {
    let mut h = SeqHasher::new();
    name.bytes().for_each(|b| h.push(u32::from(b)));
    h.push(0x1_0000);
    args.bytes().for_each(|b| h.push(u32::from(b)));
    h.finish()
}

fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max).collect();
    out.push('…');
    out
}

/// Whitespace runs collapsed to one space, none at either end (`split_whitespace` joined by " ").
fn collapse_ws(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut pending = false;
    for c in s.chars() {
        if c.is_whitespace() {
            pending = !out.is_empty();
        } else {
            if pending {
                out.push(' ');
                pending = false;
            }
            out.push(c);
        }
    }
    out
}

/// Lowercased, without `_`, `-`, `.` and whitespace.
fn normalize_key(k: &str) -> String {
    k.chars().filter(|c| !matches!(c, '_' | '-' | '.') && !c.is_whitespace()).flat_map(crate::lowercase::lowercase).collect()
}

fn is_volatile_key(key: &str, keys: &[String]) -> bool {
    if key.ends_with("_at") || key.ends_with("At") {
        return true;
    }
    let k = normalize_key(key);
    keys.iter().any(|v| *v == k)
}

fn push_json_str(s: &str, out: &mut String) {
    crate::json_num::push_json_str(out, s);
}

/// Writes the canonical form of `v`: object keys sorted, whitespace in strings collapsed, integral
/// numbers without a fraction. With `mask`, volatile parts become `"<time>"`, `"<uuid>"`, `"<n>"` or
/// `"<volatile>"`.
fn canonical(v: &Value, mask: Option<&[String]>, key: Option<&str>, out: &mut String) {
    if let (Some(keys), Some(k)) = (mask, key) {
        if !matches!(v, Value::Object(_) | Value::Array(_)) && is_volatile_key(k, keys) {
            out.push_str("\"<volatile>\"");
            return;
        }
    }
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(0.0);
            if mask.is_some() && is_epoch(f) {
                out.push_str("\"<time>\"");
            } else if f.fract() == 0.0 && f.abs() < 9.0e15 {
                out.push_str(&format!("{}", f as i64));
            } else if let Some(i) = n.as_u64() {
                out.push_str(&i.to_string());
            } else if let Some(i) = n.as_i64() {
                out.push_str(&i.to_string());
            } else {
                // The text serde_json gives a float, without a second float printer in the wasm.
                crate::json_num::push_f64(out, f);
            }
        }
        Value::String(s) => {
            let s = collapse_ws(s);
            match mask {
                Some(keys) => push_json_str(&mask_string(&s, keys), out),
                None => push_json_str(&s, out),
            }
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, mask, None, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            // serde_json's map is ordered by key (the `preserve_order` feature is off; a test
            // checks), so its order is the canonical one.
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_json_str(k, out);
                out.push(':');
                canonical(item, mask, Some(k), out);
            }
            out.push('}');
        }
    }
}

/// Seconds or milliseconds since 1970 for dates between 2001 and 2033.
fn is_epoch(f: f64) -> bool {
    (1.0e9..2.0e9).contains(&f) || (1.0e12..2.0e12).contains(&f)
}

fn hex(b: u8) -> bool {
    b.is_ascii_hexdigit()
}

fn digits(b: &[u8], i: usize, n: usize) -> bool {
    i + n <= b.len() && b[i..i + n].iter().all(u8::is_ascii_digit)
}

/// Length of a UUID (8-4-4-4-12 hex) at `i`, or 0.
fn uuid_at(b: &[u8], i: usize) -> usize {
    if i + 36 > b.len() {
        return 0;
    }
    let ok = b[i..i + 36].iter().enumerate().all(|(j, &c)| if matches!(j, 8 | 13 | 18 | 23) { c == b'-' } else { hex(c) });
    if ok && !b.get(i + 36).map_or(false, |c| c.is_ascii_alphanumeric()) {
        36
    } else {
        0
    }
}

/// Length of an ISO-8601 date, date-time or `hh:mm:ss` time at `i`, or 0.
fn time_at(b: &[u8], i: usize) -> usize {
    let mut j = i;
    if digits(b, j, 4) && b.get(j + 4) == Some(&b'-') && digits(b, j + 5, 2) && b.get(j + 7) == Some(&b'-') && digits(b, j + 8, 2) {
        j += 10;
        if matches!(b.get(j), Some(b'T') | Some(b't') | Some(b' ')) && digits(b, j + 1, 2) && b.get(j + 3) == Some(&b':') {
            j += 1;
        } else {
            return j - i;
        }
    }
    if !(digits(b, j, 2) && b.get(j + 2) == Some(&b':') && digits(b, j + 3, 2)) {
        return if j > i { j - i } else { 0 };
    }
    j += 5;
    if b.get(j) == Some(&b':') && digits(b, j + 1, 2) {
        j += 3;
        if matches!(b.get(j), Some(b'.') | Some(b',')) && digits(b, j + 1, 1) {
            j += 1;
            while b.get(j).map_or(false, u8::is_ascii_digit) {
                j += 1;
            }
        }
    } else if j == i + 5 {
        // A bare `hh:mm` is too ambiguous (scores, ratios) to mask.
        return 0;
    }
    if matches!(b.get(j), Some(b'Z') | Some(b'z')) {
        j += 1;
    } else if matches!(b.get(j), Some(b'+') | Some(b'-')) && digits(b, j + 1, 2) {
        j += 3;
        if b.get(j) == Some(&b':') && digits(b, j + 1, 2) {
            j += 3;
        } else if digits(b, j, 2) {
            j += 2;
        }
    }
    j - i
}

/// Masks UUIDs, dates/times, epoch-like digit runs and counters after volatile words.
fn mask_string(s: &str, keys: &[String]) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        let boundary = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        if boundary && hex(b[i]) {
            let (len, marker) = match uuid_at(b, i) {
                0 => match time_at(b, i) {
                    0 => (0, ""),
                    n => (n, "<time>"),
                },
                n => (n, "<uuid>"),
            };
            if len > 0 {
                out.push_str(&s[copied..i]);
                out.push_str(marker);
                i += len;
                copied = i;
                continue;
            }
        }
        if b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_digit()) {
            let mut j = i;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            let run = j - i;
            let ends_word = b.get(j).map_or(true, |c| !c.is_ascii_alphanumeric());
            let epoch = (run == 10 || run == 13) && b[i] == b'1' && ends_word;
            if epoch || after_volatile_word(b, i, keys) {
                out.push_str(&s[copied..i]);
                out.push_str(if epoch { "<time>" } else { "<n>" });
                copied = j;
            }
            i = j;
            continue;
        }
        i += 1;
    }
    out.push_str(&s[copied..]);
    out
}

/// True when the digits at `i` follow a volatile word, directly or after up to two of ` #:=_-`.
fn after_volatile_word(b: &[u8], i: usize, keys: &[String]) -> bool {
    let mut j = i;
    let mut seps = 0;
    while j > 0 && seps < 2 && matches!(b[j - 1], b' ' | b'#' | b':' | b'=' | b'_' | b'-') {
        j -= 1;
        seps += 1;
    }
    let end = j;
    while j > 0 && b[j - 1].is_ascii_alphabetic() {
        j -= 1;
    }
    if j == end {
        return false;
    }
    let word = std::str::from_utf8(&b[j..end]).unwrap_or("").to_ascii_lowercase();
    keys.iter().any(|k| *k == word)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn collapse_ws_is_split_whitespace_joined() {
        for t in ["", " ", "a", "  a  b\t\nc ", "x\u{3000}y\u{a0} z", "\u{2003}lead", "trail\u{85}"] {
            assert_eq!(collapse_ws(t), t.split_whitespace().collect::<Vec<_>>().join(" "), "{:?}", t);
        }
    }

    #[test]
    fn json_objects_iterate_in_key_order() {
        // `canonical` relies on it: the keys of a parsed object come out sorted.
        let v: Value = serde_json::from_str(r#"{"b": 1, "a": 2, "C": 3, "aa": 4}"#).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["C", "a", "aa", "b"]);
    }

    fn run(m: &mut ToolCallMonitor, calls: &[(&str, Value)]) -> Vec<StreamAction> {
        calls.iter().map(|(n, a)| m.record(n, a).action).collect()
    }

    fn mon() -> ToolCallMonitor {
        ToolCallMonitor::new(ToolCallConfig::default()).unwrap()
    }

    #[test]
    fn same_call_steers_then_aborts() {
        let mut m = mon();
        let calls: Vec<_> = (0..5).map(|_| ("read_file", json!({"path": "a.txt"}))).collect();
        let acts = run(&mut m, &calls);
        use StreamAction::*;
        assert_eq!(acts, vec![None, None, Steer, Steer, Abort]);
        let v = m.record("other", &json!({}));
        assert_eq!(v.action, Abort, "an abort latches");
        m.reset();
        assert_eq!(m.record("read_file", &json!({"path": "a.txt"})).action, None);
    }

    #[test]
    fn key_order_and_whitespace_do_not_matter() {
        let mut m = mon();
        m.record("search", &json!({"q": "rust  wasm", "n": 3}));
        m.record("search", &json!("{ \"n\": 3.0, \"q\": \"rust wasm\" }"));
        let v = m.record("search", &json!({"n": 3, "q": " rust wasm "}));
        assert_eq!(v.action, StreamAction::Steer);
        let e = v.evidence.unwrap();
        assert_eq!((e.kind, e.period, e.repeats), (CycleKind::Exact, 1, 3));
        assert_eq!(e.cycle[0].args, r#"{"n":3,"q":"rust wasm"}"#);
    }

    #[test]
    fn cycles_of_two_to_five() {
        for p in 2..=5usize {
            let mut m = mon();
            let mut last = StreamAction::None;
            for i in 0..p * 5 {
                last = m.record(&format!("tool{}", i % p), &json!({"i": i % p})).action;
                if i + 1 < p * 3 {
                    assert_eq!(last, StreamAction::None, "p={} i={}", p, i);
                }
            }
            assert_eq!(last, StreamAction::Abort, "p={}", p);
            let e = m.record("x", &json!(null)).evidence.unwrap();
            assert_eq!(e.period, p);
        }
    }

    #[test]
    fn progress_is_not_a_loop() {
        let mut m = mon();
        for i in 0..40 {
            let v = m.record("read_file", &json!({"path": format!("src/file{}.rs", i)}));
            assert_eq!(v.action, StreamAction::None);
            let v = m.record("get_issue", &json!({"number": i}));
            assert_eq!(v.action, StreamAction::None);
        }
    }

    #[test]
    fn volatile_parts_are_masked() {
        let mut m = mon();
        let mut acts = Vec::new();
        for i in 0..8u64 {
            let args = json!({
                "query": format!("status of build (attempt {})", i + 1),
                "requestId": format!("550e8400-e29b-41d4-a716-44665544{:04}", i),
                "since": format!("2024-05-01T10:{:02}:00Z", i),
                "ts": 1_714_557_600_000u64 + i * 1000,
            });
            acts.push(m.record("check_build", &args).action);
        }
        use StreamAction::*;
        assert_eq!(acts, vec![None, None, None, Steer, Steer, Steer, Steer, Abort]);
        let v = m.record("x", &json!({}));
        let e = v.evidence.unwrap();
        assert_eq!(e.kind, CycleKind::Volatile);
        assert!(e.cycle[0].args.contains("<time>"), "{}", e.cycle[0].args);
        assert!(e.cycle[0].args.contains("attempt <n>"), "{}", e.cycle[0].args);
    }

    #[test]
    fn masks() {
        let k: Vec<String> = VOLATILE_KEYS.iter().map(|s| s.to_string()).collect();
        assert_eq!(mask_string("id 123e4567-e89b-12d3-a456-426614174000 ok", &k), "id <uuid> ok");
        assert_eq!(mask_string("at 2024-01-02 and 2024-01-02T03:04:05.123+02:00!", &k), "at <time> and <time>!");
        assert_eq!(mask_string("t=12:30:01 score 3:1", &k), "t=<time> score 3:1");
        assert_eq!(mask_string("issue 42 retry #3 epoch 1714557600", &k), "issue 42 retry #<n> epoch <time>");
        assert_eq!(mask_string("héllo 1234567890x", &k), "héllo 1234567890x");
    }

    #[test]
    fn config_errors_name_the_field() {
        let e = ToolCallConfig::default().merge_json(&json!({"maxCycleLen": 0})).unwrap_err();
        assert_eq!(e.field(), "max_cycle_len");
        let e = ToolCallConfig::default().merge_json(&json!({"steerRepeats": 6})).unwrap_err();
        assert_eq!(e.field(), "abort_repeats");
        let e = ToolCallConfig::default().merge_json(&json!({"volatileKeys": [1]})).unwrap_err();
        assert_eq!(e.field(), "volatile_keys");
        let e = ToolCallConfig::default().merge_json(&json!({"bogus": 1})).unwrap_err();
        assert_eq!(e.field(), "options");
        let c = ToolCallConfig::default().merge_json(&json!({"volatileKeys": ["Page-Token"]})).unwrap();
        let mut m = ToolCallMonitor::new(c).unwrap();
        let acts: Vec<_> = (0..4).map(|i| m.record("list", &json!({"page_token": format!("tok{}", i)})).action).collect();
        assert_eq!(acts[3], StreamAction::Steer);
    }

    #[test]
    fn history_is_bounded() {
        let mut m = mon();
        for i in 0..10_000 {
            m.record("t", &json!({ "i": i }));
        }
        assert!(m.history.len() <= m.config.history_len());
        assert_eq!(m.count(), 10_000);
    }

    #[test]
    #[cfg(feature = "abi-detect")]
    fn ffi_round_trip() {
        use crate::ffi::*;
        let out = || serde_json::from_slice::<Value>(&out_bytes()).unwrap();
        let cfg = br#"{"steerRepeats": 2, "abortRepeats": 3}"#;
        let h = dw_toolcalls_new(cfg.as_ptr(), cfg.len());
        assert!(h > 0);
        assert_eq!(out()["steerRepeats"], json!(2));
        let call = br#"{"name": "ls", "args": "{\"dir\": \"/\"}"}"#;
        let codes: Vec<i32> = (0..3).map(|_| dw_toolcalls_record(h, call.as_ptr(), call.len())).collect();
        assert_eq!(codes, vec![0, 1, 2]);
        assert_eq!(out()["evidence"]["kind"], json!("exact"));
        let bad = br#"{"args": {}}"#;
        assert_eq!(dw_toolcalls_record(h, bad.as_ptr(), bad.len()), -1);
        assert_eq!(out()["field"], json!("name"));
        assert_eq!(dw_toolcalls_record(h + 1000, call.as_ptr(), call.len()), -1);
        let bad_cfg = br#"{"maxCycleLen": 99}"#;
        assert_eq!(dw_toolcalls_new(bad_cfg.as_ptr(), bad_cfg.len()), 0);
        assert_eq!(out()["field"], json!("max_cycle_len"));
        assert_eq!(dw_toolcalls_reset(h), 0);
        assert_eq!(dw_toolcalls_record(h, call.as_ptr(), call.len()), 0);
        let live = dw_toolcalls_count();
        dw_toolcalls_free(h);
        assert_eq!(dw_toolcalls_count(), live - 1);
    }
}
