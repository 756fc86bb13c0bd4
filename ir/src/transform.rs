//! Recipe steps: transformations of one loop nest, each refused with a reason when it
//! does not apply or when dependence analysis cannot prove it legal.
//!
//! A step names a loop by its preorder position in the nest (0 is the nest's root)
//! as the nest stands when the step is applied. After every step the region's loops
//! are renumbered and dependence analysis runs again, so later steps (and their
//! legality checks) see the transformed nest.
//!
//! Legality, from the direction vectors of the dependences not carried outside the
//! band being transformed:
//! - interchange of a perfectly nested band: every vector, permuted, stays
//!   lexicographically non-negative;
//! - tiling of a band: the band is fully permutable (no `>` component);
//! - parallelization: the loop is a map (no carried dependence after privatization);
//! - vectorization (`omp simd`): an innermost map;
//! - unrolling: always legal (a hint to the compiler).
//!
//! A loop carries at most one directive (C wants each right before its `for`): a second
//! directive on the same loop is refused, except that a new unroll factor replaces the
//! old one.

use crate::codegen::written_outside_decls;
use crate::deps::{analyze, Analysis, Dir};
use crate::program::{BinOp, Expr, Loop, LoopCmp, LoopKind, Node, Program};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Schedule {
    Static,
    Dynamic,
}

/// One transformation of a nest (stable JSON form, tagged by `step`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum Step {
    /// Reorders the perfectly nested band of `order.len()` loops starting at loop
    /// `at`: the loop at band depth `order[d]` moves to depth `d`.
    Interchange { at: usize, order: Vec<usize> },
    /// Tiles the perfectly nested band of `sizes.len()` loops starting at `at`.
    Tile { at: usize, sizes: Vec<i64> },
    /// `#pragma omp parallel for` on loop `at`.
    Parallelize {
        at: usize,
        schedule: Schedule,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chunk: Option<u32>,
    },
    /// `#pragma omp simd` on the innermost loop `at`.
    Vectorize { at: usize },
    /// `#pragma GCC unroll factor` on loop `at`.
    Unroll { at: usize, factor: u32 },
}

/// A sequence of steps applied in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recipe {
    pub steps: Vec<Step>,
}

/// Why a recipe was not applied.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Refusal {
    #[error("step {step}: the nest has no loop at position {at}")]
    NoSuchLoop { step: usize, at: usize },
    #[error("step {step}: does not apply: {why}")]
    NotApplicable { step: usize, why: String },
    #[error("step {step}: illegal: {why}")]
    Illegal { step: usize, why: String },
}

/// A nest after a recipe.
#[derive(Debug, Clone)]
pub struct Transformed {
    /// The program with the nest replaced (loop ids renumbered, verdicts recomputed).
    pub program: Program,
    /// The nest's new root loop.
    pub root: Loop,
    /// The generated code needs OpenMP (`-fopenmp`).
    pub openmp: bool,
}

/// Applies `recipe` to the nest rooted at loop `root` of region `region`.
pub fn apply(
    program: &Program,
    region: usize,
    root: usize,
    recipe: &Recipe,
) -> Result<Transformed, Refusal> {
    let mut prog = program.clone();
    let path = path_to_loop(&prog.regions[region].body, root)
        .ok_or(Refusal::NoSuchLoop { step: 0, at: 0 })?;
    let mut openmp = false;
    for (k, step) in recipe.steps.iter().enumerate() {
        let analysis = analyze(&prog, &prog.regions[region]);
        let names = used_names(&prog);
        let nest = loop_at_path_mut(&mut prog.regions[region].body, &path);
        apply_step(nest, step, k, &analysis, &names)?;
        openmp |= matches!(step, Step::Parallelize { .. } | Step::Vectorize { .. });
        renumber(&mut prog.regions[region].body);
        crate::deps::annotate(&mut prog);
    }
    let root = loop_at_path_mut(&mut prog.regions[region].body, &path).clone();
    Ok(Transformed {
        program: prog,
        root,
        openmp,
    })
}

fn apply_step(
    nest: &mut Loop,
    step: &Step,
    k: usize,
    an: &Analysis,
    names: &BTreeSet<String>,
) -> Result<(), Refusal> {
    let na = |why: String| Refusal::NotApplicable { step: k, why };
    let at = match step {
        Step::Interchange { at, .. }
        | Step::Tile { at, .. }
        | Step::Parallelize { at, .. }
        | Step::Vectorize { at }
        | Step::Unroll { at, .. } => *at,
    };
    let inside_parallel = ancestors_have_pragma(nest, at, "omp parallel");
    let l = loop_at_mut(nest, at).ok_or(Refusal::NoSuchLoop { step: k, at })?;
    match step {
        Step::Interchange { order, .. } => {
            let m = order.len();
            let mut sorted = order.clone();
            sorted.sort_unstable();
            if m < 2 || sorted != (0..m).collect::<Vec<_>>() {
                return Err(na(format!(
                    "{order:?} is not a permutation of 0..{m} (m >= 2)"
                )));
            }
            let band = transformable_band(l, m, k)?;
            for (d, &b) in order.iter().enumerate() {
                let header = band[b];
                for &inner in &order[d + 1..] {
                    let v = &band[inner].var;
                    if header.init.mentions(v) || header.bound.mentions(v) {
                        return Err(na(format!(
                            "the bounds of '{}' depend on '{v}', which would move inside it",
                            header.var
                        )));
                    }
                }
            }
            let ids: Vec<usize> = band.iter().map(|x| x.id).collect();
            for v in band_vectors(an, &ids) {
                let permuted: Vec<Dir> = order.iter().map(|&b| v[b]).collect();
                if permuted.iter().find(|d| **d != Dir::Eq) == Some(&Dir::Gt) {
                    return Err(Refusal::Illegal {
                        step: k,
                        why: format!("dependence {v:?} would become {permuted:?}"),
                    });
                }
            }
            let headers: Vec<Loop> = band.iter().map(|x| header_of(x)).collect();
            let body = band[m - 1].body.clone();
            *l = nest_headers(order.iter().map(|&b| headers[b].clone()).collect(), body);
            Ok(())
        }
        Step::Tile { sizes, .. } => {
            let m = sizes.len();
            if m == 0 || sizes.iter().any(|s| *s < 2) {
                return Err(na(format!(
                    "tile sizes {sizes:?} (need at least one, each >= 2)"
                )));
            }
            let band = transformable_band(l, m, k)?;
            let vars: Vec<&str> = band.iter().map(|x| x.var.as_str()).collect();
            for x in &band {
                if x.step != 1 || !matches!(x.cmp, LoopCmp::Lt | LoopCmp::Le) {
                    return Err(na(format!(
                        "loop '{}' is not an increasing unit-step loop",
                        x.var
                    )));
                }
                if let Some(v) = vars
                    .iter()
                    .find(|v| x.init.mentions(v) || x.bound.mentions(v))
                {
                    return Err(na(format!(
                        "the band is not rectangular: the bounds of '{}' depend on '{v}'",
                        x.var
                    )));
                }
            }
            let ids: Vec<usize> = band.iter().map(|x| x.id).collect();
            if let Some(v) = band_vectors(an, &ids)
                .into_iter()
                .find(|v| v.contains(&Dir::Gt))
            {
                return Err(Refusal::Illegal {
                    step: k,
                    why: format!("the band is not fully permutable: dependence {v:?}"),
                });
            }
            let mut taken = names.clone();
            let mut tiles = Vec::new();
            let mut points = Vec::new();
            for (x, size) in band.iter().zip(sizes) {
                let tvar = fresh(&format!("{}_t", x.var), &mut taken);
                let mut t = header_of(x);
                t.var = tvar.clone();
                t.declares_var = true;
                t.step = *size;
                tiles.push(t);
                let exclusive = match x.cmp {
                    LoopCmp::Le => Expr::Binary {
                        op: BinOp::Add,
                        lhs: Box::new(x.bound.clone()),
                        rhs: Box::new(Expr::int(1)),
                    },
                    _ => x.bound.clone(),
                };
                let end = Expr::Binary {
                    op: BinOp::Add,
                    lhs: Box::new(Expr::Var(tvar.clone())),
                    rhs: Box::new(Expr::int(*size)),
                };
                let mut p = header_of(x);
                p.init = Expr::Var(tvar);
                p.cmp = LoopCmp::Lt;
                p.bound = Expr::Ternary {
                    cond: Box::new(Expr::Binary {
                        op: BinOp::Lt,
                        lhs: Box::new(end.clone()),
                        rhs: Box::new(exclusive.clone()),
                    }),
                    then: Box::new(end),
                    other: Box::new(exclusive),
                };
                points.push(p);
            }
            let body = band[m - 1].body.clone();
            tiles.extend(points);
            *l = nest_headers(tiles, body);
            Ok(())
        }
        Step::Parallelize {
            schedule, chunk, ..
        } => {
            if l.kind != LoopKind::Map {
                return Err(Refusal::Illegal {
                    step: k,
                    why: format!("loop '{}' is {}, not parallel", l.var, l.kind.verdict()),
                });
            }
            if inside_parallel
                || crate::program::loops(&l.body)
                    .iter()
                    .any(|x| has_pragma(x, "omp parallel"))
            {
                return Err(na("nested parallel loops".into()));
            }
            // A loop directive must stand right before its `for`: one per loop.
            if !l.pragmas.is_empty() {
                return Err(na(format!("loop '{}' already carries a directive", l.var)));
            }
            let mut p = format!(
                "#pragma omp parallel for schedule({}{})",
                match schedule {
                    Schedule::Static => "static",
                    Schedule::Dynamic => "dynamic",
                },
                chunk.map_or(String::new(), |c| format!(", {c}"))
            );
            let privates = written_outside_decls(l);
            if !privates.is_empty() {
                p.push_str(&format!(" lastprivate({})", privates.join(", ")));
            }
            l.pragmas.push(p);
            Ok(())
        }
        Step::Vectorize { .. } => {
            if !crate::program::loops(&l.body).is_empty() {
                return Err(na(format!("loop '{}' is not innermost", l.var)));
            }
            if l.kind != LoopKind::Map {
                return Err(Refusal::Illegal {
                    step: k,
                    why: format!("loop '{}' is {}, not parallel", l.var, l.kind.verdict()),
                });
            }
            if !l.pragmas.is_empty() {
                return Err(na(format!("loop '{}' already carries a directive", l.var)));
            }
            let privates = written_outside_decls(l);
            l.pragmas.push(if privates.is_empty() {
                "#pragma omp simd".to_string()
            } else {
                format!("#pragma omp simd lastprivate({})", privates.join(", "))
            });
            Ok(())
        }
        Step::Unroll { factor, .. } => {
            if !(2..=64).contains(factor) {
                return Err(na(format!("unroll factor {factor} (2..=64)")));
            }
            if l.pragmas.iter().any(|p| p.contains("omp")) {
                return Err(na(format!("loop '{}' carries an OpenMP directive", l.var)));
            }
            l.pragmas = vec![format!("#pragma GCC unroll {factor}")];
            Ok(())
        }
    }
}

/// The perfectly nested band of `m` loops at `l`, free of directives (restructuring
/// comes before annotating).
fn transformable_band(l: &Loop, m: usize, k: usize) -> Result<Vec<&Loop>, Refusal> {
    let band = band_of(l, m).ok_or_else(|| Refusal::NotApplicable {
        step: k,
        why: format!("no perfectly nested band of {m} loops at '{}'", l.var),
    })?;
    check_pragma_free(&band, k)?;
    Ok(band)
}

fn check_pragma_free(band: &[&Loop], k: usize) -> Result<(), Refusal> {
    match band.iter().find(|x| !x.pragmas.is_empty()) {
        Some(x) => Err(Refusal::NotApplicable {
            step: k,
            why: format!(
                "loop '{}' already carries directives; restructure before annotating",
                x.var
            ),
        }),
        None => Ok(()),
    }
}

fn has_pragma(l: &Loop, what: &str) -> bool {
    l.pragmas.iter().any(|p| p.contains(what))
}

/// Whether a loop strictly enclosing preorder position `at` carries `what`.
fn ancestors_have_pragma(root: &Loop, at: usize, what: &str) -> bool {
    fn go(l: &Loop, target: usize, counter: &mut usize, what: &str, above: bool) -> Option<bool> {
        if *counter == target {
            return Some(above);
        }
        *counter += 1;
        let here = above || has_pragma(l, what);
        for n in &l.body {
            if let Some(r) = go_node(n, target, counter, what, here) {
                return Some(r);
            }
        }
        None
    }
    fn go_node(
        n: &Node,
        target: usize,
        counter: &mut usize,
        what: &str,
        above: bool,
    ) -> Option<bool> {
        match n {
            Node::Loop(l) => go(l, target, counter, what, above),
            Node::If(i) => i
                .then_body
                .iter()
                .chain(&i.else_body)
                .find_map(|x| go_node(x, target, counter, what, above)),
            Node::Block(b) => b
                .iter()
                .find_map(|x| go_node(x, target, counter, what, above)),
            Node::Assign(_) | Node::Decl(_) => None,
        }
    }
    go(root, at, &mut 0, what, false).unwrap_or(false)
}

/// The loop at preorder position `at` (0 = `root`).
fn loop_at_mut(root: &mut Loop, at: usize) -> Option<&mut Loop> {
    fn go<'a>(l: &'a mut Loop, at: usize, counter: &mut usize) -> Option<&'a mut Loop> {
        if *counter == at {
            return Some(l);
        }
        *counter += 1;
        for n in l.body.iter_mut() {
            if let Some(r) = go_node(n, at, counter) {
                return Some(r);
            }
        }
        None
    }
    fn go_node<'a>(n: &'a mut Node, at: usize, counter: &mut usize) -> Option<&'a mut Loop> {
        match n {
            Node::Loop(l) => go(l, at, counter),
            Node::If(i) => {
                for x in i.then_body.iter_mut().chain(i.else_body.iter_mut()) {
                    if let Some(r) = go_node(x, at, counter) {
                        return Some(r);
                    }
                }
                None
            }
            Node::Block(b) => {
                for x in b.iter_mut() {
                    if let Some(r) = go_node(x, at, counter) {
                        return Some(r);
                    }
                }
                None
            }
            Node::Assign(_) | Node::Decl(_) => None,
        }
    }
    go(root, at, &mut 0)
}

/// The perfectly nested band of `m` loops starting at `l`.
fn band_of(l: &Loop, m: usize) -> Option<Vec<&Loop>> {
    let mut band = vec![l];
    while band.len() < m {
        match band.last().expect("band").body.as_slice() {
            [Node::Loop(inner)] => band.push(inner),
            _ => return None,
        }
    }
    Some(band)
}

/// Direction components over `band` (consecutive common loops) of every dependence
/// that is not carried by a loop outside the band.
fn band_vectors(an: &Analysis, band: &[usize]) -> Vec<Vec<Dir>> {
    an.deps
        .iter()
        .filter_map(|d| {
            let p = d.loops.iter().position(|id| *id == band[0])?;
            if d.loops.get(p..p + band.len())? != band
                || d.directions[..p].iter().any(|x| *x != Dir::Eq)
            {
                return None;
            }
            Some(d.directions[p..p + band.len()].to_vec())
        })
        .collect()
}

/// A loop's header (everything but its body).
fn header_of(l: &Loop) -> Loop {
    Loop {
        body: Vec::new(),
        ..l.clone()
    }
}

/// Nests `headers` (outermost first) around `body`.
fn nest_headers(headers: Vec<Loop>, body: Vec<Node>) -> Loop {
    let mut inner = body;
    let mut out = None;
    for mut h in headers.into_iter().rev() {
        h.body = inner;
        inner = vec![Node::Loop(h.clone())];
        out = Some(h);
    }
    out.expect("at least one header")
}

fn path_to_loop(body: &[Node], id: usize) -> Option<Vec<usize>> {
    for (i, n) in body.iter().enumerate() {
        match n {
            Node::Loop(l) if l.id == id => return Some(vec![i]),
            Node::Loop(l) => {
                if let Some(mut p) = path_to_loop(&l.body, id) {
                    p.insert(0, i);
                    return Some(p);
                }
            }
            Node::Block(b) => {
                if let Some(mut p) = path_to_loop(b, id) {
                    p.insert(0, i);
                    return Some(p);
                }
            }
            Node::If(x) => {
                // then-branch indices first, else-branch after them
                let both: Vec<Node> = x.then_body.iter().chain(&x.else_body).cloned().collect();
                if let Some(mut p) = path_to_loop(&both, id) {
                    p.insert(0, i);
                    return Some(p);
                }
            }
            Node::Assign(_) | Node::Decl(_) => {}
        }
    }
    None
}

fn loop_at_path_mut<'a>(body: &'a mut [Node], path: &[usize]) -> &'a mut Loop {
    let (first, rest) = path.split_first().expect("non-empty path");
    match &mut body[*first] {
        Node::Loop(l) => {
            if rest.is_empty() {
                l
            } else {
                loop_at_path_mut(&mut l.body, rest)
            }
        }
        Node::Block(b) => loop_at_path_mut(b, rest),
        Node::If(x) => {
            let (r0, r1) = rest.split_first().expect("path continues");
            let n_then = x.then_body.len();
            let sub = if *r0 < n_then {
                std::slice::from_mut(&mut x.then_body[*r0])
            } else {
                std::slice::from_mut(&mut x.else_body[*r0 - n_then])
            };
            let mut p = vec![0];
            p.extend_from_slice(r1);
            loop_at_path_mut(sub, &p)
        }
        _ => unreachable!("paths lead to loops"),
    }
}

/// Loop ids in preorder again, after a transformation added or moved loops.
fn renumber(body: &mut [Node]) {
    let mut next = 0;
    crate::program::for_each_loop_mut(body, &mut |l| {
        l.id = next;
        next += 1;
    });
}

/// Every name in use: arrays, scalars and loop variables of all regions.
fn used_names(p: &Program) -> BTreeSet<String> {
    let mut s: BTreeSet<String> = p
        .arrays
        .iter()
        .map(|a| a.name.clone())
        .chain(p.scalars.iter().map(|x| x.name.clone()))
        .collect();
    for r in &p.regions {
        for l in crate::program::loops(&r.body) {
            s.insert(l.var.clone());
        }
    }
    s
}

fn fresh(base: &str, taken: &mut BTreeSet<String>) -> String {
    let mut name = base.to_string();
    let mut k = 1;
    while taken.contains(&name) {
        name = format!("{base}{k}");
        k += 1;
    }
    taken.insert(name.clone());
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_have_a_stable_json_form() {
        let r = Recipe {
            steps: vec![
                Step::Tile {
                    at: 1,
                    sizes: vec![32, 64],
                },
                Step::Parallelize {
                    at: 0,
                    schedule: Schedule::Static,
                    chunk: None,
                },
                Step::Unroll { at: 3, factor: 4 },
            ],
        };
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(
            text,
            r#"{"steps":[{"step":"tile","at":1,"sizes":[32,64]},{"step":"parallelize","at":0,"schedule":"static"},{"step":"unroll","at":3,"factor":4}]}"#
        );
        assert_eq!(serde_json::from_str::<Recipe>(&text).unwrap(), r);
    }
}
