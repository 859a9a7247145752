/**
 * A small typed event emitter for the deduplicator's events.
 * @module
 */
import { DedupTypeError } from '../errors.js';
import type { DedupEvents } from './types.js';

const NAMES: ReadonlyArray<keyof DedupEvents> = ['duplicate-found', 'merged', 'evicted', 'added'];

/** Handlers per event; `emit` calls them in registration order. */
export class Emitter {
  private readonly handlers = new Map<keyof DedupEvents, Set<(p: never) => void>>();

  private check(event: string, fn: unknown): void {
    if (!NAMES.includes(event as keyof DedupEvents)) {
      throw new DedupTypeError('event', `must be one of ${NAMES.join(', ')}`, `unknown event '${event}' (events: ${NAMES.join(', ')})`);
    }
    if (typeof fn !== 'function') throw new DedupTypeError('handler', 'must be a function');
  }

  on<E extends keyof DedupEvents>(event: E, fn: (p: DedupEvents[E]) => void): () => void {
    this.check(event, fn);
    let set = this.handlers.get(event);
    if (!set) this.handlers.set(event, (set = new Set()));
    set.add(fn as (p: never) => void);
    return () => this.off(event, fn);
  }

  off<E extends keyof DedupEvents>(event: E, fn: (p: DedupEvents[E]) => void): void {
    this.handlers.get(event)?.delete(fn as (p: never) => void);
  }

  has(event: keyof DedupEvents): boolean {
    return (this.handlers.get(event)?.size ?? 0) > 0;
  }

  /**
   * Calls every handler. A throwing handler does not stop the others; the first error is rethrown
   * once all have run (the operation that emitted has already completed).
   */
  emit<E extends keyof DedupEvents>(event: E, payload: DedupEvents[E]): void {
    const set = this.handlers.get(event);
    if (!set || set.size === 0) return;
    let first: unknown;
    let failed = false;
    for (const fn of [...set]) {
      try {
        (fn as (p: DedupEvents[E]) => void)(payload);
      } catch (e) {
        if (!failed) first = e;
        failed = true;
      }
    }
    if (failed) throw first;
  }
}
