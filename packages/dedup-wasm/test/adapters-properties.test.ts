import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createToolCallMonitor, initDedupWasm, monitorStream, type RepetitionAbortError } from '../dist/index.js';

beforeAll(async () => {
  await initDedupWasm();
});

describe('adapter properties', () => {
  it('monitorStream delivers every chunk unchanged, in order; only an abort ends it early', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.string({ unit: 'binary', maxLength: 40 }), { maxLength: 60 }), async (chunks) => {
        let aborted: RepetitionAbortError | null = null;
        const out: string[] = [];
        for await (const c of monitorStream((async function* () { yield* chunks; })(), { onAbort: (e) => void (aborted = e) })) out.push(c);
        expect(out).toEqual(chunks.slice(0, out.length));
        if (aborted === null) expect(out.length).toBe(chunks.length);
      }),
      { numRuns: 60 },
    );
  });

  it('tool-call verdicts do not depend on key order or JSON formatting', () => {
    const argsArb = fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.boolean()), { maxKeys: 5 });
    const callArb = fc.record({ name: fc.constantFrom('read', 'search', 'ls'), args: argsArb });
    fc.assert(
      fc.property(fc.array(callArb, { maxLength: 30 }), (calls) => {
        using a = createToolCallMonitor();
        using b = createToolCallMonitor();
        for (const call of calls) {
          const reordered = Object.fromEntries(Object.entries(call.args).reverse());
          const va = a.record(call);
          const vb = b.record({ name: call.name, args: JSON.stringify(reordered, null, 2) });
          expect(vb.action).toBe(va.action);
          expect(vb.evidence?.period).toBe(va.evidence?.period);
        }
      }),
      { numRuns: 100 },
    );
  });
});
