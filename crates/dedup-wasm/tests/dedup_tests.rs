//! Integration tests over the public API: batch and streaming scenarios, bounded memory on a long
//! stream, and chunking invariance.

#[path = "support/prose.rs"]
mod prose;

use dedup_wasm::{check_repetition, resolve_dedup_preset, DedupPresetName, DedupSettings, RepeatedSection, SectionSource, StreamAction, StreamCheck, StreamingState, MAX_STREAM_SECTIONS};
use proptest::prelude::*;

const PARAGRAPH: &str = "The migration script reads every row from the legacy table, converts the timestamps to UTC and writes them to the new schema. It then verifies the row counts and logs any mismatch for a manual review. ";

/// Feeds `text` in chunks of `n` chars; returns every check.
fn stream_checks(text: &str, n: usize, settings: DedupSettings) -> Vec<StreamCheck> {
    let mut m = StreamingState::new(settings).unwrap();
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(n.max(1)).map(|c| m.feed_chunk(&c.iter().collect::<String>())).collect()
}

fn actions(checks: &[StreamCheck]) -> Vec<StreamAction> {
    checks.iter().map(|c| c.action).collect()
}

/// The same sentences with their words rearranged: equal token sets, few shared 16-char grams.
fn reworded_paragraphs(count: usize) -> String {
    let sentences: [&[&str]; 3] = [
        &["the", "migration", "script", "reads", "every", "row", "from", "the", "legacy", "table"],
        &["it", "converts", "each", "timestamp", "to", "utc", "before", "writing", "the", "new", "schema"],
        &["any", "mismatch", "in", "the", "row", "counts", "gets", "logged", "for", "manual", "review"],
    ];
    let mut r = prose::Rng::new(42);
    let mut out = String::new();
    for _ in 0..count {
        for s in sentences.iter() {
            let mut words: Vec<&str> = s.to_vec();
            for i in (1..words.len()).rev() {
                words.swap(i, r.below(i + 1));
            }
            let mut sentence = words.join(" ");
            sentence[..1].make_ascii_uppercase();
            out.push_str(&sentence);
            out.push_str(". ");
        }
        out.push_str("\n\n");
    }
    out
}

// ---- scenarios ------------------------------------------------------------------------------

#[test]
fn a_paragraph_looped_five_times_aborts_in_any_chunking() {
    let text = PARAGRAPH.repeat(5);
    for n in [1, 7, 64, 1000] {
        let checks = stream_checks(&text, n, DedupSettings::default());
        let a = actions(&checks);
        let first_abort = a.iter().position(|&x| x == StreamAction::Abort).unwrap_or_else(|| panic!("no abort with chunks of {}", n));
        // Aborts before the fourth copy is over, and stays aborted.
        assert!(first_abort * n < 4 * PARAGRAPH.len(), "abort too late with chunks of {}", n);
        assert!(a[first_abort..].iter().all(|&x| x == StreamAction::Abort));
        let e = checks.last().unwrap().evidence.clone().unwrap();
        assert!(e.rule.ends_with("-loop"), "{}", e.rule);
    }
    let r = check_repetition(&text, &DedupSettings::default()).unwrap();
    assert!(r.repeated && r.ratio >= 0.79);
    assert!(r.sections.iter().any(|s| s.source == SectionSource::Period));
    let ngram = r.sections.iter().find(|s| s.source == SectionSource::Ngram).unwrap();
    assert_eq!((ngram.original_start, ngram.repeat_start, ngram.repeat_end), (0, PARAGRAPH.len(), text.len()));
}

#[test]
fn reworded_paragraphs_steer_but_never_abort() {
    let text = reworded_paragraphs(12);
    for n in [3, 16, 64, 5000] {
        let a = actions(&stream_checks(&text, n, DedupSettings::default()));
        assert!(!a.contains(&StreamAction::Abort), "aborted with chunks of {}", n);
        assert!(a.contains(&StreamAction::Steer), "never steered with chunks of {}", n);
    }
    let r = check_repetition(&text, &DedupSettings::default()).unwrap();
    assert!(r.sections.iter().any(|s| s.source == SectionSource::Sentence));
    assert!(r.sections.iter().all(|s| s.source != SectionSource::Period));
}

#[test]
fn normal_prose_stays_none() {
    for seed in 1..=4 {
        let text = prose::prose(seed, 20_000);
        for n in [5, 64] {
            let a = actions(&stream_checks(&text, n, DedupSettings::default()));
            assert!(a.iter().all(|&x| x == StreamAction::None), "seed {} chunks {}: {:?}", seed, n, a.iter().find(|&&x| x != StreamAction::None));
        }
        let r = check_repetition(&text, &DedupSettings::default()).unwrap();
        assert!(r.ratio < 0.02, "seed {} ratio {}", seed, r.ratio);
    }
}

#[test]
fn a_loop_after_prose_aborts_and_points_at_the_loop() {
    let head = prose::prose(21, 3000);
    let unit = "Let me re-read the log file to find the error. ";
    let text = format!("{}{}", head, unit.repeat(10));
    let checks = stream_checks(&text, 13, DedupSettings::default());
    let last = checks.last().unwrap();
    assert_eq!(last.action, StreamAction::Abort);
    let e = last.evidence.as_ref().unwrap();
    assert!(e.start as usize >= head.len() - 4, "loop starts at {} (prose ends at {})", e.start, head.len());
    assert!(e.sample.contains("re-read the log"));
}

#[test]
fn presets_differ_as_their_table_says() {
    // A 40-char repeat: below default and relaxed min_repeat_length, above sensitive's 30.
    let unit = "zebra quantum lattice forty-two marmot!";
    let text = format!("{} {} and then {}", prose::prose(3, 500), unit, unit);
    let found = |p: DedupPresetName| check_repetition(&text, &resolve_dedup_preset(p)).unwrap().sections.iter().any(|s| s.source == SectionSource::Ngram);
    assert!(found(DedupPresetName::Sensitive));
    assert!(!found(DedupPresetName::Default));
    assert!(!found(DedupPresetName::Relaxed));
}

#[test]
fn invalid_settings_are_errors_naming_the_field() {
    let mut s = DedupSettings::default();
    s.ngram_threshold = f64::NAN;
    assert_eq!(check_repetition("x", &s).unwrap_err().field(), "ngram_threshold");
    let mut s = DedupSettings::default();
    s.max_window_chars = 100;
    assert_eq!(StreamingState::new(s).err().unwrap().field(), "max_window_chars");
}

// ---- bounded memory ----------------------------------------------------------------------------

#[test]
fn a_five_megabyte_stream_keeps_only_its_window() {
    let mut settings = DedupSettings::default();
    settings.loop_rules.max_chars = 0; // no hard cap: the stream must run on
    let window = settings.max_window_chars;
    let mut m = StreamingState::new(settings).unwrap();
    let marker = "A unique opening paragraph about obsidian lanterns and the cartographers of Vell. ";
    m.feed_chunk(marker);
    let mut fed = marker.len();
    let mut seed = 100;
    while fed < 5 * 1024 * 1024 {
        // Fresh prose each time: a long stream that never loops, so every pass keeps working.
        let body = prose::prose(seed, 64 * 1024);
        seed += 1;
        for chunk in body.as_bytes().chunks(4096) {
            m.feed_chunk(std::str::from_utf8(chunk).unwrap());
        }
        fed += body.len();
    }
    // The opening was forgotten: repeating it now finds nothing that points back at it.
    let check = m.feed_chunk(marker);
    assert_eq!(check.bytes_seen as usize, fed + marker.len());
    assert_ne!(check.action, StreamAction::Abort, "{:?}", check.evidence);
    let sections = m.sections();
    assert!(sections.len() <= MAX_STREAM_SECTIONS);
    // Nothing points back at the forgotten opening (sections are the most recent findings, which may
    // be older than the window, but none can have the opening as its original).
    assert!(sections.iter().all(|s| s.original_start >= marker.len()), "{:?}", sections.first());
    assert!(fed > 20 * window, "the stream outgrew its window many times over");
    let head = check_repetition(&format!("{}{}", marker, marker), &DedupSettings::default()).unwrap();
    assert!(head.repeated, "the marker repeat is found when it is not forgotten");
}

// ---- chunking invariance -----------------------------------------------------------------------

/// Text built from pieces that make loops, near repeats, unicode and noise likely.
fn arb_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("I will check the file again. ".to_string()),
        Just("该项检查通过。".to_string()),
        Just("😀🚀 ".to_string()),
        Just("Step ".to_string()),
        Just("\n\n".to_string()),
        "[a-z ]{1,12}",
        "\\PC{1,6}",
        (0u64..1000).prop_map(|n| format!("{} ", n)),
        (1usize..4000).prop_map(|k| prose::prose(k as u64, 200)),
    ];
    prop::collection::vec(piece, 0..60).prop_map(|v| v.concat())
}

/// The last check and the sections after feeding `text` cut at `cuts`.
fn final_check(text: &str, cuts: &[usize], settings: &DedupSettings) -> Option<(StreamCheck, Vec<RepeatedSection>)> {
    let chars: Vec<char> = text.chars().collect();
    let mut bounds: Vec<usize> = cuts.iter().map(|c| c % (chars.len() + 1)).collect();
    bounds.push(0);
    bounds.push(chars.len());
    bounds.sort_unstable();
    bounds.dedup();
    let mut m = StreamingState::new(settings.clone()).unwrap();
    let mut last = None;
    for w in bounds.windows(2) {
        last = Some(m.feed_chunk(&chars[w[0]..w[1]].iter().collect::<String>()));
    }
    last.map(|c| (c, m.sections()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn any_chunking_gives_the_same_final_state(text in arb_text(), cuts in prop::collection::vec(0usize..100_000, 0..40), sensitive in any::<bool>()) {
        let settings = if sensitive { resolve_dedup_preset(DedupPresetName::Sensitive) } else { DedupSettings::default() };
        let whole = final_check(&text, &[], &settings);
        let chunked = final_check(&text, &cuts, &settings);
        match (whole, chunked) {
            (Some((w, ws)), Some((c, cs))) => {
                prop_assert_eq!(&ws, &cs);
                prop_assert_eq!(w.sections_version, c.sections_version);
                prop_assert_eq!(w.ratio, c.ratio);
                prop_assert_eq!(w.action, c.action);
                prop_assert_eq!(&w.evidence, &c.evidence);
                prop_assert_eq!(w.bytes_seen as usize, text.len());
            }
            (None, None) => prop_assert!(text.is_empty()),
            _ => prop_assert!(false, "one feed produced no check"),
        }
    }

    #[test]
    fn batch_sections_lie_inside_the_text_on_char_boundaries(text in arb_text()) {
        let r = check_repetition(&text, &resolve_dedup_preset(DedupPresetName::Sensitive)).unwrap();
        prop_assert_eq!(r.repeated, !r.sections.is_empty());
        prop_assert!(r.ratio >= 0.0 && r.ratio <= 1.0);
        for s in &r.sections {
            prop_assert!(s.original_start < s.original_end && s.original_end <= text.len());
            prop_assert!(s.repeat_start < s.repeat_end && s.repeat_end <= text.len());
            for b in [s.original_start, s.original_end, s.repeat_start, s.repeat_end] {
                prop_assert!(text.is_char_boundary(b));
            }
            prop_assert!(s.similarity > 0.0 && s.similarity <= 1.0);
        }
    }
}

#[test]
fn far_apart_matches_on_unrelated_alignments_are_not_chained() {
    // Two phrases close together in the repeat, far apart in the original: two sections, never one
    // chain whose "original" spans thousands of chars.
    let a = "alpha bravo charlie delta echo foxtrot!";
    let b = "golf hotel india juliet kilo lima mike?";
    let noise = |seed: u64, n: usize| -> String {
        let mut x = seed;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if i % 6 == 5 { ' ' } else { (b'a' + (x % 26) as u8) as char }
            })
            .collect()
    };
    let text = format!("{} {} {}{} {} {}", a, noise(1, 3000), b, noise(2, 60000), a, b);
    let mut settings = DedupSettings::default();
    settings.min_repeat_length = 30;
    let r = check_repetition(&text, &settings).unwrap();
    for s in r.sections.iter().filter(|s| s.source == SectionSource::Ngram) {
        let (orig, rep) = (s.original_end - s.original_start, s.repeat_end - s.repeat_start);
        assert!(orig <= rep + 64, "original {} bytes for a repeat of {}: {:?}", orig, rep, s);
    }
}
