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
    for v in band_vectors(cx.an, &ids) {
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
