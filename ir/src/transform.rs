//! Recipe steps: transformations of one loop nest, each refused with a reason when it
//! does not apply or when dependence analysis cannot prove it legal.
//!
//! A step names a loop by its preorder position in the nest (0 is the nest's root)
//! as the nest stands when the step is applied. After every step the region's loops
//! and statements are renumbered and dependence analysis runs again, so later steps
//! (and their legality checks) see the transformed nest.
//!
//! Legality, from the direction vectors of the dependences not carried outside the
//! loops being transformed:
//! - interchange of a perfectly nested band: every vector, permuted, stays
//!   lexicographically non-negative;
//! - tiling of a band (one or two levels): the band is fully permutable (no `>`
//!   component);
//! - parallelization: the loop is a map (no carried dependence after privatization);
//!   with `collapse(n)`, every loop of the perfect, rectangular band of `n` is a map;
//! - vectorization (`omp simd`, optionally `simdlen`): an innermost map;
//! - unrolling: always legal (a hint to the compiler);
//! - unroll-and-jam of loop `v` by `f`: the copies `v, v+1, .., v+f-1` of the body are
//!   merged into every inner loop whose header does not depend on `v` (the jammed
//!   loops); legal when no dependence carried by `v` runs, in the jammed order,
//!   backwards: its first non-`=` component over the jammed loops is not `>`, and where
//!   all are `=` its source does not come textually after its sink (unless both are in
//!   the same replicated run of statements). For a perfect band this is the classic
//!   condition (moving `v` innermost is legal);
//! - scalar replacement: always order-preserving; refused when another access of the
//!   array in the loop may be the same element;
//! - fission: no dependence carried by the loop runs from a later part to an earlier
//!   one (parts that such a dependence links stay together);
//! - fusion: no dependence between the two loops becomes backwards (re-analysed on the
//!   fused loop);
//! - skewing: always legal (it renames iterations, the order stays).
//!
//! A loop carries at most one directive (C wants each right before its `for`): a second
//! directive on the same loop is refused, except that a new unroll factor replaces the
//! old one. Loops inside an `omp ... collapse(n)` band are left alone.

use crate::affine::{affine_of, Affine};
use crate::codegen::written_outside_decls;
use crate::deps::{analyze, AccessRef, Analysis, Dependence, Dir};
use crate::program::{
    Array, Assign, AssignOp, BinOp, DType, Decl, Expr, If, Loop, LoopCmp, LoopKind, Node, Program,
    Scalar, ScalarOrigin,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};

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
    /// Tiles the perfectly nested band of `sizes.len()` loops starting at `at`. With
    /// `inner`, the tiles are tiled again (one size per band loop, each dividing the
    /// outer size): outer tile loops, inner tile loops, point loops.
    Tile {
        at: usize,
        sizes: Vec<i64>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        inner: Vec<i64>,
    },
    /// `#pragma omp parallel for` on loop `at`; with `collapse`, over the perfect band
    /// of that many loops.
    Parallelize {
        at: usize,
        schedule: Schedule,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chunk: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        collapse: Option<u32>,
    },
    /// `#pragma omp simd` (with `simdlen(width)`) on the innermost loop `at`.
    Vectorize {
        at: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        width: Option<u32>,
    },
    /// `#pragma GCC unroll factor` on loop `at`.
    Unroll { at: usize, factor: u32 },
    /// Unrolls loop `at` by `factor` and jams the copies into its inner loops (register
    /// tiling): a main loop with step `factor` whose full blocks run the jammed body,
    /// the last partial block runs a remainder loop.
    UnrollJam { at: usize, factor: u32 },
    /// Keeps the array elements that loop `at` writes and that do not move with it in
    /// local scalars: loaded before the loop, stored after it.
    ScalarReplace { at: usize },
    /// Distributes loop `at` over the top-level statements and loops of its body.
    Fission { at: usize },
    /// Fuses loop `at` with the loop right after it (same header).
    Fuse { at: usize },
    /// Skews the loop right inside loop `at` (a perfect band of two): its variable
    /// becomes `i + factor * t` for the outer variable `t`.
    Skew { at: usize, factor: i64 },
}

impl Step {
    /// The position of the loop the step applies to.
    pub fn at(&self) -> usize {
        match self {
            Step::Interchange { at, .. }
            | Step::Tile { at, .. }
            | Step::Parallelize { at, .. }
            | Step::Vectorize { at, .. }
            | Step::Unroll { at, .. }
            | Step::UnrollJam { at, .. }
            | Step::ScalarReplace { at }
            | Step::Fission { at }
            | Step::Fuse { at }
            | Step::Skew { at, .. } => *at,
        }
    }

    /// The same step applied to the loop at position `at`.
    pub fn moved_to(&self, at: usize) -> Step {
        let mut s = self.clone();
        match &mut s {
            Step::Interchange { at: a, .. }
            | Step::Tile { at: a, .. }
            | Step::Parallelize { at: a, .. }
            | Step::Vectorize { at: a, .. }
            | Step::Unroll { at: a, .. }
            | Step::UnrollJam { at: a, .. }
            | Step::ScalarReplace { at: a }
            | Step::Fission { at: a }
            | Step::Fuse { at: a }
            | Step::Skew { at: a, .. } => *a = at,
        }
        s
    }
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
    // The analysis of the nest as it stands (the annotation of one step serves the next).
    let mut analysis = if recipe.steps.is_empty() {
        None
    } else {
        Some(analyze(&prog, &prog.regions[region]))
    };
    for (k, step) in recipe.steps.iter().enumerate() {
        let analysis_now = analysis.take().expect("analysed");
        let names = used_names(&prog);
        let Program {
            arrays, regions, ..
        } = &mut prog;
        let mut cx = Ctx {
            k,
            an: &analysis_now,
            names,
            arrays,
            new_scalars: Vec::new(),
        };
        let nest = loop_at_path_mut(&mut regions[region].body, &path);
        let post = apply_step(nest, step, &mut cx)?;
        let new_scalars = cx.new_scalars;
        prog.scalars.extend(new_scalars);
        openmp |= matches!(step, Step::Parallelize { .. } | Step::Vectorize { .. });
        renumber(&mut prog.regions[region].body);
        renumber_statements(&mut prog.regions[region].body);
        let mut analyses = crate::deps::annotate(&mut prog);
        if let Some(Post::Fuse { at, split }) = post {
            let nest = loop_at_path_mut(&mut prog.regions[region].body, &path);
            check_fusion(nest, at, split, &analyses[region], k)?;
        }
        analysis = Some(analyses.swap_remove(region));
    }
    let root = loop_at_path_mut(&mut prog.regions[region].body, &path).clone();
    Ok(Transformed {
        program: prog,
        root,
        openmp,
    })
}

/// What one step sees besides the nest.
struct Ctx<'a> {
    k: usize,
    an: &'a Analysis,
    /// Names in use (fresh names are added as they are taken).
    names: BTreeSet<String>,
    arrays: &'a [Array],
    /// Local scalars the step declares.
    new_scalars: Vec<Scalar>,
}

impl Ctx<'_> {
    fn na(&self, why: impl Into<String>) -> Refusal {
        Refusal::NotApplicable {
            step: self.k,
            why: why.into(),
        }
    }

    fn illegal(&self, why: impl Into<String>) -> Refusal {
        Refusal::Illegal {
            step: self.k,
            why: why.into(),
        }
    }

    fn fresh(&mut self, base: &str) -> String {
        fresh(base, &mut self.names)
    }

    /// Declares a new local scalar of the region.
    fn declare(&mut self, name: &str, dtype: DType) {
        self.new_scalars.push(Scalar {
            name: name.to_string(),
            dtype,
            origin: ScalarOrigin::Local,
            written: true,
            read: true,
        });
    }
}

/// A check that needs the nest re-analysed after the step.
enum Post {
    /// Loop `at` is a fusion: its first `split` body nodes come from the first loop.
    Fuse { at: usize, split: usize },
}

fn apply_step(nest: &mut Loop, step: &Step, cx: &mut Ctx) -> Result<Option<Post>, Refusal> {
    let at = step.at();
    if loop_at(nest, at).is_none() {
        return Err(Refusal::NoSuchLoop { step: cx.k, at });
    }
    if let Some(head) = collapsed_into(nest, at) {
        return Err(cx.na(format!(
            "the loop is part of the OpenMP collapse band of loop '{head}'"
        )));
    }
    let inside_parallel = ancestors_have_pragma(nest, at, "omp parallel");
    match step {
        Step::Interchange { order, .. } => {
            interchange(loop_at_mut(nest, at).expect("loop"), order, cx)?
        }
        Step::Tile { sizes, inner, .. } => {
            tile(loop_at_mut(nest, at).expect("loop"), sizes, inner, cx)?
        }
        Step::Parallelize {
            schedule,
            chunk,
            collapse,
            ..
        } => {
            let l = loop_at_mut(nest, at).expect("loop");
            parallelize(l, *schedule, *chunk, *collapse, inside_parallel, cx)?
        }
        Step::Vectorize { width, .. } => {
            vectorize(loop_at_mut(nest, at).expect("loop"), *width, cx)?
        }
        Step::Unroll { factor, .. } => {
            let l = loop_at_mut(nest, at).expect("loop");
            if !(2..=64).contains(factor) {
                return Err(cx.na(format!("unroll factor {factor} (2..=64)")));
            }
            if has_pragma(l, "omp") {
                return Err(cx.na(format!("loop '{}' carries an OpenMP directive", l.var)));
            }
            l.pragmas = vec![format!("#pragma GCC unroll {factor}")];
        }
        Step::UnrollJam { factor, .. } => {
            unroll_jam(loop_at_mut(nest, at).expect("loop"), *factor, cx)?
        }
        Step::ScalarReplace { .. } => scalar_replace(nest, at, cx)?,
        Step::Fission { .. } => fission(nest, at, cx)?,
        Step::Fuse { .. } => return fuse(nest, at, cx).map(Some),
        Step::Skew { factor, .. } => skew(loop_at_mut(nest, at).expect("loop"), *factor, cx)?,
    }
    Ok(None)
}

fn interchange(l: &mut Loop, order: &[usize], cx: &Ctx) -> Result<(), Refusal> {
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

/// The exclusive upper end of an increasing loop (`bound`, or `bound + 1` for `<=`).
fn exclusive_end(l: &Loop) -> Expr {
    match l.cmp {
        LoopCmp::Le => plus(l.bound.clone(), 1),
        _ => l.bound.clone(),
    }
}

fn tile(l: &mut Loop, sizes: &[i64], inner: &[i64], cx: &mut Ctx) -> Result<(), Refusal> {
    let m = sizes.len();
    if m == 0 || sizes.iter().any(|s| *s < 2) {
        return Err(cx.na(format!(
            "tile sizes {sizes:?} (need at least one, each >= 2)"
        )));
    }
    if !inner.is_empty()
        && (inner.len() != m
            || inner
                .iter()
                .zip(sizes)
                .any(|(i, s)| *i < 2 || i >= s || s % i != 0))
    {
        return Err(cx.na(format!(
            "inner tile sizes {inner:?} must be one per band loop, each >= 2, smaller than \
             and dividing the outer size ({sizes:?})"
        )));
    }
    let band = transformable_band(l, m, cx.k)?;
    let vars: Vec<&str> = band.iter().map(|x| x.var.as_str()).collect();
    for x in &band {
        if x.step != 1 || !matches!(x.cmp, LoopCmp::Lt | LoopCmp::Le) {
            return Err(cx.na(format!(
                "loop '{}' is not an increasing unit-step loop",
                x.var
            )));
        }
    }
    let parallelogram = band.iter().any(|x| {
        vars.iter()
            .any(|v| x.init.mentions(v) || x.bound.mentions(v))
    });
    let ids: Vec<usize> = band.iter().map(|x| x.id).collect();
    if let Some(v) = band_vectors(cx.an, &ids)
        .into_iter()
        .find(|v| v.contains(&Dir::Gt))
    {
        return Err(cx.illegal(format!(
            "the band is not fully permutable: dependence {v:?}"
        )));
    }
    // The range each tile loop walks: the loop's own bounds on a rectangular band, the
    // bounding box of the band's iteration space otherwise.
    let ranges: Vec<(Expr, Expr)> = if parallelogram {
        bounding_box(&band)
            .map_err(|why| cx.na(format!("the band is not rectangular and {why}")))?
    } else {
        band.iter()
            .map(|x| (x.init.clone(), exclusive_end(x)))
            .collect()
    };
    let mut tiles = Vec::new();
    let mut seconds = Vec::new();
    let mut points = Vec::new();
    for (d, (x, size)) in band.iter().zip(sizes).enumerate() {
        let (lo, hi) = &ranges[d];
        let tvar = cx.fresh(&format!("{}_t", x.var));
        let mut t = header_of(x);
        t.var = tvar.clone();
        t.declares_var = true;
        t.step = *size;
        if parallelogram {
            t.init = lo.clone();
            t.cmp = LoopCmp::Lt;
            t.bound = hi.clone();
        }
        tiles.push(t);
        // Bounds that depend on outer band loops stay in force inside the tiles; the
        // others are the ends of the range the tile loop walks.
        let depends = |e: &Expr| vars.iter().any(|v| e.mentions(v));
        let (init_dep, bound_dep) = (depends(&x.init), depends(&x.bound));
        let clip = if bound_dep {
            exclusive_end(x)
        } else {
            hi.clone()
        };
        let tile_end = min_expr(plus(var(&tvar), *size), hi.clone());
        let (start, end) = match inner.get(d) {
            Some(&isize) => {
                let uvar = cx.fresh(&format!("{}_u", x.var));
                let mut u = header_of(x);
                u.var = uvar.clone();
                u.declares_var = true;
                u.init = var(&tvar);
                u.cmp = LoopCmp::Lt;
                u.bound = tile_end;
                u.step = isize;
                seconds.push(u);
                // Inner tiles never cross the outer tile's end (the sizes divide).
                (var(&uvar), min_expr(plus(var(&uvar), isize), clip))
            }
            None if bound_dep => (var(&tvar), min_expr(plus(var(&tvar), *size), clip)),
            None => (var(&tvar), tile_end),
        };
        let mut p = header_of(x);
        p.cmp = LoopCmp::Lt;
        p.init = if init_dep {
            max_expr(start, x.init.clone())
        } else {
            start
        };
        p.bound = end;
        points.push(p);
    }
    let body = band[m - 1].body.clone();
    tiles.extend(seconds);
    tiles.extend(points);
    *l = nest_headers(tiles, body);
    Ok(())
}

/// The bounding box `[lo, hi)` of each loop of a band whose bounds are affine in the
/// outer band variables: each bound with every outer variable replaced by the end of
/// its own box that minimizes (lower bounds) or maximizes (upper bounds) it.
fn bounding_box(band: &[&Loop]) -> Result<Vec<(Expr, Expr)>, String> {
    let vars: Vec<&str> = band.iter().map(|x| x.var.as_str()).collect();
    let mut boxes: Vec<(Affine, Affine)> = Vec::new();
    for (d, x) in band.iter().enumerate() {
        let outer = &vars[..d];
        let aff = |e: &Expr| -> Result<Affine, String> {
            affine_of(e, &|_| true).ok_or_else(|| {
                format!(
                    "the bounds of '{}' are not affine ({})",
                    x.var,
                    crate::print::expr(e)
                )
            })
        };
        let lo = aff(&x.init)?;
        let hi = aff(&exclusive_end(x))?;
        if let Some(v) = vars[d..]
            .iter()
            .find(|v| lo.coeff(v) != 0 || hi.coeff(v) != 0)
        {
            return Err(format!("the bounds of '{}' depend on '{v}'", x.var));
        }
        // Over the box of the outer variables: lo takes its minimum, hi its maximum
        // (hi is exclusive: the maximum of hi - 1, plus 1).
        let extreme = |a: &Affine, minimize: bool| -> Result<Affine, String> {
            let mut out = Affine::constant(a.constant);
            for (name, c) in &a.coeffs {
                let term = match outer.iter().position(|v| v == name) {
                    Some(k) => {
                        let (blo, bhi) = &boxes[k];
                        // Outer values range over [blo, bhi - 1].
                        let pick_low = (*c > 0) == minimize;
                        let end = if pick_low {
                            blo.clone()
                        } else {
                            bhi.sub(&Affine::constant(1)).ok_or("overflow")?
                        };
                        end.scale(*c).ok_or("overflow")?
                    }
                    None => Affine::var(name).scale(*c).ok_or("overflow")?,
                };
                out = out.add(&term).ok_or("overflow")?;
            }
            Ok(out)
        };
        boxes.push((extreme(&lo, true)?, extreme(&hi, false)?));
    }
    Ok(boxes
        .iter()
        .map(|(lo, hi)| (affine_expr(lo), affine_expr(hi)))
        .collect())
}

/// An affine form as a C expression (terms in name order, constant last).
fn affine_expr(a: &Affine) -> Expr {
    let mut out: Option<Expr> = None;
    for (name, c) in &a.coeffs {
        let mag = c.unsigned_abs() as i64;
        let term = if mag == 1 {
            var(name)
        } else {
            binary(BinOp::Mul, Expr::int(mag), var(name))
        };
        out = Some(match out {
            None if *c < 0 => Expr::Unary {
                op: crate::program::UnOp::Neg,
                arg: Box::new(term),
            },
            None => term,
            Some(e) if *c < 0 => binary(BinOp::Sub, e, term),
            Some(e) => binary(BinOp::Add, e, term),
        });
    }
    match out {
        None => Expr::int(a.constant),
        Some(e) => plus(e, a.constant),
    }
}

fn parallelize(
    l: &mut Loop,
    schedule: Schedule,
    chunk: Option<u32>,
    collapse: Option<u32>,
    inside_parallel: bool,
    cx: &Ctx,
) -> Result<(), Refusal> {
    if l.kind != LoopKind::Map {
        return Err(cx.illegal(format!(
            "loop '{}' is {}, not parallel",
            l.var,
            l.kind.verdict()
        )));
    }
    if inside_parallel
        || crate::program::loops(&l.body)
            .iter()
            .any(|x| has_pragma(x, "omp parallel"))
    {
        return Err(cx.na("nested parallel loops"));
    }
    // A loop directive must stand right before its `for`: one per loop.
    if !l.pragmas.is_empty() {
        return Err(cx.na(format!("loop '{}' already carries a directive", l.var)));
    }
    let mut p = String::from("#pragma omp parallel for");
    if let Some(n) = collapse {
        let n = n as usize;
        if n < 2 {
            return Err(cx.na(format!("collapse({n}) (need at least 2 loops)")));
        }
        let band = band_of(l, n).ok_or_else(|| {
            cx.na(format!(
                "no perfectly nested band of {n} loops at '{}' to collapse",
                l.var
            ))
        })?;
        check_pragma_free(&band[1..], cx.k)?;
        let vars: Vec<&str> = band.iter().map(|x| x.var.as_str()).collect();
        for x in &band {
            if x.kind != LoopKind::Map {
                return Err(cx.illegal(format!(
                    "loop '{}' of the collapsed band is {}, not parallel",
                    x.var,
                    x.kind.verdict()
                )));
            }
            if let Some(v) = vars
                .iter()
                .find(|v| x.init.mentions(v) || x.bound.mentions(v))
            {
                return Err(cx.na(format!(
                    "the collapsed band is not rectangular: the bounds of '{}' depend on '{v}'",
                    x.var
                )));
            }
        }
        p.push_str(&format!(" collapse({n})"));
    }
    p.push_str(&format!(
        " schedule({}{})",
        match schedule {
            Schedule::Static => "static",
            Schedule::Dynamic => "dynamic",
        },
        chunk.map_or(String::new(), |c| format!(", {c}"))
    ));
    let privates = written_outside_decls(l);
    if !privates.is_empty() {
        p.push_str(&format!(" lastprivate({})", privates.join(", ")));
    }
    l.pragmas.push(p);
    Ok(())
}

fn vectorize(l: &mut Loop, width: Option<u32>, cx: &Ctx) -> Result<(), Refusal> {
    if !crate::program::loops(&l.body).is_empty() {
        return Err(cx.na(format!("loop '{}' is not innermost", l.var)));
    }
    if l.kind != LoopKind::Map {
        return Err(cx.illegal(format!(
            "loop '{}' is {}, not parallel",
            l.var,
            l.kind.verdict()
        )));
    }
    if !l.pragmas.is_empty() {
        return Err(cx.na(format!("loop '{}' already carries a directive", l.var)));
    }
    let mut p = String::from("#pragma omp simd");
    if let Some(w) = width {
        if !(2..=64).contains(&w) || !w.is_power_of_two() {
            return Err(cx.na(format!("simd width {w} (a power of two in 2..=64)")));
        }
        p.push_str(&format!(" simdlen({w})"));
    }
    let privates = written_outside_decls(l);
    if !privates.is_empty() {
        p.push_str(&format!(" lastprivate({})", privates.join(", ")));
    }
    l.pragmas.push(p);
    Ok(())
}

/// How unroll-and-jam treats a node of a body it jams into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JamKind {
    /// A loop whose header is the same in every copy: the copies' bodies are jammed.
    Loop,
    /// A block: its contents are jammed (declarations are renamed per copy).
    Block,
    /// A conditional whose condition is the same in every copy: both branches jammed.
    If,
    /// Anything else: part of a run of nodes that is replicated copy after copy.
    Other,
}

fn jam_kind(n: &Node, v: &str, written: &BTreeSet<String>) -> JamKind {
    let free = |e: &Expr| !e.mentions(v) && !written.iter().any(|w| e.mentions(w));
    match n {
        Node::Loop(x) if x.var != v && x.pragmas.is_empty() && free(&x.init) && free(&x.bound) => {
            JamKind::Loop
        }
        Node::Block(_) => JamKind::Block,
        Node::If(i) if free(&i.cond) => JamKind::If,
        _ => JamKind::Other,
    }
}

/// Where a statement lands in the jammed body: per jammed level, the item index and
/// what the item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    Run,
    Block,
    Loop(usize),
    Then,
    Else,
}

fn jam_paths(
    body: &[Node],
    v: &str,
    written: &BTreeSet<String>,
    prefix: &mut Vec<(usize, Item)>,
    out: &mut HashMap<usize, Vec<(usize, Item)>>,
) {
    let mut next = 0;
    let mut run: Option<usize> = None;
    for n in body {
        let kind = jam_kind(n, v, written);
        if kind == JamKind::Other {
            let idx = match run {
                Some(r) => r,
                None => {
                    run = Some(next);
                    next += 1;
                    next - 1
                }
            };
            prefix.push((idx, Item::Run));
            for id in stmt_ids(n) {
                out.insert(id, prefix.clone());
            }
            prefix.pop();
            continue;
        }
        run = None;
        let idx = next;
        next += 1;
        match n {
            Node::Loop(x) => {
                prefix.push((idx, Item::Loop(x.id)));
                jam_paths(&x.body, v, written, prefix, out);
                prefix.pop();
            }
            Node::Block(b) => {
                prefix.push((idx, Item::Block));
                jam_paths(b, v, written, prefix, out);
                prefix.pop();
            }
            Node::If(i) => {
                prefix.push((idx, Item::Then));
                jam_paths(&i.then_body, v, written, prefix, out);
                prefix.pop();
                prefix.push((idx, Item::Else));
                jam_paths(&i.else_body, v, written, prefix, out);
                prefix.pop();
            }
            Node::Assign(_) | Node::Decl(_) => unreachable!("runs hold statements"),
        }
    }
}

/// Whether dependence `d` (carried by the unrolled loop, source in an earlier
/// iteration) has its sink before its source in the jammed order.
fn jam_reverses(d: &Dependence, source: &[(usize, Item)], sink: &[(usize, Item)]) -> bool {
    for (x, y) in source.iter().zip(sink) {
        if x.0 != y.0 {
            return x.0 > y.0;
        }
        match (x.1, y.1) {
            // The same run: copies run in iteration order.
            (Item::Run, Item::Run) => return false,
            (Item::Block, Item::Block) | (Item::Then, Item::Then) | (Item::Else, Item::Else) => {}
            // The condition is the same for all copies at the same jammed iterations:
            // no instance pair takes both branches.
            (Item::Then, Item::Else) | (Item::Else, Item::Then) => return false,
            (Item::Loop(id), Item::Loop(_)) => {
                match d
                    .loops
                    .iter()
                    .position(|l| *l == id)
                    .map(|q| d.directions[q])
                {
                    Some(Dir::Lt) => return false,
                    Some(Dir::Eq) => {}
                    Some(Dir::Gt) | None => return true,
                }
            }
            _ => return true,
        }
    }
    true
}

/// `d` is carried by loop `id`: `=` outside it, `<` at it.
fn carried_by(d: &Dependence, id: usize) -> bool {
    let Some(p) = d.loops.iter().position(|x| *x == id) else {
        return false;
    };
    d.directions[..p].iter().all(|x| *x == Dir::Eq) && d.directions[p] == Dir::Lt
}

fn unroll_jam(l: &mut Loop, factor: u32, cx: &mut Ctx) -> Result<(), Refusal> {
    if !(2..=16).contains(&factor) {
        return Err(cx.na(format!("unroll-and-jam factor {factor} (2..=16)")));
    }
    if l.step != 1 || !matches!(l.cmp, LoopCmp::Lt | LoopCmp::Le) {
        return Err(cx.na(format!(
            "loop '{}' is not an increasing unit-step loop",
            l.var
        )));
    }
    let inner = crate::program::loops(&l.body);
    let band: Vec<&Loop> = std::iter::once(&*l).chain(inner.iter().copied()).collect();
    check_pragma_free(&band, cx.k)?;
    if inner.iter().any(|x| x.var == l.var) {
        return Err(cx.na(format!("an inner loop reuses the variable '{}'", l.var)));
    }
    let written = crate::deps::written_names(&l.body);
    if let Some(w) = written
        .iter()
        .find(|w| l.init.mentions(w) || l.bound.mentions(w))
    {
        return Err(cx.na(format!(
            "the bounds of '{}' depend on '{w}', which the loop writes",
            l.var
        )));
    }
    let mut decls: Vec<(String, DType)> = Vec::new();
    let mut local_array = None;
    crate::program::walk_nodes(&l.body, &mut |n, _| {
        if let Node::Decl(d) = n {
            if !d.dims.is_empty() {
                local_array = Some(d.name.clone());
            } else if !decls.iter().any(|(x, _)| x == &d.name) {
                decls.push((d.name.clone(), d.dtype));
            }
        }
    });
    if let Some(a) = local_array {
        return Err(cx.na(format!("the loop declares the local array '{a}'")));
    }
    // Copies rename the loop's declarations: every use must be in a declaration's scope.
    let declared: BTreeSet<String> = decls.iter().map(|(n, _)| n.clone()).collect();
    if let Some(v) = used_out_of_scope(&l.body, &declared, &mut Vec::new()) {
        return Err(cx.na(format!(
            "'{v}' is declared inside the loop and also used outside that declaration"
        )));
    }

    // Legality: no dependence carried by the loop runs backwards in the jammed order.
    let mut paths = HashMap::new();
    jam_paths(&l.body, &l.var, &written, &mut Vec::new(), &mut paths);
    for d in &cx.an.deps {
        if !carried_by(d, l.id) {
            continue;
        }
        let (a, b) = (&cx.an.accesses[d.source], &cx.an.accesses[d.sink]);
        // Declared inside the loop: every copy gets its own variable.
        if a.private_in.contains(&l.id) || b.private_in.contains(&l.id) {
            continue;
        }
        match (paths.get(&a.stmt), paths.get(&b.stmt)) {
            (Some(pa), Some(pb)) => {
                if jam_reverses(d, pa, pb) {
                    return Err(cx.illegal(format!(
                        "dependence on '{}' with directions {:?} would run backwards once \
                         the copies of '{}' are jammed",
                        d.array, d.directions, l.var
                    )));
                }
            }
            _ => {
                return Err(cx.illegal(format!(
                    "dependence on '{}' through a condition, loop bound or declaration",
                    d.array
                )))
            }
        }
    }

    let f = factor as i64;
    let mut copies = Vec::new();
    for c in 0..f {
        let mut body = l.body.clone();
        if c > 0 {
            subst_nodes(&mut body, &l.var, &plus(var(&l.var), c));
            let mut renames = HashMap::new();
            for (name, dtype) in &decls {
                let new = cx.fresh(&format!("{name}_{c}"));
                cx.declare(&new, *dtype);
                renames.insert(name.clone(), new);
            }
            rename_nodes(&mut body, &renames);
        }
        copies.push(body);
    }
    let jammed = jam(&copies, &l.var, &written);
    let rvar = cx.fresh(&format!("{}_r", l.var));
    let mut rem = header_of(l);
    rem.var = rvar.clone();
    rem.declares_var = true;
    rem.init = var(&l.var);
    rem.body = l.body.clone();
    subst_nodes(&mut rem.body, &l.var, &var(&rvar));
    let guard = binary(cmp_op(l.cmp), plus(var(&l.var), f - 1), l.bound.clone());
    l.step = f;
    l.body = vec![Node::If(If {
        cond: guard,
        then_body: jammed,
        else_body: vec![Node::Loop(rem)],
        pos: l.pos,
    })];
    Ok(())
}

/// A name of `declared` that `body` uses where no declaration of it is in scope.
fn used_out_of_scope(
    body: &[Node],
    declared: &BTreeSet<String>,
    scope: &mut Vec<String>,
) -> Option<String> {
    let mark = scope.len();
    let mut found = None;
    let check = |e: &Expr, scope: &Vec<String>, found: &mut Option<String>| {
        e.walk(&mut |x| {
            if let Expr::Var(v) = x {
                if declared.contains(v) && !scope.contains(v) && found.is_none() {
                    *found = Some(v.clone());
                }
            }
        })
    };
    for n in body {
        match n {
            Node::Decl(d) => {
                d.dims
                    .iter()
                    .chain(&d.init)
                    .for_each(|e| check(e, scope, &mut found));
                scope.push(d.name.clone());
            }
            Node::Assign(a) => {
                check(&a.target, scope, &mut found);
                check(&a.value, scope, &mut found);
            }
            Node::If(i) => {
                check(&i.cond, scope, &mut found);
                found = found
                    .or_else(|| used_out_of_scope(&i.then_body, declared, scope))
                    .or_else(|| used_out_of_scope(&i.else_body, declared, scope));
            }
            Node::Block(b) => found = found.or_else(|| used_out_of_scope(b, declared, scope)),
            Node::Loop(l) => {
                check(&l.init, scope, &mut found);
                check(&l.bound, scope, &mut found);
                found = found.or_else(|| used_out_of_scope(&l.body, declared, scope));
            }
        }
        if found.is_some() {
            break;
        }
    }
    scope.truncate(mark);
    found
}

/// Merges copies of a body (same shape): loops, blocks and conditionals that are the
/// same in every copy are merged and their bodies jammed; runs of other nodes are
/// replicated, copy after copy.
fn jam(copies: &[Vec<Node>], v: &str, written: &BTreeSet<String>) -> Vec<Node> {
    let mut out = Vec::new();
    let mut run: Vec<usize> = Vec::new();
    let flush = |run: &mut Vec<usize>, out: &mut Vec<Node>| {
        for c in copies {
            out.extend(run.iter().map(|&i| c[i].clone()));
        }
        run.clear();
    };
    for (i, n) in copies[0].iter().enumerate() {
        let kind = jam_kind(n, v, written);
        if kind == JamKind::Other {
            run.push(i);
            continue;
        }
        flush(&mut run, &mut out);
        match n {
            Node::Loop(x) => {
                let bodies: Vec<Vec<Node>> = copies
                    .iter()
                    .map(|c| match &c[i] {
                        Node::Loop(y) => y.body.clone(),
                        _ => unreachable!("copies have the same shape"),
                    })
                    .collect();
                let mut h = header_of(x);
                h.body = jam(&bodies, v, written);
                out.push(Node::Loop(h));
            }
            Node::Block(_) => {
                let bodies: Vec<Vec<Node>> = copies
                    .iter()
                    .map(|c| match &c[i] {
                        Node::Block(b) => b.clone(),
                        _ => unreachable!("copies have the same shape"),
                    })
                    .collect();
                out.push(Node::Block(jam(&bodies, v, written)));
            }
            Node::If(x) => {
                let (mut thens, mut elses) = (Vec::new(), Vec::new());
                for c in copies {
                    match &c[i] {
                        Node::If(y) => {
                            thens.push(y.then_body.clone());
                            elses.push(y.else_body.clone());
                        }
                        _ => unreachable!("copies have the same shape"),
                    }
                }
                out.push(Node::If(If {
                    cond: x.cond.clone(),
                    then_body: jam(&thens, v, written),
                    else_body: jam(&elses, v, written),
                    pos: x.pos,
                }));
            }
            Node::Assign(_) | Node::Decl(_) => unreachable!("statements are in runs"),
        }
    }
    flush(&mut run, &mut out);
    out
}

fn scalar_replace(nest: &mut Loop, at: usize, cx: &mut Ctx) -> Result<(), Refusal> {
    if at == 0 {
        return Err(cx.na(
            "the nest's root has no enclosing body for the load and the store; \
             replace in an inner loop",
        ));
    }
    let l = loop_at(nest, at).expect("loop").clone();
    if has_pragma(&l, "omp") {
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
            } => a == array && *y != &x && !distinct(indices, idx),
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
fn written_decl_kind(body: &[Node], name: &str) -> Option<bool> {
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

fn collect_unconditional_targets(body: &[Node], f: &mut dyn FnMut(&Expr)) {
    for n in body {
        match n {
            Node::Assign(a) => f(&a.target),
            Node::Loop(l) => collect_unconditional_targets(&l.body, f),
            Node::Block(b) => collect_unconditional_targets(b, f),
            Node::If(_) | Node::Decl(_) => {}
        }
    }
}

/// Two subscript lists certainly name different elements: in some dimension they differ
/// by a non-zero constant.
fn distinct(a: &[Expr], b: &[Expr]) -> bool {
    a.iter().zip(b).any(
        |(x, y)| match (affine_of(x, &|_| true), affine_of(y, &|_| true)) {
            (Some(x), Some(y)) => x
                .sub(&y)
                .is_some_and(|d| d.is_constant() && d.constant != 0),
            _ => false,
        },
    )
}

fn runs_at_least_once(l: &Loop) -> bool {
    crate::canonical::trip_count(l, &crate::frontend::const_value).is_some_and(|n| n > 0)
}

fn fission(nest: &mut Loop, at: usize, cx: &mut Ctx) -> Result<(), Refusal> {
    if at == 0 {
        return Err(
            cx.na("the nest's root cannot be split (a nest is one loop); split an inner loop")
        );
    }
    let l = loop_at(nest, at).expect("loop").clone();
    check_pragma_free(&[&l], cx.k)?;
    let items = &l.body;
    if items.len() < 2 {
        return Err(cx.na(format!(
            "the body of loop '{}' is a single statement or loop",
            l.var
        )));
    }
    let written = crate::deps::written_names(&l.body);
    if let Some(w) = written
        .iter()
        .find(|w| l.init.mentions(w) || l.bound.mentions(w))
    {
        return Err(cx.na(format!(
            "the bounds of '{}' depend on '{w}', which the loop writes",
            l.var
        )));
    }
    let (stmt_item, loop_item) = item_maps(items, 0);
    let item_of = |a: &AccessRef| -> Option<usize> {
        if a.stmt != usize::MAX {
            stmt_item.get(&a.stmt).copied()
        } else {
            a.loops.iter().find_map(|id| loop_item.get(id).copied())
        }
    };
    // joined[i]: item i stays in the same loop as item i - 1.
    let mut joined = vec![false; items.len()];
    let join = |joined: &mut Vec<bool>, a: usize, b: usize| {
        for j in joined.iter_mut().take(b + 1).skip(a + 1) {
            *j = true;
        }
    };
    for (i, n) in items.iter().enumerate() {
        if let Node::Decl(d) = n {
            for (j, m) in items.iter().enumerate().skip(i + 1) {
                if node_mentions(m, &d.name) {
                    join(&mut joined, i, j);
                }
            }
        }
    }
    let mut why = None;
    for d in &cx.an.deps {
        if !carried_by(d, l.id) {
            continue;
        }
        let (a, b) = (&cx.an.accesses[d.source], &cx.an.accesses[d.sink]);
        match (item_of(a), item_of(b)) {
            (Some(x), Some(y)) if x > y => {
                join(&mut joined, y, x);
                why.get_or_insert(format!(
                    "dependence on '{}' with directions {:?} runs from part {x} back to part {y}",
                    d.array, d.directions
                ));
            }
            (Some(_), Some(_)) => {}
            _ => {
                join(&mut joined, 0, items.len() - 1);
                why.get_or_insert(format!(
                    "dependence on '{}' through a condition or loop bound",
                    d.array
                ));
            }
        }
    }
    let mut parts: Vec<Vec<Node>> = Vec::new();
    for (i, n) in items.iter().enumerate() {
        if i == 0 || !joined[i] {
            parts.push(Vec::new());
        }
        parts.last_mut().expect("a part").push(n.clone());
    }
    if parts.len() < 2 {
        return Err(match why {
            Some(w) => cx.illegal(w),
            None => cx.na("declarations tie the body together"),
        });
    }
    let loops: Vec<Node> = parts
        .into_iter()
        .map(|body| {
            let mut h = header_of(&l);
            h.body = body;
            Node::Loop(h)
        })
        .collect();
    let route = locate(nest, at).expect("loop");
    let (parent, idx) = parent_mut(nest, &route);
    parent.splice(idx..=idx, loops);
    Ok(())
}

/// Which top-level node of `items` each statement id and loop id belongs to.
fn item_maps(items: &[Node], offset: usize) -> (HashMap<usize, usize>, HashMap<usize, usize>) {
    let (mut stmts, mut loops) = (HashMap::new(), HashMap::new());
    for (i, n) in items.iter().enumerate() {
        for id in stmt_ids(n) {
            stmts.insert(id, i + offset);
        }
        for x in loops_of(n) {
            loops.insert(x, i + offset);
        }
    }
    (stmts, loops)
}

fn fuse(nest: &mut Loop, at: usize, cx: &mut Ctx) -> Result<Post, Refusal> {
    if at == 0 {
        return Err(cx.na("the nest's root has no next loop inside the nest"));
    }
    let route = locate(nest, at).expect("loop");
    let (parent, idx) = parent_mut(nest, &route);
    let (Node::Loop(a), Some(Node::Loop(b))) = (&parent[idx], parent.get(idx + 1)) else {
        return Err(cx.na("the node right after the loop is not a loop"));
    };
    let (a, b) = (a.clone(), b.clone());
    check_pragma_free(&[&a, &b], cx.k)?;
    if a.init != b.init
        || a.bound != b.bound
        || a.cmp != b.cmp
        || a.step != b.step
        || a.var_dtype != b.var_dtype
    {
        return Err(cx.na(format!(
            "loops '{}' and '{}' have different headers",
            a.var, b.var
        )));
    }
    if a.var != b.var && b.body.iter().any(|n| node_mentions(n, &a.var)) {
        return Err(cx.na(format!(
            "the second loop uses '{}', the first loop's variable",
            a.var
        )));
    }
    let mut written = crate::deps::written_names(&a.body);
    written.extend(crate::deps::written_names(&b.body));
    if let Some(w) = written
        .iter()
        .find(|w| a.init.mentions(w) || a.bound.mentions(w))
    {
        return Err(cx.na(format!(
            "the loop bounds depend on '{w}', which the loops write"
        )));
    }
    for n in &a.body {
        if let Node::Decl(d) = n {
            let redeclared = b
                .body
                .iter()
                .any(|m| matches!(m, Node::Decl(e) if e.name == d.name));
            if redeclared || b.body.iter().any(|m| node_mentions(m, &d.name)) {
                return Err(cx.na(format!(
                    "the first loop declares '{}', which the second uses",
                    d.name
                )));
            }
        }
    }
    let split = a.body.len();
    let mut fused = a;
    let mut rest = b.body;
    if b.var != fused.var {
        subst_nodes(&mut rest, &b.var, &var(&fused.var));
    }
    fused.body.extend(rest);
    parent[idx] = Node::Loop(fused);
    parent.remove(idx + 1);
    Ok(Post::Fuse { at, split })
}

/// Fusion is legal when no dependence of the fused loop runs from the second loop's
/// part to a later iteration of the first loop's part (originally the other way).
fn check_fusion(
    nest: &Loop,
    at: usize,
    split: usize,
    an: &Analysis,
    k: usize,
) -> Result<(), Refusal> {
    let f = loop_at(nest, at).expect("fused loop");
    let (stmt_item, loop_item) = item_maps(&f.body, 0);
    let part_of = |a: &AccessRef| -> Option<bool> {
        let item = if a.stmt != usize::MAX {
            stmt_item.get(&a.stmt).copied()
        } else {
            a.loops.iter().find_map(|id| loop_item.get(id).copied())
        };
        item.map(|i| i >= split)
    };
    for d in &an.deps {
        if !carried_by(d, f.id) {
            continue;
        }
        let (a, b) = (&an.accesses[d.source], &an.accesses[d.sink]);
        if a.private_in.contains(&f.id) && b.private_in.contains(&f.id) {
            continue;
        }
        let why = match (part_of(a), part_of(b)) {
            (Some(true), Some(false)) => format!(
                "dependence on '{}' from the first loop to an earlier iteration of the \
                 second would run backwards",
                d.array
            ),
            (Some(_), Some(_)) => continue,
            _ => format!(
                "dependence on '{}' through a condition or loop bound",
                d.array
            ),
        };
        return Err(Refusal::Illegal { step: k, why });
    }
    Ok(())
}

fn skew(l: &mut Loop, factor: i64, cx: &mut Ctx) -> Result<(), Refusal> {
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

/// The `n` of a `collapse(n)` clause.
fn collapse_of(l: &Loop) -> Option<usize> {
    l.pragmas.iter().find_map(|p| {
        let rest = &p[p.find("collapse(")? + "collapse(".len()..];
        rest[..rest.find(')')?].trim().parse().ok()
    })
}

/// The variable of the loop whose `collapse` band strictly contains loop `at`.
fn collapsed_into(root: &Loop, at: usize) -> Option<String> {
    let route = locate(root, at)?;
    let mut chain = vec![root];
    let mut body = &root.body;
    for (i, via) in &route {
        match (&body[*i], via) {
            (Node::Loop(l), _) => {
                chain.push(l);
                body = &l.body;
            }
            (Node::Block(b), _) => body = b,
            (Node::If(x), Via::Then) => body = &x.then_body,
            (Node::If(x), _) => body = &x.else_body,
            _ => return None,
        }
    }
    // chain ends with the loop itself; its ancestors before it.
    let depth = chain.len() - 1;
    chain[..depth].iter().enumerate().find_map(|(d, a)| {
        collapse_of(a)
            .filter(|n| depth - d < *n)
            .map(|_| a.var.clone())
    })
}

/// Whether a loop strictly enclosing preorder position `at` carries `what`.
fn ancestors_have_pragma(root: &Loop, at: usize, what: &str) -> bool {
    let Some(route) = locate(root, at) else {
        return false;
    };
    let mut above = has_pragma(root, what) && at != 0;
    let mut body = &root.body;
    for (k, (i, via)) in route.iter().enumerate() {
        let last = k + 1 == route.len();
        match (&body[*i], via) {
            (Node::Loop(l), _) => {
                if !last {
                    above |= has_pragma(l, what);
                }
                body = &l.body;
            }
            (Node::Block(b), _) => body = b,
            (Node::If(x), Via::Then) => body = &x.then_body,
            (Node::If(x), _) => body = &x.else_body,
            _ => return false,
        }
    }
    above
}

/// How a route enters a node: a loop's or block's body, or a branch of an `if`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    Body,
    Then,
    Else,
}

/// The route from `root`'s body to the loop at preorder position `at` (>= 1): per
/// level, the node's index and how to enter it; the last entry is the loop itself.
/// Empty for the root.
fn locate(root: &Loop, at: usize) -> Option<Vec<(usize, Via)>> {
    fn go(body: &[Node], at: usize, counter: &mut usize, route: &mut Vec<(usize, Via)>) -> bool {
        for (i, n) in body.iter().enumerate() {
            match n {
                Node::Loop(l) => {
                    route.push((i, Via::Body));
                    if *counter == at {
                        return true;
                    }
                    *counter += 1;
                    if go(&l.body, at, counter, route) {
                        return true;
                    }
                    route.pop();
                }
                Node::Block(b) => {
                    route.push((i, Via::Body));
                    if go(b, at, counter, route) {
                        return true;
                    }
                    route.pop();
                }
                Node::If(x) => {
                    route.push((i, Via::Then));
                    if go(&x.then_body, at, counter, route) {
                        return true;
                    }
                    route.pop();
                    route.push((i, Via::Else));
                    if go(&x.else_body, at, counter, route) {
                        return true;
                    }
                    route.pop();
                }
                Node::Assign(_) | Node::Decl(_) => {}
            }
        }
        false
    }
    if at == 0 {
        return Some(Vec::new());
    }
    let mut route = Vec::new();
    go(&root.body, at, &mut 1, &mut route).then_some(route)
}

/// The body that holds the loop a (non-empty) route leads to, and its index there.
fn parent_mut<'a>(root: &'a mut Loop, route: &[(usize, Via)]) -> (&'a mut Vec<Node>, usize) {
    let (last, inner) = route.split_last().expect("not the root");
    let mut body = &mut root.body;
    for (i, via) in inner {
        body = match (&mut body[*i], via) {
            (Node::Loop(l), _) => &mut l.body,
            (Node::Block(b), _) => b,
            (Node::If(x), Via::Then) => &mut x.then_body,
            (Node::If(x), _) => &mut x.else_body,
            _ => unreachable!("routes lead through containers"),
        };
    }
    (body, last.0)
}

/// The loop at preorder position `at` (0 = `root`).
fn loop_at(root: &Loop, at: usize) -> Option<&Loop> {
    if at == 0 {
        return Some(root);
    }
    crate::program::loops(&root.body).get(at - 1).copied()
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

fn var(name: &str) -> Expr {
    Expr::Var(name.to_string())
}

fn binary(op: BinOp, lhs: Expr, rhs: Expr) -> Expr {
    Expr::Binary {
        op,
        lhs: Box::new(lhs),
        rhs: Box::new(rhs),
    }
}

/// `e + c` (`e - |c|` for negative `c`, `e` for zero).
fn plus(e: Expr, c: i64) -> Expr {
    match c {
        0 => e,
        c if c > 0 => binary(BinOp::Add, e, Expr::int(c)),
        c => binary(BinOp::Sub, e, Expr::int(-c)),
    }
}

/// `e + factor * t` (`e - |factor| * t` for negative factors; no `1 *`).
fn add_scaled(e: Expr, factor: i64, t: &str) -> Expr {
    let mag = factor.unsigned_abs() as i64;
    let term = if mag == 1 {
        var(t)
    } else {
        binary(BinOp::Mul, Expr::int(mag), var(t))
    };
    binary(if factor < 0 { BinOp::Sub } else { BinOp::Add }, e, term)
}

/// `a < b ? a : b`
fn min_expr(a: Expr, b: Expr) -> Expr {
    Expr::Ternary {
        cond: Box::new(binary(BinOp::Lt, a.clone(), b.clone())),
        then: Box::new(a),
        other: Box::new(b),
    }
}

/// `a < b ? b : a`
fn max_expr(a: Expr, b: Expr) -> Expr {
    Expr::Ternary {
        cond: Box::new(binary(BinOp::Lt, a.clone(), b.clone())),
        then: Box::new(b),
        other: Box::new(a),
    }
}

fn cmp_op(c: LoopCmp) -> BinOp {
    match c {
        LoopCmp::Lt => BinOp::Lt,
        LoopCmp::Le => BinOp::Le,
        LoopCmp::Gt => BinOp::Gt,
        LoopCmp::Ge => BinOp::Ge,
    }
}

fn assign(target: Expr, value: Expr, pos: crate::program::Pos) -> Node {
    Node::Assign(Assign {
        id: 0,
        target,
        op: AssignOp::Set,
        value,
        pos,
    })
}

/// Ids of the statements in a node.
fn stmt_ids(n: &Node) -> Vec<usize> {
    let mut out = Vec::new();
    crate::program::walk_nodes(std::slice::from_ref(n), &mut |x, _| {
        if let Node::Assign(a) = x {
            out.push(a.id);
        }
    });
    out
}

/// Ids of the loops in a node (itself included).
fn loops_of(n: &Node) -> Vec<usize> {
    crate::program::loops(std::slice::from_ref(n))
        .iter()
        .map(|l| l.id)
        .collect()
}

fn node_mentions(n: &Node, name: &str) -> bool {
    let mut found = false;
    for_each_expr(std::slice::from_ref(n), &mut |e| found |= e.mentions(name));
    found
}

/// Calls `f` on every top-level expression of a body (statements, declarations,
/// conditions, loop headers), recursively.
fn for_each_expr(body: &[Node], f: &mut dyn FnMut(&Expr)) {
    for n in body {
        match n {
            Node::Assign(a) => {
                f(&a.target);
                f(&a.value);
            }
            Node::Decl(d) => {
                d.dims.iter().for_each(&mut *f);
                if let Some(e) = &d.init {
                    f(e);
                }
            }
            Node::If(i) => {
                f(&i.cond);
                for_each_expr(&i.then_body, f);
                for_each_expr(&i.else_body, f);
            }
            Node::Block(b) => for_each_expr(b, f),
            Node::Loop(l) => {
                f(&l.init);
                f(&l.bound);
                for_each_expr(&l.body, f);
            }
        }
    }
}

/// Replaces, bottom-up where `f` declines, every sub-expression for which `f` gives a
/// replacement.
fn rewrite(e: &mut Expr, f: &mut dyn FnMut(&Expr) -> Option<Expr>) {
    if let Some(new) = f(e) {
        *e = new;
        return;
    }
    match e {
        Expr::Int { .. } | Expr::Float { .. } | Expr::Var(_) => {}
        Expr::Access { indices, .. } => indices.iter_mut().for_each(|x| rewrite(x, f)),
        Expr::Unary { arg, .. } | Expr::Cast { arg, .. } => rewrite(arg, f),
        Expr::Binary { lhs, rhs, .. } => {
            rewrite(lhs, f);
            rewrite(rhs, f);
        }
        Expr::Ternary { cond, then, other } => {
            rewrite(cond, f);
            rewrite(then, f);
            rewrite(other, f);
        }
        Expr::Call { args, .. } => args.iter_mut().for_each(|x| rewrite(x, f)),
    }
}

fn rewrite_nodes(body: &mut [Node], f: &mut dyn FnMut(&Expr) -> Option<Expr>) {
    for n in body {
        match n {
            Node::Assign(a) => {
                rewrite(&mut a.target, f);
                rewrite(&mut a.value, f);
            }
            Node::Decl(d) => {
                d.dims.iter_mut().for_each(|x| rewrite(x, f));
                if let Some(e) = &mut d.init {
                    rewrite(e, f);
                }
            }
            Node::If(i) => {
                rewrite(&mut i.cond, f);
                rewrite_nodes(&mut i.then_body, f);
                rewrite_nodes(&mut i.else_body, f);
            }
            Node::Block(b) => rewrite_nodes(b, f),
            Node::Loop(l) => {
                rewrite(&mut l.init, f);
                rewrite(&mut l.bound, f);
                rewrite_nodes(&mut l.body, f);
            }
        }
    }
}

/// Replaces the variable `name` by `with` everywhere in `body`.
fn subst_nodes(body: &mut [Node], name: &str, with: &Expr) {
    rewrite_nodes(body, &mut |e| {
        matches!(e, Expr::Var(v) if v == name).then(|| with.clone())
    });
}

/// Renames declared scalars (declarations and uses).
fn rename_nodes(body: &mut [Node], renames: &HashMap<String, String>) {
    rewrite_nodes(body, &mut |e| match e {
        Expr::Var(v) => renames.get(v).map(|n| var(n)),
        _ => None,
    });
    fn decls(body: &mut [Node], renames: &HashMap<String, String>) {
        for n in body {
            match n {
                Node::Decl(d) => {
                    if let Some(new) = renames.get(&d.name) {
                        d.name = new.clone();
                    }
                }
                Node::If(i) => {
                    decls(&mut i.then_body, renames);
                    decls(&mut i.else_body, renames);
                }
                Node::Block(b) => decls(b, renames),
                Node::Loop(l) => decls(&mut l.body, renames),
                Node::Assign(_) => {}
            }
        }
    }
    decls(body, renames);
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

/// Statement ids in source order again, after a transformation copied statements.
fn renumber_statements(body: &mut [Node]) {
    fn go(body: &mut [Node], next: &mut usize) {
        for n in body {
            match n {
                Node::Assign(a) => {
                    a.id = *next;
                    *next += 1;
                }
                Node::Loop(l) => go(&mut l.body, next),
                Node::If(i) => {
                    go(&mut i.then_body, next);
                    go(&mut i.else_body, next);
                }
                Node::Block(b) => go(b, next),
                Node::Decl(_) => {}
            }
        }
    }
    go(body, &mut 0);
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
        crate::program::walk_nodes(&r.body, &mut |n, _| {
            if let Node::Decl(d) = n {
                s.insert(d.name.clone());
            }
        });
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
                    inner: vec![],
                },
                Step::Parallelize {
                    at: 0,
                    schedule: Schedule::Static,
                    chunk: None,
                    collapse: None,
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

    #[test]
    fn new_steps_have_a_stable_json_form() {
        let r = Recipe {
            steps: vec![
                Step::Tile {
                    at: 0,
                    sizes: vec![64, 64],
                    inner: vec![16, 8],
                },
                Step::Parallelize {
                    at: 0,
                    schedule: Schedule::Dynamic,
                    chunk: Some(2),
                    collapse: Some(2),
                },
                Step::Vectorize {
                    at: 5,
                    width: Some(4),
                },
                Step::UnrollJam { at: 1, factor: 4 },
                Step::ScalarReplace { at: 2 },
                Step::Fission { at: 1 },
                Step::Fuse { at: 1 },
                Step::Skew { at: 0, factor: 2 },
            ],
        };
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(
            text,
            concat!(
                r#"{"steps":[{"step":"tile","at":0,"sizes":[64,64],"inner":[16,8]},"#,
                r#"{"step":"parallelize","at":0,"schedule":"dynamic","chunk":2,"collapse":2},"#,
                r#"{"step":"vectorize","at":5,"width":4},"#,
                r#"{"step":"unroll_jam","at":1,"factor":4},"#,
                r#"{"step":"scalar_replace","at":2},"#,
                r#"{"step":"fission","at":1},{"step":"fuse","at":1},"#,
                r#"{"step":"skew","at":0,"factor":2}]}"#
            )
        );
        assert_eq!(serde_json::from_str::<Recipe>(&text).unwrap(), r);
        // Old recipes (no new fields) still read.
        let old: Step = serde_json::from_str(r#"{"step":"vectorize","at":2}"#).unwrap();
        assert_eq!(old, Step::Vectorize { at: 2, width: None });
        assert!(r
            .steps
            .iter()
            .zip([0, 0, 5, 1, 2, 1, 1, 0])
            .all(|(s, at)| s.at() == at));
    }

    #[test]
    fn collapse_clauses_are_read_back() {
        let mut l = Loop {
            id: 0,
            var: "i".into(),
            var_dtype: DType::I32,
            declares_var: true,
            init: Expr::int(0),
            cmp: LoopCmp::Lt,
            bound: Expr::int(4),
            step: 1,
            kind: LoopKind::Map,
            body: Vec::new(),
            pos: Default::default(),
            pragmas: vec!["#pragma omp parallel for collapse(3) schedule(static)".into()],
        };
        assert_eq!(collapse_of(&l), Some(3));
        l.pragmas = vec!["#pragma omp simd".into()];
        assert_eq!(collapse_of(&l), None);
    }

    #[test]
    fn bounding_boxes_of_skewed_bands() {
        // for t in [0, T) { for i in [1 + 2t, n - 1 + 2t) }: i's box is [1, n - 1 + 2(T-1)).
        let t = Loop {
            id: 0,
            var: "t".into(),
            var_dtype: DType::I32,
            declares_var: true,
            init: Expr::int(0),
            cmp: LoopCmp::Lt,
            bound: var("T"),
            step: 1,
            kind: LoopKind::Loop,
            body: Vec::new(),
            pos: Default::default(),
            pragmas: Vec::new(),
        };
        let mut i = t.clone();
        i.var = "i".into();
        i.init = add_scaled(Expr::int(1), 2, "t");
        i.bound = add_scaled(plus(var("n"), -1), 2, "t");
        let b = bounding_box(&[&t, &i]).unwrap();
        assert_eq!(crate::print::expr(&b[0].0), "0");
        assert_eq!(crate::print::expr(&b[0].1), "T");
        assert_eq!(crate::print::expr(&b[1].0), "1");
        assert_eq!(crate::print::expr(&b[1].1), "2 * T + n - 3");
    }
}
