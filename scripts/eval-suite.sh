#!/usr/bin/env bash
# Writes the suite `tune db eval` holds out in embeddings/FEATURES.md ("combined.json"):
# the core suite (datasets/suite.json) and its loop-order variants (`tune db variants`),
# in one manifest with absolute paths (59 programs, 89 nests).
#
#   scripts/eval-suite.sh [OUT.json]     # default target/eval/combined.json
#   tune db eval --db models/default/tune.db --suite target/eval/combined.json \
#     --top-k 3 --seed 1,2,3 --epochs 40 --json
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-target/eval/combined.json}"
tune="${TUNE:-./target/release/tune}"
variants=target/eval/variants
mkdir -p "$(dirname "$out")"
"$tune" db variants -o "$variants" >&2
python3 - "$out" datasets/suite.json "$variants/suite.json" <<'PY'
import json, os, sys
out, *suites = sys.argv[1:]
combined = None
for path in suites:
    suite = json.load(open(path))
    base = os.path.dirname(os.path.abspath(path))
    for p in suite["programs"]:
        for key in ("file", "verdicts"):
            if p.get(key):
                p[key] = os.path.join(base, p[key])
    if combined is None:
        combined = dict(suite, name="combined")
    else:
        combined["programs"] += suite["programs"]
json.dump(combined, open(out, "w"), indent=1)
print(f"{out}: {len(combined['programs'])} programs", file=sys.stderr)
PY
