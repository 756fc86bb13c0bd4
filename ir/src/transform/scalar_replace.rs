//! Scalar replacement of an innermost reduction's accumulator.

use super::*;

pub(crate) fn scalar_replace(nest: &mut Loop, at: usize, cx: &mut Ctx) -> Result<(), Refusal> {
    if at == 0 {
        return Err(cx.na(
            "the nest's root has no enclosing body for the load and the store; \
             replace in an inner loop",
        ));
    }
    let l = loop_at(nest, at).expect("loop").clone();
    if l.has_openmp() {
        return Err(cx.na(format!("loop '{}' carries an OpenMP directive", l.var)));
    }
    let written = crate::deps::written_names(&l.body);
    let mut moving = written.clone();
    moving.insert(l.var.clone());
    for x in crate::program::loops(&l.body) {
        moving.insert(x.var.clone());
    }
    let invariant = |e: &Expr| !moving.iter().any(|m| e.mentions(m));
    // Written elements that stay fixed (statements under conditions excluded: their
    // element may not be touched at all).
    let mut candidates: Vec<Expr> = Vec::new();
    collect_unconditional_targets(&l.body, &mut |t| {
        if let Expr::Access { array, indices } = t {
            let outside = cx
                .arrays
                .iter()
                .any(|a| &a.name == array && a.dims.len() == indices.len());
            let declared_inside = matches!(written_decl_kind(&l.body, array), Some(true));
            if outside
                && !declared_inside
                && indices.iter().all(invariant)
                && !candidates.contains(t)
            {
                candidates.push(t.clone());
            }
        }
    });
    if candidates.is_empty() {
        return Err(cx.na(format!(
            "loop '{}' writes no array element that stays fixed across its iterations",
            l.var
        )));
    }
    let mut all: Vec<Expr> = Vec::new();
    let mut note = |e: &Expr| {
        e.walk(&mut |x| {
            if matches!(x, Expr::Access { .. }) {
                all.push(x.clone());
            }
        })
    };
    note(&l.init);
    note(&l.bound);
    for_each_expr(&l.body, &mut note);
    let mut accepted = Vec::new();
    let mut reasons = Vec::new();
    for x in candidates {
        let Expr::Access { array, indices } = &x else {
            continue;
        };
        if l.init.mentions(array) || l.bound.mentions(array) {
            reasons.push(format!("the bounds of '{}' read '{array}'", l.var));
            continue;
        }
        let clash = all.iter().find(|y| match y {
            Expr::Access {
                array: a,
                indices: idx,
            } => {
                a == array
                    && *y != &x
                    && !distinct(indices, idx)
                    && !apart(std::slice::from_ref(&l), indices, idx)
            }
            _ => false,
        });
        match clash {
            Some(y) => reasons.push(format!(
                "{} may be the same element as {}",
                crate::print::expr(y),
                crate::print::expr(&x)
            )),
            None => accepted.push(x),
        }
    }
    if accepted.is_empty() {
        return Err(cx.illegal(reasons.join("; ")));
    }
    let mut new_l = l.clone();
    let (mut decls, mut loads, mut stores) = (Vec::new(), Vec::new(), Vec::new());
    for x in accepted {
        let Expr::Access { array, .. } = &x else {
            continue;
        };
        let dtype = cx
            .arrays
            .iter()
            .find(|a| &a.name == array)
            .map_or(DType::F64, |a| a.dtype);
        let name = cx.fresh(&format!("{array}_s"));
        cx.declare(&name, dtype);
        rewrite_nodes(&mut new_l.body, &mut |e| (*e == x).then(|| var(&name)));
        decls.push(Node::Decl(Decl {
            name: name.clone(),
            dtype,
            dims: Vec::new(),
            init: None,
            pos: l.pos,
        }));
        loads.push(assign(var(&name), x.clone(), l.pos));
        stores.push(assign(x, var(&name), l.pos));
    }
    let mut body = decls;
    body.extend(loads);
    body.push(Node::Loop(new_l));
    body.extend(stores);
    // Load and store only when the loop runs: its element may not exist otherwise.
    let node = if runs_at_least_once(&l) {
        Node::Block(body)
    } else {
        Node::If(If {
            cond: binary(cmp_op(l.cmp), l.init.clone(), l.bound.clone()),
            then_body: body,
            else_body: Vec::new(),
            pos: l.pos,
        })
    };
    let route = locate(nest, at).expect("loop");
    let (parent, idx) = parent_mut(nest, &route);
    parent[idx] = node;
    Ok(())
}

/// `Some(is_array)` when `name` is declared somewhere in `body`.
pub(crate) fn written_decl_kind(body: &[Node], name: &str) -> Option<bool> {
    let mut out = None;
    crate::program::walk_nodes(body, &mut |n, _| {
        if let Node::Decl(d) = n {
            if d.name == name {
                out = Some(!d.dims.is_empty());
            }
        }
    });
    out
}

pub(crate) fn collect_unconditional_targets(body: &[Node], f: &mut dyn FnMut(&Expr)) {
    for n in body {
        match n {
            Node::Assign(a) => f(&a.target),
            Node::Loop(l) => collect_unconditional_targets(&l.body, f),
            Node::Block(b) => collect_unconditional_targets(b, f),
            Node::If(_) | Node::Decl(_) | Node::Opaque(_) => {}
        }
    }
}

/// Two subscript lists certainly name different elements: in some dimension they differ
/// by a non-zero constant.
pub(crate) fn distinct(a: &[Expr], b: &[Expr]) -> bool {
    a.iter().zip(b).any(
        |(x, y)| match (affine_of(x, &|_| true), affine_of(y, &|_| true)) {
            (Some(x), Some(y)) => x
                .sub(&y)
                .is_some_and(|d| d.is_constant() && d.constant != 0),
            _ => false,
        },
    )
}

/// The least and greatest value of loop `l`'s variable, as affine expressions of the
/// loops around it and the parameters (None for a header of another form).
fn range(l: &Loop) -> Option<(Affine, Affine)> {
    let init = affine_of(&l.init, &|_| true)?;
    let bound = affine_of(&l.bound, &|_| true)?;
    match (l.step > 0, l.cmp) {
        (true, LoopCmp::Lt) => Some((init, bound.add(&Affine::constant(-1))?)),
        (true, LoopCmp::Le) => Some((init, bound)),
        (false, LoopCmp::Gt) => Some((bound.add(&Affine::constant(1))?, init)),
        (false, LoopCmp::Ge) => Some((bound, init)),
        _ => None,
    }
}

/// Two subscript lists name different elements in every iteration of `loops`
/// (outermost first): in some dimension their difference keeps one sign, its greatest
/// value below zero or its least above, found by putting each loop variable, from the
/// innermost out, at the end of its range that makes the difference greatest (least).
/// `A[k][j]` against `A[i][j]` under `j < i`, `k < j`: `k - i <= (j - 1) - i <= -2`.
pub(crate) fn apart(loops: &[Loop], a: &[Expr], b: &[Expr]) -> bool {
    let extreme = |d: &Affine, greatest: bool| -> Option<Affine> {
        let mut d = d.clone();
        for l in loops.iter().rev() {
            let c = d.coeff(&l.var);
            if c == 0 {
                continue;
            }
            let (least, most) = range(l)?;
            let end = if (c > 0) == greatest { most } else { least };
            let mut rest = d.clone();
            rest.coeffs.remove(&l.var);
            d = rest.add(&end.scale(c)?)?;
        }
        Some(d)
    };
    a.iter().zip(b).any(|(x, y)| {
        let Some(d) = affine_of(x, &|_| true).and_then(|x| x.sub(&affine_of(y, &|_| true)?)) else {
            return false;
        };
        extreme(&d, true).is_some_and(|m| m.is_constant() && m.constant < 0)
            || extreme(&d, false).is_some_and(|m| m.is_constant() && m.constant > 0)
    })
}

pub(crate) fn runs_at_least_once(l: &Loop) -> bool {
    crate::program::trip_count(l, &crate::program::const_value).is_some_and(|n| n > 0)
}
