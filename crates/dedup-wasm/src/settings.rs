//! [`DedupSettings`]: every knob of the detector, its meaning, its default and its valid range.
//!
//! The JSON form (used by the wasm bridge and the shared fixtures) spells fields in camelCase.
//! [`DedupSettings::merge_json`] applies a partial JSON object over a base and reports the first field
//! that is unknown, of the wrong type or out of range — by name.

use crate::error::DedupError;
use crate::period::LoopConfig;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Settings of the repetition detector. Start from [`DedupSettings::default`] or a preset
/// ([`crate::resolve_dedup_preset`]) and change what you need; [`DedupSettings::validate`] says
/// whether the result is usable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DedupSettings {
    /// Minimum similarity (matched chars / span) for a near-exact repeated section. In (0, 1].
    pub ngram_threshold: f64,
    /// Minimum token Jaccard for two sentences to count as the same statement. In (0, 1].
    pub sentence_threshold: f64,
    /// Largest gap, in chars, that a near-exact section may bridge between two exact matches on the
    /// same alignment (an edited word, a counter). At least 1.
    pub window_size: usize,
    /// Sampling stride of the long-range fingerprint index: every `step_size`-th 16-char gram of text
    /// older than the dense window is kept. Smaller finds shorter far repeats and uses more memory.
    /// At least 1.
    pub step_size: usize,
    /// Shortest repeated section reported, in chars. Also sets the content-length gate: no verdict
    /// before `8 * min_repeat_length` chars have streamed. At least 1.
    pub min_repeat_length: usize,
    /// Repeats of one unit (beyond its first occurrence) that make a near-exact section abort. At least 1.
    pub max_repetitions: usize,
    /// Sentences further apart than this are never compared by the sentence pass: a restatement far
    /// away is a summary, not a loop. At least 1.
    pub context_gap_max: usize,
    /// Sentences with fewer tokens than this are ignored by the sentence pass ("Yes.", "OK."). At least 1.
    pub min_sentence_tokens: usize,
    /// Number of initial chunks during which a stream gives no verdict (analysis still runs).
    pub warmup_chunks: usize,
    /// A chunk adding fewer than this many chars reuses the previous verdict. At least 1.
    pub min_chunk_delta: usize,
    /// Memory bound of a stream: text older than this many chars is forgotten (and cannot be matched).
    /// At least 4096.
    pub max_window_chars: usize,
    /// Thresholds of the loop rules (JSON key `loop`).
    #[serde(rename = "loop")]
    pub loop_rules: LoopConfig,
}

impl Default for DedupSettings {
    fn default() -> Self {
        DedupSettings {
            ngram_threshold: 0.95,
            sentence_threshold: 0.75,
            window_size: 100,
            step_size: 25,
            min_repeat_length: 50,
            max_repetitions: 3,
            context_gap_max: 8,
            min_sentence_tokens: 4,
            warmup_chunks: 0,
            min_chunk_delta: 1,
            max_window_chars: 65_536,
            loop_rules: LoopConfig::default(),
        }
    }
}

#[inline(never)]
fn check_unit(field: &'static str, v: f64) -> Result<(), DedupError> {
    if !v.is_finite() {
        return Err(DedupError::setting(field, "must be a finite number", v));
    }
    if !(v > 0.0 && v <= 1.0) {
        return Err(DedupError::setting(field, "must be in (0, 1]", v));
    }
    Ok(())
}

#[inline(never)]
fn check_min(field: &'static str, v: usize, min: usize, rule: &'static str) -> Result<(), DedupError> {
    if v < min {
        return Err(DedupError::setting(field, rule, v));
    }
    Ok(())
}

/// Largest value accepted for count-like settings: keeps arithmetic on them far from overflow.
const MAX_COUNT: usize = 1 << 30;

impl DedupSettings {
    /// Checks every field; the error names the first field at fault and its rule.
    pub fn validate(&self) -> Result<(), DedupError> {
        check_unit("ngram_threshold", self.ngram_threshold)?;
        check_unit("sentence_threshold", self.sentence_threshold)?;
        check_min("window_size", self.window_size, 1, "must be at least 1")?;
        check_min("step_size", self.step_size, 1, "must be at least 1")?;
        check_min("min_repeat_length", self.min_repeat_length, 1, "must be at least 1")?;
        check_min("max_repetitions", self.max_repetitions, 1, "must be at least 1")?;
        check_min("context_gap_max", self.context_gap_max, 1, "must be at least 1")?;
        check_min("min_sentence_tokens", self.min_sentence_tokens, 1, "must be at least 1")?;
        check_min("min_chunk_delta", self.min_chunk_delta, 1, "must be at least 1")?;
        check_min("max_window_chars", self.max_window_chars, 4096, "must be at least 4096")?;
        for (field, v) in [
            ("window_size", self.window_size),
            ("step_size", self.step_size),
            ("min_repeat_length", self.min_repeat_length),
            ("max_repetitions", self.max_repetitions),
            ("context_gap_max", self.context_gap_max),
            ("min_sentence_tokens", self.min_sentence_tokens),
            ("warmup_chunks", self.warmup_chunks),
            ("min_chunk_delta", self.min_chunk_delta),
            ("max_window_chars", self.max_window_chars),
        ] {
            if v > MAX_COUNT {
                return Err(DedupError::setting(field, "must be at most 2^30", v));
            }
        }
        self.loop_rules.validate()
    }

    /// Content-length gate: streams give no verdict before this many chars.
    pub fn min_content_chars(&self) -> usize {
        self.min_repeat_length.saturating_mul(8)
    }

    /// Applies the fields of a JSON object (camelCase names) over `self`, then validates.
    /// Numbers may also arrive as the strings "NaN", "Infinity" or "-Infinity" (JSON has no such
    /// numbers), so that a host's NaN is reported as NaN rather than as a type error.
    pub fn merge_json(self, overrides: &Value) -> Result<Self, DedupError> {
        self.merge_json_skipping(overrides, None)
    }

    /// [`DedupSettings::merge_json`] ignoring the field `skip` (one the caller has already
    /// applied, such as the wasm bridge's `preset`), without copying the object to drop it.
    pub(crate) fn merge_json_skipping(mut self, overrides: &Value, skip: Option<&str>) -> Result<Self, DedupError> {
        let obj = match overrides_object(overrides, "settings")? {
            Some(m) => m,
            None => return self.validate().map(|_| self),
        };
        for (key, value) in obj {
            if Some(key.as_str()) == skip {
                continue;
            }
            match key.as_str() {
                "ngramThreshold" => self.ngram_threshold = float_field("ngram_threshold", value)?,
                "sentenceThreshold" => self.sentence_threshold = float_field("sentence_threshold", value)?,
                "windowSize" => self.window_size = count_field("window_size", value)?,
                "stepSize" => self.step_size = count_field("step_size", value)?,
                "minRepeatLength" => self.min_repeat_length = count_field("min_repeat_length", value)?,
                "maxRepetitions" => self.max_repetitions = count_field("max_repetitions", value)?,
                "contextGapMax" => self.context_gap_max = count_field("context_gap_max", value)?,
                "minSentenceTokens" => self.min_sentence_tokens = count_field("min_sentence_tokens", value)?,
                "warmupChunks" => self.warmup_chunks = count_field("warmup_chunks", value)?,
                "minChunkDelta" => self.min_chunk_delta = count_field("min_chunk_delta", value)?,
                "maxWindowChars" => self.max_window_chars = count_field("max_window_chars", value)?,
                "loop" => self.loop_rules = self.loop_rules.clone().merge_json(value)?,
                _ => return Err(unknown_field(key)),
            }
        }
        self.validate()?;
        Ok(self)
    }
}

fn unknown_field(key: &str) -> DedupError {
    DedupError::argument("settings", "has no field of this name", key)
}

/// The object of a JSON overrides argument: `Some` for an object, `None` for null (no overrides), and
/// an error naming `field` for anything else.
pub(crate) fn overrides_object<'a>(v: &'a Value, field: &'static str) -> Result<Option<&'a serde_json::Map<String, Value>>, DedupError> {
    match v {
        Value::Object(m) => Ok(Some(m)),
        Value::Null => Ok(None),
        other => Err(DedupError::argument(field, "must be an object", kind_of(other))),
    }
}

pub(crate) fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Reads a float field, accepting the non-finite spellings so validation can name them.
#[inline(never)]
pub(crate) fn float_field(field: &'static str, v: &Value) -> Result<f64, DedupError> {
    match v {
        Value::Number(n) => Ok(n.as_f64().unwrap_or(f64::NAN)),
        Value::String(s) if s == "NaN" => Ok(f64::NAN),
        Value::String(s) if s == "Infinity" => Ok(f64::INFINITY),
        Value::String(s) if s == "-Infinity" => Ok(f64::NEG_INFINITY),
        other => Err(DedupError::setting(field, "must be a number", kind_of(other))),
    }
}

/// Reads a non-negative integer field.
#[inline(never)]
pub(crate) fn count_field(field: &'static str, v: &Value) -> Result<usize, DedupError> {
    let f = float_field(field, v)?;
    if !f.is_finite() || f < 0.0 || f.fract() != 0.0 {
        return Err(DedupError::setting(field, "must be a non-negative integer", f));
    }
    if f > MAX_COUNT as f64 {
        return Err(DedupError::setting(field, "must be at most 2^30", f));
    }
    Ok(f as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_are_valid() {
        DedupSettings::default().validate().unwrap();
    }

    #[test]
    fn nan_and_out_of_range_thresholds_name_the_field() {
        let mut s = DedupSettings::default();
        s.ngram_threshold = f64::NAN;
        assert_eq!(s.validate().unwrap_err().field(), "ngram_threshold");
        let mut s = DedupSettings::default();
        s.sentence_threshold = 0.0;
        assert_eq!(s.validate().unwrap_err().field(), "sentence_threshold");
        let mut s = DedupSettings::default();
        s.sentence_threshold = 1.5;
        assert!(s.validate().unwrap_err().to_string().contains("(0, 1]"));
    }

    #[test]
    fn zero_window_or_step_is_rejected() {
        let mut s = DedupSettings::default();
        s.window_size = 0;
        assert_eq!(s.validate().unwrap_err().field(), "window_size");
        let mut s = DedupSettings::default();
        s.step_size = 0;
        assert_eq!(s.validate().unwrap_err().field(), "step_size");
    }

    #[test]
    fn merge_json_applies_camel_case_and_reports_bad_fields() {
        let s = DedupSettings::default().merge_json(&json!({"stepSize": 5, "ngramThreshold": 0.9})).unwrap();
        assert_eq!(s.step_size, 5);
        assert_eq!(s.ngram_threshold, 0.9);
        let e = DedupSettings::default().merge_json(&json!({"ngramThreshold": "NaN"})).unwrap_err();
        assert_eq!(e.field(), "ngram_threshold");
        assert!(e.to_string().contains("finite"));
        let e = DedupSettings::default().merge_json(&json!({"stepSize": 2.5})).unwrap_err();
        assert_eq!(e.field(), "step_size");
        let e = DedupSettings::default().merge_json(&json!({"stepsize": 2})).unwrap_err();
        assert!(e.to_string().contains("stepsize"));
        let e = DedupSettings::default().merge_json(&json!({"windowSize": true})).unwrap_err();
        assert!(e.to_string().contains("must be a number"));
    }

    #[test]
    fn serde_round_trip_uses_camel_case() {
        let v = serde_json::to_value(DedupSettings::default()).unwrap();
        assert_eq!(v["ngramThreshold"], json!(0.95));
        let back: DedupSettings = serde_json::from_value(v).unwrap();
        assert_eq!(back, DedupSettings::default());
    }
}
