#!/usr/bin/env bash
# `pnpm eval [--corpus DIR] [--chunk N]`: the loop detector on the shared corpus (see eval/run.ts).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEDUP_SETUP_QUIET=1 bash "$ROOT/scripts/setup.sh"
cd "$ROOT/packages/dedup-wasm"
exec pnpm exec tsx eval/run.ts "$@"
