/**
 * The guard protocol: `Guard`, `GuardAction`, `GuardChain` and `ContentGuard`.
 * @module
 */
import { DedupTypeError } from '../errors.js';

/** What a guard decided about a text. */
export interface GuardAction {
  /** False to refuse the text. */
  allowed: boolean;
  /** Why it was refused (or a note when allowed). */
  message?: string;
  /** The text to use instead of the input, when the guard changed it. */
  modifiedText?: string;
}

/** A check on an agent's input and output; either method may be synchronous or async. */
export interface Guard {
  /** Checks (and may rewrite) text before it reaches the model. */
  checkInput(text: string): GuardAction | Promise<GuardAction>;
  /** Checks (and may rewrite) the model's output. */
  checkOutput(text: string): GuardAction | Promise<GuardAction>;
}

function isThenable<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}

function checkAction(v: unknown, field: string): GuardAction {
  if (v === null || typeof v !== 'object' || typeof (v as GuardAction).allowed !== 'boolean') {
    throw new DedupTypeError(field, 'must return a GuardAction { allowed: boolean }', `${field} must return a GuardAction { allowed: boolean }`);
  }
  const a = v as GuardAction;
  if (a.modifiedText !== undefined && typeof a.modifiedText !== 'string') {
    throw new DedupTypeError(`${field}.modifiedText`, 'must be a string', `${field}.modifiedText must be a string`);
  }
  return a;
}

function requireGuard(g: unknown, field: string): asserts g is Guard {
  if (g === null || typeof g !== 'object' || typeof (g as Guard).checkInput !== 'function' || typeof (g as Guard).checkOutput !== 'function') {
    throw new DedupTypeError(field, 'must be a Guard (checkInput and checkOutput functions)', `${field} must be a Guard with checkInput and checkOutput`);
  }
}

/**
 * Runs guards in order: each sees the text as modified by the ones before it; the first refusal
 * stops the chain and is returned with its message. When every guard allowed the text, the result
 * is `{ allowed: true }` plus `modifiedText` if any guard changed it.
 *
 * The result is synchronous when every guard answered synchronously, a promise otherwise.
 */
export class GuardChain implements Guard {
  /** The guards, in order. */
  readonly guards: readonly Guard[];

  constructor(...guards: Guard[]) {
    guards.forEach((g, i) => requireGuard(g, `guards[${i}]`));
    this.guards = [...guards];
  }

  checkInput(text: string): GuardAction | Promise<GuardAction> {
    return this.run(text, 'checkInput');
  }

  checkOutput(text: string): GuardAction | Promise<GuardAction> {
    return this.run(text, 'checkOutput');
  }

  private run(text: string, method: 'checkInput' | 'checkOutput'): GuardAction | Promise<GuardAction> {
    const state = { text, modified: false };
    const settle = (i: number, raw: unknown): GuardAction | undefined => {
      const a = checkAction(raw, `guards[${i}].${method}`);
      if (!a.allowed) return a;
      if (a.modifiedText !== undefined && a.modifiedText !== state.text) {
        state.text = a.modifiedText;
        state.modified = true;
      }
      return undefined;
    };
    const done = (): GuardAction => (state.modified ? { allowed: true, modifiedText: state.text } : { allowed: true });
    const from = (start: number): GuardAction | Promise<GuardAction> => {
      for (let i = start; i < this.guards.length; i++) {
        const r = this.guards[i]![method](state.text);
        if (isThenable(r)) {
          return r.then(async (v) => {
            const refusal = settle(i, v);
            return refusal ?? (await from(i + 1));
          });
        }
        const refusal = settle(i, r);
        if (refusal) return refusal;
      }
      return done();
    };
    return from(0);
  }
}

/** A check function of {@link ContentGuard}. */
export type ContentCheck = (text: string) => GuardAction | Promise<GuardAction>;

/** Options of {@link ContentGuard}: either check may be omitted (the text is then allowed). */
export interface ContentGuardOptions {
  inputFn?: ContentCheck;
  outputFn?: ContentCheck;
}

/** A guard from plain functions, e.g. a policy check on the input. */
export class ContentGuard implements Guard {
  private readonly inputFn: ContentCheck | undefined;
  private readonly outputFn: ContentCheck | undefined;

  constructor(options: ContentGuardOptions = {}) {
    if (options === null || typeof options !== 'object') {
      throw new DedupTypeError('options', 'must be an object', 'ContentGuard options must be an object');
    }
    for (const k of ['inputFn', 'outputFn'] as const) {
      if (options[k] !== undefined && typeof options[k] !== 'function') {
        throw new DedupTypeError(k, 'must be a function', `${k} must be a function`);
      }
    }
    this.inputFn = options.inputFn;
    this.outputFn = options.outputFn;
  }

  checkInput(text: string): GuardAction | Promise<GuardAction> {
    return this.inputFn ? this.inputFn(text) : { allowed: true };
  }

  checkOutput(text: string): GuardAction | Promise<GuardAction> {
    return this.outputFn ? this.outputFn(text) : { allowed: true };
  }
}
