/**
 * Tool-call loops: an agent calling the same tool, or the same few tools, over and over. The
 * detection (canonical arguments, volatile-part masking, cycle search) is the core's
 * (`toolcalls.rs`); this is its typed face.
 * @module
 */
import { DedupTypeError, DedupWasmTrapError } from '../errors.js';
import { call, readJson, throwCoreError, toCoreJson, withStrings } from '../wasm/abi.js';
import { epoch } from '../wasm/loader.js';
import { handleRegistry, type CoreSlot } from '../wasm/handles.js';

/** Thresholds of {@link createToolCallMonitor}; every field is optional. */
export interface ToolCallMonitorOptions {
  /** Longest cycle looked for, in calls (1 = only the same call back to back). 1..16; default 5. */
  maxCycleLen?: number;
  /** Back-to-back repetitions of an identical cycle that steer. At least 2; default 3. */
  steerRepeats?: number;
  /** Back-to-back repetitions of an identical cycle that abort. At least `steerRepeats`; default 5. */
  abortRepeats?: number;
  /** Repetitions of a cycle differing only in volatile values that steer. At least 2; default 4. */
  volatileSteerRepeats?: number;
  /** Repetitions of a cycle differing only in volatile values that abort. At least `volatileSteerRepeats`; default 8. */
  volatileAbortRepeats?: number;
  /**
   * More argument names whose values are volatile (case, `_`, `-` and spaces ignored), added to
   * the built-in ones (`timestamp`, `time`, `ts`, `date`, `nonce`, `seed`, `attempt`, `retry`,
   * `iteration`, `counter`, `seq`, `requestId`, `traceId`, `uuid`, any `…At` / `…_at`, and more).
   */
  volatileKeys?: string[];
}

/** The defaults of {@link ToolCallMonitorOptions} (the core's; a test proves they match). */
export const TOOL_CALL_DEFAULTS: Readonly<Required<ToolCallMonitorOptions>> = Object.freeze({
  maxCycleLen: 5,
  steerRepeats: 3,
  abortRepeats: 5,
  volatileSteerRepeats: 4,
  volatileAbortRepeats: 8,
  volatileKeys: [] as string[],
});

/** A tool call as an agent runtime sees it. */
export interface ToolCall {
  /** The tool's name. */
  name: string;
  /**
   * The arguments: any JSON value, or a JSON string (as OpenAI-style APIs send them), which is
   * parsed. Key order, JSON formatting and runs of whitespace in strings do not matter.
   */
  args?: unknown;
}

/** One call of a detected cycle. */
export interface ToolCallCycleCall {
  /** Tool name. */
  name: string;
  /** Canonical arguments (volatile parts shown as `<time>`, `<uuid>`, `<n>`, `<volatile>` for a volatile cycle), at most 200 chars. */
  args: string;
}

/** Why the monitor steers or aborts. */
export interface ToolCallEvidence {
  /** `exact`: identical calls; `volatile`: calls differing only in timestamps, counters, UUIDs… */
  kind: 'exact' | 'volatile';
  /** Calls in the repeated cycle (1 = the same call back to back). */
  period: number;
  /** Complete back-to-back repetitions of the cycle, the latest call included. */
  repeats: number;
  /** The calls of the cycle, oldest first. */
  cycle: ToolCallCycleCall[];
  /** Index (0-based, since creation or reset) of the first call of the repeated stretch. */
  start: number;
  /** Index of the call this verdict is about. */
  at: number;
  /** `steer` or `abort`. */
  severity: 'steer' | 'abort';
  /** What was seen, in words. */
  detail: string;
}

/** The verdict on a recorded call. */
export interface ToolCallVerdict {
  /** `none`, `steer` (tell the agent it is repeating itself) or `abort` (stop the agent). An abort latches until `reset()`. */
  action: 'none' | 'steer' | 'abort';
  /** The cycle behind a steer or abort, otherwise null. */
  evidence: ToolCallEvidence | null;
}

/** A tool-call loop monitor. Free it with `dispose()` (or `using`); a forgotten one is freed by GC. */
export interface ToolCallMonitor extends Disposable {
  /** Records a call and says whether the agent is looping. */
  record(call: ToolCall): ToolCallVerdict;
  /** Calls recorded since creation or the last reset. */
  readonly calls: number;
  /** The options in force (defaults filled in). */
  readonly options: Readonly<Required<ToolCallMonitorOptions>>;
  /** Forgets every call; options stay. */
  reset(): void;
  /** Frees the monitor; later calls throw. */
  dispose(): void;
}

type Slot = CoreSlot;

const registry = handleRegistry((x, handle) => x.dw_toolcalls_free(handle));

const OPTION_KEYS = new Set(Object.keys(TOOL_CALL_DEFAULTS));

function checkOptions(options: unknown): void {
  if (options === undefined || options === null) return;
  if (typeof options !== 'object' || Array.isArray(options)) throw new DedupTypeError('options', 'must be an object');
  for (const [key, value] of Object.entries(options)) {
    if (!OPTION_KEYS.has(key)) throw new DedupTypeError('options', 'has no field of this name', `createToolCallMonitor: unknown option "${key}"`);
    if (key === 'volatileKeys') {
      if (!Array.isArray(value) || value.some((k) => typeof k !== 'string')) throw new DedupTypeError('volatileKeys', 'must be an array of strings');
    } else if (typeof value !== 'number') {
      throw new DedupTypeError(key, 'must be a number');
    }
  }
}

function argsJson(args: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(args ?? null);
  } catch (e) {
    throw new DedupTypeError('args', 'must be JSON-serializable', `record: args cannot be serialized (${(e as Error).message})`);
  }
  if (json === undefined) throw new DedupTypeError('args', 'must be JSON-serializable', `record: args of type ${typeof args} cannot be serialized`);
  return json;
}

/**
 * Creates a monitor for an agent's tool calls. Record every call; it answers `steer` when a cycle
 * of 1 to `maxCycleLen` calls repeats back to back `steerRepeats` times (A A A, A B A B A B…) and
 * `abort` at `abortRepeats`. Calls are keyed on the tool name and canonical arguments; calls that
 * differ only in volatile values (timestamps, UUIDs, counters such as `attempt`) count with the
 * higher `volatile*Repeats` thresholds, since they may be legitimate polling.
 *
 * ```ts
 * const monitor = createToolCallMonitor();
 * for (const call of response.toolCalls) {
 *   const verdict = monitor.record({ name: call.function.name, args: call.function.arguments });
 *   if (verdict.action === 'abort') throw new Error(verdict.evidence!.detail);
 *   if (verdict.action === 'steer') messages.push({ role: 'user', content: 'You are repeating the same tool calls; try something else.' });
 * }
 * ```
 * @throws DedupTypeError / DedupRangeError naming the option at fault
 */
export function createToolCallMonitor(options?: ToolCallMonitorOptions): ToolCallMonitor {
  checkOptions(options);
  const optionsJson = toCoreJson(options ?? null);
  let resolved!: Required<ToolCallMonitorOptions>;
  const create = (): Slot => {
    const handle = withStrings([optionsJson], (x, [o]) => {
      const h = x.dw_toolcalls_new(o!.ptr, o!.len);
      if (h === 0) throwCoreError(x);
      resolved = readJson<Required<ToolCallMonitorOptions>>(x);
      return h;
    });
    return { handle, epoch: epoch() };
  };
  let slot: Slot | null = create();
  let calls = 0;
  const owner = {};
  registry.register(owner, slot, owner);

  const live = (): Slot => {
    if (!slot) throw new Error('dedup-wasm: this tool-call monitor was disposed');
    if (slot.epoch !== epoch()) {
      throw new DedupWasmTrapError('dedup-wasm: this tool-call monitor was lost when the core restarted after a trap; call reset()');
    }
    return slot;
  };
  const dispose = (): void => {
    if (!slot) return;
    const s = slot;
    slot = null;
    registry.unregister(owner);
    if (s.epoch === epoch()) call((x) => x.dw_toolcalls_free(s.handle));
  };

  return {
    record(c: ToolCall): ToolCallVerdict {
      if (typeof c !== 'object' || c === null) throw new DedupTypeError('call', 'must be an object { name, args }');
      if (typeof c.name !== 'string') throw new DedupTypeError('name', 'must be a string');
      if (c.name.trim() === '') throw new DedupTypeError('name', 'must be a non-empty string');
      const json = `{"name":${JSON.stringify(c.name)},"args":${argsJson(c.args)}}`;
      const s = live();
      const verdict = withStrings([json], (x, [j]) => {
        if (x.dw_toolcalls_record(s.handle, j!.ptr, j!.len) < 0) throwCoreError(x);
        return readJson<ToolCallVerdict>(x);
      });
      calls += 1;
      return verdict;
    },
    get calls() {
      return calls;
    },
    get options() {
      return resolved;
    },
    reset(): void {
      if (!slot) throw new Error('dedup-wasm: this tool-call monitor was disposed');
      if (slot.epoch === epoch()) {
        const h = slot.handle;
        call((x) => {
          if (x.dw_toolcalls_reset(h) < 0) throwCoreError(x);
        });
      } else {
        registry.unregister(owner);
        slot = create();
        registry.register(owner, slot, owner);
      }
      calls = 0;
    },
    dispose,
    [Symbol.dispose]: dispose,
  };
}
