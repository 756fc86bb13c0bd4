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
            } => a == array && *y != &x && !distinct(indices, idx) && !apart_in(&l, indices, idx),
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

/// Two subscript lists name different elements in every iteration of loop `l`: in
/// some dimension their difference is `c * v + r` for `l`'s variable `v` and an `r`
/// free of it, and over `l`'s range (`init <= v < bound` or `init <= v <= bound`,
/// step positive) that difference stays on one side of zero (`A[i][k]` against
/// `A[i][j]` for `k < j`: `k - j <= -1`).
fn apart_in(l: &Loop, a: &[Expr], b: &[Expr]) -> bool {
    if l.step <= 0 {
        return false;
    }
    let last = match l.cmp {
        LoopCmp::Lt => affine_of(&l.bound, &|_| true).and_then(|b| b.add(&Affine::constant(-1))),
        LoopCmp::Le => affine_of(&l.bound, &|_| true),
        _ => None,
    };
    let (Some(first), Some(last)) = (affine_of(&l.init, &|_| true), last) else {
        return false;
    };
    a.iter().zip(b).any(|(x, y)| {
        let d = match (affine_of(x, &|_| true), affine_of(y, &|_| true)) {
            (Some(x), Some(y)) => x.sub(&y),
            _ => None,
        };
        let Some(d) = d else { return false };
        let c = d.coeff(&l.var);
        if c == 0 {
            return false;
        }
        let mut rest = d.clone();
        rest.coeffs.remove(&l.var);
        // The difference is monotone in `v`: its least and greatest values are at
        // the ends of the range.
        let at = |v: &Affine| v.scale(c).and_then(|cv| cv.add(&rest));
        let (least, greatest) = if c > 0 {
            (at(&first), at(&last))
        } else {
            (at(&last), at(&first))
        };
        least.is_some_and(|m| m.is_constant() && m.constant > 0)
            || greatest.is_some_and(|m| m.is_constant() && m.constant < 0)
    })
}

pub(crate) fn runs_at_least_once(l: &Loop) -> bool {
    crate::program::trip_count(l, &crate::program::const_value).is_some_and(|n| n > 0)
}
