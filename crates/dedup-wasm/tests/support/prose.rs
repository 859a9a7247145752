//! Deterministic synthetic prose for tests and benchmarks: varied sentences from a mid-sized
//! vocabulary, so that nothing repeats but the everyday function words.

/// A small xorshift generator (deterministic, no seeds from the environment).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const NOUNS: &[&str] = &[
    "server", "cache", "request", "model", "user", "table", "report", "engine", "river", "garden", "window", "letter",
    "market", "teacher", "village", "signal", "theory", "budget", "harbor", "console", "library", "kernel", "pipeline",
    "forest", "museum", "protocol", "summary", "contract", "station", "journey", "pattern", "ticket", "network",
    "document", "meeting", "painting", "schedule", "question", "answer", "mountain", "sensor", "battery", "engineer",
];
const VERBS: &[&str] = &[
    "reads", "writes", "checks", "moves", "builds", "measures", "explains", "ignores", "follows", "repairs", "expects",
    "describes", "replaces", "collects", "shows", "keeps", "opens", "closes", "compares", "predicts", "records",
    "updates", "sends", "receives", "improves", "tests", "carries", "finds", "loses", "returns",
];
const ADJS: &[&str] = &[
    "quiet", "large", "recent", "broken", "careful", "strange", "bright", "narrow", "useful", "ancient", "simple",
    "hidden", "steady", "urgent", "gentle", "remote", "formal", "rapid", "modest", "curious", "silver", "empty",
];
const LINKS: &[&str] = &["while", "because", "although", "after", "before", "so that", "until", "whenever", "and then"];
const DETS: &[&str] = &["the", "a", "every", "one", "that", "this", "each", "another"];

fn phrase(r: &mut Rng, out: &mut String) {
    out.push_str(DETS[r.below(DETS.len())]);
    out.push(' ');
    if r.below(2) == 0 {
        out.push_str(ADJS[r.below(ADJS.len())]);
        out.push(' ');
    }
    out.push_str(NOUNS[r.below(NOUNS.len())]);
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// One sentence, ending with a period and a space.
pub fn sentence(r: &mut Rng) -> String {
    let mut s = String::new();
    phrase(r, &mut s);
    s.push(' ');
    s.push_str(VERBS[r.below(VERBS.len())]);
    s.push(' ');
    phrase(r, &mut s);
    if r.below(3) == 0 {
        s.push_str(&format!(" in {} minutes", 2 + r.below(97)));
    }
    if r.below(2) == 0 {
        s.push_str(", ");
        s.push_str(LINKS[r.below(LINKS.len())]);
        s.push(' ');
        phrase(r, &mut s);
        s.push(' ');
        s.push_str(VERBS[r.below(VERBS.len())]);
        s.push(' ');
        phrase(r, &mut s);
    }
    let mut out = capitalize(&s);
    out.push_str(". ");
    out
}

/// About `chars` chars of prose in paragraphs.
pub fn prose(seed: u64, chars: usize) -> String {
    let mut r = Rng::new(seed);
    let mut out = String::with_capacity(chars + 200);
    while out.len() < chars {
        for _ in 0..3 + r.below(4) {
            out.push_str(&sentence(&mut r));
        }
        out.push_str("\n\n");
    }
    out
}
