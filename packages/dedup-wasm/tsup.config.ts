import { defineConfig } from 'tsup';

// One entry per public subpath; the CLI is a separate, executable entry.
export default defineConfig([
  {
    entry: { index: 'src/index.ts', memory: 'src/memory/index.ts', lancedb: 'src/lancedb/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    clean: true,
    // Subpath entries share one copy of the loader (and so one initialized core) with the root:
    // esm splits by default; cjs splitting is opt-in.
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
