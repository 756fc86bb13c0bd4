//! The families. Each writes its region into the context and declares its sizes,
//! scalars and arrays; `render` turns that into a program.

use super::context::*;
use super::Family;

/// Writes one program of `family` into `cx`.
pub(super) fn write(family: Family, cx: &mut Ctx) -> Sketch {
    match family {
        Family::MatMul => matmul(cx),
        Family::MatVec => matvec(cx),
        Family::Reduction => reduction(cx),
        Family::Stencil => stencil(cx),
        Family::Copy => copy(cx),
        Family::Triangular => triangular(cx),
        Family::Elementwise => elementwise(cx),
        Family::Outer => outer(cx),
    }
}

fn matmul(cx: &mut Ctx) -> Sketch {
    let a_t = cx.rng.chance(0.3);
    let b_t = cx.rng.chance(0.3);
    let order = cx.rng.pick(ORDERS3);
    let scale = cx.rng.below(3); // C = AB, C = beta C + AB, C = beta C + alpha AB
    let chain = cx.rng.chance(0.2);
    cx.size("NI", CUBIC);
    cx.size("NJ", CUBIC);
    cx.size("NK", CUBIC);
    if chain {
        cx.size("NL", CUBIC);
    }
    let bound = |v: &str| match v {
        "i" => "NI",
        "j" => "NJ",
        "k" => "NK",
        _ => "NL",
    };
    let (a, a_dims) = if a_t {
        ("A[k][i]", ["NK", "NI"])
    } else {
        ("A[i][k]", ["NI", "NK"])
    };
    let (b, b_dims) = if b_t {
        ("B[j][k]", ["NJ", "NK"])
    } else {
        ("B[k][j]", ["NK", "NJ"])
    };
    if scale == 2 {
        cx.scalar("alpha");
    }
    if scale >= 1 {
        cx.scalar("beta");
    }
    cx.inout("C", &["NI", "NJ"]);
    cx.input("A", &a_dims);
    cx.input("B", &b_dims);
    let prod = if scale == 2 {
        format!("alpha * {a} * {b}")
    } else {
        format!("{a} * {b}")
    };
    let first = if scale == 0 {
        format!("C[i][j] = {};", cx.zero())
    } else {
        "C[i][j] *= beta;".to_string()
    };
    let use_acc = order[2] == "k" && cx.rng.chance(0.4);
    let mut fused = false;
    if use_acc {
        let h0 = cx.lt(order[0], "0", bound(order[0]));
        let h1 = cx.lt(order[1], "0", bound(order[1]));
        let hk = cx.lt("k", "0", "NK");
        cx.open(&h0);
        cx.open(&h1);
        let z = cx.zero();
        cx.line(&cx.acc("acc", &z));
        cx.nest(&[hk], &[format!("acc += {a} * {b};")]);
        cx.line(match scale {
            0 => "C[i][j] = acc;",
            1 => "C[i][j] = beta * C[i][j] + acc;",
            _ => "C[i][j] = beta * C[i][j] + alpha * acc;",
        });
        cx.close();
        cx.close();
    } else {
        fused = order[0] == "i" && cx.rng.chance(0.5);
        let upd = format!("C[i][j] += {prod};");
        if fused {
            let hi = cx.lt("i", "0", "NI");
            let hj = cx.lt("j", "0", "NJ");
            let h1 = cx.lt(order[1], "0", bound(order[1]));
            let h2 = cx.lt(order[2], "0", bound(order[2]));
            cx.open(&hi);
            cx.nest(&[hj], &[first]);
            cx.nest(&[h1, h2], &[upd]);
            cx.close();
        } else {
            let (p, q) = if cx.rng.chance(0.7) {
                ("i", "j")
            } else {
                ("j", "i")
            };
            let hp = cx.lt(p, "0", bound(p));
            let hq = cx.lt(q, "0", bound(q));
            cx.nest(&[hp, hq], &[first]);
            let hs: Vec<String> = order.iter().map(|v| cx.lt(v, "0", bound(v))).collect();
            cx.nest(&hs, &[upd]);
        }
    }
    let mut summary = match scale {
        0 => "C := A * B".to_string(),
        1 => "C := A * B + beta * C".to_string(),
        _ => "C := alpha * A * B + beta * C".to_string(),
    };
    summary.push_str(" with C (NI x NJ)");
    summary.push_str(if a_t {
        ", A stored transposed (NK x NI)"
    } else {
        ", A (NI x NK)"
    });
    summary.push_str(if b_t {
        ", B stored transposed (NJ x NK)"
    } else {
        ", B (NK x NJ)"
    });
    summary.push_str(&format!(", loop order {}", order.concat()));
    if chain {
        cx.output("D", &["NI", "NL"]);
        cx.input("E", &["NJ", "NL"]);
        let order2 = cx.rng.pick(&[
            ["i", "l", "j"],
            ["i", "j", "l"],
            ["l", "i", "j"],
            ["j", "i", "l"],
        ]);
        let hi = cx.lt("i", "0", "NI");
        let hl = cx.lt("l", "0", "NL");
        let z = cx.zero();
        cx.nest(&[hi, hl], &[format!("D[i][l] = {z};")]);
        let b2 = |v: &str| match v {
            "i" => "NI",
            "j" => "NJ",
            _ => "NL",
        };
        let hs: Vec<String> = order2.iter().map(|v| cx.lt(v, "0", b2(v))).collect();
        cx.nest(&hs, &["D[i][l] += C[i][j] * E[j][l];".to_string()]);
        summary.push_str(&format!(
            "; then D := C * E, E (NJ x NL), loop order {}",
            order2.concat()
        ));
    }
    let mut tag = order.concat();
    if a_t {
        tag.push_str("-at");
    }
    if b_t {
        tag.push_str("-bt");
    }
    tag.push_str(["", "-b", "-ab"][scale]);
    if use_acc {
        tag.push_str("-acc");
    }
    if fused {
        tag.push_str("-fused");
    }
    if chain {
        tag.push_str("-chain");
    }
    Sketch { tag, summary }
}

fn matvec(cx: &mut Ctx) -> Sketch {
    cx.size("M", QUADRATIC);
    cx.size("N", QUADRATIC);
    let kind = cx.rng.below(5);
    let rows = cx.rng.chance(0.6); // i (rows of A) outermost
    let use_acc = cx.rng.chance(0.4);
    let z = cx.zero();
    match kind {
        // y := alpha A x (+ beta y)
        0 => {
            let scaled = cx.rng.chance(0.5);
            cx.input("A", &["M", "N"]);
            cx.input("x", &["N"]);
            if scaled {
                cx.scalar("alpha");
                cx.scalar("beta");
                cx.inout("y", &["M"]);
            } else {
                cx.output("y", &["M"]);
            }
            let term = if scaled {
                "alpha * A[i][j] * x[j]"
            } else {
                "A[i][j] * x[j]"
            };
            let first = if scaled {
                "y[i] = beta * y[i];".to_string()
            } else {
                format!("y[i] = {z};")
            };
            let hi = cx.lt("i", "0", "M");
            let hj = cx.lt("j", "0", "N");
            if rows && use_acc {
                cx.open(&hi);
                let init = if scaled { "beta * y[i]" } else { z.as_str() };
                cx.line(&cx.acc("acc", init));
                cx.nest(&[hj], &[format!("acc += {term};")]);
                cx.line("y[i] = acc;");
                cx.close();
            } else if rows {
                cx.open(&hi);
                cx.line(&first);
                cx.nest(&[hj], &[format!("y[i] += {term};")]);
                cx.close();
            } else {
                cx.nest(std::slice::from_ref(&hi), &[first]);
                let hi2 = cx.lt("i", "0", "M");
                cx.nest(&[hj, hi2], &[format!("y[i] += {term};")]);
            }
            Sketch {
                tag: format!(
                    "ax{}{}",
                    if rows { "-rows" } else { "-cols" },
                    if rows && use_acc { "-acc" } else { "" }
                ),
                summary: format!(
                    "y := {}A * x{}, A (M x N), {}",
                    if scaled { "alpha * " } else { "" },
                    if scaled { " + beta * y" } else { "" },
                    if rows {
                        "row by row"
                    } else {
                        "column by column"
                    }
                ),
            }
        }
        // y := A^T x
        1 => {
            cx.input("A", &["M", "N"]);
            cx.input("x", &["M"]);
            cx.output("y", &["N"]);
            let hj = cx.lt("j", "0", "N");
            let hi = cx.lt("i", "0", "M");
            if rows {
                cx.nest(std::slice::from_ref(&hj), &[format!("y[j] = {z};")]);
                let hj2 = cx.lt("j", "0", "N");
                cx.nest(&[hi, hj2], &["y[j] += A[i][j] * x[i];".to_string()]);
            } else if use_acc {
                cx.open(&hj);
                cx.line(&cx.acc("acc", &z));
                cx.nest(&[hi], &["acc += A[i][j] * x[i];".to_string()]);
                cx.line("y[j] = acc;");
                cx.close();
            } else {
                cx.open(&hj);
                cx.line(&format!("y[j] = {z};"));
                cx.nest(&[hi], &["y[j] += A[i][j] * x[i];".to_string()]);
                cx.close();
            }
            Sketch {
                tag: format!(
                    "atx{}{}",
                    if rows { "-rows" } else { "-cols" },
                    if !rows && use_acc { "-acc" } else { "" }
                ),
                summary: format!(
                    "y := A^T * x, A (M x N), {}",
                    if rows {
                        "walking A by rows"
                    } else {
                        "walking A by columns"
                    }
                ),
            }
        }
        // bicg: s := A^T r, q := A p in one sweep
        2 => {
            cx.input("A", &["M", "N"]);
            cx.input("r", &["M"]);
            cx.input("p", &["N"]);
            cx.output("s", &["N"]);
            cx.output("q", &["M"]);
            let hj = cx.lt("j", "0", "N");
            cx.nest(&[hj], &[format!("s[j] = {z};")]);
            let hi = cx.lt("i", "0", "M");
            let hj = cx.lt("j", "0", "N");
            cx.open(&hi);
            cx.line(&format!("q[i] = {z};"));
            cx.nest(
                &[hj],
                &[
                    "s[j] += r[i] * A[i][j];".to_string(),
                    "q[i] += A[i][j] * p[j];".to_string(),
                ],
            );
            cx.close();
            Sketch {
                tag: "bicg".to_string(),
                summary: "s := A^T * r and q := A * p in one sweep over A (M x N)".to_string(),
            }
        }
        // gesummv: y := alpha A x + beta B x (square)
        3 => {
            cx.scalar("alpha");
            cx.scalar("beta");
            cx.input("A", &["M", "N"]);
            cx.input("B", &["M", "N"]);
            cx.input("x", &["N"]);
            cx.output("y", &["M"]);
            let hi = cx.lt("i", "0", "M");
            let hj = cx.lt("j", "0", "N");
            if use_acc {
                cx.open(&hi);
                cx.line(&cx.acc("ta", &z));
                cx.line(&cx.acc("tb", &z));
                cx.nest(
                    &[hj],
                    &[
                        "ta += A[i][j] * x[j];".to_string(),
                        "tb += B[i][j] * x[j];".to_string(),
                    ],
                );
                cx.line("y[i] = alpha * ta + beta * tb;");
                cx.close();
            } else {
                cx.output("w", &["M"]);
                cx.open(&hi);
                cx.line(&format!("w[i] = {z};"));
                cx.line(&format!("y[i] = {z};"));
                cx.nest(
                    &[hj],
                    &[
                        "w[i] = A[i][j] * x[j] + w[i];".to_string(),
                        "y[i] = B[i][j] * x[j] + y[i];".to_string(),
                    ],
                );
                cx.line("y[i] = alpha * w[i] + beta * y[i];");
                cx.close();
            }
            Sketch {
                tag: format!("gesummv{}", if use_acc { "-acc" } else { "" }),
                summary: "y := alpha * A * x + beta * B * x, A and B (M x N)".to_string(),
            }
        }
        // atax: y := A^T (A x)
        _ => {
            cx.input("A", &["M", "N"]);
            cx.input("x", &["N"]);
            cx.output("y", &["N"]);
            cx.output("w", &["M"]);
            let hj = cx.lt("j", "0", "N");
            cx.nest(&[hj], &[format!("y[j] = {z};")]);
            let hi = cx.lt("i", "0", "M");
            let hj = cx.lt("j", "0", "N");
            let hj2 = cx.lt("j", "0", "N");
            cx.open(&hi);
            cx.line(&format!("w[i] = {z};"));
            cx.nest(&[hj], &["w[i] += A[i][j] * x[j];".to_string()]);
            cx.nest(&[hj2], &["y[j] += A[i][j] * w[i];".to_string()]);
            cx.close();
            Sketch {
                tag: "atax".to_string(),
                summary: "y := A^T * (A * x) with w := A * x, A (M x N)".to_string(),
            }
        }
    }
}

fn reduction(cx: &mut Ctx) -> Sketch {
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

fn stencil(cx: &mut Ctx) -> Sketch {
    let dim = cx.rng.pick(&[1usize, 2, 2, 3]);
    // (radius, box): star of radius 1 or 2, or the full 3^d box
    let (radius, boxed) = match dim {
        1 => (cx.rng.pick(&[1i64, 2]), false),
        2 => cx.rng.pick(&[(1i64, false), (1, true), (2, false)]),
        _ => cx
            .rng
            .pick(&[(1i64, false), (1, false), (2, false), (1, true)]),
    };
    let scheme = cx.rng.below(3); // Jacobi ping-pong, copy-back, Gauss-Seidel in place
    let (grid, steps) = match dim {
        1 => (GRID1, STEPS1),
        2 => (GRID2, STEPS2),
        _ => (GRID3, STEPS3),
    };
    cx.size("TSTEPS", steps);
    cx.size("N", grid);
    let rect = dim == 2 && cx.rng.chance(0.3);
    if rect {
        cx.size("M", grid);
    }
    let vars = ["i", "j", "k"];
    let ext = |a: usize| if rect && a == 1 { "M" } else { "N" };
    let dims: Vec<&'static str> = (0..dim).map(ext).collect();
    cx.inout("A", &dims);
    if scheme != 2 {
        cx.inout("B", &dims);
    }
    // offsets, center first; ring = Chebyshev distance (box) or distance along the axis
    let mut points: Vec<(Vec<i64>, i64)> = vec![(vec![0; dim], 0)];
    if boxed {
        let total = 3usize.pow(dim as u32);
        for code in 0..total {
            let off: Vec<i64> = (0..dim)
                .map(|a| (code / 3usize.pow((dim - 1 - a) as u32) % 3) as i64 - 1)
                .collect();
            let nonzero = off.iter().filter(|&&d| d != 0).count() as i64;
            if nonzero > 0 {
                points.push((off, nonzero));
            }
        }
    } else {
        for a in 0..dim {
            for d in 1..=radius {
                for s in [-1, 1] {
                    let mut off = vec![0; dim];
                    off[a] = s * d;
                    points.push((off, d));
                }
            }
        }
    }
    let npts = points.len();
    let access = |arr: &str, off: &[i64]| {
        let idx: Vec<String> = off
            .iter()
            .enumerate()
            .map(|(a, &d)| offset(vars[a], d))
            .collect();
        let idx: Vec<&str> = idx.iter().map(|s| s.as_str()).collect();
        at(arr, &idx)
    };
    let form = if !boxed && radius == 1 {
        cx.rng.below(3)
    } else {
        cx.rng.below(2)
    };
    let rings = points.iter().map(|p| p.1).max().unwrap_or(0);
    let c0 = cx.rng.pick(&[0.5, 0.4, 0.25, 0.6]);
    let expr = |cx: &Ctx, src: &str| -> String {
        match form {
            // mean of the points
            0 => {
                let terms: Vec<String> = points.iter().map(|(o, _)| access(src, o)).collect();
                format!("({}) / {}", terms.join(" + "), cx.lit(&format!("{npts}.0")))
            }
            // weighted: center c0, the rest shared by rings
            1 => {
                let mut s = format!("{} * {}", cx.lit(&decimal(c0)), access(src, &points[0].0));
                let ring_share: Vec<f64> = match rings {
                    1 => vec![1.0],
                    2 => vec![0.75, 0.25],
                    _ => vec![0.6, 0.3, 0.1],
                };
                for r in 1..=rings {
                    let ring: Vec<String> = points
                        .iter()
                        .filter(|p| p.1 == r)
                        .map(|(o, _)| access(src, o))
                        .collect();
                    let w = (1.0 - c0) * ring_share[(r - 1) as usize] / ring.len() as f64;
                    s.push_str(&format!(
                        " + {} * ({})",
                        cx.lit(&decimal(w)),
                        ring.join(" + ")
                    ));
                }
                s
            }
            // explicit heat step: u + r * (sum of neighbours - 2d u)
            _ => {
                let center = access(src, &points[0].0);
                let ring: Vec<String> = points[1..].iter().map(|(o, _)| access(src, o)).collect();
                format!(
                    "{center} + {} * ({} - {} * {center})",
                    cx.lit("0.1"),
                    ring.join(" + "),
                    cx.lit(&format!("{}.0", 2 * dim))
                )
            }
        }
    };
    let swap = dim >= 2 && cx.rng.chance(0.25);
    let mut order: Vec<usize> = (0..dim).collect();
    if swap {
        order.swap(0, 1);
    }
    let r = radius.to_string();
    let interior = |cx: &mut Ctx| -> Vec<String> {
        order
            .iter()
            .map(|&a| {
                let hi = format!("{} - {r}", ext(a));
                cx.lt(vars[a], &r, &hi)
            })
            .collect()
    };
    let center: Vec<&str> = vars[..dim].to_vec();
    let ht = cx.lt("t", "0", "TSTEPS");
    match scheme {
        0 => {
            cx.open(&ht);
            let hs = interior(cx);
            let e = expr(cx, "A");
            cx.nest(&hs, &[format!("{} = {e};", at("B", &center))]);
            let hs = interior(cx);
            let e = expr(cx, "B");
            cx.nest(&hs, &[format!("{} = {e};", at("A", &center))]);
            cx.close();
        }
        1 => {
            cx.open(&ht);
            let hs = interior(cx);
            let e = expr(cx, "A");
            cx.nest(&hs, &[format!("{} = {e};", at("B", &center))]);
            let hs = interior(cx);
            cx.nest(
                &hs,
                &[format!("{} = {};", at("A", &center), at("B", &center))],
            );
            cx.close();
        }
        _ => {
            let hs = interior(cx);
            let e = expr(cx, "A");
            let mut heads = vec![ht];
            heads.extend(hs);
            cx.nest(&heads, &[format!("{} = {e};", at("A", &center))]);
        }
    }
    let shape = if boxed {
        "box".to_string()
    } else {
        format!("star{radius}")
    };
    let scheme_name = ["jacobi", "copyback", "seidel"][scheme];
    let form_name = ["mean", "weighted", "heat"][form];
    Sketch {
        tag: format!(
            "{dim}d{npts}-{shape}-{scheme_name}-{form_name}{}",
            if swap { "-swapped" } else { "" }
        ),
        summary: format!(
            "{dim}-D {npts}-point {} stencil ({form_name}), TSTEPS {}{}",
            if boxed { "box" } else { "star" },
            match scheme {
                0 => "Jacobi sweeps alternating between A and B",
                1 => "Jacobi sweeps into B, copied back into A",
                _ => "in-place Gauss-Seidel sweeps of A",
            },
            if swap {
                ", the first two axes interchanged"
            } else {
                ""
            }
        ),
    }
}

fn copy(cx: &mut Ctx) -> Sketch {
    if cx.rng.chance(0.25) {
        cx.elem = Elem::I32;
    }
    let kind = cx.rng.below(6);
    let scaled = cx.rng.chance(0.3);
    let scale = |cx: &mut Ctx, x: String| -> String {
        if !scaled {
            x
        } else if cx.elem == Elem::I32 {
            format!("3 * {x}")
        } else {
            let c = cx.coef();
            format!("{c} * {x}")
        }
    };
    match kind {
        // 2-D transpose
        0 => {
            cx.size("M", QUADRATIC);
            cx.size("N", QUADRATIC);
            cx.input("A", &["M", "N"]);
            cx.output("B", &["N", "M"]);
            let rows = cx.rng.chance(0.5);
            let hi = cx.lt("i", "0", "M");
            let hj = cx.lt("j", "0", "N");
            let heads = if rows { [hi, hj] } else { [hj, hi] };
            let v = scale(cx, "A[i][j]".to_string());
            cx.nest(&heads, &[format!("B[j][i] = {v};")]);
            Sketch {
                tag: format!("transpose-{}", if rows { "ij" } else { "ji" }),
                summary: format!(
                    "B := {}A^T, A (M x N), {}",
                    if scaled { "c * " } else { "" },
                    if rows {
                        "reading A by rows"
                    } else {
                        "writing B by rows"
                    }
                ),
            }
        }
        // C := A + B^T (square)
        1 => {
            cx.size("N", QUADRATIC);
            cx.input("A", &["N", "N"]);
            cx.input("B", &["N", "N"]);
            cx.output("C", &["N", "N"]);
            let rows = cx.rng.chance(0.5);
            let hi = cx.lt("i", "0", "N");
            let hj = cx.lt("j", "0", "N");
            let heads = if rows { [hi, hj] } else { [hj, hi] };
            let v = scale(cx, "B[j][i]".to_string());
            cx.nest(&heads, &[format!("C[i][j] = A[i][j] + {v};")]);
            Sketch {
                tag: format!("transpose-add-{}", if rows { "ij" } else { "ji" }),
                summary: "C := A + B^T, all N x N".to_string(),
            }
        }
        // 3-D permutation
        2 => {
            let n = ["NP", "NQ", "NR"];
            for s in n {
                cx.size(s, CUBE);
            }
            let perms: [[usize; 3]; 5] = [[0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
            let perm = cx.rng.pick(&perms);
            let order = cx.rng.pick(ORDERS3);
            let vars = ["i", "j", "k"];
            cx.input("A", &n);
            cx.output("B", &[n[perm[0]], n[perm[1]], n[perm[2]]]);
            let heads: Vec<String> = order
                .iter()
                .map(|v| {
                    let a = vars.iter().position(|x| x == v).unwrap_or(0);
                    cx.lt(v, "0", n[a])
                })
                .collect();
            let v = scale(cx, "A[i][j][k]".to_string());
            cx.nest(
                &heads,
                &[format!(
                    "{} = {v};",
                    at("B", &[vars[perm[0]], vars[perm[1]], vars[perm[2]]])
                )],
            );
            let p: String = perm.iter().map(|&a| vars[a]).collect();
            Sketch {
                tag: format!("permute-{p}-{}", order.concat()),
                summary: format!(
                    "B[{}][{}][{}] := A[i][j][k], A (NP x NQ x NR), loop order {}",
                    vars[perm[0]],
                    vars[perm[1]],
                    vars[perm[2]],
                    order.concat()
                ),
            }
        }
        // strided gather / scatter, 1-D
        3 => {
            let stride = cx.rng.pick(&[2i64, 3, 4, 8]);
            let off = cx.rng.range(0, stride - 1);
            cx.size("N", SPARSE);
            cx.scaled_size("NS", "N", stride);
            let gather = cx.rng.chance(0.5);
            let hi = cx.lt("i", "0", "N");
            let far = offset(&format!("{stride} * i"), off);
            if gather {
                cx.input("x", &["NS"]);
                cx.output("y", &["N"]);
                let v = scale(cx, format!("x[{far}]"));
                cx.nest(&[hi], &[format!("y[i] = {v};")]);
            } else {
                cx.input("x", &["N"]);
                cx.output("y", &["NS"]);
                let v = scale(cx, "x[i]".to_string());
                cx.nest(&[hi], &[format!("y[{far}] = {v};")]);
            }
            Sketch {
                tag: format!("{}-s{stride}", if gather { "gather" } else { "scatter" }),
                summary: format!(
                    "{} with stride {stride} (offset {off})",
                    if gather {
                        "y[i] := x[s * i + o]"
                    } else {
                        "y[s * i + o] := x[i]"
                    }
                ),
            }
        }
        // strided 2-D copy of rows or columns, from an offset
        4 => {
            let stride = cx.rng.pick(&[2i64, 3, 4]);
            cx.size("M", QUADRATIC);
            cx.size("N", QUADRATIC);
            let by_rows = cx.rng.chance(0.5);
            if by_rows {
                cx.scaled_size("MS", "M", stride);
                cx.input("A", &["MS", "N"]);
            } else {
                cx.scaled_size("NS", "N", stride);
                cx.input("A", &["M", "NS"]);
            }
            cx.output("B", &["M", "N"]);
            let src = if by_rows {
                format!("A[{stride} * i][j]")
            } else {
                format!("A[i][{stride} * j]")
            };
            let rows = cx.rng.chance(0.6);
            let hi = cx.lt("i", "0", "M");
            let hj = cx.lt("j", "0", "N");
            let heads = if rows { [hi, hj] } else { [hj, hi] };
            let v = scale(cx, src);
            cx.nest(&heads, &[format!("B[i][j] = {v};")]);
            Sketch {
                tag: format!(
                    "strided-{}{stride}-{}",
                    if by_rows { "rows" } else { "cols" },
                    if rows { "ij" } else { "ji" }
                ),
                summary: format!(
                    "B := every {stride}th {} of A, B (M x N)",
                    if by_rows { "row" } else { "column" }
                ),
            }
        }
        // reversal
        _ => {
            let two_d = cx.rng.chance(0.5);
            let downward = cx.rng.chance(0.5);
            if two_d {
                cx.size("M", QUADRATIC);
                cx.size("N", QUADRATIC);
                cx.input("A", &["M", "N"]);
                cx.output("B", &["M", "N"]);
                let hi = if downward {
                    cx.down("i", "M - 1", "0")
                } else {
                    cx.lt("i", "0", "M")
                };
                let hj = cx.lt("j", "0", "N");
                let v = scale(cx, "A[M - 1 - i][N - 1 - j]".to_string());
                cx.nest(&[hi, hj], &[format!("B[i][j] = {v};")]);
            } else {
                cx.size("N", LINEAR);
                cx.input("x", &["N"]);
                cx.output("y", &["N"]);
                let hi = if downward {
                    cx.down("i", "N - 1", "0")
                } else {
                    cx.lt("i", "0", "N")
                };
                let v = scale(cx, "x[N - 1 - i]".to_string());
                cx.nest(&[hi], &[format!("y[i] = {v};")]);
            }
            Sketch {
                tag: format!(
                    "reverse-{}{}",
                    if two_d { "2d" } else { "1d" },
                    if downward { "-down" } else { "" }
                ),
                summary: format!(
                    "{} reversed{}",
                    if two_d {
                        "B := A (M x N) with both axes"
                    } else {
                        "y := x (length N)"
                    },
                    if downward {
                        ", the loop counting down"
                    } else {
                        ""
                    }
                ),
            }
        }
    }
}

fn triangular(cx: &mut Ctx) -> Sketch {
    let kind = cx.rng.below(5);
    let lower = cx.rng.chance(0.6);
    let tri = if lower { "lower" } else { "upper" };
    let z = cx.zero();
    match kind {
        // syrk: C := alpha A A^T + beta C on one triangle
        0 => {
            cx.size("N", CUBIC);
            cx.size("M", CUBIC);
            cx.scalar("alpha");
            cx.scalar("beta");
            cx.inout("C", &["N", "N"]);
            cx.input("A", &["N", "M"]);
            let form = cx.rng.below(3);
            let hi = cx.lt("i", "0", "N");
            let hj = if lower {
                cx.le("j", "0", "i")
            } else {
                cx.lt("j", "i", "N")
            };
            let hk = cx.lt("k", "0", "M");
            match form {
                0 => {
                    cx.open(&hi);
                    cx.open(&hj);
                    cx.line("C[i][j] *= beta;");
                    cx.nest(
                        &[hk],
                        &["C[i][j] += alpha * A[i][k] * A[j][k];".to_string()],
                    );
                    cx.close();
                    cx.close();
                }
                1 => {
                    cx.open(&hi);
                    cx.nest(std::slice::from_ref(&hj), &["C[i][j] *= beta;".to_string()]);
                    cx.nest(
                        &[hk, hj],
                        &["C[i][j] += alpha * A[i][k] * A[j][k];".to_string()],
                    );
                    cx.close();
                }
                _ => {
                    cx.open(&hi);
                    cx.open(&hj);
                    cx.line(&cx.acc("acc", &z));
                    cx.nest(&[hk], &["acc += A[i][k] * A[j][k];".to_string()]);
                    cx.line("C[i][j] = beta * C[i][j] + alpha * acc;");
                    cx.close();
                    cx.close();
                }
            }
            Sketch {
                tag: format!("syrk-{tri}-{}", ["ijk", "ikj", "acc"][form]),
                summary: format!(
                    "C := alpha * A * A^T + beta * C on the {tri} triangle, C (N x N), A (N x M)"
                ),
            }
        }
        // triangular matrix-vector product
        1 => {
            cx.size("N", QUADRATIC);
            cx.input("L", &["N", "N"]);
            cx.input("x", &["N"]);
            cx.output("y", &["N"]);
            let by_cols = cx.rng.chance(0.35);
            if by_cols {
                let hi = cx.lt("i", "0", "N");
                cx.nest(&[hi], &[format!("y[i] = {z};")]);
                let hj = cx.lt("j", "0", "N");
                let hi = if lower {
                    cx.lt("i", "j", "N")
                } else {
                    cx.le("i", "0", "j")
                };
                cx.nest(&[hj, hi], &["y[i] += L[i][j] * x[j];".to_string()]);
            } else {
                let hi = cx.lt("i", "0", "N");
                let hj = if lower {
                    cx.le("j", "0", "i")
                } else {
                    cx.lt("j", "i", "N")
                };
                cx.open(&hi);
                cx.line(&format!("y[i] = {z};"));
                cx.nest(&[hj], &["y[i] += L[i][j] * x[j];".to_string()]);
                cx.close();
            }
            Sketch {
                tag: format!("trmv-{tri}-{}", if by_cols { "cols" } else { "rows" }),
                summary: format!(
                    "y := T * x with T the {tri} triangle of L (N x N), {}",
                    if by_cols {
                        "column by column"
                    } else {
                        "row by row"
                    }
                ),
            }
        }
        // out-of-place triangular matrix product
        2 => {
            cx.size("N", CUBIC);
            cx.size("M", CUBIC);
            cx.scalar("alpha");
            cx.input("L", &["N", "N"]);
            cx.input("B", &["N", "M"]);
            cx.output("C", &["N", "M"]);
            let use_acc = cx.rng.chance(0.5);
            let hi = cx.lt("i", "0", "N");
            let hj = cx.lt("j", "0", "M");
            let hk = if lower {
                cx.le("k", "0", "i")
            } else {
                cx.lt("k", "i", "N")
            };
            if use_acc {
                cx.open(&hi);
                cx.open(&hj);
                cx.line(&cx.acc("acc", &z));
                cx.nest(&[hk], &["acc += L[i][k] * B[k][j];".to_string()]);
                cx.line("C[i][j] = alpha * acc;");
                cx.close();
                cx.close();
            } else {
                cx.nest(&[hi.clone(), hj.clone()], &[format!("C[i][j] = {z};")]);
                cx.nest(
                    &[hi, hk, hj],
                    &["C[i][j] += alpha * L[i][k] * B[k][j];".to_string()],
                );
            }
            Sketch {
                tag: format!("trmm-{tri}-{}", if use_acc { "acc" } else { "ikj" }),
                summary: format!(
                    "C := alpha * T * B with T the {tri} triangle of L (N x N), B (N x M)"
                ),
            }
        }
        // in-place B := alpha L^T B, L unit lower triangular
        3 => {
            cx.size("M", CUBIC);
            cx.size("N", CUBIC);
            cx.scalar("alpha");
            cx.input("L", &["M", "M"]);
            cx.inout("B", &["M", "N"]);
            let hi = cx.lt("i", "0", "M");
            let hj = cx.lt("j", "0", "N");
            let hk = cx.lt("k", "i + 1", "M");
            cx.open(&hi);
            cx.open(&hj);
            cx.nest(&[hk], &["B[i][j] += L[k][i] * B[k][j];".to_string()]);
            cx.line("B[i][j] = alpha * B[i][j];");
            cx.close();
            cx.close();
            Sketch {
                tag: "trmm-inplace".to_string(),
                summary: "B := alpha * T^T * B in place, T unit lower triangular from L (M x M), \
                          rows updated top-down"
                    .to_string(),
            }
        }
        // triangular solve: forward or back substitution
        _ => {
            cx.size("N", QUADRATIC);
            cx.dominant("L", &["N", "N"]);
            cx.input("b", &["N"]);
            cx.output("x", &["N"]);
            let use_acc = cx.rng.chance(0.5);
            let hi = if lower {
                cx.lt("i", "0", "N")
            } else {
                cx.down("i", "N - 1", "0")
            };
            let hj = if lower {
                cx.lt("j", "0", "i")
            } else {
                cx.lt("j", "i + 1", "N")
            };
            cx.open(&hi);
            if use_acc {
                cx.line(&cx.acc("acc", "b[i]"));
                cx.nest(&[hj], &["acc -= L[i][j] * x[j];".to_string()]);
                cx.line("x[i] = acc / L[i][i];");
            } else {
                cx.line("x[i] = b[i];");
                cx.nest(&[hj], &["x[i] -= L[i][j] * x[j];".to_string()]);
                cx.line("x[i] = x[i] / L[i][i];");
            }
            cx.close();
            Sketch {
                tag: format!("trsv-{tri}{}", if use_acc { "-acc" } else { "" }),
                summary: format!(
                    "solve T x = b by {} substitution, T the {tri} triangle of L (N x N)",
                    if lower { "forward" } else { "back" }
                ),
            }
        }
    }
}

fn elementwise(cx: &mut Ctx) -> Sketch {
    let two_d = cx.rng.chance(0.4);
    let (x, y, z) = if two_d {
        ("X", "Y", "Z")
    } else {
        ("x", "y", "z")
    };
    let dims: Vec<&'static str> = if two_d {
        cx.size("M", QUADRATIC);
        cx.size("N", QUADRATIC);
        vec!["M", "N"]
    } else {
        cx.size("N", LINEAR);
        vec!["N"]
    };
    let idx: &[&str] = if two_d { &["i", "j"] } else { &["i"] };
    let swapped = two_d && cx.rng.chance(0.3);
    let heads = |cx: &mut Ctx| -> Vec<String> {
        if !two_d {
            vec![cx.lt("i", "0", "N")]
        } else if swapped {
            vec![cx.lt("j", "0", "N"), cx.lt("i", "0", "M")]
        } else {
            vec![cx.lt("i", "0", "M"), cx.lt("j", "0", "N")]
        }
    };
    let ex = at(x, idx);
    let ey = at(y, idx);
    let ez = at(z, idx);
    let kind = cx.rng.below(3);
    let in_place = kind != 1 && cx.rng.chance(0.25);
    let (tag, summary) = match kind {
        // polynomial of degree d
        0 => {
            let degree = cx.rng.range(1, 8) as usize;
            let coeffs: Vec<String> = (0..=degree).map(|_| cx.coef()).collect();
            let form = cx.rng.below(3); // Horner on the element, Horner on a temporary, powers
            if in_place {
                cx.inout(x, &dims);
            } else {
                cx.input(x, &dims);
                cx.output(y, &dims);
            }
            let dst = if in_place { ex.clone() } else { ey.clone() };
            let horner = |v: &str| {
                let mut s = coeffs[degree].clone();
                for c in coeffs[..degree].iter().rev() {
                    s = if s.contains(' ') {
                        format!("({s}) * {v} + {c}")
                    } else {
                        format!("{s} * {v} + {c}")
                    };
                }
                s
            };
            let hs = heads(cx);
            match form {
                0 => cx.nest(&hs, &[format!("{dst} = {};", horner(&ex))]),
                1 => {
                    let stmts = vec![cx.acc("v", &ex), format!("{dst} = {};", horner("v"))];
                    cx.nest(&hs, &stmts);
                }
                _ => {
                    let mut stmts = vec![
                        cx.acc("v", &ex),
                        cx.acc("p", "v"),
                        cx.acc("acc", &format!("{} + {} * p", coeffs[0], coeffs[1])),
                    ];
                    for c in &coeffs[2..] {
                        stmts.push("p = p * v;".to_string());
                        stmts.push(format!("acc += {c} * p;"));
                    }
                    stmts.push(format!("{dst} = acc;"));
                    cx.nest(&hs, &stmts);
                }
            }
            (
                format!(
                    "poly{degree}-{}{}",
                    ["horner", "horner-tmp", "powers"][form],
                    if in_place { "-inplace" } else { "" }
                ),
                format!(
                    "{} := p({}) elementwise, p of degree {degree} ({})",
                    if in_place { x } else { y },
                    x,
                    [
                        "Horner's rule",
                        "Horner's rule on a temporary",
                        "running powers"
                    ][form]
                ),
            )
        }
        // linear combinations
        1 => {
            let form = cx.rng.below(3);
            cx.input(x, &dims);
            cx.input(y, &dims);
            let hs;
            let what = match form {
                0 => {
                    cx.scalar("alpha");
                    cx.scalar("beta");
                    cx.output(z, &dims);
                    hs = heads(cx);
                    cx.nest(&hs, &[format!("{ez} = alpha * {ex} + beta * {ey};")]);
                    "axpby"
                }
                1 => {
                    cx.scalar("alpha");
                    cx.inout(z, &dims);
                    hs = heads(cx);
                    cx.nest(&hs, &[format!("{ez} += alpha * {ex} * {ey};")]);
                    "fma"
                }
                _ => {
                    let w = if two_d { "W" } else { "w" };
                    cx.input(z, &dims);
                    cx.output(w, &dims);
                    let c = cx.coef();
                    hs = heads(cx);
                    cx.nest(
                        &hs,
                        &[format!("{} = {ex} * {ey} + {c} * {ez};", at(w, idx))],
                    );
                    "triad"
                }
            };
            (
                what.to_string(),
                format!("elementwise {what} over {} arrays", dims.join(" x ")),
            )
        }
        // math functions
        _ => {
            let v = ex.clone();
            let m = |f: &str| cx.math(f);
            let one = cx.lit("1.0");
            let half = cx.lit("0.5");
            let pool = [
                format!("{}({v} * {v} + {one})", m("sqrt")),
                format!("{}(-{v})", m("exp")),
                format!("{}({one} + {v} * {v})", m("log")),
                format!("{}({v} - {half})", m("fabs")),
                format!("{v} / ({one} + {}({v}))", m("fabs")),
                format!("{}({v}, {half})", m("fmax")),
                format!("{}({v}, {})", m("pow"), cx.lit("1.5")),
            ];
            let nterms = cx.rng.range(1, 3) as usize;
            let mut terms = Vec::new();
            let mut names = Vec::new();
            let mut maths = Vec::new();
            for _ in 0..nterms {
                let k = cx.rng.below(pool.len());
                let c = cx.coef();
                terms.push(format!("{c} * {}", pool[k]));
                names.push(["sqrt", "exp", "log", "fabs", "ratio", "fmax", "pow"][k]);
                maths.push(
                    [
                        "sqrt(x^2 + 1)",
                        "exp(-x)",
                        "log(1 + x^2)",
                        "|x - 1/2|",
                        "x / (1 + |x|)",
                        "max(x, 1/2)",
                        "x^1.5",
                    ][k],
                );
            }
            if in_place {
                cx.inout(x, &dims);
            } else {
                cx.input(x, &dims);
                cx.output(y, &dims);
            }
            let dst = if in_place { ex.clone() } else { ey.clone() };
            let hs = heads(cx);
            cx.nest(&hs, &[format!("{dst} = {};", terms.join(" + "))]);
            (
                format!(
                    "math-{}{}",
                    names.join("-"),
                    if in_place { "-inplace" } else { "" }
                ),
                format!(
                    "{} := {} elementwise, c random constants",
                    if in_place { x } else { y },
                    maths
                        .iter()
                        .map(|m| format!("c * {}", m.replace('x', x)))
                        .collect::<Vec<_>>()
                        .join(" + ")
                ),
            )
        }
    };
    // sometimes a second map consumes the first one's result
    let second = !in_place && kind != 1 && cx.rng.chance(0.25);
    let mut tag = format!("{}{tag}", if two_d { "2d-" } else { "" });
    let mut summary = summary;
    if second {
        cx.output(z, &dims);
        let c = cx.coef();
        let hs = heads(cx);
        cx.nest(&hs, &[format!("{ez} = {ey} * {ey} + {c} * {ex};")]);
        tag.push_str("-then");
        summary.push_str(&format!("; then {z} := {y}^2 + c * {x}"));
    }
    if swapped {
        tag.push_str("-ji");
        summary.push_str(", column by column");
    }
    Sketch { tag, summary }
}

fn outer(cx: &mut Ctx) -> Sketch {
    let kind = cx.rng.below(4);
    let rows = cx.rng.chance(0.6);
    let z = cx.zero();
    if kind == 3 {
        // symmetric rank-1 update on one triangle
        cx.size("N", QUADRATIC);
        cx.scalar("alpha");
        cx.inout("A", &["N", "N"]);
        cx.input("x", &["N"]);
        let lower = cx.rng.chance(0.5);
        let hi = cx.lt("i", "0", "N");
        let hj = if lower {
            cx.le("j", "0", "i")
        } else {
            cx.lt("j", "i", "N")
        };
        cx.nest(&[hi, hj], &["A[i][j] += alpha * x[i] * x[j];".to_string()]);
        let tri = if lower { "lower" } else { "upper" };
        return Sketch {
            tag: format!("syr-{tri}"),
            summary: format!("A := A + alpha * x * x^T on the {tri} triangle of A (N x N)"),
        };
    }
    cx.size("M", QUADRATIC);
    cx.size("N", QUADRATIC);
    let stmt = match kind {
        0 => {
            cx.scalar("alpha");
            cx.inout("A", &["M", "N"]);
            cx.input("x", &["M"]);
            cx.input("y", &["N"]);
            "A[i][j] += alpha * x[i] * y[j];"
        }
        1 => {
            cx.output("A", &["M", "N"]);
            cx.input("x", &["M"]);
            cx.input("y", &["N"]);
            "A[i][j] = x[i] * y[j];"
        }
        _ => {
            cx.inout("A", &["M", "N"]);
            cx.input("u", &["M"]);
            cx.input("v", &["N"]);
            cx.input("p", &["M"]);
            cx.input("q", &["N"]);
            "A[i][j] = A[i][j] + u[i] * v[j] + p[i] * q[j];"
        }
    };
    let hi = cx.lt("i", "0", "M");
    let hj = cx.lt("j", "0", "N");
    let heads = if rows { [hi, hj] } else { [hj, hi] };
    cx.nest(&heads, &[stmt.to_string()]);
    let (name, what) = [
        ("ger", "A := A + alpha * x * y^T"),
        ("outer", "A := x * y^T"),
        ("rank2", "A := A + u * v^T + p * q^T"),
    ][kind];
    let mut tag = format!("{name}-{}", if rows { "ij" } else { "ji" });
    let mut summary = format!("{what}, A (M x N)");
    if cx.rng.chance(0.3) {
        cx.input("s", &["N"]);
        cx.output("w", &["M"]);
        let hi = cx.lt("i", "0", "M");
        let hj = cx.lt("j", "0", "N");
        cx.open(&hi);
        cx.line(&format!("w[i] = {z};"));
        cx.nest(&[hj], &["w[i] += A[i][j] * s[j];".to_string()]);
        cx.close();
        tag.push_str("-mv");
        summary.push_str("; then w := A * s");
    }
    Sketch { tag, summary }
}
