//! The staged space: a recipe is built stage by stage (fission, interchange, tiling,
//! parallelization, unroll-and-jam with scalar replacement, vectorization and
//! unrolling), each stage taken with a fixed probability and each step kept only when
//! it applies legally to the nest as transformed so far. The space the database was
//! built from. A nest with a band that accumulates a product may instead become a
//! vector register tile over packed panels, sized for the CPU here
//! ([`crate::sizing`]), which replaces the band and ends the recipe; a time loop of
//! sweeps over rows may instead become time tiles, which end it too.

use super::Space;
use crate::rng::Rng;
use crate::target::{bands, innermost, preorder, Target};
use ir::program::{Loop, LoopKind, Node, Program};
use ir::transform::{apply, Recipe, Schedule, Step};

/// Tile sizes the stages draw from.
pub const TILE_SIZES: [i64; 5] = [8, 16, 32, 64, 128];

/// The staged space (see the module documentation).
#[derive(Debug, Clone, Copy, Default)]
pub struct StagedSpace;

impl Space for StagedSpace {
    fn sample(&self, t: Target, rng: &mut Rng) -> Recipe {
        sample(t, rng)
    }

    fn enumerate(&self, _: Target, _: usize) -> Option<Vec<Recipe>> {
        None
    }
}

/// One random recipe, built stage by stage on the nest as transformed so far; every
/// step kept is legal. Each stage draws from `rng` in a fixed order, so a seed gives
/// one recipe.
fn sample(t: Target, rng: &mut Rng) -> Recipe {
    if t.current(&Recipe::default()).is_none() {
        return Recipe::default();
    }
    let mut s = Sampled {
        program: t.program.clone(),
        region: t.region,
        root: t.root,
        recipe: Recipe::default(),
    };
    if register_tile(&mut s, rng) || time_tile(&mut s, rng) {
        return s.recipe;
    }
    for stage in [
        fission,
        interchange,
        tile,
        parallelize,
        unroll_jam,
        scalar_replace,
        innermost_steps,
    ] {
        stage(&mut s, rng);
    }
    s.recipe
}

/// A register tile of one of the nest's product bands (where it has one), with a
/// probability of 0.3, in one of the two sizes measured for this CPU. Draws nothing
/// from `rng` on nests without such a band.
fn register_tile(s: &mut Sampled, rng: &mut Rng) -> bool {
    let Some(root) = s.root_loop() else {
        return false;
    };
    let sites = crate::sizing::sites(&s.program, &root);
    if sites.is_empty() || !rng.chance(0.3) {
        return false;
    }
    let (at, elem, products) = sites[rng.below(sites.len())];
    let sizes = crate::sizing::candidates(Some(crate::sizing::Cpu::host()), elem, products);
    let z = sizes[rng.below(sizes.len())];
    s.push(z.step(at, true))
}

/// A time tile of a time loop of sweeps over rows (where the nest is one), with a
/// probability of 0.3, in one of the tree space's sizes ([`super::tree::TIME_TILES`]),
/// with one OpenMP team (probability 0.7) or without, the inner loops that carry no
/// dependence vectorized first (probability 0.5). Draws nothing from `rng` on other
/// nests.
fn time_tile(s: &mut Sampled, rng: &mut Rng) -> bool {
    let Some(root) = s.root_loop() else {
        return false;
    };
    let Some(site) = ir::transform::time_tile_site(&root, &s.program.arrays) else {
        return false;
    };
    if !rng.chance(0.3) {
        return false;
    }
    if rng.chance(0.5) {
        for &at in &site.maps {
            s.push(Step::Vectorize { at, width: None });
        }
    }
    let (width, depth) = super::tree::TIME_TILES[rng.below(super::tree::TIME_TILES.len())];
    let parallel = rng.chance(0.7);
    s.push(Step::TimeTile {
        at: 0,
        width,
        depth,
        parallel,
    })
}

/// Fission of a loop whose body holds several statements or loops: it can turn an
/// imperfect nest (covariance's init / k-reduction / finalize) into perfect bands
/// that interchange and tiling then reorder.
fn fission(s: &mut Sampled, rng: &mut Rng) {
    if rng.chance(0.3) {
        if let Some(root) = s.root_loop() {
            let split: Vec<usize> = preorder(&root)
                .iter()
                .enumerate()
                .filter(|(p, l)| {
                    *p > 0 && l.body.len() >= 2 && l.body.iter().any(|n| matches!(n, Node::Loop(_)))
                })
                .map(|(p, _)| p)
                .collect();
            if !split.is_empty() {
                let at = split[rng.below(split.len())];
                s.push(Step::Fission { at });
            }
        }
    }
}

/// Interchange.
fn interchange(s: &mut Sampled, rng: &mut Rng) {
    if rng.chance(0.4) {
        if let Some(root) = s.root_loop() {
            let multi: Vec<(usize, usize)> =
                bands(&root).into_iter().filter(|b| b.1 >= 2).collect();
            if !multi.is_empty() {
                let (at, m) = multi[rng.below(multi.len())];
                let mut order: Vec<usize> = (0..m).collect();
                while order.iter().enumerate().all(|(i, o)| i == *o) {
                    for i in (1..m).rev() {
                        order.swap(i, rng.below(i + 1));
                    }
                }
                s.push(Step::Interchange { at, order });
            }
        }
    }
}

/// Tiling, sometimes with a second level (tiles of tiles).
fn tile(s: &mut Sampled, rng: &mut Rng) {
    if rng.chance(0.6) {
        if let Some(root) = s.root_loop() {
            let b = bands(&root);
            if !b.is_empty() {
                let (at, m) = b[rng.below(b.len())];
                let sizes: Vec<i64> = (0..m)
                    .map(|_| TILE_SIZES[rng.below(TILE_SIZES.len())])
                    .collect();
                let inner = if rng.chance(0.25) {
                    sizes.iter().map(|s| s / [2, 4][rng.below(2)]).collect()
                } else {
                    Vec::new()
                };
                s.push(Step::Tile { at, sizes, inner });
            }
        }
    }
}

/// Parallelization of an outermost parallel loop, sometimes collapsed with the
/// parallel loop right inside it; where the nest has no parallel loop, of its outermost
/// reduction loop (with `reduction` clauses).
fn parallelize(s: &mut Sampled, rng: &mut Rng) {
    if rng.chance(0.8) {
        if let Some(root) = s.root_loop() {
            let all = preorder(&root);
            let outermost = |kind: LoopKind| all.iter().position(|l| l.kind == kind);
            if let Some(at) = outermost(LoopKind::Map).or_else(|| outermost(LoopKind::Reduction)) {
                let schedule = if rng.chance(0.8) {
                    Schedule::Static
                } else {
                    Schedule::Dynamic
                };
                let map_inside = matches!(all[at].body.as_slice(),
                    [Node::Loop(inner)] if inner.kind == LoopKind::Map);
                let collapse = (map_inside && rng.chance(0.3)).then_some(2);
                let par = |collapse| Step::Parallelize {
                    at,
                    schedule,
                    chunk: None,
                    collapse,
                };
                if !s.push(par(collapse)) && collapse.is_some() {
                    s.push(par(None));
                }
            }
        }
    }
}

/// Register tiling: unroll-and-jam of a loop that has loops inside (its copies land
/// in the innermost bodies), then the innermost reductions accumulate in scalars.
fn unroll_jam(s: &mut Sampled, rng: &mut Rng) {
    if rng.chance(0.4) {
        if let Some(root) = s.root_loop() {
            let outer: Vec<usize> = preorder(&root)
                .iter()
                .enumerate()
                .filter(|(_, l)| {
                    !ir::program::loops(&l.body).is_empty() && !l.has_directives() && l.step == 1
                })
                .map(|(p, _)| p)
                .collect();
            if !outer.is_empty() {
                let at = outer[rng.below(outer.len())];
                let factor = [2, 4][rng.below(2)];
                s.push(Step::UnrollJam { at, factor });
            }
        }
    }
}

/// Scalar replacement of every innermost reduction (the jammed body and its remainder).
fn scalar_replace(s: &mut Sampled, rng: &mut Rng) {
    if rng.chance(0.5) {
        if let Some(root) = s.root_loop() {
            let reductions: Vec<usize> = innermost(&root)
                .into_iter()
                .filter(|(p, l)| *p > 0 && l.kind == LoopKind::Reduction)
                .map(|(p, _)| p)
                .collect();
            // Every one (the jammed body and its remainder); replacing wraps a loop and
            // leaves the positions of the others as they are.
            for at in reductions.into_iter().rev() {
                s.push(Step::ScalarReplace { at });
            }
        }
    }
}

/// Vectorization and unrolling of innermost loops.
fn innermost_steps(s: &mut Sampled, rng: &mut Rng) {
    for (p_stage, vectorize) in [(0.5, true), (0.3, false)] {
        if !rng.chance(p_stage) {
            continue;
        }
        if let Some(root) = s.root_loop() {
            let inner: Vec<usize> = innermost(&root)
                .into_iter()
                .filter(|(_, l)| !l.has_directives())
                .map(|(p, _)| p)
                .collect();
            if !inner.is_empty() {
                let at = inner[rng.below(inner.len())];
                let step = if vectorize {
                    Step::Vectorize {
                        at,
                        width: [None, None, Some(4), Some(8)][rng.below(4)],
                    }
                } else {
                    Step::Unroll {
                        at,
                        factor: [2, 4, 8][rng.below(3)],
                    }
                };
                s.push(step);
            }
        }
    }
}

/// A nest while a recipe for it is sampled: the program as transformed so far (each
/// candidate step is applied to it alone, the same as applying the recipe with that
/// step from the start, at the cost of one step).
struct Sampled {
    program: Program,
    region: usize,
    /// The id of the nest's root loop in `program`.
    root: usize,
    recipe: Recipe,
}

impl Sampled {
    fn root_loop(&self) -> Option<Loop> {
        self.program.find_loop(self.region, self.root).cloned()
    }

    /// Appends `step` when it applies legally to the nest as transformed so far.
    fn push(&mut self, step: Step) -> bool {
        let one = Recipe {
            steps: vec![step.clone()],
        };
        match apply(&self.program, self.region, self.root, &one) {
            Ok(next) => {
                self.recipe.steps.push(step);
                self.root = next.root.id;
                self.program = next.program;
                true
            }
            Err(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemm_draws_register_tiles_and_other_recipes_all_legal() {
        let (p, n) = crate::target::gemm_mini();
        let t = Target::of(&p, &n);
        let mut rng = Rng::new(7);
        let drawn: Vec<Recipe> = (0..40).map(|_| StagedSpace.sample(t, &mut rng)).collect();
        let tiles = drawn
            .iter()
            .filter(|r| matches!(r.steps.as_slice(), [Step::RegisterTile { at: 0, .. }]))
            .count();
        // 0.3 of 40 draws, give or take: some, not all.
        assert!((3..=25).contains(&tiles), "{tiles} register tiles in 40");
        for r in &drawn {
            assert!(t.legal(r), "{r:?}");
        }
    }

    #[test]
    fn a_time_loop_of_sweeps_draws_time_tiles_and_other_recipes_all_legal() {
        let p = crate::target::dataset_mini("jacobi-2d");
        // The whole time loop is the target (its sweeps are nests of their own).
        let whole = ir::codegen::whole_nests(&p, &ir::codegen::nests(&p));
        let n = whole.first().expect("jacobi-2d's time loop").clone();
        let t = Target::of(&p, &n);
        let mut rng = Rng::new(11);
        let drawn: Vec<Recipe> = (0..40).map(|_| StagedSpace.sample(t, &mut rng)).collect();
        let tiles = drawn
            .iter()
            .filter(|r| matches!(r.steps.last(), Some(Step::TimeTile { at: 0, .. })))
            .count();
        assert!((3..=25).contains(&tiles), "{tiles} time tiles in 40");
        for r in &drawn {
            assert!(t.legal(r), "{r:?}");
        }
    }
}
