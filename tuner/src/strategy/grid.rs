//! Exhaustive search of a small space: every recipe of the tree space up to a few
//! steps, in the tree's order, each proposed once; exhausted at the end of the list.

use super::{Proposer, SearchStrategy, StrategyKind};
use crate::space::{Space, TreeSpace};
use crate::target::Target;
use ir::transform::Recipe;

/// The grid strategy: members of [`TreeSpace`] of at most `max_steps` steps, at most
/// `limit` of them, listed once on the first proposal.
pub struct GridStrategy {
    space: TreeSpace,
    limit: usize,
    listed: Option<std::vec::IntoIter<Recipe>>,
}

impl GridStrategy {
    /// The recipes of at most `max_steps` steps, at most `limit` of them.
    pub fn new(max_steps: usize, limit: usize) -> GridStrategy {
        GridStrategy {
            space: TreeSpace { max_steps },
            limit,
            listed: None,
        }
    }
}

impl SearchStrategy for GridStrategy {
    fn proposer(&self) -> Proposer {
        Proposer::Search(StrategyKind::Grid)
    }

    fn propose(&mut self, t: Target, _: &[(Recipe, f64)]) -> Option<Recipe> {
        let (space, limit) = (self.space, self.limit);
        self.listed
            .get_or_insert_with(|| {
                let mut all = space.enumerate(t, limit).unwrap_or_default();
                // The empty recipe is the baseline, measured apart.
                all.retain(|r| !r.steps.is_empty());
                all.into_iter()
            })
            .next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_proposes_every_short_recipe_of_gemm_once_then_stops() {
        let (p, n) = crate::target::gemm_mini();
        let t = Target::of(&p, &n);
        let mut g = GridStrategy::new(1, 1000);
        let mut seen = Vec::new();
        while let Some(r) = g.propose(t, &[]) {
            assert_eq!(r.steps.len(), 1);
            assert!(t.legal(&r));
            assert!(!seen.contains(&r), "{r:?} twice");
            seen.push(r);
        }
        // One-step recipes: exactly the legal first steps of the tree.
        assert_eq!(
            seen.len(),
            crate::space::next_steps(t, &Recipe::default()).len()
        );
        assert!(g.propose(t, &[]).is_none());
        assert_eq!(g.proposer().to_string(), "grid");
    }
}
