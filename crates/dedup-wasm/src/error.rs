//! Errors of the public API. Every variant names the offending field and the rule it broke, so a host
//! can show the message as is or map it to its own error type (the TS bridge maps it to RangeError /
//! TypeError).

use serde::Serialize;
use std::fmt;

/// What went wrong, with the field and the rule spelled out.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DedupError {
    /// A setting is out of its allowed range, not finite, or inconsistent with another setting.
    InvalidSetting {
        /// The setting's name as written in [`crate::DedupSettings`] (snake_case).
        field: &'static str,
        /// The rule it breaks, in words: "must be in (0, 1]".
        rule: &'static str,
        /// The rejected value, formatted.
        value: String,
    },
    /// An argument other than settings (a vector, a dimension, a handle) is malformed.
    InvalidArgument {
        field: &'static str,
        rule: &'static str,
        value: String,
    },
}

impl DedupError {
    // Errors are built on cold paths from dozens of places: the constructors stay out of line,
    // and format the value behind `&dyn Display`, so each value type adds only a small shim.
    #[cold]
    #[inline(never)]
    pub(crate) fn setting(field: &'static str, rule: &'static str, value: impl fmt::Display) -> Self {
        DedupError::InvalidSetting { field, rule, value: display(&value) }
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn argument(field: &'static str, rule: &'static str, value: impl fmt::Display) -> Self {
        DedupError::InvalidArgument { field, rule, value: display(&value) }
    }

    /// The name of the field at fault.
    pub fn field(&self) -> &'static str {
        match self {
            DedupError::InvalidSetting { field, .. } | DedupError::InvalidArgument { field, .. } => field,
        }
    }
}

#[cold]
#[inline(never)]
fn display(value: &dyn fmt::Display) -> String {
    value.to_string()
}

impl fmt::Display for DedupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DedupError::InvalidSetting { field, rule, value } => {
                write!(f, "invalid setting `{}`: {} (got {})", field, rule, value)
            }
            DedupError::InvalidArgument { field, rule, value } => {
                write!(f, "invalid argument `{}`: {} (got {})", field, rule, value)
            }
        }
    }
}

impl std::error::Error for DedupError {}
