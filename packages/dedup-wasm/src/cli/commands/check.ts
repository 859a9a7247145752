/**
 * `dedup check [file|-] [--preset NAME] [--json]`: every repeated section of a whole text.
 * @module
 */
import { checkRepetition } from '../../repetition.js';
import { resolveDedupPreset, type DedupPresetName } from '../../settings.js';
import { guarded, lineColumn, parse, readInput, UsageError } from '../io.js';
import type { Command } from '../registry.js';

function preview(text: string, max = 60): string {
  const s = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(s.length > max ? `${s.slice(0, max - 1)}…` : s);
}

export const checkCommand: Command = {
  summary: '[file|-] [--preset NAME] [--json]            repeated sections with line:column',
  run: (args) =>
    guarded('check', async () => {
      const { values, positionals } = parse(args, { preset: { type: 'string' }, json: { type: 'boolean' } });
      if (positionals.length > 1) throw new UsageError('expected at most one file');
      const preset = (values.preset ?? 'default') as DedupPresetName;
      resolveDedupPreset(preset);
      const text = await readInput(positionals[0]);
      const result = checkRepetition(text, preset);
      if (values.json) {
        process.stdout.write(`${JSON.stringify(result)}\n`);
        return 0;
      }
      process.stdout.write(`${result.sections.length} repeated section(s), ratio ${result.ratio.toFixed(3)}\n`);
      for (const s of result.sections) {
        const at = lineColumn(text, s.repeatStart);
        const of = lineColumn(text, s.originalStart);
        process.stdout.write(
          `  ${at.line}:${at.column} repeats ${of.line}:${of.column} [${s.source}, ${s.similarity.toFixed(2)}] ${preview(text.slice(s.repeatStart, s.repeatEnd))}\n`,
        );
      }
      return 0;
    }),
};
