//! Uniform samples of the staged space.

use super::{Proposer, SearchStrategy, StrategyKind};
use crate::rng::Rng;
use crate::space::{Space, StagedSpace};
use crate::target::Target;
use ir::transform::Recipe;

/// Uniform samples of the staged space; never exhausted.
pub struct RandomStrategy {
    rng: Rng,
}

impl RandomStrategy {
    pub fn new(seed: u64) -> RandomStrategy {
        RandomStrategy {
            rng: Rng::new(seed),
        }
    }
}

impl SearchStrategy for RandomStrategy {
    fn proposer(&self) -> Proposer {
        Proposer::Search(StrategyKind::Random)
    }

    fn propose(&mut self, t: Target, _: &[(Recipe, f64)]) -> Option<Recipe> {
        Some(StagedSpace.sample(t, &mut self.rng))
    }
}
