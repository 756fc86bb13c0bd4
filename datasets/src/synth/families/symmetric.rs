//! Symmetric matrices stored in one triangle: products that read the other triangle
//! through its mirror (`A[k][i]` for `A[i][k]`), in two loops over the halves of a row;
//! symm's in-place form that also updates the rows above; the symmetric matrix-vector
//! product; syr2k through an accumulator; and Gram matrices written to both triangles.

use crate::synth::context::*;

pub(super) fn symmetric(cx: &mut Ctx) -> Sketch {
    // The mirrored product twice as often: it comes in four forms (triangle, order).
    match cx.rng.below(6) {
        0 | 1 => symm_mirrored(cx),
        2 => symm_in_place(cx),
        3 => symv(cx),
        4 => syr2k_acc(cx),
        _ => gram(cx),
    }
}

/// The element `(r, c)` of the symmetric A stored in its lower (or upper) triangle,
/// where the caller knows whether it lies below the diagonal (`r > c`): `A[r][c]` when
/// that is in the stored triangle, else its mirror `A[c][r]`.
fn stored(lower: bool, below: bool, r: &str, c: &str) -> String {
    if lower == below {
        format!("A[{r}][{c}]")
    } else {
        format!("A[{c}][{r}]")
    }
}

/// Row i of the symmetric A times `other` (indexed by `v`), added to `acc`: a loop over
/// the row's half left of the diagonal, then one over the half right of it, each reading
/// A's stored triangle.
fn row_halves(cx: &mut Ctx, lower: bool, v: &str, extent: &str, other: &str) {
    let left = cx.lt(v, "0", "i");
    let right = cx.lt(v, "i + 1", extent);
    let a_left = stored(lower, true, "i", v);
    let a_right = stored(lower, false, "i", v);
    cx.nest(&[left], &[format!("acc += {a_left} * {other};")]);
    cx.nest(&[right], &[format!("acc += {a_right} * {other};")]);
}

/// symm's sizes and operands: `C := alpha * A * B + beta * C`, A (M x M), B and C
/// (M x N).
fn symm_operands(cx: &mut Ctx) {
    cx.size("M", CUBIC);
    cx.size("N", CUBIC);
    cx.scalar("alpha");
    cx.scalar("beta");
    cx.inout("C", &["M", "N"]);
    cx.input("A", &["M", "M"]);
    cx.input("B", &["M", "N"]);
}

/// `C := alpha * A * B + beta * C` with A symmetric (M x M, one triangle stored): per
/// element of C, the diagonal, then the row's half left of it and the half right of it,
/// each read from the stored triangle, summed in an accumulator.
fn symm_mirrored(cx: &mut Ctx) -> Sketch {
    symm_operands(cx);
    let lower = cx.rng.chance(0.5);
    let j_outer = cx.rng.chance(0.3);
    let hi = cx.lt("i", "0", "M");
    let hj = cx.lt("j", "0", "N");
    let (h0, h1) = if j_outer { (hj, hi) } else { (hi, hj) };
    cx.open(&h0);
    cx.open(&h1);
    cx.line(&cx.acc("acc", "A[i][i] * B[i][j]"));
    row_halves(cx, lower, "k", "M", "B[k][j]");
    cx.line("C[i][j] = beta * C[i][j] + alpha * acc;");
    cx.close();
    cx.close();
    let tri = if lower { "lower" } else { "upper" };
    Sketch {
        tag: format!("symm-{tri}-{}", if j_outer { "ji" } else { "ij" }),
        summary: format!(
            "C := alpha * A * B + beta * C, A (M x M) symmetric in its {tri} triangle, \
             B and C (M x N), {} outside",
            if j_outer { "columns" } else { "rows" }
        ),
    }
}

/// symm as its reference writes it: row i's left half of the lower triangle adds the
/// row's contribution to the rows above (`C[k][j] += ...`) while it accumulates their
/// contribution to row i, so the i loop carries a dependence.
fn symm_in_place(cx: &mut Ctx) -> Sketch {
    symm_operands(cx);
    let z = cx.zero();
    let hi = cx.lt("i", "0", "M");
    let hj = cx.lt("j", "0", "N");
    let hk = cx.lt("k", "0", "i");
    cx.open(&hi);
    cx.open(&hj);
    cx.line(&cx.acc("t", &z));
    cx.nest(
        &[hk],
        &[
            "C[k][j] += alpha * B[i][j] * A[i][k];".to_string(),
            "t += B[k][j] * A[i][k];".to_string(),
        ],
    );
    cx.line("C[i][j] = beta * C[i][j] + alpha * B[i][j] * A[i][i] + alpha * t;");
    cx.close();
    cx.close();
    Sketch {
        tag: "symm-inplace".to_string(),
        summary: "C := alpha * A * B + beta * C, A (M x M) symmetric in its lower triangle, \
                  the rows above updated in place"
            .to_string(),
    }
}

/// `y := A x` with A symmetric in one triangle: per row, the stored half and the mirrored
/// half (a column walk), or (`scatter`) each stored element used twice, for its row and
/// for its mirror's.
fn symv(cx: &mut Ctx) -> Sketch {
    cx.size("N", QUADRATIC);
    cx.input("A", &["N", "N"]);
    cx.input("x", &["N"]);
    cx.output("y", &["N"]);
    let lower = cx.rng.chance(0.5);
    let scatter = cx.rng.chance(0.35);
    let z = cx.zero();
    let hi = cx.lt("i", "0", "N");
    if scatter {
        cx.nest(std::slice::from_ref(&hi), &[format!("y[i] = {z};")]);
        let hj = cx.lt("j", "0", "i");
        let a = stored(lower, true, "i", "j");
        cx.open(&hi);
        cx.line("y[i] += A[i][i] * x[i];");
        cx.nest(
            &[hj],
            &[
                format!("y[i] += {a} * x[j];"),
                format!("y[j] += {a} * x[i];"),
            ],
        );
        cx.close();
    } else {
        cx.open(&hi);
        cx.line(&cx.acc("acc", "A[i][i] * x[i]"));
        row_halves(cx, lower, "j", "N", "x[j]");
        cx.line("y[i] = acc;");
        cx.close();
    }
    let tri = if lower { "lower" } else { "upper" };
    Sketch {
        tag: format!("symv-{tri}-{}", if scatter { "scatter" } else { "halves" }),
        summary: format!(
            "y := A * x, A (N x N) symmetric in its {tri} triangle, {}",
            if scatter {
                "each stored element used for its row and its mirror's"
            } else {
                "each row as its stored half and its mirrored half"
            }
        ),
    }
}

/// `C := alpha * (A B^T + B A^T) + beta * C` on the lower triangle, each element summed
/// in an accumulator over rows of A and B (row-major, or `cols`: over their columns).
fn syr2k_acc(cx: &mut Ctx) -> Sketch {
    cx.size("N", CUBIC);
    cx.size("M", CUBIC);
    cx.scalar("alpha");
    cx.scalar("beta");
    cx.inout("C", &["N", "N"]);
    let cols = cx.rng.chance(0.4);
    let dims: [&'static str; 2] = if cols { ["M", "N"] } else { ["N", "M"] };
    cx.input("A", &dims);
    cx.input("B", &dims);
    let z = cx.zero();
    let hi = cx.lt("i", "0", "N");
    let hj = cx.le("j", "0", "i");
    let hk = cx.lt("k", "0", "M");
    let (ai, aj, bi, bj) = if cols {
        ("A[k][i]", "A[k][j]", "B[k][i]", "B[k][j]")
    } else {
        ("A[i][k]", "A[j][k]", "B[i][k]", "B[j][k]")
    };
    cx.open(&hi);
    cx.open(&hj);
    cx.line(&cx.acc("acc", &z));
    cx.nest(&[hk], &[format!("acc += {ai} * {bj} + {bi} * {aj};")]);
    cx.line("C[i][j] = beta * C[i][j] + alpha * acc;");
    cx.close();
    cx.close();
    Sketch {
        tag: format!("syr2k-acc-{}", if cols { "cols" } else { "rows" }),
        summary: format!(
            "C := alpha * (A * B^T + B * A^T) + beta * C on the lower triangle, A and B ({}), \
             through an accumulator",
            if cols { "M x N" } else { "N x M" }
        ),
    }
}

/// The Gram matrix `G = X^T X` of the columns of X (N x M): the upper triangle summed
/// over rows, each element written to both triangles.
fn gram(cx: &mut Ctx) -> Sketch {
    cx.size("N", CUBIC);
    cx.size("M", CUBIC);
    cx.input("X", &["N", "M"]);
    cx.output("G", &["M", "M"]);
    let z = cx.zero();
    let hi = cx.lt("i", "0", "M");
    let hj = cx.lt("j", "i", "M");
    let hk = cx.lt("k", "0", "N");
    cx.open(&hi);
    cx.open(&hj);
    cx.line(&cx.acc("s", &z));
    cx.nest(&[hk], &["s += X[k][i] * X[k][j];".to_string()]);
    cx.line("G[i][j] = s;");
    cx.line("G[j][i] = s;");
    cx.close();
    cx.close();
    Sketch {
        tag: "gram-both".to_string(),
        summary: "G := X^T * X, X (N x M), each element of the upper triangle written to \
                  both triangles"
            .to_string(),
    }
}
