//! Writes the shared fixtures `test/fixtures/*.json`: each case's input and settings, and the result
//! the native build gives for it (offsets in UTF-16 units, like the TypeScript API). `cargo test`
//! checks the native build against them and vitest checks the wasm build, so both must agree.
//!
//! Run after a deliberate change of detection output, then review the diff:
//! `bash scripts/cargo.sh run --example regen_fixtures`

#[path = "../tests/support/fixtures.rs"]
mod fixtures;
#[path = "../tests/support/prose.rs"]
mod prose;

use serde_json::{json, Value};
use std::fs;

struct Case {
    name: &'static str,
    kind: &'static str,
    input: Value,
    settings: Value,
}

fn batch(name: &'static str, text: String, settings: Value) -> Case {
    Case { name, kind: "batch", input: json!(text), settings }
}

/// Splits `text` into chunks of `n` chars (never inside a char, so never inside a surrogate pair).
fn chunks_of(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(n).map(|c| c.iter().collect()).collect()
}

fn stream(name: &'static str, chunks: Vec<String>, settings: Value) -> Case {
    Case { name, kind: "stream", input: json!(chunks), settings }
}

const PARAGRAPH: &str = "The migration script reads every row from the legacy table, converts the timestamps to UTC and writes them to the new schema. It then verifies the row counts and logs any mismatch for a manual review. ";

const REWORDED: [&str; 4] = [
    "The migration script reads every row from the legacy table and converts each timestamp to UTC. Then it writes the converted rows into the new schema and verifies the counts. Any mismatch gets logged for a manual review by the team.",
    "Every row from the legacy table is read by the migration script, and each timestamp is converted to UTC. The converted rows then go into the new schema, and it verifies the counts. For a manual review by the team, any mismatch gets logged.",
    "From the legacy table, the migration script reads every row and to UTC converts each timestamp. Into the new schema it then writes the converted rows and the counts verifies. Logged for a manual review by the team gets any mismatch.",
    "Each timestamp is converted to UTC after the migration script reads every row from the legacy table. It verifies the counts and then writes the converted rows into the new schema. By the team, any mismatch gets logged for a manual review.",
];

fn cases() -> Vec<Case> {
    let emoji_unit = "😀 Deploy 🚀 finished, 缓存 cleared, tests 通过 ✅ — checking again 👀. ";
    let cjk_unit = "我们需要再次检查配置文件，然后重新启动服务器。";
    let counters: String = (1..=12).map(|i| format!("Step {}: open the settings panel, select the network tab and press the retry button. ", i)).collect();
    let edited = format!(
        "{} {}",
        "The quarterly report shows revenue growth in every region except the north, where supply problems delayed shipments for weeks.",
        "The quarterly report shows revenue growth in every region except the south, where supply problems delayed shipments for weeks."
    );
    vec![
        batch("batch_empty", String::new(), Value::Null),
        batch("batch_short_unique", "Hello there, how are you today?".into(), Value::Null),
        batch("batch_prose_no_repeats", prose::prose(7, 3000), Value::Null),
        batch("batch_paragraph_x5", PARAGRAPH.repeat(5), Value::Null),
        batch("batch_reworded_paragraphs", REWORDED.join("\n\n"), Value::Null),
        batch("batch_emoji_loop", format!("Intro 🎉 line. {}", emoji_unit.repeat(6)), Value::Null),
        batch("batch_cjk_loop", format!("这是开头的一句话。{}", cjk_unit.repeat(8)), Value::Null),
        batch("batch_cjk_checklist_x20", "该项检查通过。".repeat(20), Value::Null),
        batch("batch_mixed_scripts_after_astral", format!("𝒳𝒴𝒵 Привет, мир! {}{}", prose::prose(3, 600), PARAGRAPH.repeat(2)), Value::Null),
        batch("batch_case_and_whitespace", format!("{}\n\n{}", PARAGRAPH.to_uppercase(), PARAGRAPH.replace(' ', "  \t")), Value::Null),
        batch("batch_near_exact_edit", edited.clone(), json!({ "minRepeatLength": 30 })),
        batch("batch_counter_steps", counters.clone(), Value::Null),
        batch("batch_nul_and_controls", format!("a\u{0}b\u{1}\u{7f}\r\n{}\u{0}", "zero\u{0}width\u{200b}joiner\u{200d} text. ".repeat(10)), Value::Null),
        batch("batch_sensitive_preset", edited, json!("sensitive")),
        batch("batch_relaxed_with_override", format!("{}{}", prose::prose(11, 800), PARAGRAPH.repeat(3)), json!({ "preset": "relaxed", "minRepeatLength": 60 })),
        batch("batch_error_threshold_range", "text".into(), json!({ "ngramThreshold": 1.5 })),
        batch("batch_error_unknown_field", "text".into(), json!({ "ngramTreshold": 0.9 })),
        batch("batch_error_zero_window", "text".into(), json!({ "windowSize": 0 })),
        batch("batch_error_loop_window", "text".into(), json!({ "loop": { "windowChars": 10 } })),
        stream("stream_loop_small_chunks", chunks_of(&format!("{}{}", prose::prose(5, 400), "I will check the configuration file again. ".repeat(12)), 7), Value::Null),
        stream("stream_paragraph_x5_64", chunks_of(&PARAGRAPH.repeat(5), 64), Value::Null),
        stream("stream_prose_none", chunks_of(&prose::prose(9, 4000), 64), Value::Null),
        stream("stream_reworded_steers", chunks_of(&[REWORDED.join("\n\n"), REWORDED.join("\n\n")].join("\n\n"), 16), Value::Null),
        stream("stream_emoji_cjk_loop", chunks_of(&format!("开始 🎬 {}{}", cjk_unit.repeat(3), emoji_unit.repeat(5)), 5), Value::Null),
        stream("stream_warmup", chunks_of(&"Let me retry that. ".repeat(30), 19), json!({ "warmupChunks": 10, "minRepeatLength": 20 })),
        stream("stream_max_chars_cap", chunks_of(&prose::prose(13, 1500), 50), json!({ "loop": { "maxChars": 1000 } })),
        stream("stream_counter_steps", chunks_of(&counters, 23), Value::Null),
    ]
}

fn main() {
    let dir = fixtures::fixtures_dir();
    fs::create_dir_all(&dir).expect("create test/fixtures");
    let cases = cases();
    for entry in fs::read_dir(&dir).expect("read test/fixtures").flatten() {
        let p = entry.path();
        let name = p.file_stem().and_then(|s| s.to_str()).unwrap_or("").to_string();
        if p.extension().map_or(false, |e| e == "json") && !cases.iter().any(|c| c.name == name) {
            fs::remove_file(&p).expect("remove a stale fixture");
            println!("removed {}", p.display());
        }
    }
    for c in &cases {
        let expected = fixtures::expected_of(c.kind, &c.input, &c.settings);
        let doc = json!({ "name": c.name, "kind": c.kind, "input": c.input, "settings": c.settings, "expected": expected });
        let mut text = serde_json::to_string_pretty(&doc).expect("serializable");
        text.push('\n');
        fs::write(dir.join(format!("{}.json", c.name)), text).expect("write a fixture");
    }
    println!("wrote {} fixtures to {}", cases.len(), dir.canonicalize().unwrap_or(dir).display());
}
