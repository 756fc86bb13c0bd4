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
//! - vectorization (`omp simd`, optionally `simdlen`): an innermost map, or an
//!   innermost reduction whose carried dependences all run between the parts of
//!   `x op= e` statements on scalars (`reduction(op:x)`: one partial result per lane);
//! - unrolling: always legal (a hint to the compiler);
//! - unroll-and-jam of loop `v` by `f`: the copies `v, v+1, .., v+f-1` of the body are
//!   merged into every inner loop whose header does not depend on `v` (the jammed
//!   loops); legal when no dependence carried by `v` runs, in the jammed order,
//!   backwards: its first non-`=` component over the jammed loops is not `>`, and where
//!   all are `=` its source does not come textually after its sink (unless both are in
//!   the same replicated run of statements). For a perfect band this is the classic
//!   condition (moving `v` innermost is legal);
//! - scalar replacement: always order-preserving; refused when another access of the
//!   array in the loop may be the same element (apart: a subscript differs by a
//!   non-zero constant, or by a difference that keeps one sign over the loop's range,
//!   `scalar_replace::apart`, which the fold asks over all the loops around it);
//! - fission: no dependence carried by the loop runs from a later part to an earlier
//!   one (parts that such a dependence links stay together);
//! - fusion: no dependence between the two loops becomes backwards (re-analysed on the
//!   fused loop);
//! - folding a scalar accumulator into its element (`w = X; loop; X = f(w)` into
//!   `loop; X = f(X)`): the same operations in the same order; refused when another
//!   access of the array in the loop may be the element (apart over the ranges of the
//!   loops around it), or when a read of the scalar may see what it held
//!   (`transform/fold_scalar.rs`);
//! - skewing: always legal (it renames iterations, the order stays);
//! - interchange of a triangle (`j { k < j { S }; T }` into `k { T; j > k { S } }`): no
//!   dependence `<` on `j` and `>` on `k` between the `S`, and no `T(j1)` that may
//!   touch an element of an `S(j2, k2)` with `j1 < j2` and `k2 < j1` (asked of the
//!   dependence system under those conditions).
//!
//! A loop carries at most one directive (C wants each right before its `for`): a second
//! directive on the same loop is refused, except that a new unroll factor replaces the
//! old one. Loops inside an `omp ... collapse(n)` band are left alone.

use crate::affine::{affine_of, Affine};
use crate::codegen::written_outside_decls;
use crate::deps::{analyze, AccessRef, Analysis, Dependence, Dir, RedOp};
use crate::program::{
    Array, Assign, AssignOp, BinOp, DType, Decl, Directive, Expr, If, Loop, LoopCmp, LoopKind,
    Node, Program, ReductionItem, Scalar, ScalarOrigin,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};

mod band;
pub mod compose;
mod fission;
mod fold_scalar;
mod fuse;
mod interchange;
mod parallel;
mod privatize;
pub(crate) mod register_tile;
pub(crate) mod rewrite;
mod scalar_replace;
mod simd;
mod skew;
mod tile;
pub(crate) mod time_tile;
mod triangle;
mod unroll_jam;

use band::*;
use fission::*;
use fold_scalar::*;
use fuse::*;
use interchange::*;
use parallel::*;
use privatize::*;
use register_tile::*;
use rewrite::*;
use scalar_replace::*;
use simd::*;
use skew::*;
use tile::*;
use triangle::*;
use unroll_jam::*;

pub use crate::program::Schedule;
pub use register_tile::{sites as register_tile_sites, Site as RegisterTileSite};
pub use time_tile::{site as time_tile_site, Site as TimeTileSite};

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
    /// Folds the scalar accumulators of loop `at`'s body into the array elements they
    /// are stored to: `w = X; loop { w -= e } X = f(w);` into `loop { X -= e } X = f(X);`
    /// (`transform/fold_scalar.rs`).
    FoldScalar { at: usize },
    /// Distributes loop `at` over the top-level statements and loops of its body.
    Fission { at: usize },
    /// Fuses loop `at` with the loop right after it (same header).
    Fuse { at: usize },
    /// Skews the loop right inside loop `at` (a perfect band of two): its variable
    /// becomes `i + factor * t` for the outer variable `t`.
    Skew { at: usize, factor: i64 },
    /// Interchanges loop `at` (`j`) with the loop that opens its body (`k`, from `j`'s
    /// start up to `j`), the statements after that loop moved to the diagonal `k = j`
    /// (`transform/triangle.rs`).
    InterchangeTriangle { at: usize },
    /// Prints the band of three loops at `at` (`W[u][v] += P(u, r) * Q(r, v)`) as a
    /// kernel over an `mr x nr` vector register tile, with packed panels and cache
    /// blocks of `mc` rows, `kc` reduction steps and `nc` columns; with `parallel`, one
    /// OpenMP team over the row blocks (`transform/register_tile.rs`).
    RegisterTile {
        at: usize,
        mr: u32,
        nr: u32,
        mc: u32,
        kc: u32,
        nc: u32,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        parallel: bool,
    },
    /// Prints the time loop at `at` (its body a sequence of sweeps over rows) as blocks
    /// of `depth` steps whose sweeps' rows are cut into tiles of `width` rows, skewed
    /// so that each tile runs every step of its block; with `parallel`, one OpenMP team
    /// around the loop shares each parallel sweep's rows (`transform/time_tile.rs`).
    TimeTile {
        at: usize,
        width: u32,
        depth: u32,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        parallel: bool,
    },
}

impl Step {
    /// The step's kind as recipes spell it (`tile`, `unroll_jam`, ...).
    pub fn kind(&self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.get("step")?.as_str().map(str::to_string))
            .unwrap_or_default()
    }

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
            | Step::FoldScalar { at }
            | Step::Fission { at }
            | Step::Fuse { at }
            | Step::InterchangeTriangle { at }
            | Step::RegisterTile { at, .. }
            | Step::TimeTile { at, .. }
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
            | Step::FoldScalar { at: a }
            | Step::Fission { at: a }
            | Step::Fuse { at: a }
            | Step::InterchangeTriangle { at: a }
            | Step::RegisterTile { at: a, .. }
            | Step::TimeTile { at: a, .. }
            | Step::Skew { at: a, .. } => *a = at,
        }
        s
    }

    /// Whether the step starts an OpenMP team where the nest had none.
    pub fn starts_team(&self) -> bool {
        match self {
            Step::Parallelize { .. } => true,
            Step::RegisterTile { parallel, .. } | Step::TimeTile { parallel, .. } => *parallel,
            _ => false,
        }
    }

    /// The step run by one thread: a register or time tile without its team, no
    /// parallel loop (None); any other step as it is. The loops are the same either
    /// way, so the steps after it still find theirs.
    pub fn serial(&self) -> Option<Step> {
        match self {
            Step::Parallelize { .. } => None,
            Step::RegisterTile { .. } | Step::TimeTile { .. } => {
                let mut s = self.clone();
                if let Step::RegisterTile { parallel, .. } | Step::TimeTile { parallel, .. } =
                    &mut s
                {
                    *parallel = false;
                }
                Some(s)
            }
            _ => Some(self.clone()),
        }
    }
}

/// A sequence of steps applied in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recipe {
    pub steps: Vec<Step>,
}

impl Recipe {
    /// Whether a step of the recipe starts an OpenMP team ([`Step::starts_team`]).
    pub fn starts_team(&self) -> bool {
        self.steps.iter().any(Step::starts_team)
    }
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
        // The program the analysis describes, for steps that ask the dependence
        // system more than the direction vectors.
        let snapshot = matches!(
            step,
            Step::InterchangeTriangle { .. } | Step::FoldScalar { .. }
        )
        .then(|| prog.clone());
        let Program {
            arrays,
            scalars,
            regions,
            ..
        } = &mut prog;
        let mut cx = Ctx {
            k,
            an: &analysis_now,
            names,
            arrays,
            scalars,
            new_scalars: Vec::new(),
            new_arrays: Vec::new(),
            before: snapshot.as_ref().map(|p| (p, region)),
        };
        let nest = loop_at_path_mut(&mut regions[region].body, &path);
        let post = apply_step(nest, step, &mut cx)?;
        let new_scalars = cx.new_scalars;
        let new_arrays = cx.new_arrays;
        prog.scalars.extend(new_scalars);
        prog.arrays.extend(new_arrays);
        openmp |= matches!(
            step,
            Step::Parallelize { .. }
                | Step::Vectorize { .. }
                | Step::RegisterTile { parallel: true, .. }
                | Step::TimeTile { parallel: true, .. }
        );
        renumber(&mut prog.regions[region].body);
        renumber_statements(&mut prog.regions[region].body);
        let mut analyses = crate::deps::annotate(&mut prog);
        if let Some(Post::Fuse { at, split }) = post {
            let nest = loop_at_path_mut(&mut prog.regions[region].body, &path);
            check_fusion(nest, at, split, &analyses[region], k)?;
        }
        analysis = Some(analyses.swap_remove(region));
        debug_assert!(
            crate::verify::verify(&prog).is_empty(),
            "step {k} ({step:?}) left an IR the verifier refuses: {:?}",
            crate::verify::verify(&prog)
        );
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
    scalars: &'a [Scalar],
    /// Local scalars the step declares.
    new_scalars: Vec<Scalar>,
    /// Local arrays the step declares.
    new_arrays: Vec<Array>,
    /// The program (and the nest's region) as the analysis saw it, where a step needs it.
    before: Option<(&'a Program, usize)>,
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
    if let Some((kernel, head)) = register_tiled_into(nest, at) {
        return Err(cx.na(format!("the loop is part of the {kernel} of loop '{head}'")));
    }
    if let Some(head) = collapsed_into(nest, at) {
        return Err(cx.na(format!(
            "the loop is part of the OpenMP collapse band of loop '{head}'"
        )));
    }
    let inside_parallel = ancestors_have(nest, at, Loop::is_parallel_for);
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
            parallelize(
                l,
                *schedule,
                *chunk,
                *collapse,
                inside_parallel,
                at == 0,
                cx,
            )?
        }
        Step::Vectorize { width, .. } => {
            vectorize(loop_at_mut(nest, at).expect("loop"), *width, cx)?
        }
        Step::Unroll { factor, .. } => {
            let l = loop_at_mut(nest, at).expect("loop");
            if !(2..=64).contains(factor) {
                return Err(cx.na(format!("unroll factor {factor} (2..=64)")));
            }
            if l.has_openmp() {
                return Err(cx.na(format!("loop '{}' carries an OpenMP directive", l.var)));
            }
            l.directives = vec![Directive::GccUnroll { factor: *factor }];
        }
        Step::UnrollJam { factor, .. } => {
            unroll_jam(loop_at_mut(nest, at).expect("loop"), *factor, cx)?
        }
        Step::ScalarReplace { .. } => scalar_replace(nest, at, cx)?,
        Step::FoldScalar { .. } => fold_scalar(nest, at, cx)?,
        Step::Fission { .. } => fission(nest, at, cx)?,
        Step::Fuse { .. } => return fuse(nest, at, cx).map(Some),
        Step::Skew { factor, .. } => skew(loop_at_mut(nest, at).expect("loop"), *factor, cx)?,
        Step::InterchangeTriangle { .. } => interchange_triangle(nest, at, cx)?,
        Step::RegisterTile {
            mr,
            nr,
            mc,
            kc,
            nc,
            parallel,
            ..
        } => {
            let spec = crate::program::RegisterTileSpec {
                mr: *mr,
                nr: *nr,
                mc: *mc,
                kc: *kc,
                nc: *nc,
                parallel: *parallel,
                dtype: DType::F64,
            };
            register_tile(nest, at, spec, inside_parallel, cx)?
        }
        Step::TimeTile {
            width,
            depth,
            parallel,
            ..
        } => {
            let spec = crate::program::TimeTileSpec {
                width: *width,
                depth: *depth,
                parallel: *parallel,
                skew: 0,
                reach: 0,
                sweeps: Vec::new(),
            };
            time_tile::time_tile(nest, at, spec, inside_parallel, cx)?
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_on_one_thread_keeps_its_loops_and_drops_its_team() {
        let par = Step::Parallelize {
            at: 0,
            schedule: Schedule::Static,
            chunk: None,
            collapse: None,
        };
        assert_eq!(par.serial(), None);
        let tile = |parallel| Step::RegisterTile {
            at: 0,
            mr: 8,
            nr: 16,
            mc: 240,
            kc: 256,
            nc: 2048,
            parallel,
        };
        let one = tile(true).serial().unwrap();
        assert!(!one.starts_team());
        assert_eq!(one, tile(false));
        let time = Step::TimeTile {
            at: 1,
            width: 32,
            depth: 4,
            parallel: true,
        };
        assert!(!time.serial().unwrap().starts_team());
        let unroll = Step::Unroll { at: 2, factor: 4 };
        assert_eq!(unroll.serial(), Some(unroll));
    }

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
            end: Default::default(),
            directives: vec![Directive::OmpParallelFor {
                collapse: Some(3),
                schedule: Some(Schedule::Static),
                chunk: None,
                lastprivate: Vec::new(),
                reduction: Vec::new(),
            }],
            private_arrays: Vec::new(),
        };
        assert_eq!(l.collapse(), Some(3));
        l.directives = vec![Directive::OmpSimd {
            simdlen: None,
            lastprivate: Vec::new(),
            reduction: Vec::new(),
        }];
        assert_eq!(l.collapse(), None);
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
            end: Default::default(),
            directives: Vec::new(),
            private_arrays: Vec::new(),
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
