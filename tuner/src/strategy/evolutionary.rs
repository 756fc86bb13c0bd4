//! Mutations of the fastest recipes so far (tournament selection), with random samples
//! of the staged space while the population is small.

use super::{Proposer, SearchStrategy, StrategyKind};
use crate::rng::Rng;
use crate::space::{Space, StagedSpace, TILE_SIZES};
use crate::target::Target;
use ir::transform::{Recipe, Schedule, Step};

/// The evolutionary strategy (see the module documentation).
pub struct EvolutionaryStrategy {
    rng: Rng,
    population: usize,
}

impl EvolutionaryStrategy {
    /// The strategy seeded with `seed`, keeping the `population` fastest recipes.
    pub fn new(seed: u64, population: usize) -> EvolutionaryStrategy {
        EvolutionaryStrategy {
            rng: Rng::new(seed),
            population: population.max(1),
        }
    }

    fn mutate(&mut self, parent: &Recipe) -> Recipe {
        let mut r = parent.clone();
        if r.steps.is_empty() {
            return r;
        }
        let i = self.rng.below(r.steps.len());
        match (&mut r.steps[i], self.rng.below(3)) {
            (Step::Tile { sizes, .. }, 0 | 1) => {
                let k = self.rng.below(sizes.len());
                sizes[k] = TILE_SIZES[self.rng.below(TILE_SIZES.len())];
            }
            (Step::Unroll { factor, .. }, 0 | 1) => *factor = [2, 4, 8][self.rng.below(3)],
            (Step::Parallelize { schedule, .. }, 0) => {
                *schedule = if *schedule == Schedule::Static {
                    Schedule::Dynamic
                } else {
                    Schedule::Static
                }
            }
            _ => {
                r.steps.truncate(i);
            }
        }
        r
    }
}

impl SearchStrategy for EvolutionaryStrategy {
    fn proposer(&self) -> Proposer {
        Proposer::Search(StrategyKind::Evolutionary)
    }

    fn propose(&mut self, t: Target, measured: &[(Recipe, f64)]) -> Option<Recipe> {
        if measured.len() < self.population || self.rng.chance(0.15) {
            return Some(StagedSpace.sample(t, &mut self.rng));
        }
        let mut ranked: Vec<&(Recipe, f64)> = measured.iter().collect();
        ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
        ranked.truncate(self.population);
        for _ in 0..20 {
            let a = ranked[self.rng.below(ranked.len())];
            let b = ranked[self.rng.below(ranked.len())];
            let parent = if a.1 <= b.1 { &a.0 } else { &b.0 };
            let child = self.mutate(parent);
            if t.legal(&child) {
                return Some(child);
            }
        }
        Some(StagedSpace.sample(t, &mut self.rng))
    }
}
