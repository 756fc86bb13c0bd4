//! Folding a scalar accumulator into the array element it is stored to, the reverse of
//! scalar replacement: in the body of loop `at`,
//! `w = X; for (...) { .. w -= e .. } X = f(w);` becomes
//! `for (...) { .. X -= e .. } X = f(X);` (where `f(w)` is `w`, the store goes).
//!
//! A factorization written with a temporary (`w = A[i][j]; for k: w -= A[i][k] *
//! A[k][j]; A[i][j] = w / A[j][j];`) then has the shape of a row update, which the
//! triangle and reduction interchanges take. The same operations run on the same values
//! in the same order, so the results are bit for bit the user's.
//!
//! Legal when, for every pattern folded:
//! - `w` has the element type of `X`'s array (the accumulation rounds alike);
//! - `X`'s subscripts stay fixed over the inner loop (they name nothing it writes);
//! - no other access of the array in the inner loop, or in the store after it, can be
//!   `X`'s element: apart in some dimension for every iteration of the loops around it
//!   ([`apart`], the loops' ranges substituted from the innermost out);
//! - no OpenMP directive in the inner loop (its clauses may name `w`);
//! - bounds and subscripts name nothing the nest writes but its loop variables;
//! - the inner loop declares no `w` of its own;
//! - nobody reads what `w` held: after the fold, every read of `w` after a folded loop
//!   (through the loops around it too) comes after an assignment `w = ..` of its own,
//!   and `w` is dead after the region ([`crate::program::Region::dead_after`]: an
//!   automatic variable of the function, whose address it does not take, named nowhere
//!   after the region, which no loop of the function runs again).

use super::*;
use crate::program::Region;

pub(crate) fn fold_scalar(nest: &mut Loop, at: usize, cx: &mut Ctx) -> Result<(), Refusal> {
    let around = enclosing(nest, at);
    let head = loop_at(nest, at).expect("loop");
    if head.has_openmp() {
        return Err(cx.na(format!("loop '{}' carries an OpenMP directive", head.var)));
    }
    // Names the nest writes other than its loop variables: a bound or subscript naming
    // one moves while the loops run, and no range proves anything of it.
    let mut moving = crate::deps::written_names(&nest.body);
    moving.remove(&nest.var);
    for y in crate::program::loops(&nest.body) {
        moving.remove(&y.var);
    }
    let l = loop_at_mut(nest, at).expect("loop");
    let mut chain = around;
    chain.push(l.clone());
    let mut folded: Vec<String> = Vec::new();
    let mut kill: Vec<usize> = Vec::new();
    let mut reasons: Vec<String> = Vec::new();
    let mut p = 0;
    while p + 2 < l.body.len() {
        match fold_at(&l.body, p, &chain, &moving, cx) {
            Some(Ok((w, replaced))) => {
                if let Some(Node::Loop(inner)) = replaced.first() {
                    kill.push(inner.id);
                }
                let end = p + 3;
                l.body.splice(p..end, replaced);
                folded.push(w);
            }
            Some(Err(why)) => reasons.push(why),
            None => {}
        }
        p += 1;
    }
    if folded.is_empty() {
        return Err(if reasons.is_empty() {
            cx.na(format!(
                "loop '{}' holds no `w = X; loop; X = f(w)` to fold",
                l.var
            ))
        } else {
            cx.illegal(reasons.join("; "))
        });
    }
    // Nobody reads what the folded scalars held.
    let (program, region) = cx.before.expect("the program before the step");
    let region = &program.regions[region];
    for w in &folded {
        if !region.dead_after.contains(w) {
            return Err(cx.illegal(format!(
                "'{w}' may be read after the region (it is not an automatic variable of \
                 its function, the function names it after the region or takes its \
                 address, or a loop of the function runs the region again)"
            )));
        }
        if !reads_follow_writes(region, nest, w, &kill) {
            return Err(cx.illegal(format!(
                "a read of '{w}' may see the value it held after the folded loop"
            )));
        }
    }
    Ok(())
}

/// The pattern `w = X; loop; X = f(w)` at `body[p..p + 3]`, folded: the scalar and the
/// statements that replace the three; None where there is no such pattern, an error
/// where folding it would not be legal.
fn fold_at(
    body: &[Node],
    p: usize,
    chain: &[Loop],
    moving_in_nest: &BTreeSet<String>,
    cx: &Ctx,
) -> Option<Result<(String, Vec<Node>), String>> {
    let (w, x, inner, last) = pattern(body, p)?;
    let Expr::Access { array, indices } = x else {
        return None;
    };
    let shown = crate::print::expr(x);
    let dtype_of_w = cx.scalars.iter().find(|s| &s.name == w).map(|s| s.dtype);
    let dtype_of_x = cx.arrays.iter().find(|a| &a.name == array).map(|a| a.dtype);
    if dtype_of_w.is_none() || dtype_of_w != dtype_of_x {
        return Some(Err(format!(
            "'{w}' and {shown} are of different types: the accumulation would round otherwise"
        )));
    }
    if crate::program::has_opaque(&inner.body) {
        return Some(Err(format!("loop '{}' holds glue", inner.var)));
    }
    if inner.has_openmp()
        || crate::program::loops(&inner.body)
            .iter()
            .any(|y| y.has_openmp())
    {
        return Some(Err(format!(
            "loop '{}' carries an OpenMP directive (its clauses may name '{w}')",
            inner.var
        )));
    }
    let mut moving = crate::deps::written_names(&inner.body);
    moving.insert(inner.var.clone());
    for y in crate::program::loops(&inner.body) {
        moving.insert(y.var.clone());
    }
    if indices.iter().any(|e| moving.iter().any(|m| e.mentions(m))) {
        return Some(Err(format!(
            "the subscripts of {shown} move in loop '{}'",
            inner.var
        )));
    }
    if inner.init.mentions(array) || inner.bound.mentions(array) {
        return Some(Err(format!("the bounds of '{}' read '{array}'", inner.var)));
    }
    if written_decl_kind(&inner.body, w).is_some() {
        return Some(Err(format!(
            "loop '{}' declares a '{w}' of its own",
            inner.var
        )));
    }
    let inside = crate::program::loops(std::slice::from_ref(&body[p + 1]));
    let headers_fixed = chain.iter().chain(inside.iter().copied()).all(|y| {
        !moving_in_nest
            .iter()
            .any(|m| y.init.mentions(m) || y.bound.mentions(m))
    });
    let fixed = |a: &[Expr], b: &[Expr]| {
        headers_fixed
            && !a
                .iter()
                .chain(b)
                .any(|x| moving_in_nest.iter().any(|m| x.mentions(m)))
    };
    // Every other access of the array inside, and in the store after the loop (which
    // reads the element's old value through `w` only): apart from X's element.
    let mut clash: Option<String> = None;
    let mut note = |e: &Expr, around: &[Loop]| {
        if let Expr::Access {
            array: a,
            indices: idx,
        } = e
        {
            let proven =
                distinct(indices, idx) || (fixed(indices, idx) && apart(around, indices, idx));
            if a == array && !proven && clash.is_none() {
                clash = Some(crate::print::expr(e));
            }
        }
    };
    let mut loops = chain.to_vec();
    loops.push(inner.clone());
    accesses_under(&inner.body, &mut loops, &mut note);
    last.value.walk(&mut |e| note(e, chain));
    if let Some(y) = clash {
        return Some(Err(format!("{y} may be the same element as {shown}")));
    }
    let mut new_inner = inner.clone();
    rewrite_nodes(&mut new_inner.body, &mut |e| {
        matches!(e, Expr::Var(v) if v == w).then(|| x.clone())
    });
    let mut value = last.value.clone();
    rewrite(&mut value, &mut |e| {
        matches!(e, Expr::Var(v) if v == w).then(|| x.clone())
    });
    let mut out = vec![Node::Loop(new_inner)];
    if &value != x {
        out.push(Node::Assign(Assign {
            value,
            ..last.clone()
        }));
    }
    Some(Ok((w.clone(), out)))
}

/// The pattern `w = X; loop; X = f(w)` at `body[p..p + 3]` (`X` an array element that
/// does not name `w`, `f(w)` naming it): `w`, `X`, the loop and the store.
pub(super) fn pattern(body: &[Node], p: usize) -> Option<(&String, &Expr, &Loop, &Assign)> {
    let (Node::Assign(first), Node::Loop(inner), Some(Node::Assign(last))) =
        (body.get(p)?, body.get(p + 1)?, body.get(p + 2))
    else {
        return None;
    };
    let (Expr::Var(w), x @ Expr::Access { .. }) = (&first.target, &first.value) else {
        return None;
    };
    let matches = first.op == AssignOp::Set
        && last.op == AssignOp::Set
        && &last.target == x
        && last.value.mentions(w)
        && !x.mentions(w);
    matches.then_some((w, x, inner, last))
}

/// The loops from `root` down to (not including) the loop at position `at`.
fn enclosing(root: &Loop, at: usize) -> Vec<Loop> {
    let mut out = Vec::new();
    if at == 0 {
        return out;
    }
    out.push(root.clone());
    let Some(route) = locate(root, at) else {
        return out;
    };
    let mut body = &root.body;
    for (i, via) in &route[..route.len() - 1] {
        body = match (&body[*i], via) {
            (Node::Loop(l), _) => {
                out.push(l.clone());
                &l.body
            }
            (Node::Block(b), _) => b,
            (Node::If(x), Via::Then) => &x.then_body,
            (Node::If(x), _) => &x.else_body,
            _ => unreachable!("routes lead through containers"),
        };
    }
    out
}

/// Calls `f` on every array access under `body` with the loops around it (`loops`
/// first, then those inside `body` that enclose it).
fn accesses_under(body: &[Node], loops: &mut Vec<Loop>, f: &mut dyn FnMut(&Expr, &[Loop])) {
    fn visit(e: &Expr, loops: &[Loop], f: &mut dyn FnMut(&Expr, &[Loop])) {
        e.walk(&mut |x| {
            if matches!(x, Expr::Access { .. }) {
                f(x, loops)
            }
        })
    }
    for n in body {
        match n {
            Node::Assign(a) => {
                visit(&a.target, loops, f);
                visit(&a.value, loops, f);
            }
            Node::Decl(d) => {
                if let Some(i) = &d.init {
                    visit(i, loops, f);
                }
            }
            Node::If(i) => {
                visit(&i.cond, loops, f);
                accesses_under(&i.then_body, loops, f);
                accesses_under(&i.else_body, loops, f);
            }
            Node::Loop(l) => {
                visit(&l.init, loops, f);
                visit(&l.bound, loops, f);
                loops.push(l.clone());
                accesses_under(&l.body, loops, f);
                loops.pop();
            }
            Node::Block(b) => accesses_under(b, loops, f),
            Node::Opaque(_) => {}
        }
    }
}

/// Whether every read of scalar `w` in `region`, with its nest replaced by `nest` (the
/// loop of the same id), comes after an assignment `w = ..` (not reading `w`) in its
/// own statement list or in one around it, the folded loops `kill` leaving it stale.
fn reads_follow_writes(region: &Region, nest: &Loop, w: &str, kill: &[usize]) -> bool {
    let mut body = region.body.clone();
    let mut replaced = false;
    replace_loop(&mut body, nest, &mut replaced);
    replaced && crate::program::reads_set_first(&body, w, kill)
}

fn replace_loop(body: &mut [Node], nest: &Loop, done: &mut bool) {
    for n in body.iter_mut() {
        if *done {
            return;
        }
        match n {
            Node::Loop(l) if l.id == nest.id => {
                *l = nest.clone();
                *done = true;
            }
            Node::Loop(l) => replace_loop(&mut l.body, nest, done),
            Node::Block(b) => replace_loop(b, nest, done),
            Node::If(i) => {
                replace_loop(&mut i.then_body, nest, done);
                replace_loop(&mut i.else_body, nest, done);
            }
            Node::Assign(_) | Node::Decl(_) | Node::Opaque(_) => {}
        }
    }
}
