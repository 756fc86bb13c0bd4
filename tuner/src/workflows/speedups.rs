//! Speedups of re-fitted recipes on one nest against one baseline measured once, each
//! distinct recipe measured once through the tuning loop: what `db transfer` and `db
//! eval` measure. [`Speedups::settle`] measures chosen recipes again, in rotation with
//! the baseline, where one measurement each is too noisy to tell them apart.

use crate::nest_bench::NestBench;
use crate::records::{MemoryRecords, Records};
use crate::runner::Runner;
use crate::strategy::{ListedStrategy, Proposer};
use crate::tune_loop::{tune_nest, Budget, Trial};
use crate::Result;
use ir::transform::Recipe;
use profiling::cutout::Verdict;
use std::path::PathBuf;

/// A nest's baseline and the measurements made on it so far.
pub struct Speedups<'b, 'a> {
    bench: &'b NestBench<'a>,
    /// Median of the untransformed nest (seconds).
    pub baseline: f64,
    records: MemoryRecords,
    /// The executable of each recipe that ran.
    exes: Vec<(Recipe, PathBuf)>,
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
            exes: Vec::new(),
            measured: 1,
        })
    }

    /// The speedup of each recipe over the baseline: 1 for the empty recipe, 0 for one
    /// that is refused, fails or computes something else. Recipes measured before are
    /// not measured again.
    pub fn of(&mut self, recipes: &[Recipe]) -> Result<Vec<f64>> {
        let mut strategy = ListedStrategy::new(recipes.to_vec(), Proposer::Transfer);
        let before = self.records.candidates().len();
        let trials = tune_nest(
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
        for t in trials {
            if let Trial::Ran { recipe, exe, .. } = t {
                self.exes.push((recipe, exe));
            }
        }
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

    /// Each of `recipes` (measured before by [`Speedups::of`]) measured again `rounds`
    /// times in rotation with the baseline: each round runs the baseline, then every
    /// recipe (starting one further each round), and a recipe's speedup in a round is
    /// that round's baseline over its time. Returns the median of each recipe's rounds;
    /// 0 where a recipe has no executable or a run does not verify.
    pub fn settle(&mut self, recipes: &[Recipe], rounds: usize) -> Result<Vec<f64>> {
        let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); recipes.len()];
        if recipes.is_empty() || rounds == 0 {
            return Ok(vec![0.0; recipes.len()]);
        }
        let exes: Vec<Option<PathBuf>> = recipes
            .iter()
            .map(|r| {
                self.exes
                    .iter()
                    .find(|(x, _)| x == r)
                    .map(|(_, e)| e.clone())
            })
            .collect();
        let original = self.bench.original_exe()?;
        let runner = self.bench.runner();
        let measure = &self.bench.measuring.measure;
        let time = |exe: &std::path::Path, label: &str| -> Result<(Verdict, f64)> {
            let run = runner.run(exe, label, measure)?;
            Ok((run.verdict, run.stats.median))
        };
        let mut done = 0;
        for round in 0..rounds {
            let (verdict, base) = time(&original, "original")?;
            self.measured += 1;
            if !verdict.is_ok() || base <= 0.0 {
                continue;
            }
            done += 1;
            for j in 0..recipes.len() {
                let i = (j + round) % recipes.len();
                let Some(exe) = &exes[i] else { continue };
                self.measured += 1;
                // A run that does not verify leaves the recipe a round short: it gets
                // no median below.
                if let (Verdict::Verified, t) = time(exe, "candidate")? {
                    if t > 0.0 {
                        ratios[i].push(base / t);
                    }
                }
            }
        }
        Ok(ratios
            .into_iter()
            .map(|r| {
                if done == 0 || r.len() < done {
                    0.0
                } else {
                    profiling::stats::median(&r)
                }
            })
            .collect())
    }
}
