//! Speedups of re-fitted recipes on one nest against one baseline measured once, each
//! distinct recipe measured once through the tuning loop: what `db transfer` and `db
//! eval` measure. A [`Contest`] measures chosen recipes again, in rotation with the
//! baseline, where one measurement each is too noisy to tell them apart.

use crate::nest_bench::NestBench;
use crate::records::{MemoryRecords, Records};
use crate::runner::{CutoutRunner, Runner};
use crate::strategy::{ListedStrategy, Proposer};
use crate::tune_loop::{tune_nest, Budget, Trial};
use crate::Result;
use ir::transform::Recipe;
use profiling::cutout::{Cutout, Verdict};
use profiling::measure::Measure;
use std::path::PathBuf;
use std::time::Duration;

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

    /// A contest of `recipes` (measured before by [`Speedups::of`]) against the
    /// baseline, to be run round by round ([`Contest::round`]).
    pub fn contest(&self, recipes: &[Recipe]) -> Result<Contest> {
        let exes = recipes
            .iter()
            .map(|r| {
                self.exes
                    .iter()
                    .find(|(x, _)| x == r)
                    .map(|(_, e)| e.clone())
            })
            .collect();
        let runner = self.bench.runner();
        Ok(Contest {
            cutout: self.bench.cutout.clone(),
            original: self.bench.original_exe()?,
            exes,
            measure: self.bench.measuring.measure.clone(),
            timeout: runner.timeout,
            scratch: runner.scratch,
            ratios: vec![Vec::new(); recipes.len()],
            rounds: 0,
            done: 0,
        })
    }
}

/// Recipes of one nest measured again in rotation with its baseline, one round at a
/// time. It owns what it runs, so that the rounds of many nests can be interleaved and
/// a nest's rounds lie minutes apart: a disturbance of the machine (another virtual
/// machine on the host takes a core for a while) then falls on one round of a nest,
/// where back-to-back rounds would all fall in it.
pub struct Contest {
    cutout: Cutout,
    original: PathBuf,
    exes: Vec<Option<PathBuf>>,
    measure: Measure,
    timeout: Duration,
    scratch: PathBuf,
    /// Each recipe's speedup in each round whose runs verified.
    ratios: Vec<Vec<f64>>,
    /// Rounds started.
    rounds: usize,
    /// Rounds whose baseline ran.
    done: usize,
}

impl Contest {
    /// One round: the baseline, then every recipe (starting one further each round); a
    /// recipe's speedup in the round is the round's baseline over its time. Returns the
    /// runs made.
    pub fn round(&mut self) -> Result<usize> {
        let runner = CutoutRunner {
            cutout: &self.cutout,
            timeout: self.timeout,
            scratch: self.scratch.clone(),
        };
        let round = self.rounds;
        self.rounds += 1;
        // The builds live in the cache; one removed meanwhile misses the round.
        if !self.original.exists() {
            return Ok(0);
        }
        let base = runner.run(&self.original, "original", &self.measure)?;
        if !base.verdict.is_ok() || base.stats.median <= 0.0 {
            return Ok(1);
        }
        self.done += 1;
        let mut runs = 1;
        let n = self.exes.len();
        for j in 0..n {
            let i = (j + round) % n;
            let Some(exe) = self.exes[i].as_ref().filter(|x| x.exists()) else {
                continue;
            };
            runs += 1;
            let run = runner.run(exe, "candidate", &self.measure)?;
            // A run that does not verify leaves the recipe a round short: it gets no
            // median.
            if run.verdict == Verdict::Verified && run.stats.median > 0.0 {
                self.ratios[i].push(base.stats.median / run.stats.median);
            }
        }
        Ok(runs)
    }

    /// Each recipe's median speedup over the rounds so far; 0 where a recipe has no
    /// executable, missed a round or no round ran.
    pub fn medians(&self) -> Vec<f64> {
        self.ratios
            .iter()
            .map(|r| {
                if self.done == 0 || r.len() < self.done {
                    0.0
                } else {
                    profiling::stats::median(r)
                }
            })
            .collect()
    }

    /// Each recipe's speedup in each round so far.
    pub fn rounds(&self) -> &[Vec<f64>] {
        &self.ratios
    }
}
