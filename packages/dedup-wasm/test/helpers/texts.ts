/** Test texts: an unmistakable loop and clean, varied prose (no thresholds assumed). */

/** One sentence repeated 40 times: a loop under any sane rule set. */
export const LOOP = 'I should retry the request because it failed. '.repeat(40);

/** Varied prose with no repeated sentence or phrase. */
export const PROSE = [
  'Rust compiles to WebAssembly through the wasm32 target, and the resulting module has no imports.',
  'The TypeScript package wraps the raw exports with typed functions and maps errors to real exceptions.',
  'Streaming detection keeps a bounded window, so memory stays flat on endless streams.',
  'Each chunk costs time proportional to its length, which keeps latency predictable.',
  'Presets trade sensitivity for false positives; most applications start with the default one.',
  'A browser loads the module from a URL, while Node reads the file that ships inside the package.',
  'Tool calls are keyed on their name and canonical arguments, so formatting never hides a repeat.',
  'Reasoning text is watched on a channel of its own, with its own hard cap.',
].join(' ');

/** Splits text into chunks of `size` UTF-16 units. */
export function chunksOf(text: string, size = 16): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
