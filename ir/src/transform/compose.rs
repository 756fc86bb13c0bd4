//! Recipes of a whole loop nest (`codegen::whole_nests`: a top-level loop whose
//! sequential loops hold nests) composed from parts: the recipes kept for the nests
//! inside it, moved to their positions in the whole, and rule-made parts such as the
//! vectorized reductions of its innermost loops.
//!
//! A part is anchored at the preorder position of its loop in the whole and names
//! loops at or after it. Parts are applied from the last anchor to the first: a part
//! adds or removes loops only inside its anchor's subtree (and, for fission, right
//! after it), so the positions of the parts still to apply do not move. A part whose
//! steps do not all apply on the whole as composed so far is left out, with why.

use super::{apply, Recipe, Step};
use crate::program::{loops, Loop, LoopKind, Program};

/// Steps that transform the whole nest as one part anchored at a loop: the first of
/// `alternatives` that applies is taken.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// Preorder position of the part's loop in the whole nest (0: its root).
    pub anchor: usize,
    /// What the part is, for the reasons of a part left out.
    pub what: String,
    /// Recipes over the whole nest's positions, tried in order.
    pub alternatives: Vec<Recipe>,
}

/// The preorder position of loop `id` in the nest rooted at `root`.
pub fn position(root: &Loop, id: usize) -> Option<usize> {
    if root.id == id {
        return Some(0);
    }
    loops(&root.body)
        .iter()
        .position(|l| l.id == id)
        .map(|k| k + 1)
}

/// A recipe of the nest rooted at `inner` (at position `anchor` of a whole nest)
/// written over the whole nest's positions.
pub fn moved(recipe: &Recipe, anchor: usize) -> Recipe {
    Recipe {
        steps: recipe
            .steps
            .iter()
            .map(|s| s.moved_to(s.at() + anchor))
            .collect(),
    }
}

/// The parts that vectorize the innermost reduction loops of the nest rooted at
/// `root` (other than the root): each reduced array element kept in a scalar first
/// (scalar replacement), then `omp simd reduction` on the loop; or the `omp simd`
/// alone where the loop already reduces into scalars.
pub fn reduction_parts(root: &Loop) -> Vec<Part> {
    loops(&root.body)
        .iter()
        .enumerate()
        .filter(|(_, l)| l.kind == LoopKind::Reduction && loops(&l.body).is_empty())
        .map(|(k, l)| {
            let at = k + 1;
            let simd = Step::Vectorize { at, width: None };
            Part {
                anchor: at,
                what: format!("the reduction over '{}' vectorized", l.var),
                alternatives: vec![
                    Recipe {
                        steps: vec![Step::ScalarReplace { at }, simd.clone()],
                    },
                    Recipe { steps: vec![simd] },
                ],
            }
        })
        .collect()
}

/// The parts that reorder loops so that more inner loops walk rows: each loop whose
/// body opens with a loop running up to its variable, interchanged as a triangle
/// (`Step::InterchangeTriangle`), and each perfect pair of a parallel loop around an
/// innermost reduction, interchanged (the reduction outside, the parallel loop inside:
/// the accumulated element then moves with the inner loop, as a row update does).
/// Whether a part is legal is for [`compose`] to find; whether it pays, for the
/// measurement.
pub fn order_parts(root: &Loop) -> Vec<Part> {
    let all: Vec<&Loop> = std::iter::once(root).chain(loops(&root.body)).collect();
    let mut out = Vec::new();
    for (at, l) in all.iter().enumerate() {
        let opens_triangle = matches!(
            l.body.first(),
            Some(crate::program::Node::Loop(k)) if k.bound == crate::program::Expr::Var(l.var.clone())
        );
        if opens_triangle && l.body.len() > 1 {
            out.push(Part {
                anchor: at,
                what: format!("the triangle of '{}' interchanged", l.var),
                alternatives: vec![Recipe {
                    steps: vec![Step::InterchangeTriangle { at }],
                }],
            });
        }
        if let [crate::program::Node::Loop(k)] = l.body.as_slice() {
            if l.kind == LoopKind::Map && k.kind == LoopKind::Reduction && loops(&k.body).is_empty()
            {
                out.push(Part {
                    anchor: at,
                    what: format!("'{}' moved inside the reduction '{}'", l.var, k.var),
                    alternatives: vec![Recipe {
                        steps: vec![Step::Interchange {
                            at,
                            order: vec![1, 0],
                        }],
                    }],
                });
            }
        }
    }
    out
}

/// The parts that fold scalar accumulators into the elements they are stored to
/// (`Step::FoldScalar`): each loop whose body holds `w = X; loop; X = f(w)`. Run
/// before [`order_parts`]: a factorization written with a temporary then has the shape
/// of a row update.
pub fn fold_parts(root: &Loop) -> Vec<Part> {
    let all: Vec<&Loop> = std::iter::once(root).chain(loops(&root.body)).collect();
    let mut out = Vec::new();
    for (at, l) in all.iter().enumerate() {
        if (0..l.body.len()).any(|p| super::fold_scalar::pattern(&l.body, p).is_some()) {
            out.push(Part {
                anchor: at,
                what: format!("the accumulators of '{}' folded into their elements", l.var),
                alternatives: vec![Recipe {
                    steps: vec![Step::FoldScalar { at }],
                }],
            });
        }
    }
    out
}

/// The parts that fuse neighbouring loops with the same header (after a reordering,
/// the `k` loops of two parts of a row update: each row `k` is then read once).
pub fn fusion_parts(root: &Loop) -> Vec<Part> {
    let all: Vec<&Loop> = std::iter::once(root).chain(loops(&root.body)).collect();
    let position = |l: &Loop| all.iter().position(|x| std::ptr::eq(*x, l));
    let same_header = |a: &Loop, b: &Loop| {
        a.var == b.var
            && a.init == b.init
            && a.bound == b.bound
            && a.cmp == b.cmp
            && a.step == b.step
    };
    let mut out = Vec::new();
    for l in &all {
        for pair in l.body.windows(2) {
            if let [crate::program::Node::Loop(a), crate::program::Node::Loop(b)] = pair {
                if same_header(a, b) {
                    if let Some(at) = position(a) {
                        out.push(Part {
                            anchor: at,
                            what: format!("two '{}' loops fused", a.var),
                            alternatives: vec![Recipe {
                                steps: vec![Step::Fuse { at }],
                            }],
                        });
                    }
                }
            }
        }
    }
    out
}

/// The recipe of the whole nest rooted at loop `root` of region `region` made of
/// `parts` (applied from the last anchor to the first; at one anchor, in the order
/// given), and the parts left out with why.
pub fn compose(
    program: &Program,
    region: usize,
    root: usize,
    parts: &[Part],
) -> (Recipe, Vec<String>) {
    compose_after(program, region, root, Recipe::default(), parts)
}

/// [`compose`] on top of `base` (a recipe of the whole nest already applied; the
/// parts' anchors are positions in the nest as `base` leaves it).
pub fn compose_after(
    program: &Program,
    region: usize,
    root: usize,
    base: Recipe,
    parts: &[Part],
) -> (Recipe, Vec<String>) {
    let mut order: Vec<&Part> = parts.iter().collect();
    // Stable: parts at one anchor keep their order.
    order.sort_by_key(|p| std::cmp::Reverse(p.anchor));
    let mut recipe = base;
    let mut left_out = Vec::new();
    for part in order {
        let mut why: Vec<String> = Vec::new();
        let mut taken = false;
        for alt in &part.alternatives {
            let mut tried = recipe.clone();
            tried.steps.extend(alt.steps.iter().cloned());
            match apply(program, region, root, &tried) {
                Ok(_) => {
                    recipe = tried;
                    taken = true;
                    break;
                }
                Err(e) => why.push(e.to_string()),
            }
        }
        if !taken {
            left_out.push(format!("{}: {}", part.what, why.join("; or ")));
        }
    }
    (recipe, left_out)
}
