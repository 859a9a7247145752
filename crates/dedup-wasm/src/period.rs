//! Loop rules: telling a degenerate loop from legitimately repetitive output.
//!
//! The repetition *ratio* cannot make that call: forty near-identical functions recycle more of their
//! 16-grams than a real loop does. What can is the *shape* of the repetition and the *information*
//! it carries:
//!
//! - a loop repeats one unit back to back (a period), and
//! - after its first copy, a loop says nothing new: every token bigram of the third copy was already
//!   in the text ([`crate::novelty`]). A table whose rows differ in numbers, "99 bottles" counting
//!   down, forty functions with different names or a checklist with distinct labels all keep adding
//!   bigrams.
//!
//! Rules that *abort* (they latch into a [`LoopEvidence`]):
//! - `tight-period-loop` / `unit-loop`: a unit repeated back to back, exactly or near-exactly (the
//!   n-gram pass's chain), at least `max_repetitions` times (a setting of [`crate::DedupSettings`]) over at least `min_loop_chars`, with no new
//!   bigram after the second copy. The unit may be 1 char or thousands; periods up to `period_max`
//!   are reported as `tight-period-loop` (the original detector's fragment loops), longer ones as
//!   `unit-loop`. A unit made of one punctuation char (a separator line) needs `min_separator_chars`.
//! - `paragraph-loop`: a paragraph of prose (at least `restart_min_period` chars) that starts over
//!   verbatim and keeps going for `restart_min_chars`: models that restart an answer do this, and
//!   legitimate prose does not.
//! - `char-collapse-loop`: the window's text collapses to a handful of chars and fragments (the
//!   original detector's rule), with no new bigram in the last `zero_gain_chars`.
//! - `max-chars` / `max-reasoning-chars`: hard caps per channel (0 = off).
//!
//! Rules that only *steer* (softer evidence; each also fires on templated output, which is why none
//! of them may abort): `sentence-recycle`, `gram-recycle-16`, `tight-phrase-loop`, with the original
//! detector's thresholds. The zero-information-gain signal never fires alone; it loosens the fragment
//! gates of `char-collapse-loop` as in the original.

use crate::error::DedupError;
use crate::hash::SeqHasher;
use crate::ngram::{Chain, NgramPass};
use crate::novelty::{Gain, Novelty};
use crate::settings::{count_field, float_field, overrides_object};
use crate::text::{NormStream, SourceSpan};
use crate::window_stats::WindowStats;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::VecDeque;

/// Thresholds of the loop rules. Names follow the original detector where it had the rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LoopConfig {
    /// Chars of recent text the window rules look at.
    pub window_chars: usize,
    /// Periods up to this many chars are reported as `tight-period-loop`.
    pub period_max: usize,
    /// Self-match of the tail at its period for the fragment rules (`char-collapse-loop` uses it as
    /// corroboration).
    pub period_match: f64,
    /// Chars a loop must cover (all its occurrences) before it aborts.
    pub min_loop_chars: usize,
    /// Chars a loop of a single punctuation char must cover (separator lines are legitimate).
    pub min_separator_chars: usize,
    /// Shortest period of a `paragraph-loop`.
    pub restart_min_period: usize,
    /// Chars a paragraph must repeat verbatim to be a `paragraph-loop`.
    pub restart_min_chars: usize,
    /// Most distinct fragments (text between punctuation) in the window for `char-collapse-loop`.
    pub max_fragment_kinds: usize,
    /// Distinct-char ratio under which the window counts as collapsed.
    pub char_collapse_ratio: f64,
    /// Median fragment length under which the window counts as fragmented.
    pub collapse_median_fragment: usize,
    /// Chars without a new bigram that loosen the fragment gates (zero information gain).
    pub zero_gain_chars: usize,
    /// Loosened fragment-kind gate under zero information gain.
    pub boosted_fragment_kinds: usize,
    /// Loosened distinct-char ratio under zero information gain.
    pub boosted_char_ratio: f64,
    /// Share of recycled sentences in the window for `sentence-recycle` (steers).
    pub sent_recycle: f64,
    /// Sentences the window must hold for `sentence-recycle`.
    pub sent_recycle_min_sentences: usize,
    /// Window chars needed for `sentence-recycle`.
    pub sent_recycle_min_window: usize,
    /// Share of 16-grams recycled within the window for `gram-recycle-16` (steers).
    pub gram_recycle16: f64,
    /// Window chars needed for `gram-recycle-16`.
    pub gram_recycle_min_window: usize,
    /// 3-gram redundancy of the window for `tight-phrase-loop` (steers).
    pub tight_redundancy: f64,
    /// Window chars needed for `tight-phrase-loop`.
    pub tight_min_window: usize,
    /// Hard cap of the content channel in chars (0 = off).
    pub max_chars: usize,
    /// Hard cap of the reasoning channel in chars (0 = off).
    pub max_reasoning_chars: usize,
}

impl Default for LoopConfig {
    fn default() -> Self {
        LoopConfig {
            window_chars: 1600,
            period_max: 48,
            period_match: 0.92,
            min_loop_chars: 120,
            min_separator_chars: 600,
            restart_min_period: 200,
            restart_min_chars: 300,
            max_fragment_kinds: 6,
            char_collapse_ratio: 0.10,
            collapse_median_fragment: 10,
            zero_gain_chars: 400,
            boosted_fragment_kinds: 10,
            boosted_char_ratio: 0.16,
            sent_recycle: 0.80,
            sent_recycle_min_sentences: 20,
            sent_recycle_min_window: 600,
            gram_recycle16: 0.80,
            gram_recycle_min_window: 900,
            tight_redundancy: 0.90,
            tight_min_window: 400,
            max_chars: 200_000,
            max_reasoning_chars: 120_000,
        }
    }
}

macro_rules! loop_fields {
    ($m:ident) => {
        $m!(window_chars, "windowChars", count, 64);
        $m!(period_max, "periodMax", count, 1);
        $m!(period_match, "periodMatch", ratio, 0);
        $m!(min_loop_chars, "minLoopChars", count, 1);
        $m!(min_separator_chars, "minSeparatorChars", count, 1);
        $m!(restart_min_period, "restartMinPeriod", count, 1);
        $m!(restart_min_chars, "restartMinChars", count, 1);
        $m!(max_fragment_kinds, "maxFragmentKinds", count, 1);
        $m!(char_collapse_ratio, "charCollapseRatio", ratio, 0);
        $m!(collapse_median_fragment, "collapseMedianFragment", count, 1);
        $m!(zero_gain_chars, "zeroGainChars", count, 1);
        $m!(boosted_fragment_kinds, "boostedFragmentKinds", count, 1);
        $m!(boosted_char_ratio, "boostedCharRatio", ratio, 0);
        $m!(sent_recycle, "sentRecycle", ratio, 0);
        $m!(sent_recycle_min_sentences, "sentRecycleMinSentences", count, 1);
        $m!(sent_recycle_min_window, "sentRecycleMinWindow", count, 1);
        $m!(gram_recycle16, "gramRecycle16", ratio, 0);
        $m!(gram_recycle_min_window, "gramRecycleMinWindow", count, 1);
        $m!(tight_redundancy, "tightRedundancy", ratio, 0);
        $m!(tight_min_window, "tightMinWindow", count, 1);
        $m!(max_chars, "maxChars", count, 0);
        $m!(max_reasoning_chars, "maxReasoningChars", count, 0);
    };
}

impl LoopConfig {
    /// Checks every field; the error names the first field at fault.
    ///
    /// Ratios may be set above 1 (up to 2) to switch a rule off, as the original detector allowed
    /// ("set sentRecycle to 1.01").
    #[allow(unused_comparisons)]
    pub fn validate(&self) -> Result<(), DedupError> {
        macro_rules! check {
            ($f:ident, $json:expr, ratio, $min:expr) => {
                if !self.$f.is_finite() || self.$f <= 0.0 || self.$f > 2.0 {
                    return Err(DedupError::setting(stringify!($f), "must be a finite number in (0, 2] (above 1 turns the rule off)", self.$f));
                }
            };
            ($f:ident, $json:expr, count, $min:expr) => {
                if self.$f < $min {
                    return Err(DedupError::setting(stringify!($f), concat!("must be at least ", stringify!($min)), self.$f));
                }
                if self.$f > (1 << 30) {
                    return Err(DedupError::setting(stringify!($f), "must be at most 2^30", self.$f));
                }
            };
        }
        loop_fields!(check);
        if self.window_chars < self.zero_gain_chars {
            return Err(DedupError::setting("zero_gain_chars", "must not exceed window_chars", self.zero_gain_chars));
        }
        Ok(())
    }

    /// Applies a partial JSON object (camelCase names) over `self`, then validates.
    pub fn merge_json(mut self, overrides: &Value) -> Result<Self, DedupError> {
        let obj = match overrides_object(overrides, "loop")? {
            Some(m) => m,
            None => return self.validate().map(|_| self),
        };
        for (key, value) in obj {
            let mut known = false;
            macro_rules! set {
                ($f:ident, $json:expr, ratio, $min:expr) => {
                    if key == $json {
                        self.$f = float_field(stringify!($f), value)?;
                        known = true;
                    }
                };
                ($f:ident, $json:expr, count, $min:expr) => {
                    if key == $json {
                        self.$f = count_field(stringify!($f), value)?;
                        known = true;
                    }
                };
            }
            loop_fields!(set);
            if !known {
                return Err(DedupError::argument("loop", "has no field of this name", key));
            }
        }
        self.validate()?;
        Ok(self)
    }
}

/// How strongly a rule's finding should be acted on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Soft evidence: worth a corrective message, never worth killing the stream.
    Steer,
    /// A confirmed loop.
    Abort,
}

/// A rule's finding: which rule, what it measured, a sample of the repeated text and where the loop
/// began. Offsets are in the caller's units of the channel (bytes natively; the wasm bridge converts
/// to UTF-16).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoopEvidence {
    pub rule: String,
    pub detail: String,
    pub sample: String,
    pub severity: Severity,
    /// Byte offset (in the channel's text) where the repeated stretch begins.
    pub start: u64,
    /// Byte offset where the finding was made (the text seen so far when it fired).
    pub at: u64,
    /// UTF-16 twins of `start` and `at`, for hosts that index strings in UTF-16.
    #[serde(skip)]
    pub(crate) start_utf16: u64,
    #[serde(skip)]
    pub(crate) at_utf16: u64,
    /// For unit rules: the first copy of the unit and the repeats after it.
    #[serde(skip)]
    pub(crate) unit_spans: Option<(SourceSpan, SourceSpan)>,
}

/// Evidence as a stream check reads it: held by a detector already, or built for this check. Built
/// evidence is boxed so that the value stays two words: it is passed on every chunk, and is built
/// only while a repeated unit grows.
pub(crate) enum EvidenceRef<'a> {
    Held(&'a LoopEvidence),
    Built(Box<LoopEvidence>),
}

impl<'a> EvidenceRef<'a> {
    pub(crate) fn get(&self) -> &LoopEvidence {
        match self {
            EvidenceRef::Held(e) => e,
            EvidenceRef::Built(e) => e,
        }
    }

    pub(crate) fn into_owned(self) -> LoopEvidence {
        match self {
            EvidenceRef::Held(e) => e.clone(),
            EvidenceRef::Built(e) => *e,
        }
    }
}

/// Evaluate the window rules every this many normalized chars (they scan the window).
const WINDOW_EVAL_EVERY: u64 = 128;
/// New bigrams in the last `zero_gain_chars` at or under which the window rules are evaluated.
const WINDOW_RULES_BIGRAMS: usize = 1;
/// New bigrams in the last `zero_gain_chars` at or under which information gain counts as low.
const LOW_GAIN_BIGRAMS: usize = 4;
/// A copy whose original begins within this many chars of the channel's start restarts the text.
const RESTART_SLACK: u64 = 16;
/// Longest sample quoted in evidence, in chars.
const SAMPLE_CHARS: usize = 80;

/// True when the last `window_chars` of `text` (lowercased, whitespace collapsed) have collapsed to a
/// few distinct chars in short, few kinds of fragments: the `char-collapse-loop` test on its own,
/// without the information-gain condition the streaming rule adds.
pub fn is_char_collapsed(text: &str, cfg: &LoopConfig) -> bool {
    let mut norm = NormStream::new(usize::MAX);
    for c in text.chars() {
        norm.push(c, |_, _, _| {});
    }
    let mut stats = WindowStats::new(cfg.window_chars);
    stats.extend(0, norm.chars(0, norm.end()));
    stats.collapsed(cfg.char_collapse_ratio, cfg.collapse_median_fragment, cfg.max_fragment_kinds)
}

pub(crate) struct LoopRules {
    cfg: LoopConfig,
    /// Occurrences of a unit (counting the first) that make a loop: `DedupSettings::max_repetitions`.
    min_occurrences: u64,
    /// Shortest back-to-back repeat that steers: `DedupSettings::min_repeat_length`.
    min_steer_chars: u64,
    novelty: Novelty,
    /// Char-level statistics of the window, maintained only while the text says little new; rebuilt
    /// from the retained text when that regime begins. Made on first use: most texts never turn
    /// low-gain, and a new one zeroes its count tables (48 KB), which a short batch check would
    /// otherwise pay for on every call.
    window: Option<WindowStats>,
    /// While the statistics are live: the first position they have not seen. They catch up when
    /// the window rules are evaluated, in one run over the retained text, rather than char by char
    /// (nothing reads them in between).
    window_next: Option<u64>,
    /// Per-position flags, as a ring: the 16-gram ending there occurred earlier within the window
    /// (read off the n-gram index), and how many of the window's flags are set.
    recycled: Vec<bool>,
    recycled_count: usize,
    recycled_slot: usize,
    /// Normalized sentences of the window (hash, end position), for `sentence-recycle`.
    sentences: VecDeque<(u64, u64)>,
    sentence_hasher: SeqHasher,
    sentence_has_content: bool,
    sentence_scratch: Vec<u64>,
    /// Class of the unit of the two matches judged last (start, period, class): the exact segment and
    /// the near-exact chain around it are judged in turn on every char, and each keeps its class
    /// rather than rescanning its unit.
    judged_unit: [Option<(u64, u64, UnitClass)>; 2],
    /// A chain (start, first period) whose repeats already said something new: it can only say more
    /// as it grows, so it is not judged again.
    disqualified: Option<(u64, u64)>,
    verdict: Option<LoopEvidence>,
    soft: Option<SoftFinding>,
    soft_until: u64,
    /// Whether steer findings are looked for. Without them the recycled-gram ring and the sentence
    /// hashes are never read, so they are not kept either (with the soft window rules, about 8% of
    /// a batch check's instructions).
    steering: bool,
}

/// The latest steer-level finding. A unit repeated back to back is re-judged on every char it grows
/// by, so its evidence is kept as the chain and built only when someone asks for it (once per chunk
/// at most), or before the text it quotes could be dropped ([`LoopRules::settle`]).
#[derive(Clone)]
enum SoftFinding {
    Ready(LoopEvidence),
    RepeatedUnit { chain: Chain, pos: u64, numbers_only: bool },
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum UnitClass {
    /// Contains letters or digits.
    Wordy { prose: bool },
    /// Only punctuation, symbols and spaces, with at least two distinct chars.
    Symbols,
    /// One punctuation char repeated (a separator line).
    Separator,
}

/// What [`classify_unit`] counts of an ASCII char, as bits: a letter or digit, not a space, a
/// sentence terminator. One table load per char, where three tests cost three times as much.
const LETTER: u8 = 1;
const NON_SPACE: u8 = 2;
const TERMINATOR: u8 = 4;
const ASCII_UNIT_FLAGS: [u8; 128] = {
    let mut table = [0u8; 128];
    let mut b = 0u8;
    while b < 128 {
        let mut flags = 0;
        if b.is_ascii_alphanumeric() {
            flags |= LETTER;
        }
        if b != b' ' {
            flags |= NON_SPACE;
        }
        if b == b'.' || b == b'!' || b == b'?' {
            flags |= TERMINATOR;
        }
        table[b as usize] = flags;
        b += 1;
    }
    table
};

/// The unit rules a chain is long enough for (see [`LoopRules::judge_unit`]).
struct Reach {
    /// `min_occurrences` copies over `min_loop_chars`: the unit loops.
    repeated: bool,
    /// A verbatim copy of a long unit: a repeated paragraph.
    long_unit: bool,
    /// A whole unit repeated back to back, over the shortest steering repeat.
    back_to_back: bool,
}

/// `len / period >= k` (`period > 0`): whether a match of `len` chars at distance `period` holds `k`
/// more copies of its unit. A product rather than a 64-bit division, since the unit rules ask it at
/// every char; factors below 2^32 cannot overflow, and a plain product stays one instruction in wasm
/// (a checked one is a call to a 128-bit multiply there).
#[inline]
fn at_least_copies(len: u64, period: u64, k: u64) -> bool {
    if k <= u64::from(u32::MAX) && period <= u64::from(u32::MAX) {
        len >= k * period
    } else {
        len / period >= k
    }
}

fn classify_unit(text: &NormStream, start: u64, end: u64) -> UnitClass {
    // A unit can be thousands of chars and is classified whenever a chain's period changes, so the
    // scan has an ASCII path that tests bytes (it gives the same counts as the char path).
    let mut distinct = [0u32; 3];
    let mut n_distinct = 0;
    let (mut letters, mut non_space, mut terminators) = (0usize, 0usize, 0usize);
    for ch in text.chars(start, end) {
        if n_distinct < 3 && !distinct[..n_distinct].contains(&ch) {
            distinct[n_distinct] = ch;
            n_distinct += 1;
        }
        if ch < 0x80 {
            let flags = ASCII_UNIT_FLAGS[ch as usize];
            letters += usize::from(flags & LETTER);
            non_space += usize::from((flags & NON_SPACE) >> 1);
            terminators += usize::from((flags & TERMINATOR) >> 2);
            continue;
        }
        let c = char::from_u32(ch).unwrap_or(' ');
        if c != ' ' {
            non_space += 1;
        }
        if crate::tokenize::is_alphanumeric(c) {
            letters += 1;
        }
        if matches!(c, '。' | '！' | '？') {
            terminators += 1;
        }
    }
    if letters > 0 {
        // Prose: mostly letters, and sentences in it.
        let prose = non_space > 0 && letters * 100 >= non_space * 80 && terminators >= 2;
        UnitClass::Wordy { prose }
    } else if n_distinct >= 2 {
        UnitClass::Symbols
    } else {
        UnitClass::Separator
    }
}

impl LoopRules {
    /// Rules over `cfg`; the steer rules run only when `steering` (a batch check, which reports only
    /// sections, skips them and the per-char bookkeeping they alone read). `expected`: the length
    /// of a batch text, for sizing tables (0: unknown).
    pub(crate) fn new(cfg: LoopConfig, min_occurrences: usize, min_steer_chars: usize, steering: bool, expected: usize) -> Self {
        let horizon = (cfg.window_chars as u64).max(4096) * 4;
        LoopRules {
            novelty: Novelty::with_expected(horizon, expected),
            window: None,
            window_next: None,
            recycled: if steering { vec![false; cfg.window_chars.max(1)] } else { Vec::new() },
            recycled_count: 0,
            recycled_slot: 0,
            sentences: VecDeque::new(),
            sentence_hasher: SeqHasher::new(),
            sentence_has_content: false,
            sentence_scratch: Vec::new(),
            judged_unit: [None, None],
            disqualified: None,
            verdict: None,
            soft: None,
            soft_until: 0,
            min_occurrences: min_occurrences.max(2) as u64,
            min_steer_chars: min_steer_chars as u64,
            steering,
            cfg,
        }
    }

    /// The latched abort-level verdict.
    pub(crate) fn verdict(&self) -> Option<&LoopEvidence> {
        self.verdict.as_ref()
    }

    /// The most recent steer-level finding, while it is fresh (within a window of its firing).
    pub(crate) fn soft(&self, text: &NormStream, pos: u64) -> Option<EvidenceRef<'_>> {
        if pos > self.soft_until {
            return None;
        }
        match self.soft.as_ref()? {
            SoftFinding::Ready(e) => Some(EvidenceRef::Held(e)),
            SoftFinding::RepeatedUnit { chain, pos, numbers_only } => Some(EvidenceRef::Built(Box::new(self.repeated_unit_evidence(text, chain, *pos, *numbers_only)))),
        }
    }

    /// Builds a pending finding now: the text it quotes is about to be dropped.
    pub(crate) fn settle(&mut self, text: &NormStream) {
        if let Some(SoftFinding::RepeatedUnit { chain, pos, numbers_only }) = self.soft {
            self.soft = Some(SoftFinding::Ready(self.repeated_unit_evidence(text, &chain, pos, numbers_only)));
        }
    }

    fn repeated_unit_evidence(&self, text: &NormStream, c: &Chain, pos: u64, numbers_only: bool) -> LoopEvidence {
        let what = if numbers_only { "changing only numbers" } else { "without new information" };
        let detail = format!("{} chars repeat a unit of {} chars back to back {}", c.len(), c.period.max(1), what);
        self.chain_evidence(text, "repeated-unit", detail, Severity::Steer, c, pos)
    }

    pub(crate) fn latch(&mut self, e: LoopEvidence) {
        if self.verdict.is_none() {
            self.verdict = Some(e);
        }
    }

    /// Processes the normalized char at `pos` after the n-gram pass has seen it.
    pub(crate) fn on_char(&mut self, text: &NormStream, pos: u64, ch: u32, ngram: &NgramPass) {
        if self.steering {
            let recycled = ngram.last_distance().map_or(false, |d| d < self.cfg.window_chars as u64);
            // Positions arrive one by one from 0, so the ring slot just advances (no division per char).
            let slot = self.recycled_slot;
            self.recycled_slot = if slot + 1 == self.recycled.len() { 0 } else { slot + 1 };
            debug_assert_eq!(slot as u64, pos % self.recycled.len() as u64);
            self.recycled_count = self.recycled_count + usize::from(recycled) - usize::from(self.recycled[slot]);
            self.recycled[slot] = recycled;
            self.track_sentence(pos, ch);
        }
        if self.verdict.is_some() {
            return;
        }
        self.judge_chain(text, pos, ngram);
        if (pos + 1) % WINDOW_EVAL_EVERY == 0 {
            self.judge_window(text, pos);
        }
    }

    /// Records a token that ended at normalized position `end` (information gain).
    #[inline(always)]
    pub(crate) fn on_token(&mut self, hash: u64, is_number: bool, end: u64) {
        self.novelty.token(hash, is_number, end);
    }

    /// Drops state that refers to text older than `base`.
    pub(crate) fn forget_before(&mut self, base: u64, retained: u64) {
        self.novelty.forget_before(base, retained);
    }

    fn track_sentence(&mut self, pos: u64, ch: u32) {
        if ch < 0x80 && (ch as u8).is_ascii_alphanumeric() {
            self.sentence_hasher.push(ch);
            self.sentence_has_content = true;
            return;
        }
        let c = char::from_u32(ch).unwrap_or(' ');
        let ends = matches!(c, '.' | '!' | '?' | ';' | '。' | '！' | '？' | '；' | '…' | '\n');
        if !ends {
            if c != ' ' {
                self.sentence_hasher.push(ch);
                self.sentence_has_content |= crate::tokenize::is_alphanumeric(c);
            }
            return;
        }
        if self.sentence_has_content {
            self.sentences.push_back((self.sentence_hasher.finish(), pos));
        }
        self.sentence_hasher = SeqHasher::new();
        self.sentence_has_content = false;
        let window = self.cfg.window_chars as u64;
        while let Some(&(_, end)) = self.sentences.front() {
            if end + window <= pos {
                self.sentences.pop_front();
            } else {
                break;
            }
        }
    }

    fn evidence(&self, text: &NormStream, rule: &str, detail: String, severity: Severity, start: u64, unit: (u64, u64), pos: u64) -> LoopEvidence {
        let unit_end = unit.1.min(unit.0 + SAMPLE_CHARS as u64);
        let sample: String = text.chars(unit.0, unit_end).filter_map(char::from_u32).collect();
        let start = start.max(text.base());
        let s = text.span(start, start + 1).start;
        let at = text.span(pos, pos + 1).end;
        LoopEvidence { rule: rule.to_string(), detail, sample, severity, start: s.byte, at: at.byte, start_utf16: s.utf16, at_utf16: at.utf16, unit_spans: None }
    }

    /// Evidence for a chain: the unit is its first copy, the repeat runs to the chain's end.
    fn chain_evidence(&self, text: &NormStream, rule: &str, detail: String, severity: Severity, c: &Chain, pos: u64) -> LoopEvidence {
        let first = c.start.saturating_sub(c.first_period).max(text.base());
        let unit_end = (first + c.first_period).min(c.end).max(first + 1);
        let mut e = self.evidence(text, rule, detail, severity, first, (first, unit_end), pos);
        if unit_end < c.end {
            e.unit_spans = Some((text.span(first, unit_end), text.span(unit_end, c.end)));
        }
        e
    }

    /// The unit rules over the n-gram pass's exact segment and near-exact chain.
    ///
    /// Only a growing match can change a judgment, so nothing is judged while no segment is open. A
    /// growing match ends at the newest char, so every information question about it is "how many new
    /// bigrams since position x", answered in O(1).
    fn judge_chain(&mut self, text: &NormStream, pos: u64, ngram: &NgramPass) {
        let seg = match ngram.open_segment() {
            Some(seg) if seg.end == pos + 1 => seg,
            _ => return,
        };
        if self.worth_judging(&seg) && self.judge_unit(text, pos, seg) {
            return;
        }
        if let Some(chain) = ngram.live_chain() {
            if chain.matched != chain.len() && self.worth_judging(&chain) {
                self.judge_unit(text, pos, chain);
            }
        }
    }

    /// Which unit rules a chain is long enough for.
    #[inline]
    fn reach(&self, c: &Chain) -> Reach {
        let cfg = &self.cfg;
        let period = c.period.max(1);
        Reach {
            repeated: at_least_copies(c.len(), period, self.min_occurrences - 1) && c.len() + c.first_period >= cfg.min_loop_chars as u64,
            long_unit: period >= cfg.restart_min_period as u64 && c.len() >= cfg.restart_min_chars as u64 && c.matched == c.len(),
            back_to_back: c.len() >= period && c.len() >= self.min_steer_chars,
        }
    }

    /// What [`LoopRules::judge_unit`] asks first of a chain: is it long enough for any unit rule, and
    /// not already disqualified. Most chains judged are not (a growing match is judged at every
    /// char), so this much is inlined into the per-char path and the rest is a call.
    #[inline]
    fn worth_judging(&self, c: &Chain) -> bool {
        let r = self.reach(c);
        (r.repeated || r.long_unit || r.back_to_back) && self.disqualified != Some((c.start, c.first_period))
    }

    /// Judges one chain as a looping unit, once [`LoopRules::worth_judging`] says so; returns true
    /// when it latched a verdict.
    #[inline(never)]
    fn judge_unit(&mut self, text: &NormStream, pos: u64, c: Chain) -> bool {
        debug_assert!(self.worth_judging(&c));
        let cfg = &self.cfg;
        let period = c.period.max(1);
        let covered = c.len() + c.first_period;
        let occurrences = 1 + c.len() / period;
        let Reach { repeated, long_unit, back_to_back } = self.reach(&c);
        // The unit is the last period of the original; it only needs classifying once per chain.
        let unit = (c.end - period, c.end);
        let cached = self.judged_unit.iter().flatten().find(|(s, d, _)| *s == c.start && *d == period).map(|e| e.2);
        let class = match cached {
            Some(class) => class,
            None => {
                if unit.0 < text.base() {
                    return false;
                }
                let class = classify_unit(text, unit.0, unit.1);
                self.judged_unit = [Some((c.start, period, class)), self.judged_unit[0]];
                class
            }
        };
        // Information added by the repeats. Novel bigrams are recorded at the exclusive end of their
        // second token, so those of the repeat region sit in (start, end]. The first repeat may hold
        // the bigram that joins two copies; from the third copy on there must be nothing new.
        // (The chain ends at the newest char, so "since" is "within the repeats".)
        let later_copies_silent = self.novelty.at_most_since(Gain::Exact, c.start + period + 1, 0);
        let repeats_silent = self.novelty.at_most_since(Gain::Exact, c.start + 1, 1);
        // Steer on a unit repeated back to back that adds nothing but, perhaps, a changed number.
        let silent_but_numbers = self.novelty.at_most_since(Gain::NumbersMasked, c.start + 1, 1);
        if self.steering && silent_but_numbers && back_to_back && class != UnitClass::Separator {
            self.soft = Some(SoftFinding::RepeatedUnit { chain: c, pos, numbers_only: !repeats_silent });
            self.soft_until = pos + WINDOW_EVAL_EVERY;
        }
        if !later_copies_silent {
            if !silent_but_numbers {
                self.disqualified = Some((c.start, c.first_period));
            }
            return false;
        }
        if repeated {
            let needed = if class == UnitClass::Separator { cfg.min_separator_chars as u64 } else { cfg.min_loop_chars as u64 };
            if covered >= needed {
                let rule = if period <= cfg.period_max as u64 { "tight-period-loop" } else { "unit-loop" };
                let exact = if c.matched == c.len() { "verbatim" } else { "near-verbatim" };
                let detail = format!("{} unit of {} chars seen {} times ({} chars, similarity {:.2}), no new information in the repeats", exact, period, occurrences, covered, c.similarity());
                let e = self.chain_evidence(text, rule, detail, Severity::Abort, &c, pos);
                self.latch(e);
                return true;
            }
        }
        // A paragraph of prose copied verbatim: in full, back to back, or from the very start of the
        // channel (a model that restarts its answer).
        let restarts = c.start - c.first_period.min(c.start) <= RESTART_SLACK;
        if long_unit && repeats_silent && (c.len() >= period || restarts) && class == (UnitClass::Wordy { prose: true }) {
            let how = if c.len() >= period { "repeats in full, back to back" } else { "restarts the text from its beginning" };
            let detail = format!("a {}-char paragraph {} ({} chars verbatim)", period, how, c.len());
            let e = self.chain_evidence(text, "paragraph-loop", detail, Severity::Abort, &c, pos);
            self.latch(e);
            return true;
        }
        false
    }

    /// True when the last `zero_gain_chars` added at most [`LOW_GAIN_BIGRAMS`] new bigrams, numbers
    /// masked: the text is saying (almost) nothing new. Prose adds one every few words.
    pub(crate) fn low_gain(&self, pos: u64) -> bool {
        let span = self.cfg.zero_gain_chars as u64;
        pos + 1 >= span && self.novelty.at_most_since(Gain::NumbersMasked, pos + 1 - span, LOW_GAIN_BIGRAMS)
    }

    /// The window rules of the original detector. Every one of them needs text that says next to
    /// nothing new, so they are only evaluated when the last `zero_gain_chars` added at most
    /// [`WINDOW_RULES_BIGRAMS`] new bigrams: prose and most templated output never pay for them.
    fn judge_window(&mut self, text: &NormStream, pos: u64) {
        let span = self.cfg.zero_gain_chars as u64;
        if pos + 1 < span || !self.novelty.at_most_since(Gain::NumbersMasked, pos + 1 - span, WINDOW_RULES_BIGRAMS) {
            self.window_next = None;
            return;
        }
        let cfg = self.cfg.clone();
        let window = (cfg.window_chars as u64).min(pos + 1 - text.base());
        let from = pos + 1 - window;
        let next = match self.window_next {
            Some(next) => next,
            None => {
                // A new low-gain regime: the statistics restart from the whole retained window.
                if let Some(w) = self.window.as_mut() {
                    w.clear();
                }
                from
            }
        };
        debug_assert!(next >= text.base(), "the window is evaluated far more often than text is dropped");
        let silent_tail = self.novelty.at_most_since(Gain::Exact, pos + 1 - (cfg.zero_gain_chars as u64).min(window), 0);
        let collapse_possible = window >= 200 && silent_tail;
        if !self.steering && !collapse_possible {
            // Without steering nothing else reads the statistics, so they wait, still due from
            // `next`, until this rule can fire: a later catch-up in one run leaves them as runs at
            // every evaluation would, and a regime in which it never can costs nothing.
            self.window_next = Some(next);
            return;
        }
        self.window_next = Some(pos + 1);
        let w = self.window.get_or_insert_with(|| WindowStats::new(cfg.window_chars));
        w.extend(next, text.chars(next, pos + 1));
        let zero_gain = window >= cfg.zero_gain_chars as u64
            && self.novelty.at_most_since(Gain::Exact, pos + 1 - cfg.zero_gain_chars as u64, 0);

        let (kind_gate, ratio_gate) = if zero_gain {
            (cfg.boosted_fragment_kinds, cfg.boosted_char_ratio)
        } else {
            (cfg.max_fragment_kinds, cfg.char_collapse_ratio)
        };
        if collapse_possible && w.collapsed(ratio_gate, cfg.collapse_median_fragment, kind_gate) {
            let detail = format!("{} distinct chars in {} ({:.3}), {} fragment kinds, median fragment {} chars", w.distinct_chars(), window, w.char_ratio(), w.fragment_kinds(), w.median_fragment());
            let e = self.evidence(text, "char-collapse-loop", detail, Severity::Abort, from, (pos + 1 - 40.min(window), pos + 1), pos);
            self.latch(e);
            return;
        }

        // Soft rules: they steer only.
        if !self.steering {
            return;
        }
        let mut soft: Option<(String, String)> = None;
        if window >= cfg.tight_min_window as u64 {
            let redundancy = w.trigram_redundancy();
            if redundancy >= cfg.tight_redundancy {
                soft = Some(("tight-phrase-loop".into(), format!("3-gram redundancy {:.3} over {} chars", redundancy, window)));
            }
        }
        if soft.is_none() && window >= cfg.gram_recycle_min_window as u64 {
            let seen = (pos + 1).min(self.recycled.len() as u64) as f64;
            let share = self.recycled_count as f64 / seen;
            if share >= cfg.gram_recycle16 {
                soft = Some(("gram-recycle-16".into(), format!("{:.3} of 16-grams recycled within {} chars", share, window)));
            }
        }
        if soft.is_none() && window >= cfg.sent_recycle_min_window as u64 && self.sentences.len() >= cfg.sent_recycle_min_sentences {
            // A sentence is recycled when an earlier one of the window has its hash: all but the first
            // of each group of equal hashes. Sorting a reused buffer costs less than a set per evaluation.
            let hashes = &mut self.sentence_scratch;
            hashes.clear();
            hashes.extend(self.sentences.iter().map(|(h, _)| *h));
            hashes.sort_unstable();
            hashes.dedup();
            let recycled = self.sentences.len() - hashes.len();
            let share = recycled as f64 / self.sentences.len() as f64;
            if share >= cfg.sent_recycle {
                soft = Some(("sentence-recycle".into(), format!("{:.3} of {} sentences recycled", share, self.sentences.len())));
            }
        }
        if let Some((rule, detail)) = soft {
            let e = self.evidence(text, &rule, detail, Severity::Steer, from, (pos + 1 - 40.min(window), pos + 1), pos);
            self.soft = Some(SoftFinding::Ready(e));
            self.soft_until = pos + WINDOW_EVAL_EVERY;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_are_counted_as_division_would_count_them() {
        let big = u64::from(u32::MAX);
        for &len in &[0, 1, 99, 100, 101, big - 1, big, big + 1, u64::MAX / 3, u64::MAX] {
            for &period in &[1, 2, 10, 100, big, big + 1, u64::MAX / 2, u64::MAX] {
                for &k in &[0, 1, 2, 9, 10, 11, big, big + 1, u64::MAX] {
                    assert_eq!(at_least_copies(len, period, k), len / period >= k, "{} {} {}", len, period, k);
                }
            }
        }
    }
}
