//! Interchange of an imperfect triangular pair: a loop `j` whose body opens with a
//! loop `k` running from `j`'s start up to `j`, followed by statements `T(j)`.
//!
//! ```text
//! for (j = lo; j < hi; j++) {          for (k = lo; k < hi; k++) {
//!   for (k = lo; k < j; k++)    ==>      T(k);
//!     S(j, k);                           for (j = k + 1; j < hi; j++)
//!   T(j);                                  S(j, k);
//! }                                    }
//! ```
//!
//! Both forms run `S` on `lo <= k < j < hi` and `T` on every `j`: `T(j)` moves to the
//! diagonal iteration `k = j`, after every `S(j, k)` it followed. This is how a row of
//! an LU factorization turns from dot products down columns (`A[k][j]` for varying
//! `k`) into row updates (`A[i][j] -= A[i][k] * A[k][j]` for varying `j`, unit
//! stride).
//!
//! Legality, pair by pair of instances that may touch one element (one a write), in
//! one iteration of the loops outside `j`:
//! - `S(j1, k1)` before `S(j2, k2)` stays before unless the dependence runs `<` on `j`
//!   and `>` on `k` (the interchange condition);
//! - `S(j1, k1)` before `T(j2)` (`j1 <= j2`): `k1 < j1 <= j2`, still before;
//! - `T(j1)` before `S(j2, k2)` (`j1 < j2`): still before only when `j1 <= k2`, so no
//!   such pair may conflict with `k2 < j1` — asked of the dependence system itself
//!   (`deps::may_conflict_where`);
//! - `T` before `T`: the order of `j` is kept.

use super::*;
use crate::deps::{may_conflict_where, Between};

pub(crate) fn interchange_triangle(nest: &mut Loop, at: usize, cx: &Ctx) -> Result<(), Refusal> {
    let l = loop_at(nest, at).expect("loop").clone();
    let (before, region) = cx.before.expect("the program before the step");
    if l.has_directives() {
        return Err(cx.na(format!("loop '{}' carries a directive", l.var)));
    }
    let Some((Node::Loop(k), rest)) = l.body.split_first() else {
        return Err(cx.na(format!(
            "the body of loop '{}' does not open with a loop",
            l.var
        )));
    };
    if k.has_directives() {
        return Err(cx.na(format!("loop '{}' carries a directive", k.var)));
    }
    for x in [&l, k] {
        if x.step != 1 || x.cmp != LoopCmp::Lt {
            return Err(cx.na(format!(
                "loop '{}' does not count up by one with '<'",
                x.var
            )));
        }
    }
    if k.bound != Expr::Var(l.var.clone()) || k.init != l.init {
        return Err(cx.na(format!(
            "loop '{}' does not run from the start of '{}' up to it",
            k.var, l.var
        )));
    }
    if !rest.iter().all(|n| matches!(n, Node::Assign(_))) {
        return Err(cx.na(format!(
            "after loop '{}' the body of '{}' holds more than assignments",
            k.var, l.var
        )));
    }
    if rest.iter().any(|n| node_mentions(n, &k.var)) {
        return Err(cx.na(format!(
            "the statements after loop '{}' read its variable",
            k.var
        )));
    }
    let written = crate::deps::written_names(&l.body);
    if written
        .iter()
        .any(|w| l.init.mentions(w) || l.bound.mentions(w))
    {
        return Err(cx.na(format!("the bounds of '{}' change inside it", l.var)));
    }
    // S before S: no dependence `<` on j and `>` on k.
    for v in band_vectors(cx.an, &[l.id, k.id]) {
        if v == [Dir::Lt, Dir::Gt] {
            return Err(cx.illegal(format!(
                "a dependence runs forward on '{}' and backward on '{}'",
                l.var, k.var
            )));
        }
    }
    // T(j1) before S(j2, k2) with j1 < j2: no conflict where k2 < j1.
    let t_stmts: Vec<usize> = rest
        .iter()
        .filter_map(|n| match n {
            Node::Assign(a) => Some(a.id),
            _ => None,
        })
        .collect();
    let accesses = &cx.an.accesses;
    let outer: Vec<usize> = accesses
        .iter()
        .find(|a| a.loops.contains(&l.id))
        .map(|a| {
            a.loops
                .iter()
                .take_while(|id| **id != l.id)
                .copied()
                .collect()
        })
        .unwrap_or_default();
    for (ti, t) in accesses.iter().enumerate() {
        if !t_stmts.contains(&t.stmt) {
            continue;
        }
        for (si, s) in accesses.iter().enumerate() {
            if !s.loops.contains(&k.id) || s.array != t.array || !(s.write || t.write) {
                continue;
            }
            let mut extra: Vec<Between> = Vec::new();
            for id in &outer {
                // The same iteration of every loop outside j.
                for sign in [1, -1] {
                    extra.push(Between {
                        terms: vec![(true, *id, sign), (false, *id, -sign)],
                        constant: 0,
                    });
                }
            }
            // j1 < j2 and k2 < j1 (T first: `true` is T's side).
            extra.push(Between {
                terms: vec![(false, l.id, 1), (true, l.id, -1)],
                constant: -1,
            });
            extra.push(Between {
                terms: vec![(true, l.id, 1), (false, k.id, -1)],
                constant: -1,
            });
            if may_conflict_where(before, &before.regions[region], cx.an, ti, si, &extra) {
                return Err(cx.illegal(format!(
                    "'{}' after loop '{}' may touch what an earlier '{}' of a later '{}' touches",
                    t.array, k.var, k.var, l.var
                )));
            }
        }
    }
    let mut t_body: Vec<Node> = rest.to_vec();
    subst_nodes(&mut t_body, &l.var, &var(&k.var));
    let mut inner = header_of(&l);
    inner.init = plus(var(&k.var), 1);
    inner.body = k.body.clone();
    let mut outer_loop = header_of(k);
    outer_loop.init = l.init.clone();
    outer_loop.bound = l.bound.clone();
    outer_loop.pos = l.pos;
    outer_loop.end = l.end;
    outer_loop.body = t_body;
    outer_loop.body.push(Node::Loop(inner));
    *loop_at_mut(nest, at).expect("loop") = outer_loop;
    Ok(())
}
