//! Min-plus and max-plus recurrences: Floyd-Warshall's shortest paths, distance
//! products, interval dynamic programs over a triangle, and alignment-style wavefronts.

use crate::synth::context::*;

pub(super) fn path(cx: &mut Ctx) -> Sketch {
    match cx.rng.below(4) {
        0 => floyd(cx),
        1 => distance_product(cx),
        2 => interval(cx),
        _ => wavefront(cx),
    }
}

/// `x < y ? x : y` (or `>` for a maximum), the operands written in either order.
fn pick(cx: &mut Ctx, better: &str, x: &str, y: &str) -> String {
    if cx.rng.chance(0.5) {
        format!("{x} {better} {y} ? {x} : {y}")
    } else {
        let worse = if better == "<" { ">" } else { "<" };
        format!("{y} {worse} {x} ? {x} : {y}")
    }
}

/// All-pairs shortest paths in place: `P[i][j] = min(P[i][j], P[i][k] + P[k][j])`.
fn floyd(cx: &mut Ctx) -> Sketch {
    cx.size("N", CUBIC);
    cx.weights("P", &["N", "N"], true);
    let local = cx.rng.chance(0.4);
    let hk = cx.lt("k", "0", "N");
    let hi = cx.lt("i", "0", "N");
    let hj = cx.lt("j", "0", "N");
    let stmts = if local {
        let e = pick(cx, "<", "t", "P[i][j]");
        vec![
            "DATA_TYPE t = P[i][k] + P[k][j];".to_string(),
            format!("P[i][j] = {e};"),
        ]
    } else {
        let e = pick(cx, "<", "P[i][k] + P[k][j]", "P[i][j]");
        vec![format!("P[i][j] = {e};")]
    };
    cx.nest(&[hk, hi, hj], &stmts);
    Sketch {
        tag: format!("floyd{}", if local { "-local" } else { "" }),
        summary: "P := all-pairs shortest path lengths of the weights P (N x N), \
                  Floyd-Warshall in place"
            .to_string(),
    }
}

/// `C[i][j] = min over k of A[i][k] + B[k][j]` (or max): one squaring step of
/// shortest paths, or a Viterbi step.
fn distance_product(cx: &mut Ctx) -> Sketch {
    cx.size("NI", CUBIC);
    cx.size("NJ", CUBIC);
    cx.size("NK", CUBIC);
    cx.weights("A", &["NI", "NK"], false);
    cx.weights("B", &["NK", "NJ"], false);
    cx.output("C", &["NI", "NJ"]);
    let max = cx.rng.chance(0.3);
    let better = if max { ">" } else { "<" };
    let acc = cx.rng.chance(0.4);
    let order = if acc {
        ["i", "j", "k"]
    } else {
        cx.rng
            .pick(&[["i", "j", "k"], ["i", "k", "j"], ["k", "i", "j"]])
    };
    if acc {
        let hi = cx.lt("i", "0", "NI");
        let hj = cx.lt("j", "0", "NJ");
        let hk = cx.lt("k", "1", "NK");
        cx.open(&hi);
        cx.open(&hj);
        cx.line(&cx.acc("m", "A[i][0] + B[0][j]"));
        let e = pick(cx, better, "A[i][k] + B[k][j]", "m");
        cx.nest(&[hk], &[format!("m = {e};")]);
        cx.line("C[i][j] = m;");
        cx.close();
        cx.close();
    } else {
        // the first term starts the extremum: no infinity literal is needed
        let hi = cx.lt("i", "0", "NI");
        let hj = cx.lt("j", "0", "NJ");
        cx.nest(&[hi, hj], &["C[i][j] = A[i][0] + B[0][j];".to_string()]);
        let hs: Vec<String> = order
            .iter()
            .map(|v| {
                let lo = if *v == "k" { "1" } else { "0" };
                cx.lt(v, lo, &extent(v))
            })
            .collect();
        let e = pick(cx, better, "A[i][k] + B[k][j]", "C[i][j]");
        cx.nest(&hs, &[format!("C[i][j] = {e};")]);
    }
    Sketch {
        tag: format!(
            "{}plus-{}{}",
            if max { "max" } else { "min" },
            order.concat(),
            if acc { "-acc" } else { "" }
        ),
        summary: format!(
            "C := A (x) B in the {}-plus semiring, A (NI x NK), B (NK x NJ), loop order {}",
            if max { "max" } else { "min" },
            order.concat()
        ),
    }
}

/// Interval dynamic programming: `T[i][j] = W[i][j] + min over i <= k < j of
/// T[i][k] + T[k + 1][j]`, rows from the bottom up (optimal parenthesization, RNA
/// folding's shape).
fn interval(cx: &mut Ctx) -> Sketch {
    cx.size("N", CUBIC);
    cx.weights("T", &["N", "N"], true);
    cx.weights("W", &["N", "N"], false);
    let max = cx.rng.chance(0.4);
    let better = if max { ">" } else { "<" };
    let hi = cx.down("i", "N - 1", "0");
    let hj = cx.lt("j", "i + 1", "N");
    let hk = cx.lt("k", "i + 1", "j");
    cx.open(&hi);
    cx.open(&hj);
    cx.line(&cx.acc("best", "T[i][i] + T[i + 1][j]"));
    let e = pick(cx, better, "T[i][k] + T[k + 1][j]", "best");
    cx.nest(&[hk], &[format!("best = {e};")]);
    cx.line("T[i][j] = best + W[i][j];");
    cx.close();
    cx.close();
    Sketch {
        tag: format!("interval-{}", if max { "max" } else { "min" }),
        summary: format!(
            "T[i][j] := W[i][j] + the {} over split points k of T[i][k] + T[k+1][j], \
             upper triangle of T (N x N), rows bottom up",
            if max { "maximum" } else { "minimum" }
        ),
    }
}

/// Alignment: `D[i][j] = min(D[i-1][j] + g, D[i][j-1] + g, D[i-1][j-1] + S[i][j])`,
/// both loops carrying a dependence.
fn wavefront(cx: &mut Ctx) -> Sketch {
    cx.size("M", QUADRATIC);
    cx.size("N", QUADRATIC);
    cx.weights("D", &["M", "N"], true);
    cx.weights("S", &["M", "N"], false);
    let g = cx.coef();
    let hi = cx.lt("i", "1", "M");
    let hj = cx.lt("j", "1", "N");
    let low = pick(cx, "<", "up", "left");
    let d = pick(cx, "<", "D[i - 1][j - 1] + S[i][j]", "low");
    cx.nest(
        &[hi, hj],
        &[
            format!("DATA_TYPE up = D[i - 1][j] + {g};"),
            format!("DATA_TYPE left = D[i][j - 1] + {g};"),
            format!("DATA_TYPE low = {low};"),
            format!("D[i][j] = {d};"),
        ],
    );
    Sketch {
        tag: "wavefront".to_string(),
        summary: "D := edit-distance costs with gap cost g and substitution costs S \
                  (M x N), row by row"
            .to_string(),
    }
}
