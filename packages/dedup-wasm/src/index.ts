/**
 * dedup-wasm: keep repeated text from hurting LLM applications.
 *
 * - **output**: {@link createStreamingDedup}, {@link createLoopDetector}, {@link checkRepetition}
 * - **input**: `dedup-wasm/guard`
 * - **memory**: `dedup-wasm/memory`
 *
 * Call `await initDedupWasm()` once; the detection calls are then synchronous (memory dedup is async
 * because embedders are).
 * @packageDocumentation
 */
export { initDedupWasm, isDedupWasmReady, type WasmSource, type WasmSources } from './wasm/loader.js';
export {
  DedupRangeError,
  DedupTypeError,
  DedupNotInitializedError,
  DedupWasmTrapError,
  type ArgumentErrorDetails,
} from './errors.js';
export {
  DEFAULT_SETTINGS,
  LOOP_DEFAULTS,
  PRESETS,
  resolveDedupPreset,
  type DedupPresetName,
  type DedupSettings,
  type DedupSettingsInput,
  type LoopConfig,
  type SettingsOrPreset,
} from './settings.js';
export {
  checkRepetition,
  textSimilarity,
  tokenize,
  type RepeatedSection,
  type RepetitionResult,
  type SectionSource,
} from './repetition.js';
export {
  createStreamingDedup,
  type LoopEvidence,
  type StreamAction,
  type StreamCheck,
  type StreamingDedup,
} from './streaming.js';
export { createLoopDetector, isCharCollapsed, type LoopDetector, type LoopHit } from './loop.js';
export * from './adapters/index.js';
export * from './guard/index.js';
export * from './memory/index.js';
