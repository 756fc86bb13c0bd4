//! Skewing of an inner loop by an outer one.

use super::*;

pub(crate) fn skew(l: &mut Loop, factor: i64, cx: &mut Ctx) -> Result<(), Refusal> {
    if factor == 0 || factor.abs() > 64 {
        return Err(cx.na(format!("skew factor {factor} (non-zero, at most 64)")));
    }
    let band = transformable_band(l, 2, cx.k)?;
    let (t, x) = (band[0].var.clone(), band[1].clone());
    let mut inner = x.clone();
    inner.init = add_scaled(x.init.clone(), factor, &t);
    inner.bound = add_scaled(x.bound.clone(), factor, &t);
    subst_nodes(
        &mut inner.body,
        &x.var,
        &add_scaled(var(&x.var), -factor, &t),
    );
    l.body = vec![Node::Loop(inner)];
    Ok(())
}
