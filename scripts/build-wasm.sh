#!/usr/bin/env bash
# Builds the core for wasm32-unknown-unknown (release, stripped) and places it in the TS package,
# shrinking it with binaryen's wasm-opt when that is installed (it is a devDependency).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT/packages/dedup-wasm/wasm/dedup_wasm.wasm"
say() { [ "${DEDUP_SETUP_QUIET:-0}" = 1 ] || echo "[setup] $*" >&2; }

say "building the wasm core"
# simd128 lets the vector loops (dot products of embeddings) auto-vectorize; bulk-memory turns copies
# into one memory.copy instead of a byte loop. Every engine Node >= 16.4 and current browsers run both.
RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+simd128,+bulk-memory" \
  bash "$ROOT/scripts/cargo.sh" build --release --target wasm32-unknown-unknown -p dedup-wasm --lib --quiet
BUILT="$ROOT/target/wasm32-unknown-unknown/release/dedup_wasm.wasm"
mkdir -p "$(dirname "$OUT")"
WASM_OPT="$ROOT/node_modules/.bin/wasm-opt"
if [ -x "$WASM_OPT" ]; then
  # -O3 for speed; the core's hot loops are in the streaming path, so size is not traded for it.
  "$WASM_OPT" -O3 --enable-simd --enable-bulk-memory --strip-debug --strip-producers "$BUILT" -o "$OUT.tmp" && mv "$OUT.tmp" "$OUT"
else
  cp "$BUILT" "$OUT"
fi
say "wasm: $(wc -c <"$OUT") bytes"
