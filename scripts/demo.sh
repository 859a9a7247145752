#!/usr/bin/env bash
# The README's first command: set up, then stream real loops through the monitor and check a real
# multi-agent transcript (see packages/dedup-wasm/examples/demo.ts).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
cd "$ROOT/packages/dedup-wasm"
exec pnpm exec tsx examples/demo.ts "$@"
