#!/usr/bin/env bash
# Sweeps the hand-blocked gemm of scripts/gemm-ceiling.c (rows R, columns W, k tile KT)
# at LARGE sizes with gcc -O3 -march=native -fopenmp and OMP_NUM_THREADS (default 2):
# the ceiling that loop transformations plus gcc reach here, to set against
# `tune machine`'s FMA peak and the apply_vs_polly benchmark's gemm line.
set -euo pipefail
cd "$(dirname "$0")"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"
for r in 4 6 8; do
  for w in 8 12 16; do
    for kt in 128 256 1200; do
      ${CC:-cc} -O3 -march=native -fopenmp -DR=$r -DW=$w -DKT=$kt \
        gemm-ceiling.c -o "$out/g" -lm
      "$out/g"
    done
  done
done
