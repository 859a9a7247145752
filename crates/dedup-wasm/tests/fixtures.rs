//! The shared fixtures (`test/fixtures/*.json`) against the native build. vitest runs the same files
//! against the wasm build; together they prove both builds give identical results.
//! Regenerate after a deliberate change: `bash scripts/cargo.sh run --example regen_fixtures`.

#[path = "support/fixtures.rs"]
mod fixtures;

use serde_json::Value;
use std::fs;

fn load_all() -> Vec<(String, Value)> {
    let dir = fixtures::fixtures_dir();
    let mut out: Vec<(String, Value)> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {}", dir.display(), e))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().map_or(false, |x| x == "json"))
        .map(|p| {
            let text = fs::read_to_string(&p).unwrap();
            let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {}", p.display(), e));
            (p.file_name().unwrap().to_string_lossy().into_owned(), v)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn there_are_batch_stream_and_error_fixtures_with_non_ascii_input() {
    let all = load_all();
    assert!(all.len() >= 20, "only {} fixtures", all.len());
    let kinds: Vec<&str> = all.iter().map(|(_, v)| v["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"batch") && kinds.contains(&"stream"));
    assert!(all.iter().any(|(_, v)| v["expected"].get("error").is_some()));
    // Offsets must be exercised by astral (surrogate-pair) and CJK input.
    assert!(all.iter().any(|(_, v)| v["input"].to_string().chars().any(|c| c as u32 > 0xffff)));
    assert!(all.iter().any(|(_, v)| v["input"].to_string().chars().any(dedup_wasm::is_cjk)));
}

#[test]
fn native_results_equal_the_fixtures() {
    let mut failures = Vec::new();
    for (file, f) in load_all() {
        assert_eq!(format!("{}.json", f["name"].as_str().unwrap()), file, "name matches file");
        let computed = fixtures::expected_of(f["kind"].as_str().unwrap(), &f["input"], &f["settings"]);
        // Compare through the same JSON text path the file took (exact float round trip either way).
        let computed: Value = serde_json::from_str(&serde_json::to_string(&computed).unwrap()).unwrap();
        if computed != f["expected"] {
            failures.push(format!("{}:\n  expected {}\n  native   {}", file, f["expected"], computed));
        }
    }
    assert!(failures.is_empty(), "native output differs from the fixtures (regenerate only if the change is intended):\n{}", failures.join("\n"));
}

#[test]
fn fixture_offsets_lie_inside_the_text() {
    for (file, f) in load_all() {
        let text: String = match &f["input"] {
            Value::String(s) => s.clone(),
            Value::Array(a) => a.iter().map(|c| c.as_str().unwrap()).collect(),
            _ => unreachable!(),
        };
        let len = text.encode_utf16().count() as u64;
        let e = &f["expected"];
        let sections = e.get("sections").or_else(|| e.get("final").and_then(|x| x.get("sections")));
        for s in sections.and_then(|s| s.as_array()).into_iter().flatten() {
            let g = |k: &str| s[k].as_u64().unwrap();
            assert!(g("originalStart") < g("originalEnd") && g("originalEnd") <= len, "{}", file);
            assert!(g("repeatStart") < g("repeatEnd") && g("repeatEnd") <= len, "{}", file);
        }
    }
}
