/**
 * Where the shared corpus is. It is read-only text nobody here wrote, so it is never copied into the
 * repository: tests, the eval and the benches read it in place.
 * @module
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * The corpus folder: `explicit`, else env `DEDUP_CORPUS`, else `shared/corpus` beside the repository
 * (or beside its parent, for a worktree one level down). Null when none of them has `loops/`.
 */
export function locateCorpus(explicit?: string): string | null {
  const candidates = [explicit, process.env.DEDUP_CORPUS, join(repo, '../shared/corpus'), join(repo, '../../shared/corpus')];
  for (const c of candidates) if (c && existsSync(join(c, 'loops'))) return c;
  return null;
}
