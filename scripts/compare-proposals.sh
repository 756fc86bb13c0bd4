#!/usr/bin/env bash
# Compares what two tune binaries propose for every dataset program (MINI), before any
# measurement: per nest, the candidates of `tune apply --static-only` (the database
# entry each came from, the re-fitted recipe, the dropped steps, and for entries passed
# over why). A refactor must leave this unchanged.
#
#   scripts/compare-proposals.sh OLD_TUNE NEW_TUNE [program...]
#
# Both binaries see one machine description (retrieval embeds machine features too):
# the first run's is copied to the other's cache.
set -euo pipefail
cd "$(dirname "$0")/.."
old=$(realpath "$1"); new=$(realpath "$2"); shift 2
root=$(pwd)
work=$(mktemp -d)
progs=("$@")
[ ${#progs[@]} -eq 0 ] && progs=($(ls datasets/programs/*.c | xargs -n1 basename | sed 's/\.c$//'))
machine="$work/machine"
proposals() { # tune out program
  local dir; dir=$(mktemp -d -p "$work")
  if [ -d "$machine" ]; then mkdir -p "$dir/c" && cp -r "$machine" "$dir/c/machine"; fi
  "$1" apply "$root/datasets/programs/$3.c" -DMINI_DATASET -lm --static-only --check-runs 0 \
    --warmup 0 --repetitions 3 --format json -o "$dir/t.c" --cache-dir "$dir/c" > "$dir/r.json" 2> "$dir/err" \
    || { tail -1 "$dir/err" > "$2/$3.err"; return 0; }
  [ -d "$machine" ] || cp -r "$dir/c/machine" "$machine"
  python3 - "$dir/r.json" > "$2/$3.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
out = []
for n in r["nests"]:
    cands = []
    for c in n["candidates"]:
        passed = c["verdict"] in ("not applicable", "same recipe", "unreadable", "refused")
        cands.append({"from": [c["from"]["program"], c["from"]["nest"]], "recipe": c["recipe"],
                      "dropped": c["dropped"], "passed_over": c["verdict"] if passed else None})
    out.append({"nest": n["nest"], "candidates": cands})
print(json.dumps(out, indent=1, sort_keys=True))
PY
}
mkdir -p "$work/old" "$work/new"
for p in "${progs[@]}"; do
  proposals "$old" "$work/old" "$p"
  proposals "$new" "$work/new" "$p"
done
if diff -r "$work/old" "$work/new"; then
  echo "same proposals for ${#progs[@]} programs"
  rm -rf "$work"
else
  echo "proposals differ (files in $work)" >&2
  exit 1
fi
