import { defineConfig } from 'tsup';

// One entry per public subpath; the CLI is a separate, executable entry.
export default defineConfig([
  {
    entry: { index: 'src/index.ts', 'ai-sdk': 'src/ai-sdk/index.ts', guard: 'src/guard/index.ts', memory: 'src/memory/index.ts', lancedb: 'src/lancedb/index.ts' },
    format: ['esm', 'cjs'],
    external: ['ai'],
    dts: true,
    sourcemap: true,
    clean: true,
    // Shared code (the wasm loader, errors) goes to chunks in both formats, so a subpath entry and
    // the root use one initialized core and the same error classes (tsup splits CJS too with this).
    splitting: true,
    target: 'es2022',
    // `import.meta.url` locates the packaged .wasm; tsup shims it in the CJS build.
    shims: true,
  },
  {
    entry: { cli: 'src/cli/main.ts' },
    format: ['esm'],
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
    shims: true,
  },
]);
