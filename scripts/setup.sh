#!/usr/bin/env bash
# One idempotent set-up for a fresh clone: toolchains, node modules, the wasm and the TS build.
# Every entry point (demo, test, bench, eval) sources this first, so a newcomer never runs it by hand.
#
# What it decides, in order:
#   1. pnpm: installed with npm when missing (the version pinned in package.json's packageManager).
#   2. A Rust toolchain that can emit wasm32-unknown-unknown: rustup's when it already has the target;
#      otherwise Debian's rustc + cargo + libstd-rust-dev-wasm32 (installed with apt when we are root),
#      with our crates taken from Debian's packaged registry through cargo's directory source.
#   3. node modules from the lockfile, the wasm (release, stripped, wasm-opt'd when available), the TS build.
#
# Set DEDUP_SETUP_QUIET=1 to silence progress lines; DEDUP_SKIP_BUILD=1 to stop after installing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
say() { [ "${DEDUP_SETUP_QUIET:-0}" = 1 ] || echo "[setup] $*" >&2; }
die() { echo "[setup] error: $*" >&2; exit 1; }

# Debian packages that give a wasm-capable rustc and the crates the core and its tests use.
DEBIAN_RUST_PACKAGES=(rustc cargo libstd-rust-dev-wasm32 lld
  librust-serde-dev librust-serde-derive-dev librust-serde-json-dev librust-proptest-dev)
DEBIAN_REGISTRY=/usr/share/cargo/registry

apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ]; then
    die "missing Debian packages: ${missing[*]}. Install them with: sudo apt-get install -y ${missing[*]}"
  fi
  say "apt-get install ${missing[*]}"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1; then
    apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null \
      || die "apt-get install ${missing[*]} failed"
  fi
}

# --- 1. pnpm ---------------------------------------------------------------------------------------
PNPM_VERSION="$(node -e 'const m=require(process.argv[1]).packageManager||"";console.log(m.split("@")[1]||"")' "$ROOT/package.json")"
if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version 2>/dev/null)" != "$PNPM_VERSION" ]; then
  say "installing pnpm@$PNPM_VERSION"
  npm install -g "pnpm@$PNPM_VERSION" >/dev/null 2>&1 || die "npm install -g pnpm@$PNPM_VERSION failed"
fi

# --- 2. Rust toolchain with a wasm32 std ----------------------------------------------------------
# Writes scripts/.toolchain.env, read by build-wasm.sh and the cargo wrappers.
TOOLCHAIN_ENV="$ROOT/scripts/.toolchain.env"
rustup_has_wasm() {
  command -v rustup >/dev/null 2>&1 && rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown
}
if rustup_has_wasm; then
  say "using rustup's toolchain (it has wasm32-unknown-unknown)"
  cat >"$TOOLCHAIN_ENV" <<EOF
DEDUP_CARGO=$(command -v cargo)
DEDUP_RUSTC=$(command -v rustc)
DEDUP_RUSTDOC=$(command -v rustdoc)
DEDUP_CARGO_ARGS=()
EOF
else
  if [ -f /etc/debian_version ]; then
    apt_install "${DEBIAN_RUST_PACKAGES[@]}"
  elif ! [ -x /usr/bin/rustc ]; then
    die "no Rust toolchain with the wasm32-unknown-unknown std. Either run 'rustup target add wasm32-unknown-unknown' or, on Debian/Ubuntu, install: ${DEBIAN_RUST_PACKAGES[*]}"
  fi
  say "using Debian's rustc $(/usr/bin/rustc --version | cut -d' ' -f2) with the packaged crate registry"
  cat >"$TOOLCHAIN_ENV" <<EOF
DEDUP_CARGO=/usr/bin/cargo
DEDUP_RUSTC=/usr/bin/rustc
DEDUP_RUSTDOC=/usr/bin/rustdoc
DEDUP_CARGO_ARGS=(--offline --config 'source.crates-io.replace-with="debian"' --config 'source.debian.directory="$DEBIAN_REGISTRY"')
EOF
fi

# --- 2b. Chromium for the browser test ----------------------------------------------------------
# The browser test drives Debian's chromium headless; no tool ever downloads a browser. Installed
# when we are root on Debian; otherwise that test reports itself as todo (and fails under CI).
if ! [ -x "${DEDUP_CHROMIUM:-/usr/bin/chromium}" ]; then
  if [ -f /etc/debian_version ] && [ "$(id -u)" = 0 ]; then
    apt_install chromium
  else
    say "note: no chromium at ${DEDUP_CHROMIUM:-/usr/bin/chromium}; the browser test will be todo (install Debian's chromium to run it)"
  fi
fi

# --- 3. node modules, wasm, TS ---------------------------------------------------------------------
cd "$ROOT"
if [ ! -d node_modules/.pnpm ] || [ pnpm-lock.yaml -nt node_modules/.modules.yaml ]; then
  say "pnpm install"
  pnpm install --frozen-lockfile --reporter=silent || die "pnpm install failed"
fi
[ "${DEDUP_SKIP_BUILD:-0}" = 1 ] && exit 0
bash "$ROOT/scripts/build-wasm.sh"
say "building the TypeScript package"
pnpm --filter dedup-wasm run --silent build >/dev/null || die "TypeScript build failed"
say "ready"
