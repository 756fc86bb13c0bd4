//! The tree space: from a recipe (a prefix), every step that applies legally next,
//! over a fixed grid of parameters. Recipes are sequences of such steps, so the space
//! is the tree these calls unfold; it is small enough to list for short recipes (the
//! grid strategy walks it in order) and a random descent draws from it. A register
//! tile (both sizes of [`crate::sizing::candidates`] for the CPU here) is a first step
//! that ends the recipe: it replaces the band with a kernel no step reaches into.

use super::{Space, TILE_SIZES};
use crate::rng::Rng;
use crate::target::{band_depth, preorder, Target};
use ir::transform::{apply, Recipe, Schedule, Step};

/// The tree space of recipes of at most `max_steps` steps.
#[derive(Debug, Clone, Copy)]
pub struct TreeSpace {
    /// The longest recipe in the space.
    pub max_steps: usize,
}

impl Space for TreeSpace {
    /// A random descent: at each level, stop with probability 1/4 (never before the
    /// first step), else take one of the legal next steps uniformly.
    fn sample(&self, t: Target, rng: &mut Rng) -> Recipe {
        let mut r = Recipe::default();
        while r.steps.len() < self.max_steps {
            if !r.steps.is_empty() && rng.chance(0.25) {
                break;
            }
            let next = next_steps(t, &r);
            let Some(s) = rng.pick(&next) else { break };
            r.steps.push(s.clone());
        }
        r
    }

    fn enumerate(&self, t: Target, limit: usize) -> Option<Vec<Recipe>> {
        Some(enumerate(t, self.max_steps, limit))
    }
}

/// Unroll and unroll-and-jam factors of the grid.
pub const FACTORS: [u32; 3] = [2, 4, 8];

/// Time tiles of the grid: (rows, steps per block).
pub const TIME_TILES: [(u32, u32); 2] = [(16, 4), (64, 8)];

/// Every order of `0..m`.
pub(crate) fn permutations(m: usize) -> Vec<Vec<usize>> {
    if m == 1 {
        return vec![vec![0]];
    }
    let mut out = Vec::new();
    for p in permutations(m - 1) {
        for k in 0..m {
            let mut q = p.clone();
            q.insert(k, m - 1);
            out.push(q);
        }
    }
    out
}

/// Every step of the grid that applies legally after `prefix`.
pub fn next_steps(t: Target, prefix: &Recipe) -> Vec<Step> {
    if prefix
        .steps
        .iter()
        .any(|s| matches!(s, Step::RegisterTile { .. } | Step::TimeTile { .. }))
    {
        return Vec::new();
    }
    let Ok(cur) = apply(t.program, t.region, t.root, prefix) else {
        return Vec::new();
    };
    let loops = preorder(&cur.root);
    let mut cands = Vec::new();
    if prefix.steps.is_empty() {
        for (at, elem, products) in crate::sizing::sites(t.program, &cur.root) {
            let cpu = Some(crate::sizing::Cpu::host());
            for z in crate::sizing::candidates(cpu, elem, products) {
                cands.push(z.step(at, true));
            }
        }
    }
    // A time loop of sweeps: time tiles of the grid's sizes, after any vectorization
    // of its inner loops (nothing follows a time tile).
    if ir::transform::time_tile_site(&cur.root, &t.program.arrays).is_some() {
        for (width, depth) in TIME_TILES {
            for parallel in [false, true] {
                cands.push(Step::TimeTile {
                    at: 0,
                    width,
                    depth,
                    parallel,
                });
            }
        }
    }
    for (at, l) in loops.iter().enumerate() {
        let depth = band_depth(l).min(3);
        for m in 2..=depth {
            for order in permutations(m) {
                if order.iter().enumerate().any(|(i, o)| i != *o) {
                    cands.push(Step::Interchange { at, order });
                }
            }
        }
        for m in 1..=depth {
            for s in TILE_SIZES {
                cands.push(Step::Tile {
                    at,
                    sizes: vec![s; m],
                    inner: Vec::new(),
                });
            }
        }
        for schedule in [Schedule::Static, Schedule::Dynamic] {
            cands.push(Step::Parallelize {
                at,
                schedule,
                chunk: None,
                collapse: None,
            });
        }
        if depth >= 2 {
            cands.push(Step::Parallelize {
                at,
                schedule: Schedule::Static,
                chunk: None,
                collapse: Some(2),
            });
        }
        cands.push(Step::Vectorize { at, width: None });
        for factor in FACTORS {
            cands.push(Step::Unroll { at, factor });
            cands.push(Step::UnrollJam { at, factor });
        }
        cands.push(Step::ScalarReplace { at });
        cands.push(Step::FoldScalar { at });
        cands.push(Step::Fission { at });
        cands.push(Step::Fuse { at });
        cands.push(Step::Skew { at, factor: 1 });
        cands.push(Step::InterchangeTriangle { at });
    }
    cands
        .into_iter()
        .filter(|s| {
            let mut r = prefix.clone();
            r.steps.push(s.clone());
            apply(t.program, t.region, t.root, &r).is_ok()
        })
        .collect()
}

/// Every recipe of at most `max_steps` steps (a breadth-first unfolding of the tree),
/// up to `limit` recipes.
fn enumerate(t: Target, max_steps: usize, limit: usize) -> Vec<Recipe> {
    let mut out = vec![Recipe::default()];
    let mut frontier = vec![Recipe::default()];
    for _ in 0..max_steps {
        let mut next = Vec::new();
        for r in &frontier {
            for s in next_steps(t, r) {
                let mut x = r.clone();
                x.steps.push(s);
                next.push(x.clone());
                out.push(x);
                if out.len() >= limit {
                    return out;
                }
            }
        }
        frontier = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_space_of_gemm_is_listed_and_every_member_is_legal() {
        let (p, n) = crate::target::gemm_mini();
        let t = Target::of(&p, &n);
        let first = next_steps(t, &Recipe::default());
        // i is parallel: parallelization of loop 0 is among the first steps; the k-j
        // band interchanges (the reduction k moves inside the parallel j).
        assert!(first.contains(&Step::Parallelize {
            at: 0,
            schedule: Schedule::Static,
            chunk: None,
            collapse: None
        }));
        assert!(first.contains(&Step::Interchange {
            at: 2,
            order: vec![1, 0]
        }));
        // The i-j-k band accumulates a product: both register-tile sizes for the CPU
        // here are first steps, and nothing follows one.
        let tiles: Vec<&Step> = first
            .iter()
            .filter(|s| matches!(s, Step::RegisterTile { at: 0, .. }))
            .collect();
        assert_eq!(tiles.len(), 2, "{first:?}");
        let tiled = Recipe {
            steps: vec![tiles[0].clone()],
        };
        assert!(t.legal(&tiled));
        assert!(next_steps(t, &tiled).is_empty());
        // The reduction loop k is not parallelized.
        assert!(!first
            .iter()
            .any(|s| matches!(s, Step::Parallelize { at: 2, .. })));
        let all = enumerate(t, 2, 100);
        assert_eq!(
            TreeSpace { max_steps: 2 }.enumerate(t, 100),
            Some(all.clone())
        );
        let mut rng = Rng::new(3);
        for _ in 0..5 {
            let r = TreeSpace { max_steps: 2 }.sample(t, &mut rng);
            assert!((1..=2).contains(&r.steps.len()) && t.legal(&r), "{r:?}");
        }
        assert!(all.len() > first.len());
        for r in &all {
            assert!(apply(&p, n.region, n.root, r).is_ok(), "{r:?}");
        }
    }

    #[test]
    fn a_time_loop_of_sweeps_gets_time_tiles_and_nothing_after() {
        // seidel-2d's nest is its time loop (one sweep, carried along both loops):
        // both time tiles of the grid, without a team and pipelined over one, are
        // first steps.
        let p = crate::target::dataset_mini("seidel-2d");
        let n = ir::codegen::nests(&p).remove(0);
        let t = Target::of(&p, &n);
        let first = next_steps(t, &Recipe::default());
        let tiles: Vec<Step> = first
            .iter()
            .filter(|s| matches!(s, Step::TimeTile { .. }))
            .cloned()
            .collect();
        let want: Vec<Step> = TIME_TILES
            .iter()
            .flat_map(|&(width, depth)| {
                [false, true].map(|parallel| Step::TimeTile {
                    at: 0,
                    width,
                    depth,
                    parallel,
                })
            })
            .collect();
        assert_eq!(tiles, want);
        let tiled = Recipe {
            steps: vec![tiles[0].clone()],
        };
        assert!(t.legal(&tiled) && next_steps(t, &tiled).is_empty());
    }
}
