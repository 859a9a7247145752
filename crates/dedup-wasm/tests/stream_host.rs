//! The Rust-host recipe of INTEGRATION.md: the `stream_host` example's relay, run on a clean and a
//! looping stream.

#[path = "../examples/stream_host.rs"]
#[allow(dead_code)]
mod stream_host;

use dedup_wasm::{DedupSettings, StreamAction};
use stream_host::{chunks_of, relay};

const PROSE: &str = "Rust compiles to WebAssembly through the wasm32 target, and the module has no imports. \
The TypeScript package wraps the raw exports with typed functions and maps errors to exceptions. \
Streaming detection keeps a bounded window, so memory stays flat on endless streams. \
Each chunk costs time proportional to its length, which keeps latency predictable.";

#[test]
fn clean_stream_is_relayed_whole() {
    let chunks = chunks_of(PROSE, 16);
    let mut out = String::new();
    let o = relay(chunks.iter().copied(), DedupSettings::default(), |c| out.push_str(c)).unwrap();
    assert_eq!(out, PROSE);
    assert_eq!(o.action, StreamAction::None);
    assert_eq!(o.chunks_read, chunks.len());
}

#[test]
fn looping_stream_is_cut_with_evidence() {
    let text = "I should retry the request because it failed. ".repeat(40);
    let chunks = chunks_of(&text, 16);
    let mut out = String::new();
    let o = relay(chunks.iter().copied(), DedupSettings::default(), |c| out.push_str(c)).unwrap();
    assert_eq!(o.action, StreamAction::Abort);
    assert!(o.chunks_read < chunks.len(), "read {} of {}", o.chunks_read, chunks.len());
    assert!(text.starts_with(&out) && out.len() < text.len());
    let e = o.evidence.expect("an abort carries evidence");
    assert!(!e.rule.is_empty());
}

#[test]
fn chunking_respects_chars() {
    let s = "héllo wörld — 日本語 🎉 done";
    let chunks = chunks_of(s, 3);
    assert_eq!(chunks.concat(), s);
    assert!(chunks.iter().all(|c| c.chars().count() <= 3));
}

#[test]
fn bad_settings_are_an_error_not_a_panic() {
    let mut s = DedupSettings::default();
    s.ngram_threshold = f64::NAN;
    assert!(relay(["x"].iter().copied(), s, |_| {}).is_err());
}
