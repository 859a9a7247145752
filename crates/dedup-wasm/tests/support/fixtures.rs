//! The shared fixtures under `test/fixtures/` (repository root): what a fixture holds, how to run it
//! natively, and how the result is written with UTF-16 offsets (the unit of the TypeScript API), so
//! the same JSON file checks the native build here and the wasm build in vitest.

use dedup_wasm::{check_repetition, resolve_dedup_preset, DedupPresetName, DedupSettings, LoopEvidence, RepeatedSection, StreamingState};
use serde_json::{json, Map, Value};
use std::path::PathBuf;

/// `test/fixtures` of the repository.
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../test/fixtures")
}

/// Settings as the TS API accepts them: null, a preset name, or overrides with an optional `preset`.
pub fn settings_of(v: &Value) -> Result<DedupSettings, dedup_wasm::DedupError> {
    match v {
        Value::Null => Ok(DedupSettings::default()),
        Value::String(name) => Ok(resolve_dedup_preset(DedupPresetName::parse(name)?)),
        Value::Object(map) => {
            let mut rest = map.clone();
            let base = match rest.remove("preset") {
                Some(Value::String(name)) => resolve_dedup_preset(DedupPresetName::parse(&name)?),
                _ => DedupSettings::default(),
            };
            base.merge_json(&Value::Object(rest))
        }
        other => panic!("fixture settings must be null, a string or an object, got {}", other),
    }
}

/// UTF-16 offset of a byte offset of `text`.
pub fn utf16_at(text: &str, byte: usize) -> u64 {
    assert!(text.is_char_boundary(byte), "byte offset {} is not a char boundary", byte);
    text[..byte].encode_utf16().count() as u64
}

/// camelCase of a snake_case field name (the TS API's spelling).
pub fn camel(field: &str) -> String {
    let mut out = String::new();
    let mut up = false;
    for c in field.chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

pub fn section_json(text: &str, s: &RepeatedSection) -> Value {
    json!({
        "originalStart": utf16_at(text, s.original_start),
        "originalEnd": utf16_at(text, s.original_end),
        "repeatStart": utf16_at(text, s.repeat_start),
        "repeatEnd": utf16_at(text, s.repeat_end),
        "similarity": s.similarity,
        "source": s.source,
    })
}

fn evidence_json(text: &str, e: &LoopEvidence) -> Value {
    json!({
        "rule": e.rule,
        "severity": e.severity,
        "detail": e.detail,
        "sample": e.sample,
        "start": utf16_at(text, e.start as usize),
        "at": utf16_at(text, e.at as usize),
    })
}

fn error_json(e: &dedup_wasm::DedupError) -> Value {
    let class = match e {
        dedup_wasm::DedupError::InvalidSetting { rule, .. } | dedup_wasm::DedupError::InvalidArgument { rule, .. } => {
            if ["must be a number", "must be an object", "has no field of this name"].contains(rule) {
                "type"
            } else {
                "range"
            }
        }
    };
    json!({ "error": { "field": camel(e.field()), "errorClass": class } })
}

/// The expected value of a fixture, computed natively. `kind` is "batch" (input: a string) or
/// "stream" (input: an array of chunks, fed to the content channel).
pub fn expected_of(kind: &str, input: &Value, settings: &Value) -> Value {
    let settings = match settings_of(settings) {
        Ok(s) => s,
        Err(e) => return error_json(&e),
    };
    match kind {
        "batch" => {
            let text = input.as_str().expect("a batch input is a string");
            match check_repetition(text, &settings) {
                Ok(r) => json!({
                    "repeated": r.repeated,
                    "ratio": r.ratio,
                    "sections": r.sections.iter().map(|s| section_json(text, s)).collect::<Vec<_>>(),
                }),
                Err(e) => error_json(&e),
            }
        }
        "stream" => {
            let chunks: Vec<&str> = input.as_array().expect("a stream input is an array").iter().map(|c| c.as_str().expect("chunks are strings")).collect();
            let mut m = match StreamingState::new(settings) {
                Ok(m) => m,
                Err(e) => return error_json(&e),
            };
            let mut text = String::new();
            let mut per_chunk = Vec::new();
            for c in &chunks {
                text.push_str(c);
                let check = m.feed_chunk(c);
                per_chunk.push(json!({ "action": check.action, "repeated": check.repeated, "ratio": check.ratio }));
            }
            let last = m.last_check().cloned();
            let mut fin = Map::new();
            fin.insert("sections".into(), json!(m.sections().iter().map(|s| section_json(&text, s)).collect::<Vec<_>>()));
            fin.insert("evidence".into(), last.as_ref().and_then(|c| c.evidence.as_ref()).map_or(Value::Null, |e| evidence_json(&text, e)));
            fin.insert("charsSeen".into(), json!(text.encode_utf16().count()));
            json!({ "perChunk": per_chunk, "final": Value::Object(fin) })
        }
        other => panic!("unknown fixture kind {}", other),
    }
}
