#!/usr/bin/env bash
# Fuzzes the frontend with libFuzzer on a stable toolchain (cargo-fuzz needs nightly;
# this passes the same coverage instrumentation through stable codegen flags).
# Usage: fuzz/run-stable.sh [SECONDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
secs=${1:-60}
"$here/seed.sh"
export RUSTFLAGS="--cfg fuzzing -Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares -Cdebug-assertions -Coverflow-checks"
# An explicit --target keeps the flags off build scripts and proc macros.
target=$(rustc -vV | sed -n "s/^host: //p")
(cd "$here" && cargo build --release --bin frontend --target "$target")
mkdir -p "$here/artifacts"
"$here/target/$target/release/frontend" -max_total_time="$secs" -max_len=65536 -timeout=10 \
  -artifact_prefix="$here/artifacts/" "$here/corpus/frontend"
