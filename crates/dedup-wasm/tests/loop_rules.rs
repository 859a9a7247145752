//! The loop rules on texts written for them: every rule fires on the shape it is for, and none fires
//! on the legitimately repetitive shapes that fooled earlier detectors (templated functions, tables
//! whose rows differ in numbers, counting-down verses, checklists with distinct labels).

use dedup_wasm::{check_repetition, DedupSettings, LoopConfig, LoopEvidence, SectionSource, StreamAction, StreamingState};

/// Streams `text` in `chunk`-char pieces; returns the first abort's evidence and whether it steered.
fn stream(text: &str, chunk: usize) -> (Option<LoopEvidence>, bool) {
    stream_with(text, chunk, DedupSettings::default())
}

fn stream_with(text: &str, chunk: usize, settings: DedupSettings) -> (Option<LoopEvidence>, bool) {
    let mut m = StreamingState::new(settings).unwrap();
    let chars: Vec<char> = text.chars().collect();
    let mut steered = false;
    for piece in chars.chunks(chunk) {
        let check = m.feed_chunk(&piece.iter().collect::<String>());
        match check.action {
            StreamAction::Abort => return (check.evidence, steered),
            StreamAction::Steer => steered = true,
            StreamAction::None => {}
        }
    }
    (None, steered)
}

/// Asserts that `text` aborts at every chunk size, with the same rule; returns the evidence.
fn aborts(text: &str) -> LoopEvidence {
    let found: Vec<LoopEvidence> = [4, 17, 64]
        .iter()
        .map(|&chunk| stream(text, chunk).0.unwrap_or_else(|| panic!("no abort at chunk {} for {:?}", chunk, text.chars().take(80).collect::<String>())))
        .collect();
    assert!(found.iter().all(|e| e.rule == found[0].rule && e.start == found[0].start), "{:?}", found);
    found[0].clone()
}

/// Text that never repeats itself: every sentence has its own words.
fn varied(chars: usize) -> String {
    let words = ["amber", "basalt", "cobalt", "dune", "ember", "fjord", "garnet", "heath", "indigo", "jasper", "kelp", "lichen", "moraine", "nectar", "onyx", "pumice"];
    let mut out = String::new();
    let mut i = 0usize;
    while out.chars().count() < chars {
        out.push_str(&format!("{} {} {} near marker {}. ", words[i % 16], words[(i * 7 + 3) % 16], words[(i * 11 + 5) % 16], i * 31 + 7));
        i += 1;
    }
    out.chars().take(chars).collect()
}

fn never_aborts(text: &str) {
    for chunk in [4, 17, 64] {
        let (e, _) = stream(text, chunk);
        assert!(e.is_none(), "aborted at chunk {}: {:?}", chunk, e);
    }
}

const PROSE: &str = "The quarterly review covered hiring, the new billing system and the migration of the \
    search cluster. Hiring is ahead of plan in support but behind in infrastructure, where two offers were \
    declined. Billing shipped on time; invoices now carry tax lines per region, which finance had asked for \
    since spring. The search migration is the risk: the old cluster runs out of disk in six weeks, and the \
    new one still fails its load test at peak traffic. ";

// ---- loops -----------------------------------------------------------------------------------

#[test]
fn a_three_char_unit_repeated_hundreds_of_times_is_a_tight_period_loop() {
    let e = aborts(&format!("{}{}", PROSE, "你呢？".repeat(300)));
    assert_eq!(e.rule, "tight-period-loop");
    assert!(e.sample.contains("你呢"), "{:?}", e.sample);
}

#[test]
fn a_single_char_run_is_a_loop() {
    assert_eq!(aborts(&format!("The answer is 1{}", "0".repeat(400))).rule, "tight-period-loop");
}

#[test]
fn a_long_paragraph_repeated_three_times_verbatim_is_a_loop() {
    // A ~1,500-char unit: the intro paragraph three times over, each time with a varied sentence first.
    let unit = format!("{}{}{}{}", PROSE, PROSE.replace("quarterly", "monthly"), PROSE.replace("billing", "payroll"), PROSE.replace("search", "storage"));
    assert!(unit.len() > 1500);
    let e = aborts(&format!("Summary follows.\n{}{}{}", unit, unit, unit));
    assert!(e.rule == "unit-loop" || e.rule == "paragraph-loop", "{:?}", e);
}

#[test]
fn a_unit_repeated_exactly_three_times_is_enough() {
    let unit = "I will now check the configuration file for the missing key and report back. ";
    let e = aborts(&format!("{}{}", PROSE, unit.repeat(3)));
    assert_eq!(e.rule, "unit-loop");
}

#[test]
fn a_unit_whose_word_varies_among_a_few_choices_is_still_a_loop() {
    let verbs = ["check", "verify", "inspect"];
    let text: String = (0..40).map(|i| format!("The server is down, let me {} the logs again. ", verbs[i % 3])).collect();
    let e = aborts(&format!("{}{}", PROSE, text));
    assert!(e.rule.ends_with("-loop"), "{:?}", e);
}

#[test]
fn a_code_line_loop_is_a_loop() {
    let text = format!("def run(self, data):\n    data = self.prepare(data)\n{}", "    return self.process(data)\n".repeat(40));
    aborts(&text);
}

#[test]
fn a_cjk_sentence_loop_is_a_loop() {
    let text = format!("好的，我来看一下这个问题。{}", "我需要再检查一遍配置文件。".repeat(20));
    aborts(&text);
}

#[test]
fn a_checklist_line_repeated_verbatim_is_a_loop() {
    // The original detector's blind spot, read the other way: with nothing distinguishing the items,
    // "该项检查通过。" twenty times is a loop.
    aborts(&format!("检查结果如下：{}", "该项检查通过。".repeat(20)));
}

#[test]
fn symbols_only_loops_are_caught_but_separator_lines_are_not() {
    aborts(&format!("Here is the table:\n{}", "|  |\n---|---\n\n".repeat(40)));
    never_aborts(&format!("Settings\n{}\nName | Value\n", "-".repeat(300)));
}

#[test]
fn a_prose_answer_that_restarts_from_its_beginning_is_a_paragraph_loop() {
    let answer = format!("{}{}", PROSE, PROSE.replace("quarterly", "annual"));
    let restarted = &answer[..420];
    let e = aborts(&format!("{}{}", answer, restarted));
    assert_eq!(e.rule, "paragraph-loop");
}

#[test]
fn hard_caps_abort_per_channel() {
    let mut settings = DedupSettings::default();
    settings.loop_rules = LoopConfig { max_chars: 1000, max_reasoning_chars: 500, ..LoopConfig::default() };
    let (e, _) = stream_with(&varied(1200), 17, settings.clone());
    assert_eq!(e.map(|e| e.rule), Some("max-chars".to_string()));
    let (e, _) = stream_with(&varied(999), 17, settings.clone());
    assert!(e.is_none());
    let mut m = StreamingState::new(settings).unwrap();
    let mut last = None;
    for c in varied(600).chars().collect::<Vec<_>>().chunks(50) {
        last = Some(m.feed_reasoning_chunk(&c.iter().collect::<String>()));
    }
    let ev = last.unwrap().evidence.unwrap();
    assert_eq!(ev.rule, "max-reasoning-chars");
}

#[test]
fn the_verdict_latches_and_names_where_the_loop_began() {
    let prefix = "Sure. Here is what I found in the logs after the restart. ";
    let text = format!("{}{}", prefix, "Retrying the upload now. ".repeat(30));
    let mut m = StreamingState::new(DedupSettings::default()).unwrap();
    let first = m.feed_chunk(&text);
    assert_eq!(first.action, StreamAction::Abort);
    let e = first.evidence.clone().unwrap();
    assert!(e.start as usize >= prefix.len() - 2 && (e.start as usize) < prefix.len() + 30, "start {}", e.start);
    let later = m.feed_chunk(" And now something entirely different, with new words and ideas.");
    assert_eq!(later.action, StreamAction::Abort);
    assert_eq!(later.evidence, first.evidence);
}

#[test]
fn batch_check_reports_the_loop_as_a_period_section() {
    let text = format!("{}{}", PROSE, "Let me try that again. ".repeat(12));
    let r = check_repetition(&text, &DedupSettings::default()).unwrap();
    let period: Vec<_> = r.sections.iter().filter(|s| s.source == SectionSource::Period).collect();
    assert_eq!(period.len(), 1);
    assert!(text[period[0].original_start..period[0].original_end].contains("try that again"));
    assert!(period[0].repeat_start >= period[0].original_end);
}

// ---- legitimately repetitive output ------------------------------------------------------------

#[test]
fn forty_functions_identical_but_for_their_names_are_not_a_loop() {
    let names = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"];
    let text: String = (0..40)
        .map(|i| format!("pub fn handle_{}_{}(req: &Request) -> Response {{\n    let body = parse(req)?;\n    validate(&body)?;\n    respond(body)\n}}\n\n", names[i % 10], i / 10))
        .collect();
    never_aborts(&text);
}

#[test]
fn a_table_whose_rows_differ_only_in_numbers_is_not_a_loop() {
    let mut text = String::from("| id | requests | p50 ms | p99 ms |\n|----|----------|--------|--------|\n");
    for i in 0..80 {
        text.push_str(&format!("| {} | {} | {} | {} |\n", i, 1000 + i * 37, 12 + i % 7, 80 + (i * 13) % 41));
    }
    never_aborts(&text);
}

#[test]
fn counting_down_verses_are_not_a_loop_but_a_counter_steers() {
    let verses: String = (1..=99)
        .rev()
        .map(|n| format!("{} bottles of beer on the wall, {} bottles of beer.\nTake one down and pass it around, {} bottles of beer on the wall.\n\n", n, n, n - 1))
        .collect();
    never_aborts(&verses);
    let counter: String = (1..=60).map(|n| format!("Attempt {}: the request timed out, retrying. ", n)).collect();
    let (abort, steered) = stream(&format!("{}{}", PROSE, counter), 17);
    assert!(abort.is_none(), "{:?}", abort);
    assert!(steered, "a counter loop says nothing new but numbers: it should steer");
}

#[test]
fn a_checklist_with_distinct_labels_is_not_a_loop() {
    let labels = ["数据库", "网络", "磁盘", "内存", "证书", "备份", "日志", "缓存", "队列", "权限"];
    let zh: String = labels.iter().enumerate().map(|(i, l)| format!("{}. {}检查：该项检查通过。\n", i + 1, l)).collect();
    never_aborts(&format!("{}{}", zh, zh.replace("检查：", "复查：")));
    let en: String = ["disk", "network", "memory", "certificates", "backups", "logs", "cache", "queue", "permissions", "dns", "ntp", "firewall"]
        .iter()
        .map(|l| format!("- [x] {}: check passed.\n", l))
        .collect();
    never_aborts(&en);
}

#[test]
fn a_refrain_is_not_a_loop() {
    let stanzas = ["Once upon a midnight dreary, while I pondered, weak and weary,", "Ah, distinctly I remember it was in the bleak December;", "And the silken, sad, uncertain rustling of each purple curtain", "Open here I flung the shutter, when, with many a flirt and flutter,"];
    let text: String = stanzas.iter().map(|s| format!("{}\nQuoth the Raven, \"Nevermore.\"\n\n", s)).collect();
    never_aborts(&text);
}

#[test]
fn ordinary_prose_gives_no_action_at_all() {
    let (abort, steered) = stream(PROSE, 17);
    assert!(abort.is_none() && !steered);
}

#[test]
fn reworded_paragraphs_never_abort() {
    let a = "The deployment failed because the database migration timed out after ten minutes. ";
    let b = "Deployment did not succeed since the DB migration hit its ten minute timeout. ";
    let c = "The rollout broke: migrating the database exceeded the ten-minute limit. ";
    never_aborts(&format!("{}{}{}{}{}{}", PROSE, a, b, c, a.replace("ten", "twelve"), b.replace("ten", "fifteen")));
}

// ---- the window rules -------------------------------------------------------------------------

/// A deterministic pseudo-random sequence (xorshift), so texts without an exact period can be built.
fn shuffled<'a>(items: &[&'a str], n: usize, seed: u64) -> Vec<&'a str> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            items[(x % items.len() as u64) as usize]
        })
        .collect()
}

#[test]
fn fragments_from_a_tiny_vocabulary_in_no_fixed_order_are_a_char_collapse_loop() {
    // "好的 / 好 / 好的执行" spinning at a decision point: no exact period, a handful of chars.
    let text: String = shuffled(&["好的。", "好。", "好的执行。", "执行。"], 400, 7).concat();
    let e = aborts(&format!("我们先确认一下需求。{}", text));
    assert_eq!(e.rule, "char-collapse-loop", "{:?}", e);
}

/// A square-free sequence over three symbols (no block ever follows itself): the differences of the
/// Thue–Morse sequence, shifted to {0, 1, 2}.
fn square_free(n: usize) -> Vec<usize> {
    let t = |i: usize| (i.count_ones() % 2) as i64;
    (0..n).map(|i| (t(i + 1) - t(i) + 1) as usize).collect()
}

#[test]
fn sentences_recycled_without_a_period_steer_but_never_abort() {
    // The same three sentences over and over, but never a block followed by itself: there is no
    // unit repeating back to back, only recycling; that steers, it is not a confirmed loop.
    let sentences = [
        "I should run the migration first. ",
        "Maybe the tests should come before that. ",
        "Actually the config needs to be checked. ",
    ];
    let text: String = square_free(120).into_iter().map(|i| sentences[i]).collect();
    for chunk in [4, 17, 64] {
        let (abort, steered) = stream(&format!("{}{}", PROSE, text), chunk);
        assert!(abort.is_none(), "{:?}", abort);
        assert!(steered);
    }
}

#[test]
fn is_char_collapsed_judges_a_text_on_its_own() {
    let cfg = LoopConfig::default();
    assert!(dedup_wasm::is_char_collapsed(&shuffled(&["好的。", "好。", "执行。"], 300, 3).concat(), &cfg));
    assert!(!dedup_wasm::is_char_collapsed(PROSE, &cfg));
    assert!(!dedup_wasm::is_char_collapsed("", &cfg));
}
