/**
 * Settings of the detector, presets and the loop-rule defaults. The values mirror the Rust core's
 * (`presets.rs`, `period.rs`); a test proves they are identical to what the core resolves.
 * @module
 */
import { DedupRangeError, DedupTypeError } from './errors.js';

/** Thresholds of the loop rules (see ARCHITECTURE.md, "Loop rules"). */
export interface LoopConfig {
  /** Chars of recent text the window rules look at. */
  windowChars: number;
  /** Periods up to this many chars are reported as `tight-period-loop`. */
  periodMax: number;
  /** Self-match of the tail at its period for the fragment rules. */
  periodMatch: number;
  /** Chars a loop must cover (all its occurrences) before it aborts. */
  minLoopChars: number;
  /** Chars a loop of a single punctuation char must cover (separator lines are legitimate). */
  minSeparatorChars: number;
  /** Shortest period of a `paragraph-loop`. */
  restartMinPeriod: number;
  /** Chars a paragraph must repeat verbatim to be a `paragraph-loop`. */
  restartMinChars: number;
  /** Most distinct fragments in the window for `char-collapse-loop`. */
  maxFragmentKinds: number;
  /** Distinct-char ratio under which the window counts as collapsed. */
  charCollapseRatio: number;
  /** Median fragment length under which the window counts as fragmented. */
  collapseMedianFragment: number;
  /** Chars without a new token bigram that loosen the fragment gates (zero information gain). */
  zeroGainChars: number;
  /** Loosened fragment-kind gate under zero information gain. */
  boostedFragmentKinds: number;
  /** Loosened distinct-char ratio under zero information gain. */
  boostedCharRatio: number;
  /** Share of recycled sentences in the window for `sentence-recycle` (steers only). */
  sentRecycle: number;
  /** Sentences the window must hold for `sentence-recycle`. */
  sentRecycleMinSentences: number;
  /** Window chars needed for `sentence-recycle`. */
  sentRecycleMinWindow: number;
  /** Share of 16-grams recycled within the window for `gram-recycle-16` (steers only). */
  gramRecycle16: number;
  /** Window chars needed for `gram-recycle-16`. */
  gramRecycleMinWindow: number;
  /** 3-gram redundancy of the window for `tight-phrase-loop` (steers only). */
  tightRedundancy: number;
  /** Window chars needed for `tight-phrase-loop`. */
  tightMinWindow: number;
  /** Hard cap of the content channel in chars (0 = off). */
  maxChars: number;
  /** Hard cap of the reasoning channel in chars (0 = off). */
  maxReasoningChars: number;
}

/** Settings of the repetition detector (see the README's presets table). */
export interface DedupSettings {
  /** Minimum similarity (matched chars / span) of a near-exact repeated section. In (0, 1]. */
  ngramThreshold: number;
  /** Minimum token Jaccard for two sentences to count as the same statement. In (0, 1]. */
  sentenceThreshold: number;
  /** Largest gap in chars a near-exact section may bridge between two exact matches. */
  windowSize: number;
  /** Sampling stride of the long-range fingerprint index. */
  stepSize: number;
  /** Shortest repeated section reported, in chars; also the content gate (8x this). */
  minRepeatLength: number;
  /** Occurrences of a unit that make a confirmed loop. */
  maxRepetitions: number;
  /** Sentences further apart than this are never compared. */
  contextGapMax: number;
  /** Sentences with fewer tokens are ignored by the sentence pass. */
  minSentenceTokens: number;
  /** Initial chunks during which a stream gives no verdict. */
  warmupChunks: number;
  /** A chunk adding fewer chars reuses the previous verdict. */
  minChunkDelta: number;
  /** Memory bound of a stream in chars (at least 4096). */
  maxWindowChars: number;
  /** Loop-rule thresholds. */
  loop: LoopConfig;
}

/** Names of the presets. */
export type DedupPresetName = 'default' | 'relaxed' | 'sensitive';

/** Settings overrides: any subset of the fields (and of `loop`), optionally over a named preset. */
export type DedupSettingsInput = Partial<Omit<DedupSettings, 'loop'>> & {
  loop?: Partial<LoopConfig>;
  preset?: DedupPresetName;
};

/** A preset name or settings overrides. */
export type SettingsOrPreset = DedupPresetName | DedupSettingsInput;

/** Defaults of the loop rules. */
export const LOOP_DEFAULTS: Readonly<LoopConfig> = Object.freeze({
  windowChars: 1600,
  periodMax: 48,
  periodMatch: 0.92,
  minLoopChars: 120,
  minSeparatorChars: 600,
  restartMinPeriod: 200,
  restartMinChars: 300,
  maxFragmentKinds: 6,
  charCollapseRatio: 0.1,
  collapseMedianFragment: 10,
  zeroGainChars: 400,
  boostedFragmentKinds: 10,
  boostedCharRatio: 0.16,
  sentRecycle: 0.8,
  sentRecycleMinSentences: 20,
  sentRecycleMinWindow: 600,
  gramRecycle16: 0.8,
  gramRecycleMinWindow: 900,
  tightRedundancy: 0.9,
  tightMinWindow: 400,
  maxChars: 200_000,
  maxReasoningChars: 120_000,
});

/** The default settings. */
export const DEFAULT_SETTINGS: Readonly<DedupSettings> = Object.freeze({
  ngramThreshold: 0.95,
  sentenceThreshold: 0.75,
  windowSize: 100,
  stepSize: 25,
  minRepeatLength: 50,
  maxRepetitions: 3,
  contextGapMax: 8,
  minSentenceTokens: 4,
  warmupChunks: 0,
  minChunkDelta: 1,
  maxWindowChars: 65_536,
  loop: LOOP_DEFAULTS,
});

/** The presets. Only the fields of the table differ from the defaults. */
export const PRESETS: Readonly<Record<DedupPresetName, Readonly<DedupSettings>>> = Object.freeze({
  default: DEFAULT_SETTINGS,
  relaxed: Object.freeze({ ...DEFAULT_SETTINGS, ngramThreshold: 0.92, stepSize: 15, minRepeatLength: 80 }),
  sensitive: Object.freeze({ ...DEFAULT_SETTINGS, ngramThreshold: 0.75, stepSize: 3, minRepeatLength: 30 }),
});

/** The settings of a preset (a fresh, mutable copy). */
export function resolveDedupPreset(name: DedupPresetName): DedupSettings {
  if (typeof name !== 'string') throw new DedupTypeError('preset', 'must be a string', `preset must be a string, got ${typeof name}`);
  const preset = (PRESETS as Record<string, DedupSettings>)[name];
  if (!preset || !Object.hasOwn(PRESETS, name)) {
    throw new DedupRangeError('preset', 'must be one of default, relaxed, sensitive', `invalid preset: must be one of default, relaxed, sensitive (got ${name})`);
  }
  return { ...preset, loop: { ...preset.loop } };
}

/** Checks the shape of a settings argument before it goes to the core (which checks the values). */
export function settingsArgument(value: SettingsOrPreset | undefined, field = 'settings'): SettingsOrPreset | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') {
    resolveDedupPreset(value);
    return value;
  }
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new DedupTypeError(field, 'must be a preset name or an object', `${field} must be a preset name or an object, got ${Array.isArray(value) ? 'an array' : typeof value}`);
  }
  return value;
}
