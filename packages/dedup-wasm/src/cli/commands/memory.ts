/**
 * `dedup memory <entries.jsonl|-> [--threshold X] [--policy NAME] [--sweep | --compact] [--out FILE] [--json]`:
 * deduplicates agent memory entries (`{id, content, metadata?}` per line) with the offline lexical
 * embedder. Writes the surviving entries as JSONL, prints a summary. Exit code 0, or 2 when some
 * lines were malformed (each is reported with its line number; valid lines are still processed).
 * @module
 */
import { writeFile } from 'node:fs/promises';
import { createDeduplicator } from '../../memory/deduplicator.js';
import { MERGE_POLICIES } from '../../memory/policies.js';
import type { AddResult, CompactResult, MemoryEntry, MergePolicyName, SweepResult } from '../../memory/types.js';
import { guarded, parse, readInput, UsageError } from '../io.js';
import type { Command } from '../registry.js';

/** A line that is not a valid entry. */
export interface MalformedLine {
  line: number;
  error: string;
}

/** Parses JSONL entries; blank lines are skipped, anything else that is not an entry is reported. */
export function parseEntries(text: string): { entries: MemoryEntry[]; malformed: MalformedLine[]; notices: MalformedLine[]; lines: number } {
  const entries: MemoryEntry[] = [];
  const malformed: MalformedLine[] = [];
  const notices: MalformedLine[] = [];
  const lines = text.split(/\r?\n/);
  const seen = new Map<string, number>();
  lines.forEach((raw, i) => {
    const line = i + 1;
    if (raw.trim() === '') return;
    let v: unknown;
    try {
      v = JSON.parse(raw);
    } catch (e) {
      malformed.push({ line, error: `invalid JSON (${e instanceof Error ? e.message : String(e)})` });
      return;
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return void malformed.push({ line, error: 'not a JSON object' });
    const o = v as Record<string, unknown>;
    if (typeof o.id !== 'string' || o.id === '') return void malformed.push({ line, error: 'id must be a non-empty string' });
    if (typeof o.content !== 'string') return void malformed.push({ line, error: 'content must be a string' });
    if (o.metadata !== undefined && (typeof o.metadata !== 'object' || o.metadata === null || Array.isArray(o.metadata))) {
      return void malformed.push({ line, error: 'metadata must be an object' });
    }
    const prev = seen.get(o.id);
    if (prev !== undefined) notices.push({ line, error: `id '${o.id}' also on line ${prev}: the later line replaces the earlier entry` });
    seen.set(o.id, line);
    const entry: MemoryEntry = { id: o.id, content: o.content };
    if (o.metadata !== undefined) entry.metadata = o.metadata as Record<string, unknown>;
    entries.push(entry);
  });
  return { entries, malformed, notices, lines: text.endsWith('\n') ? lines.length - 1 : lines.length };
}

function progress(done: number, total: number): void {
  const width = 30;
  const filled = Math.round((done / total) * width);
  process.stderr.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`);
  if (done === total) process.stderr.write('\n');
}

/** Entries above which a terminal gets a progress bar. */
const PROGRESS_MIN = 2000;
const CHUNK = 500;

export const memoryCommand: Command = {
  summary: '<file.jsonl|-> [--threshold X] [--policy NAME] [--sweep|--compact] [--out FILE] [--json]  dedup memories',
  run: (args) =>
    guarded('memory', async () => {
      const { values, positionals } = parse(args, {
        threshold: { type: 'string' },
        policy: { type: 'string' },
        sweep: { type: 'boolean' },
        compact: { type: 'boolean' },
        out: { type: 'string' },
        json: { type: 'boolean' },
      });
      if (positionals.length !== 1) throw new UsageError('expected one file of entries (JSONL), or - for stdin');
      if (values.sweep && values.compact) throw new UsageError('--sweep and --compact are exclusive');
      const threshold = values.threshold === undefined ? 0.9 : Number(values.threshold);
      if (values.threshold !== undefined && (String(values.threshold).trim() === '' || !Number.isFinite(threshold))) {
        throw new UsageError(`--threshold must be a number in (0, 1), got '${String(values.threshold)}'`);
      }
      const policy = (values.policy ?? 'keep-newest') as MergePolicyName;
      if (!MERGE_POLICIES.includes(policy)) throw new UsageError(`--policy must be one of ${MERGE_POLICIES.join(', ')}`);
      const dedup = createDeduplicator({
        threshold,
        exactThreshold: Math.max(0.98, threshold + (1 - threshold) / 2),
        relatedThreshold: Math.min(0.75, threshold * 0.8),
        mergePolicy: policy,
      });
      const t0 = performance.now();
      const { entries, malformed, notices, lines } = parseEntries(await readInput(positionals[0]));
      for (const m of malformed) process.stderr.write(`dedup memory: line ${m.line}: ${m.error}\n`);
      for (const m of notices) process.stderr.write(`dedup memory: note: line ${m.line}: ${m.error}\n`);
      const showProgress = process.stderr.isTTY === true && entries.length >= PROGRESS_MIN && !values.json;
      const results: AddResult[] = [];
      for (let i = 0; i < entries.length; i += CHUNK) {
        results.push(...(await dedup.addBatch(entries.slice(i, i + CHUNK))).results);
        if (showProgress) progress(Math.min(i + CHUNK, entries.length), entries.length);
      }
      let pass: SweepResult | CompactResult | null = null;
      if (values.sweep) pass = await dedup.sweep();
      if (values.compact) pass = await dedup.compact();
      const kept = dedup.getEntries();
      const count = (c: string) => results.filter((r) => r.classification === c && (c === 'related' || r.action !== 'added')).length;
      const summary = {
        lines,
        entries: entries.length,
        malformed,
        exactDuplicates: count('exact_duplicate'),
        semanticDuplicates: count('semantic_duplicate'),
        related: count('related'),
        [values.compact ? 'compact' : 'sweep']: pass ? { duplicateCount: pass.duplicateCount, evictedCount: pass.evictedCount, ...('clustersFound' in pass ? { clustersFound: pass.clustersFound } : {}) } : null,
        kept: kept.length,
        durationMs: Math.round(performance.now() - t0),
      };
      const jsonl = kept.map((e) => JSON.stringify(e)).join('\n') + (kept.length ? '\n' : '');
      if (values.out) await writeFile(String(values.out), jsonl);
      if (values.json) {
        process.stdout.write(`${JSON.stringify(values.out ? summary : { ...summary, result: kept })}\n`);
      } else {
        if (!values.out) process.stdout.write(jsonl);
        const passLine = pass ? `, ${values.compact ? 'compact' : 'sweep'} removed ${pass.evictedCount}` : '';
        process.stderr.write(
          `dedup memory: ${entries.length} entries, ${summary.exactDuplicates} exact and ${summary.semanticDuplicates} semantic duplicate(s) merged${passLine}; ${kept.length} kept` +
            `${malformed.length ? `; ${malformed.length} malformed line(s) reported above` : ''} (${summary.durationMs} ms)\n`,
        );
      }
      return malformed.length > 0 ? 2 : 0;
    }),
};
