//! Reductions of arrays to scalars and vectors.

use crate::synth::context::*;

pub(super) fn reduction(cx: &mut Ctx) -> Sketch {
    let kind = cx.rng.below(7);
    let z = cx.zero();
    let fabs = cx.math("fabs");
    let sqrt = cx.math("sqrt");
    let op = cx.rng.below(3);
    let f = |x: &str| match op {
        0 => x.to_string(),
        1 => format!("{x} * {x}"),
        _ => format!("{fabs}({x})"),
    };
    let what = ["sum", "sum of squares", "sum of absolute values"][op];
    let op_tag = ["sum", "sumsq", "abs"][op];
    match kind {
        // row sums
        0 | 1 => {
            let rowwise = kind == 0;
            cx.size("M", QUADRATIC);
            cx.size("N", QUADRATIC);
            cx.input("A", &["M", "N"]);
            let (out, red, keep, rdim) = if rowwise {
                ("r", "j", "i", "M")
            } else {
                ("c", "i", "j", "N")
            };
            cx.output(out, &[rdim]);
            let hk = cx.lt(keep, "0", rdim);
            let hr = cx.lt(red, "0", if rowwise { "N" } else { "M" });
            let outer_keep = cx.rng.chance(0.5);
            let use_acc = outer_keep && cx.rng.chance(0.5);
            let term = f("A[i][j]");
            if outer_keep && use_acc {
                cx.open(&hk);
                cx.line(&cx.acc("acc", &z));
                cx.nest(&[hr], &[format!("acc += {term};")]);
                cx.line(&format!("{out}[{keep}] = acc;"));
                cx.close();
            } else if outer_keep {
                cx.open(&hk);
                cx.line(&format!("{out}[{keep}] = {z};"));
                cx.nest(&[hr], &[format!("{out}[{keep}] += {term};")]);
                cx.close();
            } else {
                cx.nest(
                    std::slice::from_ref(&hk),
                    &[format!("{out}[{keep}] = {z};")],
                );
                let hk2 = cx.lt(keep, "0", rdim);
                cx.nest(&[hr, hk2], &[format!("{out}[{keep}] += {term};")]);
            }
            Sketch {
                tag: format!(
                    "{}-{op_tag}-{}{}",
                    if rowwise { "rows" } else { "cols" },
                    if outer_keep { "outer" } else { "inner" },
                    if use_acc { "-acc" } else { "" }
                ),
                summary: format!(
                    "{out}[{keep}] := {what} of the {} of A (M x N), the {} loop outermost",
                    if rowwise { "rows" } else { "columns" },
                    if outer_keep { keep } else { red }
                ),
            }
        }
        // dot product, 2-norm, max-abs of vectors: into a local scalar or a cell
        2..=4 => {
            cx.size("N", LINEAR);
            cx.input("x", &["N"]);
            if kind == 2 {
                cx.input("y", &["N"]);
            }
            cx.output("out", &["1"]);
            let local = cx.rng.chance(0.5);
            let (body, finish, tag, summary) = match kind {
                2 => (
                    "x[i] * y[i]".to_string(),
                    None,
                    "dot",
                    "out := x . y, the dot product of two vectors of length N",
                ),
                3 => (
                    "x[i] * x[i]".to_string(),
                    Some(sqrt.clone()),
                    "norm2",
                    "out := ||x||_2 (square root taken after the region)",
                ),
                _ => (
                    f("x[i]"),
                    None,
                    op_tag,
                    "out := a sum over a vector of length N",
                ),
            };
            let hi = cx.lt("i", "0", "N");
            if local {
                cx.locals.push(format!("DATA_TYPE s = {z};"));
                cx.nest(&[hi], &[format!("s += {body};")]);
                cx.epilogue.push(match &finish {
                    Some(g) => format!("out[0] = {g}(s);"),
                    None => "out[0] = s;".to_string(),
                });
            } else {
                cx.nest(&[hi], &[format!("out[0] += {body};")]);
                if let Some(g) = &finish {
                    cx.epilogue.push(format!("out[0] = {g}(out[0]);"));
                }
            }
            Sketch {
                tag: format!("{tag}-{}", if local { "local" } else { "cell" }),
                summary: summary.to_string(),
            }
        }
        // Frobenius norm or column norms of a matrix
        5 => {
            cx.size("M", QUADRATIC);
            cx.size("N", QUADRATIC);
            cx.input("A", &["M", "N"]);
            if cx.rng.chance(0.5) {
                cx.output("out", &["1"]);
                cx.locals.push(format!("DATA_TYPE s = {z};"));
                let (p, q) = if cx.rng.chance(0.6) {
                    ("i", "j")
                } else {
                    ("j", "i")
                };
                let hp = cx.lt(p, "0", if p == "i" { "M" } else { "N" });
                let hq = cx.lt(q, "0", if q == "i" { "M" } else { "N" });
                cx.nest(&[hp, hq], &["s += A[i][j] * A[i][j];".to_string()]);
                cx.epilogue.push(format!("out[0] = {sqrt}(s);"));
                Sketch {
                    tag: format!("frobenius-{p}{q}"),
                    summary: "out := ||A||_F, A (M x N)".to_string(),
                }
            } else {
                cx.output("nrm", &["N"]);
                let hj = cx.lt("j", "0", "N");
                let hi = cx.lt("i", "0", "M");
                cx.open(&hj);
                cx.line(&cx.acc("acc", &z));
                cx.nest(&[hi], &["acc += A[i][j] * A[i][j];".to_string()]);
                cx.line(&format!("nrm[j] = {sqrt}(acc);"));
                cx.close();
                Sketch {
                    tag: "colnorms".to_string(),
                    summary: "nrm[j] := 2-norm of column j of A (M x N)".to_string(),
                }
            }
        }
        // column means and variances
        _ => {
            cx.size("M", QUADRATIC);
            cx.size("N", QUADRATIC);
            cx.input("A", &["M", "N"]);
            cx.output("mean", &["N"]);
            cx.output("var", &["N"]);
            let hj = cx.lt("j", "0", "N");
            let hi = cx.lt("i", "0", "M");
            cx.open(&hj);
            cx.line(&format!("mean[j] = {z};"));
            cx.nest(&[hi], &["mean[j] += A[i][j];".to_string()]);
            cx.line("mean[j] /= M;");
            cx.close();
            let hj = cx.lt("j", "0", "N");
            let hi = cx.lt("i", "0", "M");
            cx.open(&hj);
            cx.line(&format!("var[j] = {z};"));
            cx.nest(
                &[hi],
                &["var[j] += (A[i][j] - mean[j]) * (A[i][j] - mean[j]);".to_string()],
            );
            cx.line("var[j] /= M;");
            cx.close();
            Sketch {
                tag: "meanvar".to_string(),
                summary: "mean[j] and var[j] of the columns of A (M x N), two passes".to_string(),
            }
        }
    }
}
