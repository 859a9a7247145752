#!/usr/bin/env bash
# Runs cargo with the toolchain that setup.sh chose (rustup's, or Debian's with its packaged crates).
# Usage: scripts/cargo.sh test | bench | run --example ... (any cargo subcommand and arguments)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ENV_FILE="$ROOT/scripts/.toolchain.env"
[ -f "$ENV_FILE" ] || DEDUP_SKIP_BUILD=1 bash "$ROOT/scripts/setup.sh"
# shellcheck disable=SC1090
. "$ENV_FILE"
sub="$1"; shift
cd "$ROOT"
# The config flags must follow the subcommand name for cargo to accept --offline with them.
RUSTC="$DEDUP_RUSTC" RUSTDOC="$DEDUP_RUSTDOC" exec "$DEDUP_CARGO" "$sub" "${DEDUP_CARGO_ARGS[@]}" "$@"
