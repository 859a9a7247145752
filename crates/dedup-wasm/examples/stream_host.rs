//! A Rust host linking the `dedup_wasm` rlib: it relays a model's streamed output to its reader
//! chunk by chunk, watches it with `StreamingState`, reports a steer once per episode and stops
//! reading at a loop (in a real host: drop the HTTP response so no more tokens are paid for).
//!
//! ```text
//! cargo run --example stream_host                  # two built-in streams: prose, then a loop
//! cargo run --example stream_host -- FILE [CHUNK]  # replays FILE in CHUNK-char chunks (default 16)
//! cargo run --example stream_host -- - [CHUNK]     # the same for stdin
//! ```

use dedup_wasm::{DedupError, DedupSettings, LoopEvidence, StreamAction, StreamingState};
use std::io::{Read, Write};

/// How a relayed stream ended.
#[derive(Debug)]
pub struct Outcome {
    /// `Abort` when the stream was cut, otherwise the last action (`None` or `Steer`).
    pub action: StreamAction,
    /// The finding behind the abort (or the last steer).
    pub evidence: Option<LoopEvidence>,
    /// Chunks read from the source (none are read after an abort).
    pub chunks_read: usize,
    /// Steer episodes (a run of steer verdicts counts once).
    pub steer_episodes: usize,
}

/// Relays `source` to `sink` through a monitor. Every chunk read is delivered unchanged; after an
/// abort, nothing more is read from `source`.
pub fn relay<'a, I, F>(source: I, settings: DedupSettings, mut sink: F) -> Result<Outcome, DedupError>
where
    I: IntoIterator<Item = &'a str>,
    F: FnMut(&str),
{
    let mut monitor = StreamingState::new(settings)?;
    let mut out = Outcome { action: StreamAction::None, evidence: None, chunks_read: 0, steer_episodes: 0 };
    let mut steering = false;
    for chunk in source {
        out.chunks_read += 1;
        let check = monitor.feed_chunk(chunk);
        sink(chunk);
        out.action = monitor.determine_action(&check);
        match out.action {
            StreamAction::Abort => {
                out.evidence = check.evidence;
                break;
            }
            StreamAction::Steer => {
                if !steering {
                    out.steer_episodes += 1;
                    out.evidence = check.evidence;
                }
                steering = true;
            }
            StreamAction::None => steering = false,
        }
    }
    Ok(out)
}

/// Splits `text` into chunks of `size` chars (never inside a char).
pub fn chunks_of(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (n, (i, _)) in text.char_indices().enumerate() {
        if n > 0 && n % size.max(1) == 0 {
            out.push(&text[start..i]);
            start = i;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

fn report(name: &str, text: &str, chunk: usize) -> Result<(), DedupError> {
    let chunks = chunks_of(text, chunk);
    let mut delivered = 0usize;
    let outcome = relay(chunks.iter().copied(), DedupSettings::default(), |c| delivered += c.chars().count())?;
    let verdict = match outcome.action {
        StreamAction::Abort => "ABORT",
        StreamAction::Steer => "steer",
        StreamAction::None => "clean",
    };
    println!("{}: {} after {}/{} chunks ({} chars delivered), {} steer episode(s)", name, verdict, outcome.chunks_read, chunks.len(), delivered, outcome.steer_episodes);
    if let Some(e) = &outcome.evidence {
        println!("  {}: {} | sample {:?}", e.rule, e.detail, e.sample);
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let chunk = args.get(1).and_then(|c| c.parse().ok()).unwrap_or(16);
    let result = match args.first().map(String::as_str) {
        None => {
            let prose = "Rust compiles to WebAssembly through the wasm32 target. The TypeScript package wraps the raw exports with typed functions. Streaming detection keeps a bounded window, so memory stays flat on endless streams. Each chunk costs time proportional to its length.";
            let looping = "I should retry the request because it failed. ".repeat(40);
            report("prose", prose, chunk).and_then(|_| report("loop", &looping, chunk))
        }
        Some(path) => {
            let mut text = String::new();
            let read = if path == "-" { std::io::stdin().read_to_string(&mut text).map(|_| ()) } else { std::fs::read_to_string(path).map(|t| text = t) };
            if let Err(e) = read {
                eprintln!("stream_host: cannot read {}: {}", path, e);
                std::process::exit(2);
            }
            report(path, &text, chunk)
        }
    };
    std::io::stdout().flush().ok();
    if let Err(e) = result {
        eprintln!("stream_host: {}", e);
        std::process::exit(1);
    }
}
