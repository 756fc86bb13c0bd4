//! A nest's normal form: the same computation written one way, whatever loop order the
//! user chose, so that features and embeddings of two spellings of one nest agree.
//!
//! Two legal rewrites, each through [`crate::transform::apply`] (which refuses what the
//! dependences forbid):
//!
//! 1. **maximal fission**: every loop below the root is distributed over the parts of
//!    its body that the dependences let apart (`Step::Fission`, tried at every position
//!    until none splits);
//! 2. **stride order**: every perfectly nested band is reordered so that the loop that
//!    moves its accesses the most is outermost and the one that moves them the least
//!    (a unit stride in the last subscript, or no move at all) innermost. A loop's cost
//!    sums, over the band's accesses, 0 for an access that does not use its variable, 1
//!    where the variable is in the last subscript only with coefficient ±1, 4 otherwise
//!    (as the loop-cost model of locality-driven permutation). Of two loops of one cost,
//!    the one that moves fewer accesses goes outside (the other's cost is unit
//!    strides), then the one whose variable sits in earlier subscripts (the larger
//!    stride: summed over the accesses, the number of subscripts after the first one
//!    that names it), then the source order decides. So the orders of a 3-D stencil's
//!    `A[i][j][k]`, where i and j cost the same, all become i, j, k. Loops whose bounds name another
//!    band loop stay inside it. Where the whole order is illegal, only the cheapest loop
//!    is moved innermost; where that is illegal too, the band stays as it is.
//!
//! A rewrite that is refused leaves the nest as it was; the normal form is always a
//! legal program that computes what the nest computes.

use crate::affine::affine_of;
use crate::program::{preorder, Expr, Loop, Node, Program};
use crate::transform::{apply, Recipe, Step};

/// A nest in normal form.
#[derive(Debug, Clone)]
pub struct Normalized {
    /// The program with the nest replaced by its normal form.
    pub program: Program,
    /// The nest's root loop in normal form.
    pub root: Loop,
    /// The steps that led there (empty: the nest was already in normal form).
    pub recipe: Recipe,
}

impl Normalized {
    /// The nest as written, no step taken yet; `None` when the nest cannot be found.
    fn as_written(program: &Program, region: usize, root: usize) -> Option<Normalized> {
        Some(Normalized {
            root: program.find_loop(region, root)?.clone(),
            program: program.clone(),
            recipe: Recipe::default(),
        })
    }
}

/// Attempts, per loop, before fission stops looking (a bound, never reached in practice:
/// every successful fission adds a loop).
const FISSION_TRIES_PER_LOOP: usize = 4;

/// The normal form of the nest rooted at loop `root` of region `region`; `None` when
/// the nest cannot be found.
pub fn normalize(program: &Program, region: usize, root: usize) -> Option<Normalized> {
    let mut out = Normalized::as_written(program, region, root)?;
    // 1. Maximal fission.
    let mut at = 1;
    let mut tries = 0;
    while at < count_loops(&out.root)
        && tries < FISSION_TRIES_PER_LOOP * (count_loops(&out.root) + 4)
    {
        tries += 1;
        if try_step(&mut out, region, Step::Fission { at }) {
            continue;
        }
        at += 1;
    }
    // 2. Stride order of every band.
    stride_order_bands(&mut out, region);
    Some(out)
}

/// The nest rooted at loop `root` of region `region` with every perfect band in stride
/// order (step 2 of [`normalize`] alone, without fission); `None` when the nest cannot
/// be found. The loops' bodies stay as they are, so a recipe found on a nest written in
/// that order fits this one as it fit there.
pub fn stride_ordered(program: &Program, region: usize, root: usize) -> Option<Normalized> {
    let mut out = Normalized::as_written(program, region, root)?;
    stride_order_bands(&mut out, region);
    Some(out)
}

/// Puts every perfectly nested band of `out` in stride order, outermost band first.
fn stride_order_bands(out: &mut Normalized, region: usize) {
    let mut at = 0;
    while at < count_loops(&out.root) {
        let starts = band_starts(&out.root);
        let Some(&(start, len)) = starts.iter().find(|(s, _)| *s >= at) else {
            break;
        };
        if len >= 2 {
            let band = band(&out.root, start, len);
            let wanted = stride_order(&band);
            if wanted != (0..len).collect::<Vec<_>>() {
                let step = Step::Interchange {
                    at: start,
                    order: wanted.clone(),
                };
                if !try_step(out, region, step) {
                    let cheapest = *wanted.last().expect("a band");
                    let mut order: Vec<usize> = (0..len).filter(|b| *b != cheapest).collect();
                    order.push(cheapest);
                    if order != (0..len).collect::<Vec<_>>() {
                        try_step(out, region, Step::Interchange { at: start, order });
                    }
                }
            }
        }
        at = start + 1;
    }
}

/// Applies `step` to the nest as it stands; keeps the result when legal.
fn try_step(out: &mut Normalized, region: usize, step: Step) -> bool {
    let one = Recipe { steps: vec![step] };
    match apply(&out.program, region, out.root.id, &one) {
        Ok(t) => {
            out.program = t.program;
            out.root = t.root;
            out.recipe.steps.extend(one.steps);
            true
        }
        Err(_) => false,
    }
}

fn count_loops(root: &Loop) -> usize {
    1 + crate::program::loops(&root.body).len()
}

/// (position, length) of every maximal perfectly nested band, in preorder: a band starts
/// at a loop that is not the only item of its parent's body.
pub fn band_starts(root: &Loop) -> Vec<(usize, usize)> {
    let all = preorder(root);
    let mut inner_of_perfect = vec![false; all.len()];
    for (k, l) in all.iter().enumerate() {
        if let [Node::Loop(_)] = l.body.as_slice() {
            inner_of_perfect[k + 1] = true;
        }
    }
    let mut out = Vec::new();
    for (k, l) in all.iter().enumerate() {
        if inner_of_perfect[k] {
            continue;
        }
        let mut len = 1;
        let mut cur = *l;
        while let [Node::Loop(inner)] = cur.body.as_slice() {
            len += 1;
            cur = inner;
        }
        out.push((k, len));
    }
    out
}

fn band(root: &Loop, start: usize, len: usize) -> Vec<&Loop> {
    preorder(root)[start..start + len].to_vec()
}

/// Every array access under `l`, targets and values.
fn accesses(l: &Loop) -> Vec<&Expr> {
    let mut out = Vec::new();
    crate::program::walk_nodes(&l.body, &mut |n, _| {
        if let Node::Assign(a) = n {
            for e in [&a.target, &a.value] {
                e.walk(&mut |x| {
                    if matches!(x, Expr::Access { .. }) {
                        out.push(x);
                    }
                });
            }
        }
    });
    out
}

/// What running `var` innermost costs one access: 0 (the access stays put), 1 (unit
/// stride in the last subscript) or 4 (any other move, or a subscript not affine);
/// whether the access uses `var`; and how many subscripts follow the first one that
/// names `var` (the rank of its stride: 0 for the last subscript).
fn access_cost(access: &Expr, var: &str) -> (u32, bool, usize) {
    let Expr::Access { indices, .. } = access else {
        return (0, false, 0);
    };
    let n = indices.len();
    let mut cost = 0;
    let mut first = None;
    for (d, e) in indices.iter().enumerate() {
        if !e.mentions(var) {
            continue;
        }
        first.get_or_insert(d);
        let unit = d + 1 == n && affine_of(e, &|_| true).is_some_and(|a| a.coeff(var).abs() == 1);
        cost = cost.max(if unit { 1 } else { 4 });
    }
    (cost, first.is_some(), first.map_or(0, |d| n - 1 - d))
}

/// The band's loops (by band depth) from outermost to innermost in stride order.
fn stride_order(band: &[&Loop]) -> Vec<usize> {
    let innermost = band.last().expect("a band");
    let acc = accesses(innermost);
    // (cost, accesses moved, stride rank) per loop.
    let key: Vec<(u32, usize, usize)> = band
        .iter()
        .map(|l| {
            acc.iter().fold((0, 0, 0), |(c, u, r), a| {
                let (x, used, rank) = access_cost(a, &l.var);
                (c + x, u + used as usize, r + rank)
            })
        })
        .collect();
    let mut left: Vec<usize> = (0..band.len()).collect();
    let mut order = Vec::new();
    while !left.is_empty() {
        // A loop may be placed once no loop still to place bounds it.
        let free = left
            .iter()
            .copied()
            .filter(|&b| {
                !left.iter().any(|&o| {
                    o != b
                        && (band[b].init.mentions(&band[o].var)
                            || band[b].bound.mentions(&band[o].var))
                })
            })
            .max_by(|&a, &b| {
                key[a]
                    .0
                    .cmp(&key[b].0)
                    .then(key[b].1.cmp(&key[a].1))
                    .then(key[a].2.cmp(&key[b].2))
                    .then(b.cmp(&a))
            })
            .unwrap_or(left[0]);
        order.push(free);
        left.retain(|&b| b != free);
    }
    order
}
