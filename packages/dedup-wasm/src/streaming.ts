/**
 * The streaming monitor: feed chunks as they arrive, get none / steer / abort.
 * @module
 */
import { DedupWasmTrapError } from './errors.js';
import { putScratchString, scratchPtr, readJson, rethrowTrap, throwCoreError, toCoreJson, withStrings, call } from './wasm/abi.js';
import { readSections } from './wasm/sections.js';
import { core, epoch, type CoreExports } from './wasm/loader.js';
import { handleRegistry, type CoreSlot } from './wasm/handles.js';
import { requireString, type RepeatedSection } from './repetition.js';
import { settingsArgument, type SettingsOrPreset } from './settings.js';

/** What the host should do. */
export type StreamAction = 'none' | 'steer' | 'abort';

/** A loop rule's finding. */
export interface LoopEvidence {
  /** The rule, e.g. `tight-period-loop`, `unit-loop`, `paragraph-loop`, `char-collapse-loop`, `max-chars`. */
  rule: string;
  /** What it measured, in words. */
  detail: string;
  /** A sample of the repeated unit (lowercased, whitespace collapsed; at most 80 chars). */
  sample: string;
  /** `abort` for a confirmed loop, `steer` for softer evidence. */
  severity: 'steer' | 'abort';
  /** UTF-16 index in the channel's text where the repeated stretch begins. */
  start: number;
  /** UTF-16 index of the text seen when the rule fired. */
  at: number;
}

/** The state of a stream after a chunk. */
export interface StreamCheck {
  /** True when a repeated section is known in the retained text. */
  repeated: boolean;
  /** Share of the stream so far that repeats earlier text near-exactly. */
  ratio: number;
  /** What the policy recommends now. */
  action: StreamAction;
  /** The most recent repeated sections (at most 32), UTF-16 indices into the content stream. */
  sections: RepeatedSection[];
  /** The loop verdict when aborting, the soft finding when steering, otherwise null. */
  evidence: LoopEvidence | null;
  /** UTF-16 units of content fed so far. */
  charsSeen: number;
}

/** A streaming monitor. Free it with `dispose()` (or `using`); a forgotten one is freed by GC. */
export interface StreamingDedup extends Disposable {
  /** Feeds a chunk of visible output. */
  feedChunk(chunk: string): StreamCheck;
  /** Feeds a chunk of reasoning text: its own channel and cap; a loop there aborts too. */
  feedReasoningChunk(chunk: string): StreamCheck;
  /** The action of a check (the latest one when omitted). */
  determineAction(check?: StreamCheck): StreamAction;
  /** The latest check, or null before the first chunk. */
  readonly lastCheck: StreamCheck | null;
  /** Forgets everything seen; settings stay. */
  reset(): void;
  /** Frees the monitor; later calls throw. */
  dispose(): void;
}

const ACTIONS: readonly StreamAction[] = ['none', 'steer', 'abort'];

type Slot = CoreSlot;

const registry = handleRegistry((x, handle) => x.dw_stream_free(handle));

/** Bits of the status `dw_stream_feed` returns (see ffi.rs). */
const REPEATED = 4;
const SECTIONS_CHANGED = 8;
const EVIDENCE_CHANGED = 16;
const LIVE_SECTION = 32;
const SOME_RATIO = 64;

/** A stream handle in the core, with the bookkeeping every face over it needs. */
export class StreamHandle {
  private slot: Slot | null;
  private readonly settingsJson: string;
  private sections: RepeatedSection[] = [];
  private evidence: LoopEvidence | null = null;
  /** A high surrogate held back until its low half arrives (per channel). */
  private pending: [string, string] = ['', ''];
  private seen = [0, 0];
  last: StreamCheck | null = null;

  constructor(settingsOrPreset: SettingsOrPreset | undefined) {
    this.settingsJson = toCoreJson(settingsArgument(settingsOrPreset));
    this.slot = this.create();
  }

  private create(): Slot {
    const handle = withStrings([this.settingsJson], (x, [s]) => {
      const h = x.dw_stream_new(s!.ptr, s!.len);
      if (h === 0) throwCoreError(x);
      return h;
    });
    const slot = { handle, epoch: epoch() };
    registry.register(this, slot, this);
    return slot;
  }

  private live(): Slot {
    if (!this.slot) throw new Error('dedup-wasm: this monitor was disposed');
    if (this.slot.epoch !== epoch()) {
      throw new DedupWasmTrapError('dedup-wasm: this monitor was lost when the core restarted after a trap; call reset()');
    }
    return this.slot;
  }

  /** Feeds `chunk` on channel 0 (content) or 1 (reasoning). */
  feed(chunk: string, channel: 0 | 1, field: string): StreamCheck {
    requireString(chunk, field);
    const slot = this.live();
    let text = this.pending[channel] + chunk;
    this.seen[channel]! += chunk.length;
    // Keep a trailing high surrogate for the next chunk, so a pair split across chunks stays one char.
    const last = text.charCodeAt(text.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      this.pending[channel] = text.slice(-1);
      text = text.slice(0, -1);
    } else {
      this.pending[channel] = '';
    }
    // `call` spelled out: a stream is fed thousands of times a second, and a closure per feed shows.
    const x = core();
    try {
      return this.feedInCore(slot, text, channel, x);
    } catch (e) {
      return rethrowTrap(e);
    }
  }

  /** The part of a feed that runs against the exports: copy in, feed, read what changed. */
  private feedInCore(slot: Slot, text: string, channel: 0 | 1, x: CoreExports): StreamCheck {
    const len = putScratchString(x, text);
    const code = x.dw_stream_feed(slot.handle, scratchPtr(), len, channel);
    if (code < 0) throwCoreError(x);
    const first = this.last === null;
    if (first || (code & SECTIONS_CHANGED) !== 0) {
      this.sections = this.readAllSections(x, slot.handle);
    } else if ((code & LIVE_SECTION) !== 0) {
      this.sections = this.withLiveSection(x, slot.handle);
    }
    if (first || (code & EVIDENCE_CHANGED) !== 0) {
      this.evidence = this.readJsonOf<LoopEvidence | null>(x, x.dw_stream_evidence(slot.handle));
    }
    const check: StreamCheck = {
      repeated: (code & REPEATED) !== 0,
      ratio: (code & SOME_RATIO) !== 0 ? x.dw_stream_ratio(slot.handle) : 0,
      action: ACTIONS[code & 3]!,
      sections: this.sections,
      evidence: this.evidence,
      charsSeen: this.seen[0]!,
    };
    this.last = check;
    return check;
  }

  private readAllSections(x: CoreExports, handle: number): RepeatedSection[] {
    const count = x.dw_stream_sections(handle);
    if (count < 0) throwCoreError(x);
    return readSections(x, count, 0).sections;
  }

  private readJsonOf<T>(x: CoreExports, status: number): T {
    if (status < 0) throwCoreError(x);
    return readJson<T>(x);
  }

  /**
   * The section list with the growing section's new extent: the list itself did not change, so only
   * one section crosses the boundary (a fresh array, so earlier checks keep what they saw).
   */
  private withLiveSection(x: CoreExports, handle: number): RepeatedSection[] {
    const status = x.dw_stream_live(handle);
    if (status < 0) throwCoreError(x);
    if (status === 0) return this.sections;
    const live = readSections(x, 1, 0).sections[0]!;
    const i = this.sections.findIndex((s) => s.source === live.source && s.repeatStart === live.repeatStart && s.originalStart === live.originalStart);
    if (i < 0) return this.readAllSections(x, handle);
    const next = this.sections.slice();
    next[i] = live;
    return next;
  }

  /** UTF-16 units fed on a channel. */
  charsSeen(channel: 0 | 1): number {
    return this.seen[channel]!;
  }

  reset(): void {
    if (!this.slot) throw new Error('dedup-wasm: this monitor was disposed');
    if (this.slot.epoch === epoch()) {
      const handle = this.slot.handle;
      call((x) => {
        if (x.dw_stream_reset(handle) < 0) throwCoreError(x);
      });
    } else {
      registry.unregister(this);
      this.slot = this.create();
    }
    this.sections = [];
    this.evidence = null;
    this.pending = ['', ''];
    this.seen = [0, 0];
    this.last = null;
  }

  dispose(): void {
    if (!this.slot) return;
    const slot = this.slot;
    this.slot = null;
    registry.unregister(this);
    if (slot.epoch === epoch()) call((x) => x.dw_stream_free(slot.handle));
  }
}

/**
 * Creates a streaming monitor. Feed it each chunk of model output; each call returns the stream's
 * state with the recommended action. Work per chunk is proportional to the chunk, and memory is
 * bounded by `maxWindowChars`, however long the stream.
 *
 * ```ts
 * await initDedupWasm();
 * using monitor = createStreamingDedup();
 * for await (const chunk of stream) {
 *   const check = monitor.feedChunk(chunk);
 *   if (check.action === 'abort') break; // a confirmed loop: stop paying for it
 * }
 * ```
 */
export function createStreamingDedup(settingsOrPreset?: SettingsOrPreset): StreamingDedup {
  const h = new StreamHandle(settingsOrPreset);
  return {
    feedChunk: (chunk) => h.feed(chunk, 0, 'chunk'),
    feedReasoningChunk: (chunk) => h.feed(chunk, 1, 'chunk'),
    determineAction: (check) => (check ?? h.last)?.action ?? 'none',
    get lastCheck() {
      return h.last;
    },
    reset: () => h.reset(),
    dispose: () => h.dispose(),
    [Symbol.dispose]: () => h.dispose(),
  };
}
