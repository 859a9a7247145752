/**
 * Decoding repeated sections from the core's binary section format: after `head` leading numbers,
 * six little-endian f64 per section (originalStart, originalEnd, repeatStart, repeatEnd, similarity,
 * source as 0 ngram / 1 sentence / 2 period). Sections cross the boundary this way rather than as
 * JSON because a stream re-reads them whenever they change, and a batch result can hold thousands.
 * @module
 */
import type { RepeatedSection, SectionSource } from '../repetition.js';
import type { CoreExports } from './loader.js';

const F64S_PER_SECTION = 6;
const SOURCES: readonly SectionSource[] = ['ngram', 'sentence', 'period'];

/** The output buffer's `head` leading numbers and the `count` sections after them. */
export function readSections(x: CoreExports, count: number, head: number): { head: number[]; sections: RepeatedSection[] } {
  const bytes = (head + count * F64S_PER_SECTION) * 8;
  if (x.dw_out_len() !== bytes) throw new Error(`dedup-wasm: expected ${bytes} bytes of sections, the core wrote ${x.dw_out_len()}`);
  const view = new DataView(x.memory.buffer, x.dw_out_ptr(), bytes);
  const at = (i: number): number => view.getFloat64(i * 8, true);
  const leading: number[] = [];
  for (let i = 0; i < head; i++) leading.push(at(i));
  const sections: RepeatedSection[] = new Array<RepeatedSection>(count);
  for (let s = 0, i = head; s < count; s++, i += F64S_PER_SECTION) {
    sections[s] = {
      originalStart: at(i),
      originalEnd: at(i + 1),
      repeatStart: at(i + 2),
      repeatEnd: at(i + 3),
      similarity: at(i + 4),
      source: SOURCES[at(i + 5)]!,
    };
  }
  return { head: leading, sections };
}
