//! Schedule search (`tune search`, and `tune db build` per program): per nest, a
//! strategy over the recipe space proposes recipes that the tuning loop builds in
//! batches, measures one at a time on the nest's saved data, verifies, and appends to
//! the program's record log. The search resumes from the log: what was measured is
//! never measured again.

use crate::nest_bench::{Measuring, NestBench};
use crate::records::{open_log, NestRecords, Records};
use crate::run::{checked_dry_run, RunConfig};
use crate::strategy::{Proposer, StrategyKind};
use crate::tune_loop::{tune_nest, Budget, Trial};
use crate::Result;
use ir::program::Program;
use ir::transform::Recipe;
use profiling::cutout::Verdict;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How to search.
#[derive(Debug, Clone)]
pub struct SearchConfig {
    /// The dry run (program, flags, cache).
    pub run: RunConfig,
    /// Candidate measurements per nest (the baseline not counted), over all runs.
    pub budget: usize,
    /// Which strategy proposes recipes.
    pub strategy: StrategyKind,
    /// Seed of the strategy.
    pub seed: u64,
    /// How candidates are measured.
    pub measuring: Measuring,
    /// Candidates compiled in parallel per batch.
    pub jobs: usize,
    /// Wall time per nest for this run (compiling and measuring candidates); the search
    /// of a nest stops at whichever of `budget` and this comes first.
    pub time_limit: Option<Duration>,
    /// Only these nests are searched (all when empty).
    pub nests: Vec<String>,
}

/// The outcome for one nest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NestResult {
    /// The nest (`nest0`, ...).
    pub nest: String,
    /// Region index and root loop id of the nest in the untransformed program.
    pub region: usize,
    /// Id of its root loop.
    pub root: usize,
    /// Median of the untransformed nest (seconds).
    pub baseline_s: f64,
    /// Median of the nest's normal form (`ir::normalize`), what its features read: the
    /// baseline's where the nest is written in normal form or its normal form did not
    /// verify. Absent from results written before it was recorded (0).
    #[serde(default)]
    pub normal_s: f64,
    /// Median of the best verified recipe (seconds).
    pub best_s: f64,
    /// Baseline over best.
    pub speedup: f64,
    /// The best recipe (empty when none beat the baseline).
    pub best: Recipe,
    /// Candidates measured (all runs of the search), and how many of them verified.
    pub measured: usize,
    /// Measured candidates that were verified.
    pub verified: usize,
    /// Candidates measured by this run.
    pub new: usize,
    /// Seconds this run spent on the nest.
    pub seconds: f64,
    /// Hardware counters of the untransformed nest (empty without a PMU).
    pub counters: Vec<profiling::cutout::CounterReading>,
}

impl NestResult {
    /// The time the nest's features read: its normal form's (the baseline's in
    /// results written before the normal form was recorded).
    pub fn feature_s(&self) -> f64 {
        if self.normal_s > 0.0 {
            self.normal_s
        } else {
            self.baseline_s
        }
    }
}

/// What a search found, with the program it searched.
#[derive(Debug, Clone)]
pub struct Searched {
    /// The program searched.
    pub program: Program,
    /// One result per nest.
    pub results: Vec<NestResult>,
    /// The dry run's saved data (inputs and reference outputs of every nest).
    pub data_dir: PathBuf,
    /// The record log of the program.
    pub records: PathBuf,
}

impl Searched {
    /// The program's source with each nest's best recipe applied, and whether it
    /// needs OpenMP.
    pub fn tuned_source(&self) -> Result<(String, bool)> {
        let nests: Vec<(usize, usize, Recipe)> = self
            .results
            .iter()
            .map(|r| (r.region, r.root, r.best.clone()))
            .collect();
        crate::emit::tuned_source(&self.program, &nests, "re-applying the best recipes")
    }
}

/// The seed of a nest's strategy: the search's seed mixed with the nest's name, so
/// that nests of one program do not draw the same recipes.
pub fn nest_seed(seed: u64, nest: &str) -> u64 {
    seed ^ blake3::hash(nest.as_bytes()).as_bytes()[0] as u64
}

/// Runs the search over every nest of the program.
pub fn search(cfg: &SearchConfig) -> Result<Searched> {
    let mut run = cfg.run.clone();
    run.save_versions = 1;
    let dry = checked_dry_run(&run)?;
    let program = &dry.parsed.program;
    let machine = profiling::host::hostname();
    let compiler = cfg.measuring.toolchain.version()?;
    let records = dry.cache.root.join("records.jsonl");
    let mut log = open_log(&records)?;
    let mut results = Vec::new();
    for nest in &dry.nests {
        if !cfg.nests.is_empty() && !cfg.nests.contains(&nest.name) {
            continue;
        }
        let started = Instant::now();
        let bench = NestBench::new(&dry, nest, &cfg.run.args.cflags, &cfg.measuring);
        let mut mine = NestRecords {
            log: &mut log,
            program: program.name.clone(),
            nest: nest.name.clone(),
            fingerprint: bench.fingerprint(),
            machine: machine.clone(),
            compiler: compiler.clone(),
        };
        if mine.find(&Recipe::default()).is_none() {
            let r = bench.measure_original()?;
            let mut m = crate::records::Measured::of_run(&Recipe::default(), &r);
            if m.verdict == Verdict::Verified {
                // The nest's features read them (a run of its own, where a PMU answers).
                m.counters = crate::counters::read(&bench);
            }
            mine.add(m, Proposer::Baseline)?;
        }
        // The normal form, whose time the nest's features read (a candidate like any).
        let normal = crate::features::normal_recipe(program, nest);
        if let Some(recipe) = &normal {
            if mine.find(recipe).is_none() {
                if let Some(r) = bench.measure_recipe(
                    "normal-form",
                    recipe,
                    &crate::tune_loop::baseline_measure(&cfg.measuring.measure),
                )? {
                    mine.add(
                        crate::records::Measured::of_run(recipe, &r),
                        Proposer::NormalForm,
                    )?;
                }
            }
        }
        // The bounds of early stops start from the baseline's statistics (none until
        // a candidate verifies where the baseline did not).
        let baseline = mine
            .find(&Recipe::default())
            .filter(|m| m.verdict == Verdict::Verified)
            .map_or(
                profiling::measure::Stats {
                    median: f64::INFINITY,
                    median_ci: (f64::INFINITY, f64::INFINITY),
                    ..Default::default()
                },
                |m| m.stats,
            );
        let mut strategy = cfg.strategy.build(nest_seed(cfg.seed, &nest.name));
        let trials = tune_nest(
            bench.target(),
            &bench.builder(),
            &bench.runner(),
            strategy.as_mut(),
            &mut mine,
            &Budget {
                measurements: cfg.budget,
                time: cfg.time_limit,
                batch: cfg.jobs,
                kill: Some((crate::tune_loop::KILL_FACTOR, baseline)),
            },
            &cfg.measuring.measure,
            &mut |_, _| None,
        )?;
        let new = trials
            .iter()
            .filter(|t| !matches!(t, Trial::Refused { .. } | Trial::Skipped { .. }))
            .count();
        results.push(nest_result(
            &mine,
            nest,
            normal.as_ref(),
            new,
            started.elapsed().as_secs_f64(),
        ));
    }
    Ok(Searched {
        program: program.clone(),
        results,
        data_dir: dry.cache.data(),
        records,
    })
}

/// The best recipe of a nest from its records, with the time of its normal form
/// (`normal`: the recipe that writes it so, None where it is written so).
fn nest_result(
    records: &NestRecords,
    nest: &ir::codegen::Nest,
    normal: Option<&Recipe>,
    new: usize,
    seconds: f64,
) -> NestResult {
    let original = records.find(&Recipe::default());
    let baseline = original.as_ref().map_or(0.0, |m| m.stats.median);
    let cands = records.candidates();
    let timed =
        |m: &&crate::records::Measured| m.verdict == Verdict::Verified && m.stats.median > 0.0;
    let best = cands
        .iter()
        .filter(timed)
        .min_by(|a, b| a.stats.median.total_cmp(&b.stats.median));
    let normal_s = normal
        .and_then(|r| records.find(r))
        .filter(|m| timed(&m))
        .map_or(baseline, |m| m.stats.median);
    let (best_s, best_recipe) = match best {
        Some(b) if b.stats.median < baseline => (b.stats.median, b.recipe.clone()),
        _ => (baseline, Recipe::default()),
    };
    NestResult {
        nest: nest.name.clone(),
        region: nest.region,
        root: nest.root,
        baseline_s: baseline,
        normal_s,
        best_s,
        speedup: if best_s > 0.0 { baseline / best_s } else { 1.0 },
        best: best_recipe,
        measured: cands.len(),
        verified: cands
            .iter()
            .filter(|m| m.verdict == Verdict::Verified)
            .count(),
        new,
        seconds,
        counters: original.map(|m| m.counters).unwrap_or_default(),
    }
}
