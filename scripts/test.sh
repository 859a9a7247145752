#!/usr/bin/env bash
# The whole test suite, from a fresh clone: set-up (toolchains, modules, builds), Rust tests (unit,
# integration, doc, shared fixtures), then the TypeScript tests against the real wasm build.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
echo "== cargo test" >&2
bash "$ROOT/scripts/cargo.sh" test -p dedup-wasm
echo "== vitest" >&2
cd "$ROOT/packages/dedup-wasm"
pnpm exec tsc --noEmit -p tsconfig.json
pnpm exec vitest run
