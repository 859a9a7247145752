//! # dedup-wasm
//!
//! Repetition detection for LLM applications, natively and in WebAssembly:
//!
//! - **output** — [`StreamingState`] watches a model's output as it streams and says when it has
//!   fallen into a loop ([`StreamAction::Abort`]) or is drifting toward one ([`StreamAction::Steer`]);
//!   [`check_repetition`] does the same for a finished text and lists every repeated section;
//! - **input** and **memory** — the similarity and vector primitives the TypeScript package builds its
//!   repeated-block removal and memory deduplication on.
//!
//! The detector's passes are near-linear: a batch check costs O(n), and a stream costs O(chunk)
//! amortized per chunk with memory bounded by [`DedupSettings::max_window_chars`]. Every result is
//! deterministic: the same text gives the same findings natively and in wasm.
//!
//! ```
//! use dedup_wasm::{DedupSettings, StreamingState, StreamAction};
//!
//! let mut monitor = StreamingState::new(DedupSettings::default()).unwrap();
//! let mut action = StreamAction::None;
//! for chunk in ["Let me think. ", "I should retry the request. "].iter().cycle().take(40) {
//!     let check = monitor.feed_chunk(chunk);
//!     action = monitor.determine_action(&check);
//!     if action == StreamAction::Abort {
//!         break;
//!     }
//! }
//! assert_eq!(action, StreamAction::Abort);
//! ```
#![forbid(unsafe_op_in_unsafe_fn)]

mod deduplicate;
mod error;
mod guard;
mod hash;
mod hnsw;
mod json_num;
mod key_filter;
mod lexical_embed;
mod lowercase;
mod memory_text;
mod ngram;
mod novelty;
mod order;
mod period;
mod presets;
mod recent;
mod sentence;
mod settings;
mod similarity;
mod split_sentences;
mod table;
mod text;
mod tokenize;
mod toolcalls;
mod window_stats;
mod vector;
mod vector_index;

/// The wasm ABI. Compiled natively too, so its protocol is tested by `cargo test`.
pub mod ffi;

pub use deduplicate::{check_repetition, RepeatedSection, RepetitionResult, SectionSource, StreamAction, StreamCheck, StreamingState, MAX_STREAM_SECTIONS};
pub use error::DedupError;
pub use ngram::GRAM;
pub use period::{is_char_collapsed, LoopConfig, LoopEvidence, Severity};
pub use presets::{resolve_dedup_preset, DedupPresetName};
pub use settings::DedupSettings;
pub use similarity::text_similarity;
pub use split_sentences::split_sentences;
pub use tokenize::{is_cjk, tokenize};
pub use toolcalls::{CycleCall, CycleKind, ToolCallConfig, ToolCallEvidence, ToolCallMonitor, ToolCallVerdict};
pub use guard::{covers, dedup_documents, deduplicate_text, split_range, split_text, DedupOutcome, Doc, GuardOptions, Keep, Removed, Seg, SplitMode, DEFAULT_NEAR_DUPLICATE};
pub use lexical_embed::{lexical_embed, MAX_LEXICAL_DIMS};
pub use memory_text::{memory_text_hash, normalize_memory_text};
pub use vector::cosine_similarity;
pub use vector_index::{IndexConfig, VectorIndex};
