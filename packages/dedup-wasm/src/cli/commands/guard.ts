/**
 * `dedup guard [file|-] [--keep first|last] [--json]`: remove repeated blocks from an agent input.
 * The cleaned text goes to stdout, a one-line summary to stderr.
 * @module
 */
import { deduplicate } from '../../guard/deduplicate.js';
import { summaryLine } from '../../guard/deduplicate-guard.js';
import type { DeduplicateOptions } from '../../guard/options.js';
import { guarded, parse, readInput, UsageError } from '../io.js';
import type { Command } from '../registry.js';

function count(value: string | boolean | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (typeof value !== 'string' || value.trim() === '' || !Number.isInteger(n)) throw new UsageError(`--${flag} must be an integer`);
  return n;
}

export const guardCommand: Command = {
  summary: '[file|-] [--keep first|last] [--json]     cleaned text to stdout, summary to stderr',
  run: (args) =>
    guarded('guard', async () => {
      const { values, positionals } = parse(args, {
        keep: { type: 'string' },
        json: { type: 'boolean' },
        'min-block-chars': { type: 'string' },
        'similarity-chars': { type: 'string' },
        'exact-only': { type: 'boolean' },
      });
      if (positionals.length > 1) throw new UsageError('expected at most one file');
      const keep = values.keep ?? 'first';
      if (keep !== 'first' && keep !== 'last') throw new UsageError(`--keep must be 'first' or 'last', got '${String(keep)}'`);
      const options: DeduplicateOptions = {
        keep,
        minBlockChars: count(values['min-block-chars'], 'min-block-chars'),
        similarityChars: count(values['similarity-chars'], 'similarity-chars'),
        nearDuplicate: values['exact-only'] ? false : undefined,
      };
      const text = await readInput(positionals[0]);
      const result = deduplicate(text, options);
      process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : result.text);
      process.stderr.write(`${summaryLine(result)}\n`);
      return 0;
    }),
};
