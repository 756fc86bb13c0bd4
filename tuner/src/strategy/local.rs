//! Local search around a recipe: the recipes one edit away from it, for the short
//! refinement `tune apply --refine N` runs where the transferred recipes fall short of
//! what their neighbours reached. An edit is, in this order: one parameter of one step
//! moved to the next value of its grid (a tile size halved or doubled, an unroll factor,
//! a schedule, a time tile's rows or steps), one step of the tree space's grid appended
//! (`space::tree::next_steps`: vectorize, unroll, parallelize, tile first), or one step
//! removed. Only recipes that apply legally are proposed, each once.

use crate::space::tree::{next_steps, FACTORS};
use crate::target::Target;
use ir::transform::{Recipe, Schedule, Step};

/// Tile sizes a refinement moves between.
const SIZES: [i64; 7] = [4, 8, 16, 32, 64, 128, 256];

/// The value next to `x` in `grid`, one down and one up (when there are).
fn around<T: Copy + PartialEq>(grid: &[T], x: T) -> Vec<T> {
    match grid.iter().position(|g| *g == x) {
        Some(k) => [k.checked_sub(1), (k + 1 < grid.len()).then_some(k + 1)]
            .into_iter()
            .flatten()
            .map(|i| grid[i])
            .collect(),
        None => Vec::new(),
    }
}

/// One step with one parameter moved.
fn edits(step: &Step) -> Vec<Step> {
    let mut out = Vec::new();
    match step {
        Step::Tile { at, sizes, inner } if inner.is_empty() => {
            for d in 0..sizes.len() {
                for s in around(&SIZES, sizes[d]) {
                    let mut z = sizes.clone();
                    z[d] = s;
                    out.push(Step::Tile {
                        at: *at,
                        sizes: z,
                        inner: Vec::new(),
                    });
                }
            }
        }
        Step::Unroll { at, factor } => {
            for f in around(&FACTORS, *factor) {
                out.push(Step::Unroll { at: *at, factor: f });
            }
        }
        Step::UnrollJam { at, factor } => {
            for f in around(&FACTORS, *factor) {
                out.push(Step::UnrollJam { at: *at, factor: f });
            }
        }
        Step::Parallelize {
            at,
            schedule,
            chunk,
            collapse,
        } => {
            let other = match schedule {
                Schedule::Static => Schedule::Dynamic,
                _ => Schedule::Static,
            };
            out.push(Step::Parallelize {
                at: *at,
                schedule: other,
                chunk: *chunk,
                collapse: *collapse,
            });
        }
        Step::TimeTile {
            at,
            width,
            depth,
            parallel,
        } => {
            for w in [*width / 2, *width * 2] {
                if w >= 4 {
                    out.push(Step::TimeTile {
                        at: *at,
                        width: w,
                        depth: *depth,
                        parallel: *parallel,
                    });
                }
            }
            for d in [*depth / 2, *depth * 2] {
                if d >= 2 {
                    out.push(Step::TimeTile {
                        at: *at,
                        width: *width,
                        depth: d,
                        parallel: *parallel,
                    });
                }
            }
        }
        _ => {}
    }
    out
}

/// How early an appended step is tried (lower first).
fn rank(step: &Step) -> u8 {
    match step {
        Step::Vectorize { .. } => 0,
        Step::Unroll { .. } => 1,
        Step::Parallelize { .. } => 2,
        Step::Tile { .. } => 3,
        Step::UnrollJam { .. } => 4,
        _ => 5,
    }
}

/// The legal recipes one edit away from `from` (see the module documentation), at
/// most `limit`, none equal to `from` or to another.
pub fn neighbours(t: Target, from: &Recipe, limit: usize) -> Vec<Recipe> {
    let mut out: Vec<Recipe> = Vec::new();
    let push = |r: Recipe, out: &mut Vec<Recipe>| {
        if out.len() < limit && r != *from && !out.contains(&r) && t.legal(&r) {
            out.push(r);
        }
    };
    for (k, step) in from.steps.iter().enumerate() {
        for e in edits(step) {
            let mut r = from.clone();
            r.steps[k] = e;
            push(r, &mut out);
        }
    }
    let mut added = next_steps(t, from);
    added.sort_by_key(rank);
    for s in added.into_iter().filter(|s| rank(s) < 5) {
        let mut r = from.clone();
        r.steps.push(s);
        push(r, &mut out);
    }
    for k in (0..from.steps.len()).rev() {
        let mut r = from.clone();
        r.steps.remove(k);
        push(r, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gemm() -> ir::Program {
        let path = format!("{}/../datasets/programs/gemm.c", env!("CARGO_MANIFEST_DIR"));
        let opts = ir::FrontendOptions {
            flags: vec!["-DMINI_DATASET".into()],
            ..Default::default()
        };
        ir::load(&path, &opts).unwrap().program
    }

    #[test]
    fn the_neighbours_of_a_tiled_parallel_product_move_one_thing_each() {
        let p = gemm();
        let nest = &ir::codegen::nests(&p)[0];
        let t = Target::of(&p, nest);
        let from = Recipe {
            steps: vec![
                Step::Tile {
                    at: 2,
                    sizes: vec![32, 32],
                    inner: Vec::new(),
                },
                Step::Parallelize {
                    at: 0,
                    schedule: Schedule::Static,
                    chunk: None,
                    collapse: None,
                },
            ],
        };
        assert!(t.legal(&from));
        let n = neighbours(t, &from, 100);
        // Parameter edits come first: each tile size halved and doubled, then the
        // schedule.
        let first: Vec<&Step> = n[..5].iter().map(|r| &r.steps[0]).collect();
        let sizes = |s: &Step| match s {
            Step::Tile { sizes, .. } => sizes.clone(),
            _ => Vec::new(),
        };
        assert_eq!(
            first[..4].iter().map(|s| sizes(s)).collect::<Vec<_>>(),
            vec![vec![16, 32], vec![64, 32], vec![32, 16], vec![32, 64]]
        );
        assert!(matches!(
            n[4].steps[1],
            Step::Parallelize {
                schedule: Schedule::Dynamic,
                ..
            }
        ));
        // Every neighbour is legal, distinct and one edit away: same length and one
        // step changed, one step more, or one step less.
        for (i, r) in n.iter().enumerate() {
            assert!(t.legal(r));
            assert!(!n[..i].contains(r));
            let len = r.steps.len() as i64 - from.steps.len() as i64;
            let same = r
                .steps
                .iter()
                .zip(&from.steps)
                .filter(|(a, b)| a == b)
                .count();
            match len {
                0 => assert_eq!(same, from.steps.len() - 1, "{r:?}"),
                1 => assert_eq!(&r.steps[..2], &from.steps[..], "{r:?}"),
                -1 => assert!(from.steps.iter().any(|s| !r.steps.contains(s))),
                _ => panic!("{r:?} is more than one edit away"),
            }
        }
        // Appending a vectorized innermost loop is among them; removing each step too.
        assert!(n
            .iter()
            .any(|r| matches!(r.steps.last(), Some(Step::Vectorize { .. }))));
        assert!(n.iter().any(|r| r.steps == from.steps[..1]));
        assert!(n.iter().any(|r| r.steps == from.steps[1..]));
        // The limit holds.
        assert_eq!(neighbours(t, &from, 3).len(), 3);
    }
}
