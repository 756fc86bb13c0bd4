//! Speedups of re-fitted recipes on one nest against one baseline measured once, each
//! distinct recipe measured once through the tuning loop: what `db transfer` and `db
//! eval` measure.

use crate::nest_bench::NestBench;
use crate::records::{MemoryRecords, Records};
use crate::strategy::{ListedStrategy, Proposer};
use crate::tune_loop::{tune_nest, Budget};
use crate::Result;
use ir::transform::Recipe;

/// A nest's baseline and the measurements made on it so far.
pub struct Speedups<'b, 'a> {
    bench: &'b NestBench<'a>,
    /// Median of the untransformed nest (seconds).
    pub baseline: f64,
    records: MemoryRecords,
    /// Variants measured so far (the baseline counted).
    pub measured: usize,
}

impl<'b, 'a> Speedups<'b, 'a> {
    /// Measures the baseline.
    pub fn new(bench: &'b NestBench<'a>) -> Result<Self> {
        let baseline = bench.measure_original()?.stats.median;
        Ok(Speedups {
            bench,
            baseline,
            records: MemoryRecords::default(),
            measured: 1,
        })
    }

    /// The speedup of each recipe over the baseline: 1 for the empty recipe, 0 for one
    /// that is refused, fails or computes something else. Recipes measured before are
    /// not measured again.
    pub fn of(&mut self, recipes: &[Recipe]) -> Result<Vec<f64>> {
        let mut strategy = ListedStrategy::new(recipes.to_vec(), Proposer::Transfer);
        let before = self.records.candidates().len();
        tune_nest(
            self.bench.target(),
            &self.bench.builder(),
            &self.bench.runner(),
            &mut strategy,
            &mut self.records,
            &Budget::unlimited(),
            &self.bench.measuring.measure,
            &mut |_, _| None,
        )?;
        self.measured += self.records.candidates().len() - before;
        Ok(recipes
            .iter()
            .map(|r| {
                if r.steps.is_empty() {
                    return 1.0;
                }
                match self.records.find(r).and_then(|m| m.verified_median()) {
                    Some(median) => self.baseline / median,
                    None => 0.0,
                }
            })
            .collect())
    }

    /// Distinct recipes measured (the baseline not counted).
    pub fn distinct(&self) -> usize {
        self.records.candidates().len()
    }
}
