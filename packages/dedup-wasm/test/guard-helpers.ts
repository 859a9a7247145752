/**
 * Shared helpers of the guard tests: the corpus location and a normalization for assertions.
 */

/** The whitespace set of the core (Unicode White_Space). */
const WS = /[\t\n\v\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]+/g;

/** Whitespace-collapsed, lowercased (final sigma folded like the core's per-char lowercasing). */
export function norm(s: string): string {
  return s.replace(WS, ' ').trim().toLowerCase().replace(/ς/g, 'σ');
}

/** Line breaks of a whitespace run, from the first to the last, as written. */
export function breakCores(s: string): string[] {
  const out: string[] = [];
  for (const m of s.matchAll(/[\t\n\v\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]+/g)) {
    const run = m[0];
    const first = run.search(/[\r\n]/);
    if (first < 0) continue;
    let last = -1;
    for (let i = run.length - 1; i >= 0; i--) {
      if (run[i] === '\n' || run[i] === '\r') {
        last = i;
        break;
      }
    }
    out.push(run.slice(first, last + 1));
  }
  return out;
}

/** Text without any whitespace. */
export function nonWs(s: string): string {
  return s.replace(/[\t\n\v\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]/g, '');
}
