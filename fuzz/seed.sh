#!/usr/bin/env bash
# Fills fuzz/corpus/frontend with the preprocessed dataset programs as seeds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$here/corpus/frontend"
for f in "$here"/../datasets/programs/*.c; do
  "${CC:-cc}" -E -DMINI_DATASET "$f" > "$here/corpus/frontend/$(basename "$f" .c).i"
done
