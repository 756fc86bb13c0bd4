//! Search strategies: which recipe to measure next. Each strategy is one file here and
//! one [`StrategyKind`] variant; [`StrategyKind::build`] makes it.

mod evolutionary;
mod grid;
mod listed;
pub mod local;
mod random;

pub use evolutionary::EvolutionaryStrategy;
pub use grid::GridStrategy;
pub use listed::ListedStrategy;
pub use random::RandomStrategy;

use crate::target::Target;
use crate::{Error, Result};
use ir::transform::Recipe;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Which recipe to try next.
pub trait SearchStrategy {
    /// Who proposes (what the record log stores with each measurement).
    fn proposer(&self) -> Proposer;
    /// A recipe to measure, given the verified measurements so far (recipe, median
    /// seconds); None when the strategy has nothing more to propose.
    fn propose(&mut self, t: Target, measured: &[(Recipe, f64)]) -> Option<Recipe>;
}

/// The strategies `tune search` and `tune db build` offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StrategyKind {
    /// Uniform samples of the staged space.
    Random,
    /// Mutations of the fastest recipes so far (tournament selection).
    Evolutionary,
    /// Every recipe of up to two steps of the tree space, in order.
    Grid,
}

impl StrategyKind {
    /// Every kind, in the order help texts list them.
    pub const ALL: [StrategyKind; 3] = [
        StrategyKind::Random,
        StrategyKind::Evolutionary,
        StrategyKind::Grid,
    ];

    /// The strategy, seeded.
    pub fn build(self, seed: u64) -> Box<dyn SearchStrategy> {
        match self {
            StrategyKind::Random => Box::new(RandomStrategy::new(seed)),
            StrategyKind::Evolutionary => Box::new(EvolutionaryStrategy::new(seed, 8)),
            StrategyKind::Grid => Box::new(GridStrategy::new(2, 10_000)),
        }
    }

    /// The name on the command line and in records.
    pub fn name(self) -> &'static str {
        match self {
            StrategyKind::Random => "random",
            StrategyKind::Evolutionary => "evolutionary",
            StrategyKind::Grid => "grid",
        }
    }
}

impl fmt::Display for StrategyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for StrategyKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<StrategyKind> {
        StrategyKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                Error::Usage(format!(
                    "unknown strategy '{s}' ({})",
                    StrategyKind::ALL.map(StrategyKind::name).join(", ")
                ))
            })
    }
}

/// Who proposed a measured recipe: the untransformed baseline, transfer from the
/// database, a search strategy, ... Stored as its name (`baseline`, `transfer`,
/// `random`, `normal-form`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Proposer {
    /// The untransformed nest.
    Baseline,
    /// Transfer from the database.
    Transfer,
    /// The whole-nest stage of `tune apply`: the parts' kept recipes composed, and
    /// rule-made parts (`ir::transform::compose`).
    Whole,
    /// A search strategy.
    Search(StrategyKind),
    /// The local search of `tune apply --refine` around the best transferred recipe.
    Refine,
    /// The nest's normal form (`ir::normalize`), measured for its features.
    NormalForm,
}

impl fmt::Display for Proposer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Proposer::Baseline => f.pad("baseline"),
            Proposer::Transfer => f.pad("transfer"),
            Proposer::Whole => f.pad("whole-nest"),
            Proposer::Search(k) => f.pad(k.name()),
            Proposer::Refine => f.pad("refine"),
            Proposer::NormalForm => f.pad("normal-form"),
        }
    }
}

impl From<Proposer> for String {
    fn from(p: Proposer) -> String {
        p.to_string()
    }
}

impl TryFrom<String> for Proposer {
    type Error = String;
    fn try_from(s: String) -> std::result::Result<Proposer, String> {
        match s.as_str() {
            "baseline" => Ok(Proposer::Baseline),
            "transfer" => Ok(Proposer::Transfer),
            "whole-nest" => Ok(Proposer::Whole),
            "refine" => Ok(Proposer::Refine),
            "normal-form" => Ok(Proposer::NormalForm),
            other => other
                .parse()
                .map(Proposer::Search)
                .map_err(|e: Error| e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_proposers_read_back_as_written() {
        for k in StrategyKind::ALL {
            assert_eq!(k.name().parse::<StrategyKind>().unwrap(), k);
            let p = Proposer::Search(k);
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("\"{}\"", k.name()));
            assert_eq!(serde_json::from_str::<Proposer>(&json).unwrap(), p);
        }
        for p in [
            Proposer::Baseline,
            Proposer::Transfer,
            Proposer::Whole,
            Proposer::Refine,
            Proposer::NormalForm,
        ] {
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(serde_json::from_str::<Proposer>(&json).unwrap(), p);
        }
        let e = "anneal".parse::<StrategyKind>().unwrap_err().to_string();
        assert_eq!(e, "unknown strategy 'anneal' (random, evolutionary, grid)");
        assert!(serde_json::from_str::<Proposer>("\"anneal\"").is_err());
    }
}
