//! Streams every file of the given folders through `StreamingState` in fixed-size chunks and prints
//! the first steer and the first abort of each, with the evidence. A native twin of `pnpm eval`, for
//! quick iterations on the rules.
//!
//! `cargo run --release --example stream_corpus -- [--chunk N] DIR...`

use dedup_wasm::{DedupSettings, StreamAction, StreamingState};
use std::{env, fs};

fn main() {
    let mut chunk = 17usize;
    let mut dirs = Vec::new();
    let mut args = env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--chunk" {
            chunk = args.next().and_then(|v| v.parse().ok()).expect("--chunk needs a number");
        } else {
            dirs.push(a);
        }
    }
    for dir in dirs {
        let mut files: Vec<_> = fs::read_dir(&dir).expect("readable folder").filter_map(|e| e.ok()).map(|e| e.path()).collect();
        files.sort();
        let (mut aborted, mut steered) = (0, 0);
        for path in &files {
            let text = fs::read_to_string(path).expect("utf-8 file");
            let chars: Vec<char> = text.chars().collect();
            let mut m = StreamingState::new(DedupSettings::default()).unwrap();
            let (mut first_steer, mut first_abort) = (None, None);
            let mut fed = 0usize;
            for piece in chars.chunks(chunk) {
                let s: String = piece.iter().collect();
                fed += piece.len();
                let check = m.feed_chunk(&s);
                match m.determine_action(&check) {
                    StreamAction::Steer if first_steer.is_none() => first_steer = Some((fed, check.evidence.clone())),
                    StreamAction::Abort => {
                        first_abort = Some((fed, check.evidence.clone()));
                        break;
                    }
                    _ => {}
                }
            }
            let name = path.file_name().unwrap().to_string_lossy();
            let frac = |n: usize| n as f64 / chars.len() as f64;
            match &first_abort {
                Some((at, ev)) => {
                    aborted += 1;
                    let ev = ev.as_ref().unwrap();
                    println!("ABORT {:.2} {:<70} {} | {} | {:?}", frac(*at), name, ev.rule, ev.detail, ev.sample.chars().take(40).collect::<String>());
                }
                None => match &first_steer {
                    Some((at, ev)) => {
                        steered += 1;
                        let ev = ev.as_ref().unwrap();
                        println!("steer {:.2} {:<70} {} | {}", frac(*at), name, ev.rule, ev.detail);
                    }
                    None => println!("none       {}", name),
                },
            }
        }
        println!("== {}: {} files, {} aborted, {} steered (not aborted)", dir, files.len(), aborted, steered);
    }
}
