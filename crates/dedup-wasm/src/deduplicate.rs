//! The detector: both passes and the loop rules over one stream of chars, the batch check, the
//! streaming monitor and its action policy.
//!
//! Everything is driven one char at a time, and every decision depends only on the chars seen so far,
//! never on how they were chunked. A batch check is a stream fed in one piece, so batch and streaming
//! agree by construction, and a text fed in any chunking ends in the same state.
//!
//! ## Action policy
//! - **Abort** only on a confirmed loop: a latched verdict of an abort-level loop rule
//!   ([`crate::period`]). Near-exact repetition is the only kind that can get there; sentence-level
//!   similarity never aborts.
//! - **Steer** on softer evidence seen within the last `loop.window_chars` chars: a unit repeated
//!   back to back without new information but not yet often enough to abort, corroborated sentence
//!   repeats, or a steer-level loop rule (`sentence-recycle`, `gram-recycle-16`, `tight-phrase-loop`).
//! - **None** otherwise, and always during the warmup chunks and below the content-length gate
//!   (`8 * min_repeat_length` chars), except that a confirmed loop aborts whenever it is confirmed.
//!   The loop rules have their own minimum (`loop.min_loop_chars`), and waiting for the gate would only
//!   let the loop run on.

use crate::error::DedupError;
use crate::ngram::{Chain, NgramPass};
use crate::period::{EvidenceRef, LoopEvidence, LoopRules, Severity};
use crate::sentence::{SentencePair, SentencePass};
use crate::settings::DedupSettings;
use crate::text::{NormStream, SourceSpan};
use crate::tokenize::TokenStream;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Which pass found a repeated section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SectionSource {
    /// Near-exact repetition found by the n-gram pass.
    Ngram,
    /// Two sentences saying the same thing, corroborated.
    Sentence,
    /// A confirmed loop (a unit repeated back to back with no new information).
    Period,
}

/// A repeated stretch of text and the earlier stretch it repeats. Offsets are byte offsets into the
/// text checked (for a stream: into everything fed so far).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RepeatedSection {
    pub original_start: usize,
    pub original_end: usize,
    pub repeat_start: usize,
    pub repeat_end: usize,
    /// Similarity of the repeat to the original in [0, 1].
    pub similarity: f64,
    pub source: SectionSource,
}

/// The result of [`check_repetition`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RepetitionResult {
    /// True when any section was found.
    pub repeated: bool,
    /// Share of the (whitespace-collapsed) text that repeats earlier text near-exactly, in [0, 1].
    pub ratio: f64,
    /// Sections ordered by where the repeat starts.
    pub sections: Vec<RepeatedSection>,
}

/// What a host should do about the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StreamAction {
    None,
    /// Inject a corrective message; the output is drifting into repetition.
    Steer,
    /// Stop generating: the output is a degenerate loop.
    Abort,
}

/// The state of a stream after a chunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamCheck {
    /// True when any repeated section is known in the retained text.
    pub repeated: bool,
    /// Share of the stream so far that repeats earlier text near-exactly.
    pub ratio: f64,
    /// The action the policy recommends now.
    pub action: StreamAction,
    /// The loop verdict when aborting, or the soft finding when steering.
    pub evidence: Option<LoopEvidence>,
    /// Bytes fed so far (content channel).
    pub bytes_seen: u64,
    /// Changes whenever the list of known sections changes, other than by the growth of the section
    /// still growing ([`StreamingState::live_section`]); read [`StreamingState::sections`] only then,
    /// so a check stays cheap for every chunk however many sections there are.
    pub sections_version: u64,
}

impl StreamCheck {
    /// The check before anything is known; [`StreamingState`] fills it in place.
    fn blank() -> Self {
        StreamCheck { repeated: false, ratio: 0.0, action: StreamAction::None, evidence: None, bytes_seen: 0, sections_version: 0 }
    }
}

/// A stream reports at most this many recent sections.
pub const MAX_STREAM_SECTIONS: usize = 32;

/// A section with positions in both bytes and UTF-16 units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Section {
    pub original: SourceSpan,
    pub repeat: SourceSpan,
    pub similarity: f64,
    pub source: SectionSource,
}

impl Section {
    pub(crate) fn public(&self) -> RepeatedSection {
        RepeatedSection {
            original_start: self.original.start.byte as usize,
            original_end: self.original.end.byte as usize,
            repeat_start: self.repeat.start.byte as usize,
            repeat_end: self.repeat.end.byte as usize,
            similarity: self.similarity,
            source: self.source,
        }
    }
}

/// Forget-before housekeeping runs every this many chars.
const HOUSEKEEPING_EVERY: u64 = 4096;

/// One channel of text (content or reasoning) through every pass.
pub(crate) struct Detector {
    settings: DedupSettings,
    text: NormStream,
    ngram: NgramPass,
    sentences: SentencePass,
    /// One tokenizer over the normalized stream feeds both information gain and the sentence pass.
    tokens: TokenStream,
    rules: LoopRules,
    sections: VecDeque<Section>,
    max_sections: usize,
    /// Normalized chars inside closed n-gram sections.
    covered: u64,
    /// Normalized position where the latest repetition evidence (a section or a pair) ended.
    last_evidence_at: Option<u64>,
    /// Source chars consumed (for the hard caps).
    chars: u64,
    /// Incremented whenever a section is recorded.
    recorded: u64,
    /// Steer evidence describing the latest section.
    section_evidence: Option<LoopEvidence>,
    /// Hard cap for this channel (0 = off) and the rule name to report.
    cap: (u64, &'static str),
    pairs: Vec<SentencePair>,
}

impl Detector {
    /// A detector for one batch text of `expected` bytes. It retains everything, and it does not
    /// look for steer findings: a batch result reports sections, and no steer finding makes one.
    pub(crate) fn batch(settings: DedupSettings, expected: usize) -> Self {
        Detector::new(settings, usize::MAX, usize::MAX, false, expected, false)
    }

    /// A detector for one channel of a stream (`reasoning`: the reasoning channel, with its own cap).
    pub(crate) fn stream(settings: DedupSettings, reasoning: bool) -> Self {
        let retain = settings.max_window_chars;
        Detector::new(settings, retain, MAX_STREAM_SECTIONS, reasoning, 0, true)
    }

    /// A detector retaining `retain` chars (`usize::MAX`: all) and `max_sections` sections, with
    /// room reserved for `expected` chars, looking for steer findings when `steering`.
    fn new(settings: DedupSettings, retain: usize, max_sections: usize, reasoning: bool, expected: usize, steering: bool) -> Self {
        let cap = if reasoning {
            (settings.loop_rules.max_reasoning_chars as u64, "max-reasoning-chars")
        } else {
            (settings.loop_rules.max_chars as u64, "max-chars")
        };
        Detector {
            text: NormStream::with_capacity(retain, expected),
            ngram: NgramPass::new(settings.ngram_threshold, settings.window_size, settings.step_size, expected),
            sentences: SentencePass::new(settings.sentence_threshold, settings.context_gap_max, settings.min_sentence_tokens),
            tokens: TokenStream::default(),
            rules: LoopRules::new(settings.loop_rules.clone(), settings.max_repetitions, settings.min_repeat_length, steering, expected),
            sections: VecDeque::new(),
            max_sections,
            covered: 0,
            last_evidence_at: None,
            chars: 0,
            recorded: 0,
            section_evidence: None,
            cap,
            pairs: Vec::new(),
            settings,
        }
    }

    pub(crate) fn settings(&self) -> &DedupSettings {
        &self.settings
    }

    pub(crate) fn push_str(&mut self, s: &str) {
        for c in s.chars() {
            self.push_char(c);
        }
    }

    #[inline]
    fn push_char(&mut self, c: char) {
        self.chars += 1;
        if self.text.drops_next() {
            self.rules.settle(&self.text);
        }
        // The splitter sees the char first: a sentence it completes does not include this char's tokens.
        if self.sentences.push_char(c, &mut self.pairs) && !self.pairs.is_empty() {
            self.take_pairs();
        }
        let Detector { text, ngram, rules, tokens, sentences, .. } = self;
        let mut retired: Option<Chain> = None;
        text.push(c, |text, pos, ch| {
            if let Some(done) = ngram.step(text, pos, ch) {
                retired = Some(done);
            }
            tokens.push(ch, |hash, is_number, includes_char| {
                rules.on_token(hash, is_number, pos + u64::from(includes_char));
                sentences.push_token(hash);
            });
            rules.on_char(text, pos, ch, ngram);
        });
        if let Some(chain) = retired {
            self.record_chain(chain);
        }
        let end = self.text.end();
        if let Some(stale) = self.ngram.retire_stale(end) {
            self.record_chain(stale);
        }
        if end % HOUSEKEEPING_EVERY == 0 && end > 0 {
            let (base, retained) = (self.text.base(), end - self.text.base());
            self.ngram.forget_before(base, retained);
            self.rules.forget_before(base, retained);
        }
        if self.cap.0 > 0 && self.chars >= self.cap.0 && self.rules.verdict().is_none() {
            self.latch_cap();
        }
    }

    fn latch_cap(&mut self) {
        let at = self.text.consumed();
        let e = LoopEvidence {
            rule: self.cap.1.to_string(),
            detail: format!("{} chars reached the cap of {}", self.chars, self.cap.0),
            sample: String::new(),
            severity: Severity::Abort,
            start: at.byte,
            at: at.byte,
            start_utf16: at.utf16,
            at_utf16: at.utf16,
            unit_spans: None,
        };
        self.rules.latch(e);
    }

    /// Ends a batch text: closes open matches and the last sentence.
    pub(crate) fn finish(&mut self) {
        for chain in self.ngram.finish() {
            self.record_chain(chain);
        }
        let end = self.text.end();
        let Detector { tokens, rules, sentences, .. } = self;
        tokens.flush(|hash, is_number| {
            rules.on_token(hash, is_number, end);
            sentences.push_token(hash);
        });
        self.sentences.finish(&mut self.pairs);
        if !self.pairs.is_empty() {
            self.take_pairs();
        }
    }

    /// Where the text a chain repeats lies, if the chain is long enough to report and that text is
    /// still retained.
    fn chain_origin(&self, c: &Chain) -> Option<(u64, u64)> {
        if c.len() < self.settings.min_repeat_length as u64 {
            return None;
        }
        let orig_start = c.start.checked_sub(c.first_period)?;
        let orig_end = c.end.checked_sub(c.period)?;
        if orig_start < self.text.base() || orig_end <= orig_start {
            return None;
        }
        Some((orig_start, orig_end))
    }

    fn chain_section(&self, c: &Chain) -> Option<Section> {
        let (orig_start, orig_end) = self.chain_origin(c)?;
        Some(Section {
            original: self.text.span(orig_start, orig_end),
            repeat: self.text.span(c.start, c.end),
            similarity: c.similarity(),
            source: SectionSource::Ngram,
        })
    }

    fn record_chain(&mut self, c: Chain) {
        if let Some(section) = self.chain_section(&c) {
            self.covered += c.len();
            if let Some(held) = self.sentences.held() {
                if overlaps(&held.repeat, &section.repeat) {
                    if let Some(p) = self.sentences.confirm_held() {
                        self.pairs.push(p);
                    }
                }
            }
            self.push_section(section);
            if !self.pairs.is_empty() {
                self.take_pairs();
            }
        }
    }

    fn take_pairs(&mut self) {
        let pairs = std::mem::take(&mut self.pairs);
        for p in pairs {
            self.push_section(Section { original: p.original, repeat: p.repeat, similarity: p.similarity, source: SectionSource::Sentence });
        }
    }

    fn push_section(&mut self, s: Section) {
        self.describe_section(&s);
        self.recorded += 1;
        self.sections.push_back(s);
        if self.sections.len() > self.max_sections {
            self.sections.pop_front();
        }
    }

    /// Sections known now: closed ones plus the chain still growing, ordered by repeat start.
    pub(crate) fn sections(&self) -> Vec<Section> {
        let mut out: Vec<Section> = self.sections.iter().copied().collect();
        if let Some(live) = self.ngram.live_chain() {
            if let Some(s) = self.chain_section(&live) {
                out.push(s);
            }
        }
        if let Some(v) = self.rules.verdict() {
            if let Some(s) = self.verdict_section(v) {
                out.push(s);
            }
        }
        out.sort_by(|a, b| a.repeat.start.byte.cmp(&b.repeat.start.byte).then(a.repeat.end.byte.cmp(&b.repeat.end.byte)));
        out
    }

    fn verdict_section(&self, v: &LoopEvidence) -> Option<Section> {
        let (orig, rep) = v.unit_spans?;
        Some(Section { original: orig, repeat: rep, similarity: 1.0, source: SectionSource::Period })
    }

    /// The chain still growing, once it is long enough to report.
    fn reportable_live_chain(&self) -> Option<Chain> {
        self.ngram.live_chain().filter(|c| c.len() >= self.settings.min_repeat_length as u64)
    }

    /// What a stream check reports of this channel: whether any section is known, the ratio, and
    /// the sections version. One look at the chain still growing serves all three (it is rebuilt on
    /// every look, and a check is made for every chunk).
    pub(crate) fn check_parts(&self) -> (bool, f64, u64) {
        let live = self.reportable_live_chain();
        (self.has_sections(live.as_ref()), self.ratio_with(live.as_ref()), self.sections_version(live.as_ref()))
    }

    /// Changes whenever the list of sections changes, except for the growth of the section still
    /// growing ([`Detector::live_section`]), which a host can follow without re-reading the list.
    fn sections_version(&self, live: Option<&Chain>) -> u64 {
        let mut h = crate::hash::SeqHasher::new();
        h.push(self.recorded as u32);
        h.push((self.recorded >> 32) as u32);
        if let Some(c) = live {
            for v in [c.start, c.first_period] {
                h.push(v as u32);
                h.push((v >> 32) as u32);
            }
        }
        h.push(u32::from(self.rules.verdict().is_some()));
        h.finish()
    }

    /// The n-gram section still growing, if it is long enough to report.
    pub(crate) fn live_section(&self) -> Option<Section> {
        self.ngram.live_chain().and_then(|c| self.chain_section(&c))
    }

    /// True when [`Detector::live_section`] would give a section (without building its spans).
    pub(crate) fn has_live_section(&self) -> bool {
        self.ngram.live_chain().map_or(false, |c| self.chain_origin(&c).is_some())
    }

    /// True when any section is known.
    fn has_sections(&self, live: Option<&Chain>) -> bool {
        !self.sections.is_empty() || self.rules.verdict().map_or(false, |v| v.unit_spans.is_some()) || live.is_some()
    }

    /// Share of the normalized text inside near-exact repeats.
    pub(crate) fn ratio(&self) -> f64 {
        self.ratio_with(self.reportable_live_chain().as_ref())
    }

    fn ratio_with(&self, live: Option<&Chain>) -> f64 {
        let total = self.text.end();
        if total == 0 {
            return 0.0;
        }
        ((self.covered + live.map_or(0, |c| c.len())) as f64 / total as f64).min(1.0)
    }

    pub(crate) fn verdict(&self) -> Option<&LoopEvidence> {
        self.rules.verdict()
    }

    /// Soft evidence of repetition that is still current: a steer-level loop rule, or corroborated
    /// sentence repeats while the text goes in circles — most recent sentences restate earlier ones
    /// (however reworded), or it says (almost) nothing new.
    ///
    /// Borrowed when it is already built, so a stream that keeps steering for the same reason does
    /// not copy its evidence on every chunk.
    pub(crate) fn steer_evidence(&self) -> Option<EvidenceRef<'_>> {
        let pos = self.text.end();
        if let Some(e) = self.rules.soft(&self.text, pos) {
            return Some(e);
        }
        let window = self.settings.loop_rules.window_chars as u64;
        let recent = self.last_evidence_at.map_or(false, |at| at + window >= pos);
        let circling = self.sentences.mostly_recycled() || (pos > 0 && self.rules.low_gain(pos - 1));
        if recent && self.sentences.pairs_seen() >= 2 && circling {
            return self.section_evidence.as_ref().map(EvidenceRef::Held);
        }
        None
    }

    /// Describes the section just recorded, for steering (built once per section, not per chunk).
    fn describe_section(&mut self, s: &Section) {
        self.last_evidence_at = Some(self.text.end());
        let source = match s.source {
            SectionSource::Ngram => "ngram",
            SectionSource::Sentence => "sentence",
            SectionSource::Period => "period",
        };
        self.section_evidence = Some(LoopEvidence {
            rule: "repeated-section".into(),
            detail: format!("{} repeat of {} bytes (similarity {:.2}) while the text goes in circles", source, s.repeat.end.byte - s.repeat.start.byte, s.similarity),
            sample: String::new(),
            severity: Severity::Steer,
            start: s.repeat.start.byte,
            at: s.repeat.end.byte,
            start_utf16: s.repeat.start.utf16,
            at_utf16: s.repeat.end.utf16,
            unit_spans: None,
        });
    }

    pub(crate) fn consumed_bytes(&self) -> u64 {
        self.text.consumed().byte
    }

}

// The stream's two channels, read through free functions so that a method can hold them while it
// updates the stream's other fields.

fn total_chars(content: &Detector, reasoning: &Option<Detector>) -> u64 {
    content.chars + reasoning.as_ref().map_or(0, |r| r.chars)
}

fn verdict<'a>(content: &'a Detector, reasoning: &'a Option<Detector>) -> Option<&'a LoopEvidence> {
    content.verdict().or_else(|| reasoning.as_ref().and_then(|r| r.verdict()))
}

fn overlaps(a: &SourceSpan, b: &SourceSpan) -> bool {
    a.start.byte < b.end.byte && b.start.byte < a.end.byte
}

/// Checks a whole text for repetition: every near-exact repeat of at least `min_repeat_length` chars,
/// every corroborated sentence repeat, and a confirmed loop if there is one.
///
/// ```
/// use dedup_wasm::{check_repetition, DedupSettings};
/// let text = "The build failed because the cache was stale. ".repeat(4);
/// let result = check_repetition(&text, &DedupSettings::default()).unwrap();
/// assert!(result.repeated);
/// let s = &result.sections[0];
/// assert!(text[s.repeat_start..s.repeat_end].starts_with("The build failed"));
/// ```
pub fn check_repetition(text: &str, settings: &DedupSettings) -> Result<RepetitionResult, DedupError> {
    let (sections, ratio) = check_sections(text, settings)?;
    Ok(RepetitionResult { repeated: !sections.is_empty(), ratio, sections: sections.iter().map(Section::public).collect() })
}

/// [`check_repetition`] with both offset units kept (for the wasm bridge).
pub(crate) fn check_sections(text: &str, settings: &DedupSettings) -> Result<(Vec<Section>, f64), DedupError> {
    settings.validate()?;
    let mut d = Detector::batch(settings.clone(), text.len());
    d.push_str(text);
    d.finish();
    Ok((d.sections(), d.ratio()))
}

/// A streaming monitor: feed chunks as they arrive, act on the verdict.
///
/// Memory is bounded: the last `max_window_chars` chars, their fingerprints, and at most
/// [`MAX_STREAM_SECTIONS`] sections are kept, however long the stream runs.
///
/// ```
/// use dedup_wasm::{DedupSettings, StreamingState, StreamAction};
/// let mut monitor = StreamingState::new(DedupSettings::default()).unwrap();
/// let mut last = None;
/// for _ in 0..20 {
///     last = Some(monitor.feed_chunk("I will check the file again. "));
/// }
/// assert_eq!(monitor.determine_action(last.as_ref().unwrap()), StreamAction::Abort);
/// ```
pub struct StreamingState {
    content: Detector,
    reasoning: Option<Detector>,
    chunks: u64,
    last_delta_at: u64,
    last: Option<StreamCheck>,
    /// Incremented whenever a check's evidence differs from the check before it.
    evidence_serial: u64,
}

impl StreamingState {
    /// A monitor with validated settings.
    pub fn new(settings: DedupSettings) -> Result<Self, DedupError> {
        settings.validate()?;
        Ok(StreamingState::fresh(settings))
    }

    fn fresh(settings: DedupSettings) -> Self {
        StreamingState {
            content: Detector::stream(settings.clone(), false),
            reasoning: None,
            chunks: 0,
            last_delta_at: 0,
            last: None,
            evidence_serial: 0,
        }
    }

    /// The settings in force.
    pub fn settings(&self) -> &DedupSettings {
        self.content.settings()
    }

    /// Feeds a chunk of the model's visible output and returns the stream's state.
    pub fn feed_chunk(&mut self, chunk: &str) -> StreamCheck {
        self.feed(chunk, false).clone()
    }

    /// Feeds a chunk of the model's reasoning ("thinking") text: it is analyzed on its own channel with
    /// its own cap (`loop.max_reasoning_chars`); a loop there aborts the stream as well.
    pub fn feed_reasoning_chunk(&mut self, chunk: &str) -> StreamCheck {
        self.feed(chunk, true).clone()
    }

    /// Feeds a chunk to a channel and returns the check, which is kept as [`StreamingState::last_check`]
    /// (the wasm bridge reads it in place rather than copying its evidence on every chunk).
    pub(crate) fn feed(&mut self, chunk: &str, reasoning: bool) -> &StreamCheck {
        if reasoning {
            let settings = self.content.settings().clone();
            self.reasoning
                .get_or_insert_with(|| Detector::stream(settings, true))
                .push_str(chunk);
        } else {
            self.content.push_str(chunk);
        }
        self.chunks += 1;
        let seen = self.total_chars();
        let delta = seen - self.last_delta_at;
        let hold = delta < self.content.settings().min_chunk_delta as u64 && self.verdict().is_none();
        let held = matches!(&self.last, Some(last) if hold && last.action != StreamAction::Abort);
        if !held {
            self.last_delta_at = seen;
            self.refresh_check();
        }
        self.last.get_or_insert_with(StreamCheck::blank)
    }

    /// Changes whenever the evidence of the latest check differs from that of the check before it
    /// (and on the first check).
    #[cfg_attr(not(feature = "abi-detect"), allow(dead_code))] // read only by the wasm ABI
    pub(crate) fn evidence_serial(&self) -> u64 {
        self.evidence_serial
    }

    fn total_chars(&self) -> u64 {
        total_chars(&self.content, &self.reasoning)
    }

    fn verdict(&self) -> Option<&LoopEvidence> {
        verdict(&self.content, &self.reasoning)
    }

    /// Brings the kept check up to date with the stream as it is now. The check is updated in place:
    /// its evidence is replaced only when it differs (then `evidence_serial` moves on), so a verdict
    /// or steer that still stands is neither copied nor compared against a fresh copy.
    fn refresh_check(&mut self) {
        let StreamingState { content, reasoning, chunks, last, evidence_serial, .. } = self;
        let s = content.settings();
        let gated = *chunks <= s.warmup_chunks as u64 || total_chars(content, reasoning) < s.min_content_chars() as u64;
        let (action, evidence) = match verdict(content, reasoning) {
            Some(v) => (StreamAction::Abort, Some(EvidenceRef::Held(v))),
            None if gated => (StreamAction::None, None),
            None => {
                let e = content.steer_evidence().or_else(|| reasoning.as_ref().and_then(|r| r.steer_evidence()));
                (if e.is_some() { StreamAction::Steer } else { StreamAction::None }, e)
            }
        };
        let (repeated, ratio, sections_version) = content.check_parts();
        let first = last.is_none();
        let check = last.get_or_insert_with(StreamCheck::blank);
        let same = check.evidence.as_ref() == evidence.as_ref().map(EvidenceRef::get);
        if !same {
            check.evidence = evidence.map(EvidenceRef::into_owned);
        }
        *evidence_serial += u64::from(first || !same);
        check.repeated = repeated;
        check.ratio = ratio;
        check.action = action;
        check.bytes_seen = content.consumed_bytes();
        check.sections_version = sections_version;
    }

    /// The most recent repeated sections of the content channel (at most [`MAX_STREAM_SECTIONS`]),
    /// ordered by where the repeat starts; byte offsets into everything fed.
    pub fn sections(&self) -> Vec<RepeatedSection> {
        self.recent_sections().iter().map(Section::public).collect()
    }

    /// The n-gram section still growing (it is also in [`StreamingState::sections`]), if any.
    pub fn live_section(&self) -> Option<RepeatedSection> {
        self.content.live_section().map(|s| s.public())
    }

    #[cfg_attr(not(feature = "abi-detect"), allow(dead_code))] // read only by the wasm ABI
    pub(crate) fn live_section_spans(&self) -> Option<Section> {
        self.content.live_section()
    }

    /// True when [`StreamingState::live_section`] would give a section (cheaper than building it).
    #[cfg_attr(not(feature = "abi-detect"), allow(dead_code))] // read only by the wasm ABI
    pub(crate) fn has_live_section(&self) -> bool {
        self.content.has_live_section()
    }

    pub(crate) fn recent_sections(&self) -> Vec<Section> {
        let all = self.content.sections();
        let skip = all.len().saturating_sub(MAX_STREAM_SECTIONS);
        all[skip..].to_vec()
    }

    /// The action for a check returned by this monitor.
    pub fn determine_action(&self, check: &StreamCheck) -> StreamAction {
        check.action
    }

    /// Forgets everything: the monitor is as new, with the same settings.
    pub fn reset(&mut self) {
        let settings = self.content.settings().clone();
        *self = StreamingState::fresh(settings);
    }

    /// The latest check (None before the first chunk).
    pub fn last_check(&self) -> Option<&StreamCheck> {
        self.last.as_ref()
    }


}

#[cfg(test)]
mod tests {
    use super::*;

    const LOOP_UNIT: &str = "I will check the configuration file again. ";

    fn settings() -> DedupSettings {
        DedupSettings::default()
    }

    /// Distinct prose: no sentence, phrase or 16-char gram repeats.
    fn prose(n_sentences: usize) -> String {
        (0..n_sentences).map(|i| format!("Entry {} records a reading of {} units at station {}. ", i, i * 37 % 1009, i * 7919 % 4099)).collect()
    }

    #[test]
    fn a_batch_check_is_a_stream_fed_in_one_piece() {
        // The stream looks for steer findings and the batch does not; the sections must not differ.
        let text = format!("{}{}", prose(20), LOOP_UNIT.repeat(8));
        let batch = check_repetition(&text, &settings()).unwrap();
        let mut d = Detector::new(settings(), usize::MAX, usize::MAX, false, 0, true);
        d.push_str(&text);
        d.finish();
        let direct: Vec<RepeatedSection> = d.sections().iter().map(Section::public).collect();
        assert_eq!(batch.sections, direct);
        assert_eq!(batch.ratio, d.ratio());
        assert!(batch.repeated);
    }

    #[test]
    fn sections_are_ordered_by_repeat_start_and_lie_inside_the_text() {
        let text = format!("{}{}{}", LOOP_UNIT.repeat(4), prose(10), "Привет, мир! 你好世界。 ".repeat(6));
        let r = check_repetition(&text, &settings()).unwrap();
        assert!(r.sections.len() >= 2);
        for w in r.sections.windows(2) {
            assert!(w[0].repeat_start <= w[1].repeat_start);
        }
        for s in &r.sections {
            assert!(s.original_start < s.original_end && s.original_end <= text.len());
            assert!(s.repeat_start < s.repeat_end && s.repeat_end <= text.len());
            assert!(text.is_char_boundary(s.repeat_start) && text.is_char_boundary(s.repeat_end));
            assert!(s.similarity > 0.0 && s.similarity <= 1.0);
        }
    }

    #[test]
    fn warmup_chunks_hold_back_every_verdict_but_an_abort() {
        let mut s = settings();
        s.warmup_chunks = 1_000;
        let mut m = StreamingState::new(s).unwrap();
        let mut actions = Vec::new();
        for _ in 0..40 {
            actions.push(m.feed_chunk(LOOP_UNIT).action);
        }
        assert!(!actions.contains(&StreamAction::Steer));
        assert_eq!(actions.last(), Some(&StreamAction::Abort));
    }

    #[test]
    fn the_content_gate_holds_back_steering_on_short_text() {
        // Two sentences said twice, back to back: that steers, but the text is below
        // 8 * min_repeat_length chars.
        let text = "The cache was stale after the deploy. Workers kept the old config file. \
                    The cache was stale after the deploy. Workers kept the old config file. Then";
        let mut gated = StreamingState::new(settings()).unwrap();
        assert_eq!(gated.feed_chunk(text).action, StreamAction::None);
        let mut s = settings();
        s.min_repeat_length = 10;
        let mut open = StreamingState::new(s).unwrap();
        let check = open.feed_chunk(text);
        assert_eq!(check.action, StreamAction::Steer);
        assert_eq!(check.evidence.unwrap().severity, Severity::Steer);
    }

    #[test]
    fn a_chunk_below_min_chunk_delta_reuses_the_previous_check() {
        let mut s = settings();
        s.min_chunk_delta = 100;
        let mut m = StreamingState::new(s).unwrap();
        let first = m.feed_chunk(&prose(5));
        let again = m.feed_chunk(LOOP_UNIT);
        assert_eq!(first, again);
        assert!(again.bytes_seen < (prose(5).len() + LOOP_UNIT.len()) as u64);
    }

    #[test]
    fn an_abort_latches_whatever_follows() {
        let mut m = StreamingState::new(settings()).unwrap();
        let mut aborted = false;
        for _ in 0..20 {
            aborted |= m.feed_chunk(LOOP_UNIT).action == StreamAction::Abort;
        }
        assert!(aborted);
        let after = m.feed_chunk(&prose(30));
        assert_eq!(after.action, StreamAction::Abort);
        assert_eq!(after.evidence.as_ref().unwrap().severity, Severity::Abort);
    }

    #[test]
    fn reset_forgets_everything_and_keeps_the_settings() {
        let mut s = settings();
        s.min_repeat_length = 40;
        let mut m = StreamingState::new(s.clone()).unwrap();
        for _ in 0..20 {
            m.feed_chunk(LOOP_UNIT);
        }
        m.reset();
        assert!(m.last_check().is_none());
        assert_eq!(m.settings(), &s);
        let check = m.feed_chunk("A fresh start. ");
        assert_eq!(check.action, StreamAction::None);
        assert!(m.sections().is_empty());
        assert_eq!(check.bytes_seen, "A fresh start. ".len() as u64);
    }

    #[test]
    fn the_content_cap_aborts_with_its_rule() {
        let mut s = settings();
        s.loop_rules.max_chars = 500;
        let mut m = StreamingState::new(s).unwrap();
        let text = prose(40);
        let check = m.feed_chunk(&text);
        assert_eq!(check.action, StreamAction::Abort);
        let e = check.evidence.unwrap();
        assert_eq!(e.rule, "max-chars");
        assert_eq!(e.at, 500);
    }

    #[test]
    fn the_reasoning_channel_has_its_own_cap_and_its_loops_abort() {
        let mut s = settings();
        s.loop_rules.max_reasoning_chars = 300;
        let mut m = StreamingState::new(s).unwrap();
        assert_eq!(m.feed_chunk(&prose(4)).action, StreamAction::None);
        let check = m.feed_reasoning_chunk(&prose(10));
        assert_eq!(check.action, StreamAction::Abort);
        assert_eq!(check.evidence.unwrap().rule, "max-reasoning-chars");
        // bytes_seen counts the content channel only.
        assert_eq!(check.bytes_seen, prose(4).len() as u64);

        let mut m = StreamingState::new(settings()).unwrap();
        let mut last = None;
        for _ in 0..20 {
            last = Some(m.feed_reasoning_chunk(LOOP_UNIT));
        }
        assert_eq!(last.unwrap().action, StreamAction::Abort);
        assert!(m.content.sections().is_empty());
        assert!(m.reasoning.as_ref().unwrap().verdict().is_some());
    }

    #[test]
    fn stream_memory_is_bounded_by_max_window_chars() {
        let mut s = settings();
        s.max_window_chars = 8192;
        let mut m = StreamingState::new(s).unwrap();
        // Varied text with recurring phrases and loops: fills every index and the sections list.
        let mut fed = 0usize;
        let mut i = 0usize;
        while fed < 400_000 {
            let piece = if i % 7 == 0 { LOOP_UNIT.repeat(3) } else { format!("Line {} of the report says {} and {}. ", i, i * 31 % 977, i % 13) };
            fed += piece.len();
            m.feed_chunk(&piece);
            i += 1;
        }
        let d = &m.content;
        let retained = d.text.end() - d.text.base();
        assert!(retained <= 8192 + 8192 / 2, "retained {}", retained);
        assert!(d.text.end() > 300_000);
        assert!(d.sections.len() <= MAX_STREAM_SECTIONS);
        assert!(m.sections().len() <= MAX_STREAM_SECTIONS);
        assert!(d.pairs.is_empty());
    }

    #[test]
    fn offsets_of_a_stream_count_everything_fed_so_far() {
        let mut m = StreamingState::new(settings()).unwrap();
        let head = "😀 emoji and CJK 中文 first. ";
        m.feed_chunk(head);
        let mut last = None;
        for _ in 0..6 {
            last = Some(m.feed_chunk(LOOP_UNIT));
        }
        let check = last.unwrap();
        let text = format!("{}{}", head, LOOP_UNIT.repeat(6));
        assert_eq!(check.bytes_seen, text.len() as u64);
        let sections = m.sections();
        assert!(!sections.is_empty());
        for s in &sections {
            assert!(text.is_char_boundary(s.repeat_start) && s.repeat_end <= text.len());
            assert!(s.repeat_start >= head.len());
        }
    }
}
