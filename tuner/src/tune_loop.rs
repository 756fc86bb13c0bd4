//! The one tuning loop. [`tune_nest`] asks a strategy for recipes, skips what the
//! records already hold, builds a batch of them in parallel, measures them one at a
//! time and adds every measurement to the records, until the strategy has nothing more
//! to propose or the budget is spent. `tune apply` (a listed strategy: the re-fitted
//! recipes of the nearest database entries), `tune search` and `tune db build` (random,
//! evolutionary, grid), `tune db transfer` and `tune db eval` (listed recipes over a
//! shared measurement cache) all measure through it.

use crate::builder::{Builder, Built};
use crate::records::{Measured, Records};
use crate::runner::Runner;
use crate::strategy::SearchStrategy;
use crate::target::Target;
use crate::Result;
use ir::transform::Recipe;
use profiling::cutout::{CutoutRun, Verdict};
use profiling::measure::{Measure, Stats};
use rayon::prelude::*;
use std::time::{Duration, Instant};

/// When a nest's tuning stops, whichever comes first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// Candidates measured on the nest (over every run whose records are kept).
    pub measurements: usize,
    /// Wall time of this run on the nest (building and measuring).
    pub time: Option<Duration>,
    /// Candidates built in parallel per batch.
    pub batch: usize,
    /// `(factor, the baseline's statistics)`: a candidate's repetitions stop once one
    /// timed run exceeds `factor` times the best median so far (the baseline's or a
    /// verified candidate's), or once its runs are clearly slower or clearly faster
    /// than that best (see [`Bounds`]).
    pub kill: Option<(f64, Stats)>,
}

impl Budget {
    /// As many measurements as the strategy proposes, one build at a time.
    pub fn unlimited() -> Budget {
        Budget {
            measurements: usize::MAX,
            time: None,
            batch: 1,
            kill: None,
        }
    }
}

/// What became of one proposed recipe in this run.
#[derive(Debug, Clone)]
pub enum Trial {
    /// The recipe does not apply legally (why).
    Refused {
        /// The recipe.
        recipe: Recipe,
        /// Why it does not apply.
        why: String,
    },
    /// Its code did not compile (the compiler's first error).
    BuildFailed {
        /// The recipe.
        recipe: Recipe,
        /// The compiler's first error.
        error: String,
    },
    /// Built, but not measured: `on_run` said why (a candidate that cannot win).
    Skipped {
        /// The recipe.
        recipe: Recipe,
        /// Why it was not measured.
        why: String,
    },
    /// Built and measured.
    Ran {
        /// The recipe.
        recipe: Recipe,
        /// Its executable.
        exe: std::path::PathBuf,
        /// Its measurement.
        run: Box<CutoutRun>,
    },
}

impl Trial {
    /// The recipe of the trial.
    pub fn recipe(&self) -> &Recipe {
        match self {
            Trial::Refused { recipe, .. }
            | Trial::BuildFailed { recipe, .. }
            | Trial::Skipped { recipe, .. }
            | Trial::Ran { recipe, .. } => recipe,
        }
    }
}

/// Proposals that make no progress before the loop gives up on a strategy that keeps
/// proposing what was measured already.
const STALE_PROPOSALS: usize = 200;
/// Proposals asked for per batch before a short batch is accepted.
const TRIES_PER_BATCH: usize = 50;

/// Tunes one nest (see the module documentation). `measure` says how each variant is
/// timed; `on_run` is told each recipe, with the bounds of early stops, just before it
/// runs, and may answer why it should not run (the trial is then `Skipped`). Returns the
/// trials of this run in order; recipes measured by an earlier run are in `records`,
/// not here.
#[allow(clippy::too_many_arguments)]
pub fn tune_nest(
    target: Target,
    builder: &dyn Builder,
    runner: &dyn Runner,
    strategy: &mut dyn SearchStrategy,
    records: &mut dyn Records,
    budget: &Budget,
    measure: &Measure,
    on_run: &mut dyn FnMut(&Recipe, Option<&Bounds>) -> Option<String>,
) -> Result<Vec<Trial>> {
    let started = Instant::now();
    let out_of_time = || budget.time.is_some_and(|t| started.elapsed() >= t);
    let mut trials = Vec::new();
    let mut stale = 0;
    let mut exhausted = false;
    loop {
        let done = records.candidates();
        if exhausted
            || done.len() >= budget.measurements
            || stale > STALE_PROPOSALS
            || out_of_time()
        {
            break;
        }
        let verified: Vec<(Recipe, f64)> = done
            .iter()
            .filter(|m| m.verdict == Verdict::Verified)
            .map(|m| (m.recipe.clone(), m.stats.median))
            .collect();
        let want = budget.batch.max(1).min(budget.measurements - done.len());
        let proposed = propose_batch(target, strategy, &*records, &verified, want);
        exhausted = proposed.exhausted;
        let (batch, tries) = (proposed.recipes, proposed.tries);
        if batch.is_empty() {
            stale += tries;
            continue;
        }
        stale = 0;
        let built: Vec<Result<Built>> = batch.par_iter().map(|r| builder.build(r)).collect();
        for (recipe, b) in batch.into_iter().zip(built) {
            if out_of_time() {
                break;
            }
            let trial = match b? {
                Built::Refused(why) => Trial::Refused { recipe, why },
                Built::Failed(error) => {
                    records.add(
                        Measured::build_failed(&recipe, error.clone()),
                        strategy.proposer(),
                    )?;
                    Trial::BuildFailed { recipe, error }
                }
                Built::Exe(exe) => {
                    let bounds = kill_bound(budget, &*records);
                    if let Some(why) = on_run(&recipe, bounds.as_ref()) {
                        trials.push(Trial::Skipped { recipe, why });
                        continue;
                    }
                    let bounded = bounds.map(|b| Measure {
                        beat_s: b.beat,
                        ..measure
                            .clone()
                            .kill_after(b.kill_after)
                            .slower_than(b.best)
                            .faster_than(b.faster_than)
                    });
                    let run = runner.run(&exe, "candidate", bounded.as_ref().unwrap_or(measure))?;
                    records.add(Measured::of_run(&recipe, &run), strategy.proposer())?;
                    Trial::Ran {
                        recipe,
                        exe,
                        run: Box::new(run),
                    }
                }
            };
            trials.push(trial);
        }
    }
    Ok(trials)
}

/// A baseline's long runs stop after this many timed runs: its median's interval is its
/// min..max until the eighth run, so runs four to seven would only widen it, and three
/// long runs of a candidate all below three of the baseline are apart with p = 0.05
/// (one-sided rank test).
pub const BASELINE_LONG_REPS: u32 = 3;

/// How a baseline is measured under `measure`: its long runs stop at
/// [`BASELINE_LONG_REPS`].
pub fn baseline_measure(measure: &Measure) -> Measure {
    measure.clone().long_reps(BASELINE_LONG_REPS)
}

/// A candidate whose timed run exceeds this many times the best median so far stops
/// repeating: it is clearly slower.
pub const KILL_FACTOR: f64 = 1.5;

/// Runs shorter than this are never stopped early: repeating them costs little, and
/// a first slow run (an OpenMP team starting) says little.
const KILL_MIN_S: f64 = 0.01;

/// Where a candidate's repetitions stop early, from the best so far: the baseline, or
/// the verified candidate with the lowest median.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// A timed run longer than this ([`KILL_FACTOR`] times the best median) shows the
    /// candidate clearly slower.
    pub kill_after: f64,
    /// The best median: a candidate whose mean's 95% interval lies wholly above it is
    /// clearly slower.
    pub best: f64,
    /// The lower end of the 95% interval of the best median: a candidate whose three
    /// or more runs all lie below it is clearly faster, and more runs would not make it
    /// less so (its own interval, min..max at three runs, is then below the best's).
    pub faster_than: f64,
    /// The lower end of the baseline's interval (where it has one): a long candidate
    /// whose three runs are not all below it stops as futile (`Measure::beat_s`).
    pub beat: Option<f64>,
}

/// The bounds that stop a candidate early ([`Bounds`]); `None` where the best median
/// is too short for early stops to pay (under [`KILL_MIN_S`] times the factor).
fn kill_bound(budget: &Budget, records: &dyn Records) -> Option<Bounds> {
    let (factor, baseline) = budget.kill?;
    let best = records
        .candidates()
        .iter()
        .filter(|m| m.verdict == Verdict::Verified && m.stats.median > 0.0)
        .map(|m| m.stats)
        .fold(baseline, |a, b| if b.median < a.median { b } else { a });
    let kill_after = factor * best.median;
    (kill_after.is_finite() && kill_after >= KILL_MIN_S).then_some(Bounds {
        kill_after,
        best: best.median,
        // Below the baseline's interval too, so that a candidate stopped this way
        // beats the baseline (`select::beats`).
        faster_than: best.median_ci.0.min(best.median).min(baseline.median_ci.0),
        beat: Some(baseline.median_ci.0).filter(|x| x.is_finite() && *x > 0.0),
    })
}

/// A batch of proposals.
struct Proposed {
    recipes: Vec<Recipe>,
    /// Proposals asked for.
    tries: usize,
    /// The strategy said it has nothing more.
    exhausted: bool,
}

/// Up to `want` distinct, unmeasured, non-empty recipes from the strategy.
fn propose_batch(
    target: Target,
    strategy: &mut dyn SearchStrategy,
    records: &dyn Records,
    verified: &[(Recipe, f64)],
    want: usize,
) -> Proposed {
    let mut p = Proposed {
        recipes: Vec::new(),
        tries: 0,
        exhausted: false,
    };
    while p.recipes.len() < want && p.tries < TRIES_PER_BATCH {
        let Some(r) = strategy.propose(target, verified) else {
            p.exhausted = true;
            break;
        };
        p.tries += 1;
        if r.steps.is_empty() || records.find(&r).is_some() || p.recipes.contains(&r) {
            continue;
        }
        p.recipes.push(r);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::MemoryRecords;
    use crate::strategy::Proposer;
    use ir::transform::Step;
    use profiling::measure::Stats;

    fn measured(factor: u32, samples: &[f64], verdict: Verdict) -> Measured {
        Measured {
            recipe: Recipe {
                steps: vec![Step::Unroll { at: 0, factor }],
            },
            verdict,
            samples: samples.to_vec(),
            stats: Stats::from_samples(samples),
            counters: Vec::new(),
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn the_kill_bound_follows_the_best_verified_median() {
        // The baseline: median 100 ms, its interval 90..110 ms (5 runs: min..max).
        let budget = Budget {
            kill: Some((
                KILL_FACTOR,
                Stats::from_samples(&[0.09, 0.095, 0.1, 0.105, 0.11]),
            )),
            ..Budget::unlimited()
        };
        let mut records = MemoryRecords::default();
        // Only the baseline so far: killed over 1.5 x 100 ms, clearly faster under 90.
        let b = kill_bound(&budget, &records).unwrap();
        assert!(close(b.kill_after, 0.15), "{b:?}");
        assert!(close(b.best, 0.1), "{b:?}");
        assert!(close(b.faster_than, 0.09), "{b:?}");
        assert_eq!(b.beat, Some(0.09));
        // A faster verified candidate lowers them; a faster wrong one does not.
        records
            .add(
                measured(2, &[0.035, 0.04, 0.045], Verdict::Verified),
                Proposer::Transfer,
            )
            .unwrap();
        records
            .add(
                measured(
                    4,
                    &[0.001],
                    Verdict::WrongResult {
                        array: "a".into(),
                        index: 0,
                        got: 1.0,
                        want: 0.0,
                        mismatches: 1,
                    },
                ),
                Proposer::Transfer,
            )
            .unwrap();
        let b = kill_bound(&budget, &records).unwrap();
        assert!(close(b.kill_after, 0.06), "{b:?}");
        assert!(close(b.best, 0.04), "{b:?}");
        assert!(close(b.faster_than, 0.035), "{b:?}");
        // Futile: measured against the baseline's interval whatever the best.
        assert_eq!(b.beat, Some(0.09));
        // A best whose interval reaches above the baseline's lower end: clearly faster
        // stays below the baseline's interval too.
        let wide = Budget {
            kill: Some((KILL_FACTOR, Stats::from_samples(&[0.05, 0.1, 0.1]))),
            ..Budget::unlimited()
        };
        let mut r = MemoryRecords::default();
        r.add(
            measured(3, &[0.06, 0.07, 0.09], Verdict::Verified),
            Proposer::Transfer,
        )
        .unwrap();
        let b = kill_bound(&wide, &r).unwrap();
        assert!(close(b.best, 0.07), "{b:?}");
        assert!(close(b.faster_than, 0.05), "{b:?}");
        // Bounds under 10 ms never stop a run.
        records
            .add(measured(8, &[0.005], Verdict::Verified), Proposer::Transfer)
            .unwrap();
        assert_eq!(kill_bound(&budget, &records), None);
        // Without a kill factor, nothing is stopped.
        assert_eq!(kill_bound(&Budget::unlimited(), &records), None);
    }
}
