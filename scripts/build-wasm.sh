#!/usr/bin/env bash
# Builds the core for wasm32-unknown-unknown (release, stripped) as two modules and places them in the
# TS package, shrinking them with binaryen's wasm-opt when that is installed (it is a devDependency):
#   dedup_wasm.wasm    the detection exports (feature abi-detect): what every app loads;
#   dedup_memory.wasm  the memory-dedup exports (feature abi-memory): loaded only for memory dedup.
# Both come from the same crate; link-time optimization keeps in each only what its exports reach.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="$ROOT/packages/dedup-wasm/wasm"
WASM_OPT="$ROOT/node_modules/.bin/wasm-opt"
say() { [ "${DEDUP_SETUP_QUIET:-0}" = 1 ] || echo "[setup] $*" >&2; }
mkdir -p "$DEST"

# build FEATURE OUTPUT_NAME
build() {
  say "building the wasm module $2 ($1)"
  # simd128 lets the vector loops (dot products of embeddings) auto-vectorize; bulk-memory turns
  # copies into one memory.copy instead of a byte loop. Every engine Node >= 16.4 and current
  # browsers run both.
  # Each module has its own target dir: builds with other features would otherwise replace each
  # other's artifact, and every build would recompile the crate.
  local target_dir="$ROOT/target/wasm-$1"
  RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+simd128,+bulk-memory" \
    bash "$ROOT/scripts/cargo.sh" build --release --target wasm32-unknown-unknown -p dedup-wasm --lib --quiet \
    --no-default-features --features "$1" --target-dir "$target_dir"
  local built="$target_dir/wasm32-unknown-unknown/release/dedup_wasm.wasm"
  local out="$DEST/$2"
  if [ -x "$WASM_OPT" ]; then
    # -O3 for speed; the core's hot loops are in the streaming path, so size is not traded for it.
    "$WASM_OPT" -O3 --enable-simd --enable-bulk-memory --strip-debug --strip-producers "$built" -o "$out.tmp" && mv "$out.tmp" "$out"
  else
    cp "$built" "$out"
  fi
  say "wasm: $2 $(wc -c <"$out") bytes"
}

build abi-detect dedup_wasm.wasm
build abi-memory dedup_memory.wasm
