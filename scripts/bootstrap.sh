#!/usr/bin/env bash
# One idempotent entry point for a fresh machine.
#
#   scripts/bootstrap.sh run    install what is needed, build tune, run the main job
#   scripts/bootstrap.sh test   install what is needed, run the whole test suite
#   scripts/bootstrap.sh env    install what training needs (then `source scripts/env.sh`)
#
# What it installs (only when missing): a C compiler with OpenMP (gcc, libgomp) from
# Debian's packages. For `test` and `env` only (training the model, the `train` feature):
# python3-venv and libtorch 2.13.0 as the PyPI package torch==2.13.0 in a virtual
# environment outside the checkout ($TUNE_TORCH_VENV, default ~/.cache/tune/torch-venv),
# which the tch crate links (LIBTORCH_USE_PYTORCH=1). For `test` only: Debian's
# slurm-wlm and munge (scripts/test-slurm.sh installs them when missing). `run` builds
# tune without training: inference is plain Rust, so it needs no libtorch.
# Rust (cargo) must already be on the machine.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1m== %s\033[0m\n' "$*" >&2; }

# /dev/null must be the null device. On a machine where it is a regular file, whatever a
# command sends there is read back by the next one that reads it: cargo's first rustc
# probe reads its source from /dev/null and fails on a Python warning left there.
if [ ! -c /dev/null ]; then
  say "/dev/null is not the null device here: putting the null device back"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  if ! { $SUDO mknod -m 666 /dev/null.tune c 1 3 && $SUDO mv -f /dev/null.tune /dev/null; }; then
    echo "bootstrap: /dev/null is not the null device and could not be made one (mknod c 1 3)" >&2
    exit 1
  fi
fi

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
# libtorch for training the embedding model (crate `models`, feature `train`, through
# tch 0.26).
install_torch() {
  local venv="${TUNE_TORCH_VENV:-$HOME/.cache/tune/torch-venv}"
  if ! "$venv/bin/python" -c 'import torch, sys; sys.exit(torch.__version__.split("+")[0] != "2.13.0")' >/dev/null 2>&1; then
    if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' >/dev/null 2>&1; then
      say "installing python3-venv"
      SUDO=""
      [ "$(id -u)" -eq 0 ] || SUDO="sudo"
      $SUDO apt-get update -qq
      $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
    fi
    say "installing torch==2.13.0 into $venv (libtorch for tch; a large download, once)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check torch==2.13.0
  fi
  # shellcheck source=scripts/env.sh
  source scripts/env.sh
}

if ! command -v cargo >/dev/null 2>&1; then
  echo "bootstrap: cargo not found; install the Rust toolchain (rustup) first" >&2
  exit 1
fi

case "${1:-run}" in
  env)
    # Install only; `source scripts/env.sh` then gives the training build environment.
    install_torch
    ;;
  run)
    say "building tune (release, without training: no libtorch)"
    cargo build --release -p tune-cli --bin tune
    say "tune apply datasets/programs/gemm.c -DLARGE_DATASET -lm -o target/gemm.tuned.c --explain"
    ./target/release/tune apply datasets/programs/gemm.c -DLARGE_DATASET -lm \
      -o target/gemm.tuned.c --report target/gemm.report.json --explain
    ;;
  test)
    install_torch
    say "running the test suite (with the train feature: the training tests link libtorch)"
    cargo build -p tune-cli --bin tune --features train
    log=$(mktemp)
    status=0
    cargo test --workspace --features train 2>&1 | tee "$log" || status=$?
    # tune as the main job builds it, without training: it links no libtorch and, copied
    # away from the checkout, runs tune apply with the built-in model.
    say "tune without the train feature"
    cargo test -p tune-e2e --test installed 2>&1 | tee -a "$log" || status=$?
    # The README's Slurm job array on a single-node cluster started for the test, with
    # that tune (about a minute; installs slurm-wlm and munge when missing).
    say "the Slurm job array: scripts/test-slurm.sh"
    scripts/test-slurm.sh 2>&1 | tee -a "$log" || status=$?
    # One closing line with the totals over every test binary.
    awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i) ~ /^passed/) p += $(i-1); if ($(i) ~ /^failed/) f += $(i-1) } }
         END { printf "total: %d passed, %d failed\n", p, f }' "$log"
    rm -f "$log"
    exit "$status"
    ;;
  *)
    echo "usage: scripts/bootstrap.sh [run|test|env]" >&2
    exit 2
    ;;
esac
