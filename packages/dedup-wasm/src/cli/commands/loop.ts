/**
 * `dedup loop [file|-] [--json] [--reasoning] [--self-test]`: is this output a degenerate loop?
 * Exit code 0 clean, 2 loop, 1 usage error.
 * @module
 */
import { createLoopDetector, type LoopHit } from '../../loop.js';
import { guarded, parse, readInput, UsageError, lineColumn } from '../io.js';
import type { Command } from '../registry.js';

/** Texts the self-test must judge right: two loops and two legitimately repetitive texts. */
const SELF_TEST: Array<{ name: string; text: string; loop: boolean }> = [
  { name: 'phrase loop', text: 'Let me check that again. '.repeat(30), loop: true },
  { name: 'CJK loop', text: '我再确认一下。'.repeat(40), loop: true },
  {
    name: 'countdown verses',
    text: Array.from({ length: 30 }, (_, i) => `${40 - i} green bottles hanging on the wall, and if one should fall there'd be ${39 - i}.\n`).join(''),
    loop: false,
  },
  {
    name: 'labelled checklist',
    text: Array.from({ length: 25 }, (_, i) => `- item ${i + 1} (${['disk', 'net', 'cpu', 'ram', 'fan'][i % 5]}-${i * 7}): check passed.\n`).join(''),
    loop: false,
  },
];

function selfTest(): number {
  let failed = 0;
  for (const t of SELF_TEST) {
    const d = createLoopDetector();
    const hit = d.feed(t.text);
    d.dispose();
    const ok = (hit !== null) === t.loop;
    if (!ok) failed++;
    process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${t.name}: ${hit ? `loop (${hit.rule})` : 'clean'}\n`);
  }
  process.stdout.write(failed === 0 ? 'self-test passed\n' : `self-test failed: ${failed} case(s)\n`);
  return failed === 0 ? 0 : 1;
}

export const loopCommand: Command = {
  summary: '[file|-] [--json] [--reasoning] [--self-test]   exit 0 clean, 2 loop, 1 usage error',
  run: (args) =>
    guarded('loop', async () => {
      const { values, positionals } = parse(args, {
        json: { type: 'boolean' },
        reasoning: { type: 'boolean' },
        'self-test': { type: 'boolean' },
      });
      if (values['self-test']) return selfTest();
      if (positionals.length > 1) throw new UsageError('expected at most one file');
      const text = await readInput(positionals[0]);
      const detector = createLoopDetector();
      const hit: LoopHit | null = values.reasoning ? detector.feedReasoning(text) : detector.feed(text);
      detector.dispose();
      if (values.json) {
        process.stdout.write(`${JSON.stringify({ loop: hit !== null, chars: text.length, hit })}\n`);
      } else if (hit) {
        const { line, column } = lineColumn(text, hit.start);
        process.stdout.write(`loop: ${hit.rule} at ${line}:${column} — ${hit.detail}\n  sample: ${JSON.stringify(hit.sample)}\n`);
      } else {
        process.stdout.write(`clean: no loop in ${text.length} chars\n`);
      }
      return hit ? 2 : 0;
    }),
};
