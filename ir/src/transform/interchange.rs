//! Interchange of a perfectly nested band.

use super::*;

pub(crate) fn interchange(l: &mut Loop, order: &[usize], cx: &Ctx) -> Result<(), Refusal> {
    let m = order.len();
    let mut sorted = order.to_vec();
    sorted.sort_unstable();
    if m < 2 || sorted != (0..m).collect::<Vec<_>>() {
        return Err(cx.na(format!("{order:?} is not a permutation of 0..{m} (m >= 2)")));
    }
    let band = band_of(l, m).ok_or_else(|| {
        cx.na(format!(
            "no perfectly nested band of {m} loops at '{}'",
            l.var
        ))
    })?;
    // The user's `omp parallel for` on the band's outermost loop moves with the band's
    // outermost place (below); any other directive stays where the user put it.
    let user_parallel = movable_user_parallel(band[0]);
    if user_parallel.is_none() {
        check_pragma_free(&band, cx.k)?;
    } else {
        check_pragma_free(&band[1..], cx.k)?;
    }
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
        // The user's parallel loop: the new outermost loop must carry no dependence.
        if user_parallel.is_some() && permuted[0] != Dir::Eq {
            return Err(cx.illegal(format!(
                "the user's parallel loop would become '{}', which carries dependence {v:?}",
                band[order[0]].var
            )));
        }
    }
    let mut headers: Vec<Loop> = band.iter().map(|x| header_of(x)).collect();
    if let Some(directives) = user_parallel {
        headers[0].directives.clear();
        headers[order[0]].directives = directives;
    }
    let body = band[m - 1].body.clone();
    *l = nest_headers(order.iter().map(|&b| headers[b].clone()).collect(), body);
    Ok(())
}

/// The directives of `l` where they are the user's `#pragma omp parallel for` alone,
/// with clauses that name variables only (`private`, `shared`, `firstprivate`,
/// `schedule`, `default`, `num_threads`): such a directive means the same on any loop
/// of the band that carries no dependence. A `reduction`, `collapse`, `lastprivate`,
/// `linear` or `ordered` clause ties it to its loop.
fn movable_user_parallel(l: &Loop) -> Option<Vec<crate::program::Directive>> {
    let [crate::program::Directive::Other { text }] = l.directives.as_slice() else {
        return None;
    };
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.get(..4) != Some(&["#pragma", "omp", "parallel", "for"][..]) {
        return None;
    }
    let tied = [
        "reduction",
        "collapse",
        "lastprivate",
        "linear",
        "ordered",
        "copyin",
    ];
    if tied.iter().any(|c| text.contains(c)) {
        return None;
    }
    Some(l.directives.clone())
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
