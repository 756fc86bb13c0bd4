#!/usr/bin/env bash
# Builds the shipped model and database (models/default/) from datasets/, on this
# machine: schedule search over the core suite (MEDIUM sizes), the loop-order variants
# of the core programs, two seeded synthetic suites of the default families and a third
# of tensor contractions and min-plus recurrences (SYNTH3 programs) and a fourth of
# symmetric matrices stored in one triangle (SYNTH4 programs; the shipped 501-entry
# core predates both, which GROW=1 added: SYNTH3=0 SYNTH4=0 rebuilds that core), sampled
# transfer rows (each entry's own recipe, its nearest others' and a seeded draw,
# measured on its data), then
# model training (its contrastive term anchored on the written programs' nests; set
# ANCHOR=A to also hold the raw-feature distance, `--anchor A`) and embedding of every
# entry.
# The defaults are those the shipped database was built with; on a 2-core
# machine the searches take a few hours without cached records. Resumable (search
# records are reused, the database is extended, complete transfer rows are kept).
#
#   scripts/build-default-model.sh            # everything
#   SYNTH=0 SYNTH2=0 VARIANTS=0 scripts/build-default-model.sh   # the core suite only
#
# ADD_MACHINE=1 adds this machine's records to the shipped database instead: the core
# suite searched here into its own database (target/this-machine.db; `--budget 12
# --time-limit 20` unless BUDGET_HERE and TIME_LIMIT say otherwise), sampled transfer rows
# among its own entries (a row compares times of one machine), merged into
# models/default/tune.db (an entry is told apart by machine and vector ISA), then the
# model trained and every entry embedded again. `tune apply` ranks the entries of the
# machine's own vector ISA first (`retrieve::rank_by_isa`).
#
# GROW=1 adds the third and fourth synthetic suites (SYNTH3, SYNTH4) to the shipped
# database as it is: searched here (`--budget 8 --time-limit 20`), given sampled transfer
# rows, and embedded by the shipped model (which is not trained again).
set -euo pipefail
cd "$(dirname "$0")/.."
BUDGET="${BUDGET:-16}"
SYNTH="${SYNTH:-240}"
SYNTH2="${SYNTH2:-58}"
SYNTH3="${SYNTH3:-40}"
SYNTH4="${SYNTH4:-24}"
SAMPLE="${SAMPLE:-10}"
VARIANTS="${VARIANTS:-1}"
SEED="${SEED:-1}"
EPOCHS="${EPOCHS:-40}"
ANCHOR="${ANCHOR:-}"
out=models/default
cache="${TUNE_CACHE:-target/default-model-cache}"
mkdir -p "$out"
# The toolchain and libtorch environment (installs them when missing).
scripts/bootstrap.sh env >/dev/null
source scripts/env.sh
cargo build --release -p tune-cli --bin tune --features train
tune=./target/release/tune
export TUNE_CACHE="$cache"
# Every entry embedded by the model, the entry count.
embed() {
  $tune db embed --db "$out/tune.db" --model "$out/model"
  $tune db list --db "$out/tune.db" | tail -1
}
# The model trained on the database, then embed.
train_and_embed() {
  $tune model train --db "$out/tune.db" -o "$out/model" --seed "$SEED" --epochs "$EPOCHS" \
    ${ANCHOR:+--anchor "$ANCHOR"}
  embed
}
if [ "${ADD_MACHINE:-0}" = 1 ]; then
  here=target/this-machine.db
  $tune db build --preset MEDIUM --budget "${BUDGET_HERE:-12}" --time-limit "${TIME_LIMIT:-20}" \
    --seed "$SEED" -o "$here"
  $tune db transfer --db "$here" --sample "$SAMPLE"
  $tune db merge --db "$out/tune.db" "$here"
  train_and_embed
  exit 0
fi
# The suites drawn only when their families are named.
named_suites=()
if [ "$SYNTH3" -gt 0 ]; then
  $tune db synth --seed $((SEED + 2)) --count "$SYNTH3" --families contraction,path \
    -o target/synth3
  named_suites+=(target/synth3/suite.json)
fi
if [ "$SYNTH4" -gt 0 ]; then
  $tune db synth --seed $((SEED + 3)) --count "$SYNTH4" --families symmetric -o target/synth4
  named_suites+=(target/synth4/suite.json)
fi
if [ "${GROW:-0}" = 1 ]; then
  for s in "${named_suites[@]}"; do
    $tune db build --suite "$s" --preset MEDIUM --budget $((BUDGET / 2)) --time-limit 20 \
      --seed "$SEED" -o "$out/tune.db"
    $tune db transfer --db "$out/tune.db" --suite "$s" --sample "$SAMPLE"
  done
  embed
  exit 0
fi
$tune db build --preset MEDIUM --budget "$BUDGET" --time-limit 40 --seed "$SEED" \
  -o "$out/tune.db"
suites=()
if [ "$VARIANTS" -gt 0 ]; then
  # Loop-order variants of the core programs (the same computations as users write them).
  $tune db variants -o target/variants
  suites+=(target/variants/suite.json)
fi
if [ "$SYNTH" -gt 0 ]; then
  $tune db synth --seed "$SEED" --count "$SYNTH" -o target/synth
  suites+=(target/synth/suite.json)
fi
if [ "$SYNTH2" -gt 0 ]; then
  $tune db synth --seed $((SEED + 1)) --count "$SYNTH2" -o target/synth2
  suites+=(target/synth2/suite.json)
fi
suites+=("${named_suites[@]}")
# (The shipped database searched its variants with --budget 10.)
for s in "${suites[@]}"; do
  $tune db build --suite "$s" --preset MEDIUM --budget $((BUDGET / 2)) --time-limit 20 \
    --seed "$SEED" -o "$out/tune.db"
done
# Transfer rows, the votes' and the contrastive term's data: sampled (--sample).
$tune db transfer --db "$out/tune.db" --sample "$SAMPLE"
for s in "${suites[@]}"; do
  $tune db transfer --db "$out/tune.db" --suite "$s" --sample "$SAMPLE"
done
train_and_embed
