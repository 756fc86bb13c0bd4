//! A fixed list of recipes, proposed in order: what transfer tuning measures (the
//! re-fitted recipes of the nearest database entries) and what evaluations replay.

use super::{Proposer, SearchStrategy};
use crate::target::Target;
use ir::transform::Recipe;

/// Proposes `recipes` in order, then nothing.
pub struct ListedStrategy {
    recipes: std::vec::IntoIter<Recipe>,
    proposer: Proposer,
}

impl ListedStrategy {
    /// Proposes `recipes` in order, recorded as proposed by `proposer`.
    pub fn new(recipes: Vec<Recipe>, proposer: Proposer) -> ListedStrategy {
        ListedStrategy {
            recipes: recipes.into_iter(),
            proposer,
        }
    }
}

impl SearchStrategy for ListedStrategy {
    fn proposer(&self) -> Proposer {
        self.proposer
    }

    fn propose(&mut self, _: Target, _: &[(Recipe, f64)]) -> Option<Recipe> {
        self.recipes.next()
    }
}
