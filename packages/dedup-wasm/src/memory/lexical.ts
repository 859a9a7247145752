/**
 * The default embedder: lexical, deterministic, offline, computed in the wasm core.
 * @module
 */
import { DedupRangeError } from '../errors.js';
import { initDedupWasm } from '../wasm/loader.js';
import { lexicalEmbed } from './core.js';

/** Options of {@link createLexicalEmbedder}. */
export interface LexicalEmbedderOptions {
  /** Dimensions of the vectors (default 512; 1..65536). More dimensions, fewer hash collisions. */
  dims?: number;
}

/** A lexical embedder: callable, with `embedMany` and its dimension. */
export interface LexicalEmbedder {
  (text: string): Promise<Float32Array>;
  embedMany(texts: string[]): Promise<Float32Array[]>;
  /** Synchronous form (the wasm must be initialized). */
  embedSync(text: string): Float32Array;
  readonly dims: number;
}

/**
 * Creates the lexical embedder: words, word pairs and character trigrams of the normalized text
 * (NFKC, case-folded), feature-hashed into `dims` values and L2-normalized. It needs no network,
 * no model and no key, and gives the same vector for the same text everywhere.
 *
 * **What it catches:** near-duplicates, the same sentence with changed case, punctuation or
 * spacing, reordered clauses, and light rewording (a word added, dropped or inflected).
 *
 * **What it cannot catch:** true paraphrase. "User lives in NYC" and "User's home is New York
 * City" share almost no words, so their similarity is low. For meaning, plug in a model embedder
 * (OpenAI, Cohere, a local transformers.js model) — the deduplicator takes any
 * `(text) => Promise<number[]>`.
 */
export function createLexicalEmbedder(options: LexicalEmbedderOptions = {}): LexicalEmbedder {
  const dims = options.dims ?? 512;
  if (typeof dims !== 'number' || !Number.isInteger(dims) || dims < 1 || dims > 65536) {
    throw new DedupRangeError('dims', 'must be an integer in [1, 65536]', `dims must be an integer in [1, 65536], got ${String(dims)}`);
  }
  const embedSync = (text: string): Float32Array => lexicalEmbed(text, dims);
  const embed = async (text: string): Promise<Float32Array> => {
    await initDedupWasm();
    return embedSync(text);
  };
  return Object.assign(embed, {
    embedMany: async (texts: string[]) => {
      await initDedupWasm();
      return texts.map(embedSync);
    },
    embedSync,
    dims,
  }) as LexicalEmbedder;
}
