/**
 * The loop detector face (the API of the original `loop-detector`): feed text, get `null` until a
 * loop is confirmed, then the same verdict object forever.
 * @module
 */
import { DedupTypeError } from './errors.js';
import { requireString } from './repetition.js';
import { LOOP_DEFAULTS, type LoopConfig } from './settings.js';
import { StreamHandle, type LoopEvidence } from './streaming.js';
import { throwCoreError, toCoreJson, withStrings } from './wasm/abi.js';

/** A confirmed loop. */
export interface LoopHit {
  /** The rule that fired. */
  rule: string;
  /** What it measured. */
  detail: string;
  /** A sample of the repeated unit. */
  sample: string;
  /** UTF-16 index where the loop began, in the channel's text. */
  start: number;
  /** Which channel looped. */
  channel: 'content' | 'reasoning';
}

/** A loop detector. */
export interface LoopDetector extends Disposable {
  /** Feeds visible output; returns the verdict once a loop is confirmed (the same object every time). */
  feed(text: string): LoopHit | null;
  /** Feeds reasoning text (own channel, cap `maxReasoningChars`). */
  feedReasoning(text: string): LoopHit | null;
  /** True once a loop was confirmed. */
  tripped(): boolean;
  /** The verdict, or null. */
  evidence(): LoopHit | null;
  /** UTF-16 units fed so far, both channels. */
  size(): number;
  /** Frees the detector. */
  dispose(): void;
}

function checkConfig(config: Partial<LoopConfig> | undefined): Partial<LoopConfig> {
  if (config === undefined || config === null) return {};
  if (typeof config !== 'object' || Array.isArray(config)) {
    throw new DedupTypeError('config', 'must be an object', `config must be an object, got ${typeof config}`);
  }
  return config;
}

/**
 * Creates a loop detector. `config` overrides {@link LOOP_DEFAULTS}.
 *
 * ```ts
 * const detector = createLoopDetector();
 * for await (const chunk of stream) {
 *   const hit = detector.feed(chunk);
 *   if (hit) { console.log(hit.rule, hit.detail); break; }
 * }
 * ```
 */
export function createLoopDetector(config?: Partial<LoopConfig>): LoopDetector {
  const h = new StreamHandle({ loop: checkConfig(config) });
  let hit: LoopHit | null = null;
  const feed = (text: string, channel: 0 | 1): LoopHit | null => {
    if (hit) return hit;
    const check = h.feed(text, channel, 'text');
    if (check.action === 'abort' && check.evidence) hit = toHit(check.evidence, channel);
    return hit;
  };
  return {
    feed: (text) => feed(text, 0),
    feedReasoning: (text) => feed(text, 1),
    tripped: () => hit !== null,
    evidence: () => hit,
    size: () => h.charsSeen(0) + h.charsSeen(1),
    dispose: () => h.dispose(),
    [Symbol.dispose]: () => h.dispose(),
  };
}

function toHit(e: LoopEvidence, channel: 0 | 1): LoopHit {
  return Object.freeze({ rule: e.rule, detail: e.detail, sample: e.sample, start: e.start, channel: channel === 0 ? 'content' : 'reasoning' });
}

/**
 * True when the last `windowChars` of `text` collapsed to a handful of distinct chars in short,
 * few kinds of fragments (the `char-collapse-loop` test on its own).
 */
export function isCharCollapsed(text: string, config?: Partial<LoopConfig>): boolean {
  requireString(text, 'text');
  const cfg = toCoreJson(checkConfig(config));
  return withStrings([text, cfg], (x, [t, c]) => {
    const r = x.dw_is_char_collapsed(t!.ptr, t!.len, c!.ptr, c!.len);
    if (r < 0) throwCoreError(x);
    return r === 1;
  });
}

export { LOOP_DEFAULTS };
