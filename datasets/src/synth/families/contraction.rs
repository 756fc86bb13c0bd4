//! Tensor contractions: doitgen's product through a temporary, mode products of 3-D
//! tensors, batched matrix products and the matricized tensor times Khatri-Rao product.

use crate::synth::context::*;

pub(super) fn contraction(cx: &mut Ctx) -> Sketch {
    match cx.rng.below(4) {
        0 => through_temporary(cx),
        1 => mode_product(cx),
        2 => batched(cx),
        _ => mttkrp(cx),
    }
}

/// Loop heads `for (v = 0; v < NV; v++)` in `order`: each variable runs up to the size
/// named N and the variable in capitals (`NI` for `i`), as every kernel here names them.
fn heads(cx: &mut Ctx, order: &[&str]) -> Vec<String> {
    order.iter().map(|v| cx.lt(v, "0", &extent(v))).collect()
}

/// `A[r][q][:] := A[r][q][:] * W` one row at a time through the vector `S`, as doitgen
/// writes it; or into a second tensor when the contracted extent differs.
fn through_temporary(cx: &mut Ctx) -> Sketch {
    cx.size("NR", CUBE);
    cx.size("NQ", CUBE);
    cx.size("NP", CUBE);
    let in_place = cx.rng.chance(0.6);
    let ns = if in_place { "NP" } else { cx.size("NS", CUBE) };
    if in_place {
        cx.inout("A", &["NR", "NQ", "NP"]);
    } else {
        cx.input("A", &["NR", "NQ", ns]);
        cx.output("B", &["NR", "NQ", "NP"]);
    }
    cx.input("W", &[ns, "NP"]);
    cx.output("S", &["NP"]);
    let dest = if in_place { "A" } else { "B" };
    // p outside s (a dot product per p), or s outside p (axpys into S)
    let p_outer = cx.rng.chance(0.6);
    let z = cx.zero();
    let hr = cx.lt("r", "0", "NR");
    let hq = cx.lt("q", "0", "NQ");
    cx.open(&hr);
    cx.open(&hq);
    if p_outer {
        let hp = cx.lt("p", "0", "NP");
        let hs = cx.lt("s", "0", ns);
        cx.open(&hp);
        cx.line(&format!("S[p] = {z};"));
        cx.nest(&[hs], &["S[p] += A[r][q][s] * W[s][p];".to_string()]);
        cx.close();
    } else {
        let hp = cx.lt("p", "0", "NP");
        cx.nest(&[hp], &[format!("S[p] = {z};")]);
        let hs = cx.lt("s", "0", ns);
        let hp = cx.lt("p", "0", "NP");
        cx.nest(&[hs, hp], &["S[p] += A[r][q][s] * W[s][p];".to_string()]);
    }
    let hp = cx.lt("p", "0", "NP");
    cx.nest(&[hp], &[format!("{dest}[r][q][p] = S[p];")]);
    cx.close();
    cx.close();
    Sketch {
        tag: format!(
            "temp-{}-{}",
            if in_place { "inplace" } else { "copy" },
            if p_outer { "ps" } else { "sp" }
        ),
        summary: format!(
            "{dest}[r][q][p] := sum over s of A[r][q][s] * W[s][p] through the vector S, \
             A (NR x NQ x {ns}), {} loop outside",
            if p_outer { "the p" } else { "the s" }
        ),
    }
}

/// `Y := X x_3 U`: `Y[i][j][l] = sum_k X[i][j][k] * U[k][l]` (U optionally stored
/// transposed), zeroed first, in one of several loop orders.
fn mode_product(cx: &mut Ctx) -> Sketch {
    for s in ["NI", "NJ", "NK", "NL"] {
        cx.size(s, CUBE);
    }
    let u_t = cx.rng.chance(0.3);
    cx.input("X", &["NI", "NJ", "NK"]);
    if u_t {
        cx.input("U", &["NL", "NK"]);
    } else {
        cx.input("U", &["NK", "NL"]);
    }
    cx.output("Y", &["NI", "NJ", "NL"]);
    let order = cx.rng.pick(&[
        ["i", "j", "l", "k"],
        ["i", "j", "k", "l"],
        ["i", "k", "j", "l"],
        ["k", "i", "j", "l"],
        ["l", "i", "j", "k"],
    ]);
    let z = cx.zero();
    let init = heads(cx, &["i", "j", "l"]);
    cx.nest(&init, &[format!("Y[i][j][l] = {z};")]);
    let u = if u_t { "U[l][k]" } else { "U[k][l]" };
    let hs = heads(cx, &order);
    cx.nest(&hs, &[format!("Y[i][j][l] += X[i][j][k] * {u};")]);
    Sketch {
        tag: format!("mode3-{}{}", order.concat(), if u_t { "-ut" } else { "" }),
        summary: format!(
            "Y := X x_3 U, X (NI x NJ x NK), U {}, loop order {}",
            if u_t {
                "stored transposed (NL x NK)"
            } else {
                "(NK x NL)"
            },
            order.concat()
        ),
    }
}

/// `C[b] := C[b] + A[b] * B[b]` (or one shared B) for every batch b.
fn batched(cx: &mut Ctx) -> Sketch {
    for s in ["NB", "NI", "NJ", "NK"] {
        cx.size(s, CUBE);
    }
    let shared = cx.rng.chance(0.4);
    cx.inout("C", &["NB", "NI", "NJ"]);
    cx.input("A", &["NB", "NI", "NK"]);
    if shared {
        cx.input("B", &["NK", "NJ"]);
    } else {
        cx.input("B", &["NB", "NK", "NJ"]);
    }
    let order = cx.rng.pick(&[
        ["b", "i", "j", "k"],
        ["b", "i", "k", "j"],
        ["i", "b", "k", "j"],
        ["b", "k", "i", "j"],
    ]);
    let b = if shared { "B[k][j]" } else { "B[b][k][j]" };
    let hs = heads(cx, &order);
    cx.nest(&hs, &[format!("C[b][i][j] += A[b][i][k] * {b};")]);
    Sketch {
        tag: format!(
            "batched-{}{}",
            order.concat(),
            if shared { "-shared" } else { "" }
        ),
        summary: format!(
            "C[b] := C[b] + A[b] * {} for NB batches of (NI x NK) * (NK x NJ), loop order {}",
            if shared { "B" } else { "B[b]" },
            order.concat()
        ),
    }
}

/// `M[i][r] = sum over j, k of X[i][j][k] * B[j][r] * C[k][r]`.
fn mttkrp(cx: &mut Ctx) -> Sketch {
    for s in ["NI", "NJ", "NK", "NR"] {
        cx.size(s, CUBE);
    }
    cx.input("X", &["NI", "NJ", "NK"]);
    cx.input("B", &["NJ", "NR"]);
    cx.input("C", &["NK", "NR"]);
    cx.output("M", &["NI", "NR"]);
    let order = cx.rng.pick(&[
        ["i", "j", "k", "r"],
        ["i", "r", "j", "k"],
        ["j", "k", "i", "r"],
    ]);
    let z = cx.zero();
    let init = heads(cx, &["i", "r"]);
    cx.nest(&init, &[format!("M[i][r] = {z};")]);
    let hs = heads(cx, &order);
    cx.nest(
        &hs,
        &["M[i][r] += X[i][j][k] * B[j][r] * C[k][r];".to_string()],
    );
    Sketch {
        tag: format!("mttkrp-{}", order.concat()),
        summary: format!(
            "M := X_(1) (C kr B), X (NI x NJ x NK), B (NJ x NR), C (NK x NR), loop order {}",
            order.concat()
        ),
    }
}
