//! Dense linear algebra: matrix products in every loop order, matrix-vector
//! products, outer products and triangular kernels.

use crate::synth::context::*;

pub(super) fn matmul(cx: &mut Ctx) -> Sketch {
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

pub(super) fn matvec(cx: &mut Ctx) -> Sketch {
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

pub(super) fn outer(cx: &mut Ctx) -> Sketch {
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

pub(super) fn triangular(cx: &mut Ctx) -> Sketch {
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
