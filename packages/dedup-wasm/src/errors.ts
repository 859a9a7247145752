/**
 * Errors thrown by dedup-wasm. Invalid arguments are real `RangeError`s and `TypeError`s (so
 * `instanceof RangeError` works) that also carry the offending `field` and the `rule` it broke.
 * @module
 */

/** Details shared by argument errors. */
export interface ArgumentErrorDetails {
  /** The argument or setting at fault, e.g. `ngramThreshold`. */
  readonly field: string;
  /** The rule it breaks, e.g. `must be in (0, 1]`. */
  readonly rule: string;
}

/** A value is of the right type but out of range (NaN, a threshold above 1, thresholds out of order…). */
export class DedupRangeError extends RangeError implements ArgumentErrorDetails {
  override readonly name = 'DedupRangeError';
  constructor(readonly field: string, readonly rule: string, message?: string) {
    super(message ?? `${field} ${rule}`);
  }
}

/** A value has the wrong type, or an object has an unknown field. */
export class DedupTypeError extends TypeError implements ArgumentErrorDetails {
  override readonly name = 'DedupTypeError';
  constructor(readonly field: string, readonly rule: string, message?: string) {
    super(message ?? `${field} ${rule}`);
  }
}

/** A function was called before {@link initDedupWasm} loaded the wasm module it runs on. */
export class DedupNotInitializedError extends Error {
  override readonly name = 'DedupNotInitializedError';
  /** @param module - the module that is missing: detection (the default) or memory dedup */
  constructor(module: 'detect' | 'memory' = 'detect') {
    super(
      module === 'detect'
        ? 'dedup-wasm is not initialized: call and await initDedupWasm() once before using it'
        : 'the memory-dedup module of dedup-wasm is not loaded: call and await initDedupWasm() (with no argument it loads both modules; with sources, pass { memory })',
    );
  }
}

/**
 * The WebAssembly core trapped. The call that trapped throws this; the module is re-instantiated
 * so later calls work. Stream monitors created before the trap are gone: their next call throws
 * this error too, and `reset()` makes them usable again.
 */
export class DedupWasmTrapError extends Error {
  override readonly name = 'DedupWasmTrapError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Shape of the JSON error the core writes. */
export interface CoreError {
  kind: string;
  field: string;
  rule: string;
  value: string;
  message: string;
  errorClass: 'range' | 'type';
}

/** Maps snake_case core field names to the camelCase names of the TS API. */
export function camelField(field: string): string {
  return field.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** Turns a core error into the matching TS error. */
export function toArgumentError(e: CoreError): DedupRangeError | DedupTypeError {
  const field = camelField(e.field);
  const message = `invalid ${field}: ${e.rule} (got ${e.value})`;
  return e.errorClass === 'type' ? new DedupTypeError(field, e.rule, message) : new DedupRangeError(field, e.rule, message);
}
