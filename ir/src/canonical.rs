//! Loop roles: a canonical description of each loop of a nest that does not depend on
//! variable names, source order or loop positions, so that a recipe found for one nest
//! can be re-fitted to another.
//!
//! A loop's [`Role`] says which subscript of the nest's primary output it walks (counted
//! from the last, unit-stride dimension), whether it is a map, reduction or sequential
//! loop, whether it walks the unit-stride dimension of some access, whether it is a tile
//! loop (introduced by tiling, indexing no array), and its depth. A recipe is stored as a
//! [`RoleRecipe`]: every step with the role of the loop it applied to, taken on the nest
//! as transformed by the steps before it. [`refit`] replays a role recipe on another
//! nest: each step goes to the loop whose role matches best, interchanges are expressed
//! as an order of roles, tile sizes are fitted to known trip counts, and steps that do
//! not apply or are illegal there are dropped with their reason.

use crate::program::trip_count;
use crate::program::{Expr, Loop, LoopKind, Node, Program};
use crate::transform::{apply, Recipe, Step};
use serde::{Deserialize, Serialize};

/// What a loop does in its nest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Role {
    /// Nesting depth within the nest (0 = root).
    pub depth: usize,
    pub kind: LoopKind,
    /// Has no loop inside.
    pub innermost: bool,
    /// Which subscript of the primary output this loop's variable appears in, counted
    /// from the last (0 = the unit-stride dimension); `None` when it indexes none (a
    /// reduction dimension, or an output that is a scalar).
    pub out_dim: Option<usize>,
    /// The variable appears in the last subscript of some access.
    pub unit_stride: bool,
    /// A tile loop: its variable bounds another loop of the nest and indexes no array.
    pub tile: bool,
    /// Iterations, when the bounds are constants.
    pub trip: Option<i64>,
}

impl Role {
    /// How well `other` plays this role: higher is better.
    fn score(&self, other: &Role) -> i64 {
        let mut s = 0;
        s += match (self.out_dim, other.out_dim) {
            (Some(a), Some(b)) if a == b => 8,
            (None, None) => 6,
            (Some(_), Some(_)) => 2,
            _ => 0,
        };
        s += if self.tile == other.tile { 10 } else { 0 };
        s += if self.kind == other.kind { 4 } else { 0 };
        s += if self.unit_stride == other.unit_stride {
            2
        } else {
            0
        };
        s += if self.innermost == other.innermost {
            2
        } else {
            0
        };
        s - (self.depth as i64 - other.depth as i64).abs()
    }
}

/// The roles of a nest's loops, in preorder (index = the loop's position `at`).
pub fn roles(root: &Loop) -> Vec<Role> {
    let mut all: Vec<(&Loop, usize)> = Vec::new();
    collect(root, 0, &mut all);
    // The primary output: the array written by the most statements (first on ties).
    let mut writes: Vec<(String, usize, Vec<Expr>)> = Vec::new();
    let mut last_subscripts: Vec<Expr> = Vec::new();
    let mut accessed: Vec<String> = Vec::new();
    crate::program::walk_nodes(
        std::slice::from_ref(&Node::Loop(root.clone())),
        &mut |n, _| {
            if let Node::Assign(a) = n {
                if let Expr::Access { array, indices } = &a.target {
                    match writes.iter_mut().find(|w| &w.0 == array) {
                        Some(w) => w.1 += 1,
                        None => writes.push((array.clone(), 1, indices.clone())),
                    }
                }
                for e in [&a.target, &a.value] {
                    e.walk(&mut |x| {
                        if let Expr::Access { indices, .. } = x {
                            if let Some(last) = indices.last() {
                                last_subscripts.push(last.clone());
                            }
                            for i in indices {
                                i.walk(&mut |v| {
                                    if let Expr::Var(v) = v {
                                        accessed.push(v.clone());
                                    }
                                });
                            }
                        }
                    });
                }
            }
        },
    );
    let primary = writes
        .iter()
        .enumerate()
        .max_by_key(|(k, w)| (w.1, std::cmp::Reverse(*k)))
        .map(|(_, w)| w.2.clone())
        .unwrap_or_default();
    let dim_of =
        |var: &str| -> Option<usize> { primary.iter().rev().position(|e| e.mentions(var)) };
    let mut out: Vec<Role> = all
        .iter()
        .map(|(l, depth)| Role {
            depth: *depth,
            kind: l.kind,
            innermost: crate::program::loops(&l.body).is_empty(),
            out_dim: dim_of(&l.var),
            unit_stride: last_subscripts.iter().any(|e| e.mentions(&l.var)),
            tile: false,
            trip: trip(l),
        })
        .collect();
    // Tile loops take the role of the loop they bound, marked as tiles.
    for (k, (l, _)) in all.iter().enumerate() {
        if accessed.iter().any(|a| a == &l.var) {
            continue;
        }
        let bounded = all
            .iter()
            .enumerate()
            .find(|(j, (x, _))| *j != k && (x.init.mentions(&l.var) || x.bound.mentions(&l.var)));
        if let Some((j, _)) = bounded {
            let inner = out[j].clone();
            let r = &mut out[k];
            r.tile = true;
            r.out_dim = inner.out_dim;
            r.unit_stride = inner.unit_stride;
        }
    }
    out
}

fn collect<'a>(l: &'a Loop, depth: usize, out: &mut Vec<(&'a Loop, usize)>) {
    out.push((l, depth));
    fn nodes<'a>(body: &'a [Node], depth: usize, out: &mut Vec<(&'a Loop, usize)>) {
        for n in body {
            match n {
                Node::Loop(l) => collect(l, depth, out),
                Node::If(i) => {
                    nodes(&i.then_body, depth, out);
                    nodes(&i.else_body, depth, out);
                }
                Node::Block(b) => nodes(b, depth, out),
                Node::Assign(_) | Node::Decl(_) | Node::Opaque(_) => {}
            }
        }
    }
    nodes(&l.body, depth + 1, out);
}

fn trip(l: &Loop) -> Option<i64> {
    trip_count(l, &|e| match e {
        Expr::Int { value, .. } => Some(*value),
        _ => None,
    })
}

/// The loops of a nest in canonical order: tile loops first, then by output dimension
/// from the outermost subscript to the unit-stride one, loops that index no output
/// (reductions) before the unit-stride loop; ties by depth. Returns positions.
pub fn canonical_order(root: &Loop) -> Vec<usize> {
    let r = roles(root);
    let mut order: Vec<usize> = (0..r.len()).collect();
    order.sort_by_key(|&k| {
        let x = &r[k];
        let dim = match x.out_dim {
            Some(0) => 0,
            Some(d) => 2 + d,
            None => 1,
        };
        (!x.tile, std::cmp::Reverse(dim), x.depth, k)
    });
    order
}

/// One step of a role recipe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoleStep {
    /// The step as it was applied (positions of the source nest).
    pub step: Step,
    /// Role of the loop at the step's `at`.
    pub role: Role,
    /// For interchange: the roles of the band in their new order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub band: Vec<Role>,
}

/// A recipe whose steps name loops by role.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RoleRecipe {
    pub steps: Vec<RoleStep>,
}

/// The result of re-fitting a recipe to a nest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Refit {
    /// The steps that apply to the target, in order (legal there).
    pub recipe: Recipe,
    /// Source step index and why it was dropped.
    pub dropped: Vec<(usize, String)>,
}

fn nest_root(program: &Program, region: usize, root: usize) -> Option<Loop> {
    program.find_loop(region, root).cloned()
}

/// Describes `recipe` (which applies to the nest at `region`/`root` of `program`) by
/// the roles of the loops its steps name.
pub fn describe(
    program: &Program,
    region: usize,
    root: usize,
    recipe: &Recipe,
) -> Result<RoleRecipe, crate::transform::Refusal> {
    let mut out = RoleRecipe::default();
    let mut current = nest_root(program, region, root)
        .ok_or(crate::transform::Refusal::NoSuchLoop { step: 0, at: root })?;
    for (k, step) in recipe.steps.iter().enumerate() {
        let r = roles(&current);
        let at = step.at();
        let role = r
            .get(at)
            .cloned()
            .ok_or(crate::transform::Refusal::NoSuchLoop { step: k, at })?;
        let band = match step {
            Step::Interchange { order, .. } => {
                let band = band_positions(&current, at, order.len()).unwrap_or_default();
                order
                    .iter()
                    .filter_map(|&b| band.get(b).map(|&p| r[p].clone()))
                    .collect()
            }
            _ => Vec::new(),
        };
        out.steps.push(RoleStep {
            step: step.clone(),
            role,
            band,
        });
        let prefix = Recipe {
            steps: recipe.steps[..=k].to_vec(),
        };
        current = apply(program, region, root, &prefix)?.root;
    }
    Ok(out)
}

/// Re-fits a role recipe to the nest at `region`/`root` of `program`.
///
/// The recipe is fitted twice: to the nest as written, and to the nest with every
/// perfect band in stride order ([`crate::normalize::stride_ordered`], the order its
/// static features describe; the refit then starts with the interchanges that reorder
/// it). The fit whose loops play the recipe's roles better (the summed [`Role`] match of
/// every step, depth included) is kept; as written on a tie. So a recipe found on a
/// nest written in the good order fits a copy written in another as it fit the
/// original, and one found on a nest kept in its written order keeps that order.
pub fn refit(recipe: &RoleRecipe, program: &Program, region: usize, root: usize) -> Refit {
    let Some(written) = nest_root(program, region, root) else {
        return Refit {
            recipe: Recipe::default(),
            dropped: vec![(0, format!("the program has no loop {root}"))],
        };
    };
    let (as_written, match_written) =
        fit_from(recipe, program, region, root, Recipe::default(), written);
    match crate::normalize::stride_ordered(program, region, root) {
        Some(o) if !o.recipe.steps.is_empty() => {
            let (ordered, match_ordered) =
                fit_from(recipe, program, region, root, o.recipe, o.root);
            if match_ordered > match_written {
                ordered
            } else {
                as_written
            }
        }
        _ => as_written,
    }
}

/// Fits `recipe` step by step after the steps `kept` (which turned the nest into
/// `current`); returns the fit and how well the nest's loops matched the steps' roles.
fn fit_from(
    recipe: &RoleRecipe,
    program: &Program,
    region: usize,
    root: usize,
    mut kept: Recipe,
    mut current: Loop,
) -> (Refit, i64) {
    let mut dropped = Vec::new();
    let mut matched = 0;
    for (k, rs) in recipe.steps.iter().enumerate() {
        let r = roles(&current);
        matched += r.iter().map(|x| rs.role.score(x)).max().unwrap_or(0);
        let candidate = match fit_step(rs, &r, &current) {
            Ok(s) => s,
            Err(why) => {
                dropped.push((k, why));
                continue;
            }
        };
        kept.steps.push(candidate);
        match apply(program, region, root, &kept) {
            Ok(t) => current = t.root,
            Err(e) => {
                kept.steps.pop();
                dropped.push((k, e.to_string()));
            }
        }
    }
    let fit = Refit {
        recipe: kept,
        dropped,
    };
    (fit, matched)
}

fn best_match(want: &Role, roles: &[Role], exclude: &[usize]) -> Option<usize> {
    roles
        .iter()
        .enumerate()
        .filter(|(k, _)| !exclude.contains(k))
        .max_by_key(|(k, r)| (want.score(r), std::cmp::Reverse(*k)))
        .map(|(k, _)| k)
}

fn fit_step(rs: &RoleStep, r: &[Role], current: &Loop) -> Result<Step, String> {
    let mut at = best_match(&rs.role, r, &[]).ok_or("the nest has no loops")?;
    match &rs.step {
        Step::Interchange { order, .. } => {
            let m = order.len();
            // The band starts at the outermost of the loops that play the band's roles.
            let mut taken = Vec::new();
            for want in &rs.band {
                if let Some(p) = best_match(want, r, &taken) {
                    taken.push(p);
                }
            }
            at = taken.iter().copied().min().unwrap_or(at);
            // The band of m perfectly nested loops at `at`, and the order of its members
            // that puts the wanted roles outermost first.
            let band = band_positions(current, at, m)
                .ok_or_else(|| format!("no perfectly nested band of {m} loops at position {at}"))?;
            let band_roles: Vec<Role> = band.iter().map(|&p| r[p].clone()).collect();
            let mut new_order = Vec::new();
            for want in &rs.band {
                let b = best_match(want, &band_roles, &new_order)
                    .ok_or("the band has fewer loops than the recipe's")?;
                new_order.push(b);
            }
            if new_order.iter().enumerate().all(|(i, o)| i == *o) {
                return Err("the loops are already in that order".into());
            }
            Ok(Step::Interchange {
                at,
                order: new_order,
            })
        }
        Step::Tile { sizes, inner, .. } => {
            let band = band_positions(current, at, sizes.len()).ok_or_else(|| {
                format!(
                    "no perfectly nested band of {} loops at position {at}",
                    sizes.len()
                )
            })?;
            let fitted: Vec<i64> = sizes
                .iter()
                .zip(&band)
                .map(|(s, p)| match r[*p].trip {
                    Some(t) if t >= 2 && t < *s => t,
                    _ => *s,
                })
                .collect();
            // Inner tiles must divide the (fitted) outer ones: each keeps the largest
            // divisor of its outer size not above the recipe's; without one (a prime
            // trip count) the second level is left out.
            let inner: Vec<i64> = inner
                .iter()
                .zip(&fitted)
                .map(|(&i, &f)| (2..=i.min(f)).rev().find(|d| f % d == 0))
                .collect::<Option<Vec<i64>>>()
                .unwrap_or_default();
            Ok(Step::Tile {
                at,
                sizes: fitted,
                inner,
            })
        }
        other => Ok(other.moved_to(at)),
    }
}

/// Positions of the perfectly nested band of `m` loops starting at position `at`.
fn band_positions(root: &Loop, at: usize, m: usize) -> Option<Vec<usize>> {
    let mut all: Vec<(&Loop, usize)> = Vec::new();
    collect(root, 0, &mut all);
    let mut out = vec![at];
    let mut cur = all.get(at)?.0;
    while out.len() < m {
        match cur.body.as_slice() {
            [Node::Loop(inner)] => {
                out.push(out.last()? + 1);
                cur = inner;
            }
            _ => return None,
        }
    }
    Some(out)
}
