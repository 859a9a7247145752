//! Native benchmark of the core (the wasm numbers come from `bench/core.bench.ts`): batch checks of
//! 10 KB, 100 KB and 1 MB (and of 10 KB, a different text each time), streaming throughput in 4- and
//! 64-char chunks, and the per-chunk cost early and late in a stream. Medians of several runs. Text:
//! the corpus (`../shared/corpus` or `DEDUP_CORPUS`) mixed with synthetic prose; synthetic prose alone
//! when the corpus is absent.
//!
//! `bash scripts/cargo.sh run --release --example bench_core`

#[path = "../tests/support/prose.rs"]
mod prose;

use dedup_wasm::{check_repetition, DedupSettings, StreamingState};
use std::path::PathBuf;
use std::time::Instant;

fn corpus_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("DEDUP_CORPUS").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
    if dir.is_dir() {
        Some(dir)
    } else {
        None
    }
}

/// Realistic mixed text of about `bytes`: corpus files (normal and loops) interleaved with prose. A
/// shorter text is a prefix of a longer one (see [`prefix`]).
fn mixed_text(bytes: usize) -> String {
    let mut files: Vec<String> = Vec::new();
    if let Some(dir) = corpus_dir() {
        for sub in ["normal", "loops"] {
            let mut paths: Vec<PathBuf> = std::fs::read_dir(dir.join(sub)).map(|r| r.flatten().map(|e| e.path()).collect()).unwrap_or_default();
            paths.sort();
            files.extend(paths.iter().filter_map(|p| std::fs::read_to_string(p).ok()));
        }
    }
    let mut out = String::with_capacity(bytes + 65536);
    let mut i = 0u64;
    while out.len() < bytes {
        out.push_str(&prose::prose(i + 1, 4096));
        if !files.is_empty() {
            out.push_str(&files[i as usize % files.len()]);
            out.push_str("\n\n");
        }
        i += 1;
    }
    let end = prefix(&out, bytes).len();
    out.truncate(end);
    out
}

/// The longest prefix of `text` of at most `bytes` bytes that ends on a char boundary.
fn prefix(text: &str, bytes: usize) -> &str {
    let mut end = bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn time<F: FnMut()>(runs: usize, mut f: F) -> f64 {
    f(); // warm-up
    median((0..runs).map(|_| {
        let t = Instant::now();
        f();
        t.elapsed().as_secs_f64() * 1e3
    }).collect())
}

fn chunks(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(n).map(|c| c.iter().collect()).collect()
}

fn row(name: &str, value: f64, unit: &str, target: &str) {
    println!("{:<44} | {:>12.3} | {:<8} | {}", name, value, unit, target);
}

fn main() {
    let settings = DedupSettings::default();
    // Streams run without the hard cap, so the whole megabyte goes through every pass.
    let mut uncapped = settings.clone();
    uncapped.loop_rules.max_chars = 0;
    println!("{:<44} | {:>12} | {:<8} | target", "native (release)", "value", "unit");
    println!("{}", "-".repeat(90));
    if corpus_dir().is_none() {
        println!("(corpus not found: synthetic prose only)");
    }
    let text = mixed_text(1_000_000);
    for (label, size, target) in [("10 KB", 10_000, "<= 0.5 ms"), ("100 KB", 100_000, ""), ("1 MB", 1_000_000, "<= 50 ms")] {
        let batch = prefix(&text, size);
        let runs = if size >= 1_000_000 { 5 } else { 21 };
        let ms = time(runs, || {
            check_repetition(batch, &settings).unwrap();
        });
        row(&format!("native batch check {}", label), ms, "ms", target);
    }
    // The rows above check one text again and again, and a CPU's branch predictor learns a text it
    // has seen; a host checks texts it has not. Here each check is of another 10 KB of the megabyte.
    let slices = chunks(&text, 10_000);
    let check_each = || -> Vec<f64> {
        slices.iter().map(|s| {
            let t = Instant::now();
            check_repetition(s, &settings).unwrap();
            t.elapsed().as_secs_f64() * 1e3
        }).collect()
    };
    check_each();
    row("native batch check 10 KB, a new text each", median(check_each()), "ms", "");
    let n_chars = text.chars().count() as f64;
    for (n, target) in [(64, ">= 20"), (4, ">= 5")] {
        let pieces = chunks(&text, n);
        let ms = time(3, || {
            let mut m = StreamingState::new(uncapped.clone()).unwrap();
            for p in &pieces {
                m.feed_chunk(p);
            }
        });
        row(&format!("native stream {}-char chunks", n), n_chars / (ms / 1e3) / 1e6, "M chars/s", target);
    }
    // Per-chunk cost early (10 KB in) and late (1 MB in), 64-char chunks, 2000 chunks each. Prose only:
    // a latched loop verdict (the corpus has loops) makes later chunks cheaper and the ratio meaningless.
    let pieces = chunks(&prose::prose(99, 1_000_000), 64);
    let per_chunk = |skip_chars: usize| -> f64 {
        median((0..5).map(|_| {
            let mut m = StreamingState::new(uncapped.clone()).unwrap();
            let skip = skip_chars / 64;
            for p in &pieces[..skip] {
                m.feed_chunk(p);
            }
            let probe: Vec<&String> = pieces.iter().cycle().skip(skip).take(2000).collect();
            let t = Instant::now();
            for p in probe {
                m.feed_chunk(p);
            }
            t.elapsed().as_secs_f64() * 1e6 / 2000.0
        }).collect())
    };
    let early = per_chunk(10_000);
    let late = per_chunk(pieces.len() * 64 - 64 * 2000);
    row("native per-chunk cost early (10 KB in)", early, "us", "");
    row("native per-chunk cost late (~1 MB in)", late, "us", "");
    row("native late / early", late / early, "x", "<= 2");
}
