//! Interchange of a perfectly nested band.

use super::*;

pub(crate) fn interchange(l: &mut Loop, order: &[usize], cx: &Ctx) -> Result<(), Refusal> {
    let m = order.len();
    let mut sorted = order.to_vec();
    sorted.sort_unstable();
    if m < 2 || sorted != (0..m).collect::<Vec<_>>() {
        return Err(cx.na(format!("{order:?} is not a permutation of 0..{m} (m >= 2)")));
    }
    let band = transformable_band(l, m, cx.k)?;
    for (d, &b) in order.iter().enumerate() {
        let header = band[b];
        for &inner in &order[d + 1..] {
            let v = &band[inner].var;
            if header.init.mentions(v) || header.bound.mentions(v) {
                return Err(cx.na(format!(
                    "the bounds of '{}' depend on '{v}', which would move inside it",
                    header.var
                )));
            }
        }
    }
    let ids: Vec<usize> = band.iter().map(|x| x.id).collect();
    let private = privates_of_every_point(&band, cx.an);
    let ordering = |d: &crate::deps::Dependence| !private.contains(&cx.an.accesses[d.source].array);
    for v in band_vectors_where(cx.an, &ids, &ordering) {
        let permuted: Vec<Dir> = order.iter().map(|&b| v[b]).collect();
        if permuted.iter().find(|d| **d != Dir::Eq) == Some(&Dir::Gt) {
            return Err(cx.illegal(format!("dependence {v:?} would become {permuted:?}")));
        }
    }
    let headers: Vec<Loop> = band.iter().map(|x| header_of(x)).collect();
    let body = band[m - 1].body.clone();
    *l = nest_headers(order.iter().map(|&b| headers[b].clone()).collect(), body);
    Ok(())
}

/// Scalars that every point of the rectangular `band` writes before it reads them, at
/// the top of the innermost body, unconditionally: each point has its own value, and
/// the last point (every variable at its last value) writes the one that stays after
/// the band, in any order of the loops. Their dependences do not order the points.
fn privates_of_every_point(band: &[&Loop], an: &crate::deps::Analysis) -> Vec<String> {
    let inner = band[band.len() - 1];
    let rectangular = band.iter().all(|h| {
        band.iter()
            .all(|x| !h.init.mentions(&x.var) && !h.bound.mentions(&x.var))
    });
    if !rectangular {
        return Vec::new();
    }
    let Some(privs) = an.private_scalars.get(&inner.id) else {
        return Vec::new();
    };
    privs
        .iter()
        .filter(|v| {
            inner.body.iter().any(|n| {
                matches!(n, Node::Assign(a)
                    if matches!(&a.target, Expr::Var(t) if t == *v))
            })
        })
        .cloned()
        .collect()
}
