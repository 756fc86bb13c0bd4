//! Element by element: copies and transposes, elementwise maps.

use crate::synth::context::*;

pub(super) fn copy(cx: &mut Ctx) -> Sketch {
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

pub(super) fn elementwise(cx: &mut Ctx) -> Sketch {
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
