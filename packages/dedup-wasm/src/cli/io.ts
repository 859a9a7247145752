/**
 * Shared plumbing of the CLI: argument parsing with one-line errors, reading a file or stdin.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A usage error: printed as one line on stderr, exit code 1. */
export class UsageError extends Error {}

/** `node:util` parseArgs with strict checking, its errors turned into {@link UsageError}. */
export function parse(
  args: string[],
  options: NonNullable<ParseArgsConfig['options']>,
): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
    return { values: values as Record<string, string | boolean | undefined>, positionals };
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
}

/** Reads the named file, or stdin for `-` or no name. */
export async function readInput(path: string | undefined): Promise<string> {
  if (path === undefined || path === '-') {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
}

/** Runs a command body, mapping {@link UsageError} and argument errors to exit code 1 with one line. */
export async function guarded(name: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (e) {
    if (e instanceof UsageError || e instanceof RangeError || e instanceof TypeError) {
      process.stderr.write(`dedup ${name}: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}

/** Line and column (1-based, in UTF-16 units) of a UTF-16 index. */
export function lineColumn(text: string, index: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: index - lineStart + 1 };
}
