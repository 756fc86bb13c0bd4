#!/usr/bin/env bash
# Sweeps the hand-written gemms of scripts/gemm-ceiling.c at LARGE sizes with
# gcc -O3 -march=native -fopenmp and OMP_NUM_THREADS (default 2), and prints each
# configuration's GFLOP/s: the ceiling that tune's transformations plus gcc reach
# here, to set against `tune machine`'s FMA peak (printed last when a built tune is
# found) and the apply_vs_polly benchmark's gemm line.
#   - blocked: rows R, columns W, k tile KT (tiling, unroll-and-jam, OpenMP);
#   - packed: the register-tile step's technique (vector accumulators over packed
#     slivers), register tile MR x NV vectors, blocks MC x KC x NC.
# Set QUICK=1 for a short sweep.
set -euo pipefail
cd "$(dirname "$0")"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"
run() {
  ${CC:-cc} -O3 -march=native -fopenmp "$@" gemm-ceiling.c -o "$out/g" -lm
  "$out/g"
}
if [ -z "${QUICK:-}" ]; then
  for r in 4 8; do
    for w in 8 16; do
      for kt in 256 1200; do
        run -DR=$r -DW=$w -DKT=$kt
      done
    done
  done
else
  run -DR=4 -DW=16 -DKT=256
fi
# Register tiles for the vector registers here: 16 of them (AVX2: 4 x 2 vectors of
# accumulators at most 6 rows) or 32 (AVX-512: up to 14 rows).
if ${CC:-cc} -march=native -dM -E - </dev/null | grep -q __AVX512F__; then
  rows="8 12 14"
else
  rows="4 6"
fi
for mr in $rows; do
  for kc in 128 256 384; do
    [ -n "${QUICK:-}" ] && [ "$kc" != 256 ] && continue
    run -DPACKED -DMR="$mr" -DNV=2 -DKC="$kc" -DMC=$((mr * (240 / mr))) -DNC=2048
  done
done
tune=../target/release/tune
if [ -x "$tune" ]; then
  "$tune" machine | grep -iE 'peak|fma' || true
fi
