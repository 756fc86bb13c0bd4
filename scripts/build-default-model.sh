#!/usr/bin/env bash
# Builds the shipped model and database (models/default/) from datasets/, on this
# machine: schedule search over the core suite, a seeded synthetic suite and the
# loop-order variants of the core programs (MEDIUM sizes), transfer rows (every entry's
# best recipe on every nest), then model training and embedding of every entry. Takes
# hours on a 2-core machine; resumable (search records are reused, the database is
# extended, complete transfer rows are kept).
#
#   scripts/build-default-model.sh            # everything
#   BUDGET=8 SYNTH=0 VARIANTS=0 scripts/build-default-model.sh   # a quicker, smaller database
set -euo pipefail
cd "$(dirname "$0")/.."
BUDGET="${BUDGET:-20}"
SYNTH="${SYNTH:-240}"
SAMPLE="${SAMPLE:-12}"
VARIANTS="${VARIANTS:-1}"
SEED="${SEED:-1}"
out=models/default
cache="${TUNE_CACHE:-target/default-model-cache}"
mkdir -p "$out"
# The toolchain and libtorch environment (installs them when missing).
scripts/bootstrap.sh env >/dev/null
source scripts/env.sh
cargo build --release -p tune-cli --bin tune --features train
tune=./target/release/tune
TUNE_CACHE="$cache" $tune db build --preset MEDIUM --budget "$BUDGET" --time-limit 60 \
  --seed "$SEED" -o "$out/tune.db"
if [ "$SYNTH" -gt 0 ]; then
  $tune db synth --seed "$SEED" --count "$SYNTH" -o target/synth
  TUNE_CACHE="$cache" $tune db build --suite target/synth/suite.json --preset MEDIUM \
    --budget $((BUDGET / 2)) --time-limit 30 --seed "$SEED" -o "$out/tune.db"
fi
if [ "$VARIANTS" -gt 0 ]; then
  # Loop-order variants of the core programs (the same computations as users write them).
  $tune db variants -o target/variants
  TUNE_CACHE="$cache" $tune db build --suite target/variants/suite.json --preset MEDIUM \
    --budget $((BUDGET / 2)) --time-limit 30 --seed "$SEED" -o "$out/tune.db"
fi
# Every entry's best recipe on every nest: the rows the contrastive term learns from.
# Sampled (--sample): the nest's own recipe, its nearest others and a seeded draw.
TUNE_CACHE="$cache" $tune db transfer --db "$out/tune.db" --sample "$SAMPLE"
if [ "$SYNTH" -gt 0 ]; then
  TUNE_CACHE="$cache" $tune db transfer --db "$out/tune.db" --suite target/synth/suite.json \
    --sample "$SAMPLE"
fi
if [ "$VARIANTS" -gt 0 ]; then
  TUNE_CACHE="$cache" $tune db transfer --db "$out/tune.db" --suite target/variants/suite.json \
    --sample "$SAMPLE"
fi
$tune model train --db "$out/tune.db" -o "$out/model" --seed "$SEED" --epochs 150
$tune db embed --db "$out/tune.db" --model "$out/model"
$tune db list --db "$out/tune.db" | tail -1
