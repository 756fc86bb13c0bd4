#!/usr/bin/env python3
"""What the model learned, as a picture: a 2-D projection of a database's embeddings,
one dot per nest, coloured by the family of its best recipe (the kinds of step it uses).

    tune db list --db DB --embeddings > rows.json
    python3 scripts/plot-embeddings.py rows.json docs/embeddings.png [--title TEXT]

The projection is the plane of the two largest principal components of the embeddings
(centred; the share of variance each explains is printed and written on the axes).
Families beyond the 12 largest are drawn grey as "other". Needs numpy and matplotlib
(`pip install matplotlib` in the venv of scripts/env.sh); only the docs need it.
"""

import argparse
import json
import sys

import numpy as np

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def family_name(steps):
    return "+".join(steps) if steps else "none (kept as written)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows", help="output of `tune db list --embeddings`")
    ap.add_argument("png", help="image to write")
    ap.add_argument("--title", default="")
    ap.add_argument("--families", type=int, default=12, help="families drawn in colour")
    a = ap.parse_args()
    with open(a.rows) as f:
        rows = [r for r in json.load(f) if r.get("embedding")]
    if len(rows) < 3:
        sys.exit(f"{a.rows}: fewer than 3 embedded entries (run `tune db embed` first)")
    x = np.array([r["embedding"] for r in rows], dtype=np.float64)
    x -= x.mean(axis=0)
    _, s, vt = np.linalg.svd(x, full_matrices=False)
    xy = x @ vt[:2].T
    share = s**2 / max((s**2).sum(), 1e-30)
    fams = [family_name(r["family"]) for r in rows]
    counts = {}
    for f in fams:
        counts[f] = counts.get(f, 0) + 1
    kept = sorted(counts, key=lambda f: (-counts[f], f))[: a.families]
    fams = [f if f in kept else "other" for f in fams]
    order = sorted(set(fams), key=lambda f: (f == "other", -fams.count(f), f))
    cmap = plt.get_cmap("tab20" if len(order) > 10 else "tab10")
    fig, ax = plt.subplots(figsize=(10, 7.5), dpi=110)
    for k, f in enumerate(order):
        idx = [i for i, g in enumerate(fams) if g == f]
        colour = "#b0b0b0" if f == "other" else cmap(k % 20)
        ax.scatter(xy[idx, 0], xy[idx, 1], s=16, color=colour, label=f"{f} ({len(idx)})",
                   alpha=0.85, linewidths=0)
    ax.set_xlabel(f"principal component 1 ({share[0]:.0%} of variance)")
    ax.set_ylabel(f"principal component 2 ({share[1]:.0%} of variance)")
    ax.set_title(a.title or f"{len(rows)} nests, coloured by the family of their best recipe")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    fig.tight_layout()
    fig.savefig(a.png)
    print(f"{a.png}: {len(rows)} nests, {len(order)} families; "
          f"components explain {share[0]:.0%} and {share[1]:.0%}")


if __name__ == "__main__":
    main()
