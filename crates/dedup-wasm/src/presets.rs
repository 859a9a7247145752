//! Named presets: `default`, `relaxed` and `sensitive`, with the parameter table of the original
//! detector. Only the fields in the table differ; everything else keeps its default.
//!
//! | preset    | ngram_threshold | sentence_threshold | window_size | step_size | min_repeat_length | max_repetitions |
//! |-----------|-----------------|--------------------|-------------|-----------|-------------------|-----------------|
//! | default   | 0.95            | 0.75               | 100         | 25        | 50                | 3               |
//! | relaxed   | 0.92            | 0.75               | 100         | 15        | 80                | 3               |
//! | sensitive | 0.75            | 0.75               | 100         | 3         | 30                | 3               |

use crate::error::DedupError;
use crate::settings::DedupSettings;
use serde::{Deserialize, Serialize};

/// The name of a preset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DedupPresetName {
    Default,
    Relaxed,
    Sensitive,
}

impl DedupPresetName {
    /// Every preset, in table order.
    pub const ALL: [DedupPresetName; 3] = [DedupPresetName::Default, DedupPresetName::Relaxed, DedupPresetName::Sensitive];

    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            DedupPresetName::Default => "default",
            DedupPresetName::Relaxed => "relaxed",
            DedupPresetName::Sensitive => "sensitive",
        }
    }

    /// Parses a lowercase preset name.
    pub fn parse(name: &str) -> Result<Self, DedupError> {
        DedupPresetName::ALL
            .iter()
            .copied()
            .find(|p| p.as_str() == name)
            .ok_or_else(|| DedupError::argument("preset", "must be one of default, relaxed, sensitive", name))
    }
}

/// The settings of a preset.
pub fn resolve_dedup_preset(name: DedupPresetName) -> DedupSettings {
    let base = DedupSettings::default();
    match name {
        DedupPresetName::Default => base,
        DedupPresetName::Relaxed => DedupSettings { ngram_threshold: 0.92, step_size: 15, min_repeat_length: 80, ..base },
        DedupPresetName::Sensitive => DedupSettings { ngram_threshold: 0.75, step_size: 3, min_repeat_length: 30, ..base },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_values() {
        let r = resolve_dedup_preset(DedupPresetName::Relaxed);
        assert_eq!((r.ngram_threshold, r.step_size, r.min_repeat_length), (0.92, 15, 80));
        let s = resolve_dedup_preset(DedupPresetName::Sensitive);
        assert_eq!((s.ngram_threshold, s.step_size, s.min_repeat_length), (0.75, 3, 30));
        assert_eq!(resolve_dedup_preset(DedupPresetName::Default), DedupSettings::default());
        for p in DedupPresetName::ALL {
            resolve_dedup_preset(p).validate().unwrap();
            assert_eq!(DedupPresetName::parse(p.as_str()).unwrap(), p);
        }
    }

    #[test]
    fn unknown_name_is_an_error_naming_the_field() {
        assert_eq!(DedupPresetName::parse("strict").unwrap_err().field(), "preset");
    }
}
