#!/usr/bin/env bash
# `pnpm bench`: set-up, then the native core benchmark (Rust, release) and every TypeScript bench file
# (bench/*.bench.ts) over the real wasm. Numbers are printed, not asserted. The corpus is read from
# ../shared/corpus (relative to the repository root) or $DEDUP_CORPUS.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
echo "== native core (release)" >&2
bash "$ROOT/scripts/cargo.sh" run --release --quiet -p dedup-wasm --example bench_core
echo "== wasm" >&2
cd "$ROOT"
pnpm --filter dedup-wasm exec tsx bench/run.ts "$@"
