#!/usr/bin/env bash
# One idempotent entry point for a fresh machine.
#
#   scripts/bootstrap.sh run    install what is needed, build tune, run the main job
#   scripts/bootstrap.sh test   install what is needed, run the whole test suite
#
# What it installs (only when missing): a C compiler with OpenMP (gcc, libgomp) from
# Debian's packages. Rust (cargo) must already be on the machine.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1m== %s\033[0m\n' "$*" >&2; }

need_apt=()
command -v cc >/dev/null 2>&1 || need_apt+=(gcc)
if command -v cc >/dev/null 2>&1; then
  if ! printf 'int main(void){return 0;}\n' | cc -fopenmp -x c - -o /dev/null >/dev/null 2>&1; then
    need_apt+=(libgomp1)
  fi
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  say "installing ${need_apt[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}"
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "bootstrap: cargo not found; install the Rust toolchain (rustup) first" >&2
  exit 1
fi

case "${1:-run}" in
  run)
    say "building tune (release)"
    cargo build --release -p tuner --bin tune
    say "tune run datasets/programs/gemm.c -DSMALL_DATASET -lm"
    ./target/release/tune run datasets/programs/gemm.c -DSMALL_DATASET -lm
    ;;
  test)
    say "running the test suite"
    cargo build -p tuner --bin tune
    log=$(mktemp)
    status=0
    cargo test --workspace 2>&1 | tee "$log" || status=$?
    # One closing line with the totals over every test binary.
    awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i) ~ /^passed/) p += $(i-1); if ($(i) ~ /^failed/) f += $(i-1) } }
         END { printf "total: %d passed, %d failed\n", p, f }' "$log"
    rm -f "$log"
    exit "$status"
    ;;
  *)
    echo "usage: scripts/bootstrap.sh [run|test]" >&2
    exit 2
    ;;
esac
