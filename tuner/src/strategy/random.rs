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
    /// The strategy seeded with `seed`.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The proposals of `tune search --seed 1` on gemm's nest, pinned: a change to the
    /// generator, the space or the seeding shows here (the third is a register tile,
    /// sized for the CPU that runs the test).
    #[test]
    fn seed_1_proposes_the_same_recipes_on_gemm() {
        let (p, n) = crate::target::gemm_mini();
        let t = Target::of(&p, &n);
        let mut s = RandomStrategy::new(crate::search::nest_seed(1, &n.name));
        let got: Vec<String> = (0..4)
            .map(|_| serde_json::to_string(&s.propose(t, &[]).unwrap().steps).unwrap())
            .collect();
        // The third is a register tile in the longer size for the CPU here.
        let long = crate::sizing::candidates(Some(crate::sizing::Cpu::host()), 8, 1)[1];
        let tile = serde_json::to_string(&[long.step(0, true)]).unwrap();
        let pinned: Vec<String> = PINNED.iter().map(|r| r.replace("TILE", &tile)).collect();
        assert_eq!(got, pinned);
    }

    const PINNED: [&str; 4] = [
        r#"[{"step":"parallelize","at":0,"schedule":"static"},{"step":"unroll_jam","at":2,"factor":2},{"step":"unroll","at":5,"factor":8}]"#,
        r#"[{"step":"interchange","at":2,"order":[1,0]},{"step":"tile","at":1,"sizes":[64]},{"step":"parallelize","at":0,"schedule":"dynamic"},{"step":"unroll_jam","at":3,"factor":4},{"step":"vectorize","at":2,"width":4}]"#,
        "TILE",
        r#"[{"step":"tile","at":0,"sizes":[8]},{"step":"parallelize","at":0,"schedule":"static"}]"#,
    ];
}
