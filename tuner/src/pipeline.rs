//! The transfer-tuning pipeline, as a library.
//!
//! ```no_run
//! use tuner::{Pipeline, ProgramSpec};
//! use profiling::measure::Measure;
//!
//! let program = ProgramSpec::from_args(&["gemm.c", "-DSMALL_DATASET", "-lm"]).unwrap();
//! // Static features only (no profiling pass for the features), the 3 nearest nests.
//! let report = Pipeline::static_only().top_k(3).apply(&program).unwrap();
//! println!("{} nests", report.nests.len());
//! // With the profiling pass, and the baseline timed with 3 warmup runs and 10 repetitions.
//! let timings = Pipeline::full()
//!     .measure(&program, Measure::default().warmup(3).repetitions(10))
//!     .unwrap();
//! ```
//!
//! [`Pipeline::apply`]: a dry run with Save; per nest, a baseline measurement on the
//! saved data (the profiling pass: warmup, repetitions, counters, roofline); features and
//! embedding; the database entries ranked by embedding distance, walked until K distinct
//! re-fitted recipes ([`crate::retrieve::walk`]); those measured through the one tuning
//! loop ([`crate::tune_nest`]) and judged by [`crate::select::select`]. The tuned
//! program is the user's source with the kept recipes applied, given up when the
//! whole-program check ([`crate::check`]) finds it slower.

use crate::events::{Event, Events};
use crate::features::{feature_time, machine_info, nest_features, nest_root};
use crate::nest_bench::{Measuring, NestBench};
use crate::ranker::{
    EmbeddingRanker, FusedRanker, Query, RandomRanker, Ranker, RankerKind, RawFeatureRanker,
    VoteRanker,
};
use crate::records::MemoryRecords;
use crate::report::{
    ApplyReport, Candidate, CandidateVerdict, FilesApplied, Neighbour, NestReport, NestTime,
    NestTiming, PassedOver, TimeSplit, UserParallel,
};
use crate::retrieve::{walk, Outcome, Visited};
use crate::run::{checked_dry_run, DryRun, NestSummary, RunConfig};
use crate::runner::Runner;
use crate::select::{select, Judgement, Timing};
use crate::spec::ProgramSpec;
use crate::strategy::{ListedStrategy, Proposer};
use crate::timed::{Clock, Timed};
use crate::tune_loop::{tune_nest, Budget, Trial};
use crate::{Error, Result};
use embeddings::db::Database;
use embeddings::embed::Embedder;
use ir::transform::Recipe;
use profiling::build::Toolchain;
use profiling::cutout::Verdict;
use profiling::machine::MachineInfo;
use profiling::measure::{Measure, Stats};
use profiling::roofline::Roof;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod budget;
mod contraction;
mod dense;
mod normal;
mod order;
mod priority;
mod refine;
mod serial;
mod stencil;
mod whole;

/// Cold runs (each the first run of the nest in a fresh process) measured for the
/// baseline and for every candidate that beats it warm, when the nest's time in the
/// program is short enough for a cold run to matter ([`COLD_MATTERS_S`]).
pub const COLD_RUNS: usize = 3;

/// A nest whose baseline takes longer than this in the program (invocations times the
/// warm median) is ranked on warm runs alone: its cold run cannot change the outcome.
pub const COLD_MATTERS_S: f64 = 1.0;

/// Timed runs every variant gets before the adaptive stop may end them.
pub const MIN_REPETITIONS: u32 = 5;

/// Relative half-width of the median's 95% interval at which repetitions stop.
pub const TARGET_CI: f64 = 0.02;

/// How the tuning commands measure a variant: `warmup` runs, then at least
/// [`MIN_REPETITIONS`] (or `max` when smaller) and at most `max` timed runs, stopping
/// once the distribution-free 95% interval of the median (order statistics
/// `n/2 ± 0.98 sqrt(n)`) is within ±[`TARGET_CI`] of it. A noisy nest gets all `max`.
/// Runs of [`LONG_RUN_S`] and more warm themselves (the first warmup run is timed and
/// the rest skipped) and stop from the third run once the Student t 95% interval of
/// their mean is within ±[`TARGET_CI`]: a nest of seconds with a small spread is
/// decided in three runs.
pub fn adaptive_measure(warmup: u32, max: u32) -> Measure {
    Measure::default()
        .warmup(warmup)
        .repetitions(MIN_REPETITIONS.min(max))
        .adaptive(TARGET_CI, max)
        .short_runs(SHORT_RUNS_S)
        .batch(BATCH_S)
        .long_runs(LONG_RUN_S)
        .counters(&[])
}

/// Runs shorter than half this (seconds) are timed in batches of consecutive calls that
/// last about this long, where the nest can run again on its own outputs
/// ([`Measure::batch_s`]): one sample of a nest of nanoseconds is then far above the
/// clock's resolution and the timer's cost.
pub const BATCH_S: f64 = 1e-3;

/// Runs at least this long (seconds) are long: see [`adaptive_measure`].
pub const LONG_RUN_S: f64 = 0.25;

/// Nests so short that the most repetitions time less than this (seconds) are
/// repeated until they do: a nest of microseconds is decided on thousands of runs.
pub const SHORT_RUNS_S: f64 = 0.02;

/// In a program without markers, nests under this share of the loop nests' time in
/// the dry run are left out: tuning them cannot pay.
pub const AUTO_MIN_SHARE: f64 = 0.01;

pub use crate::models::default_models_dir;

/// How to transfer-tune.
#[derive(Clone)]
pub struct Pipeline {
    /// Retrieve by static features only (no performance features).
    pub static_only: bool,
    /// Distinct re-fitted recipes measured per nest.
    pub k: usize,
    /// The tuning database.
    pub db: PathBuf,
    /// The model checkpoint folder.
    pub model: PathBuf,
    /// How baseline and candidates are measured.
    pub measure: Measure,
    /// A variant's run (warmup and repetitions) is killed after this long.
    pub timeout: Duration,
    /// The cache folder (`.tunecache`).
    pub cache_root: PathBuf,
    /// The compiler and flags.
    pub toolchain: Toolchain,
    /// Told each step of [`Pipeline::apply`] (for progress bars); silent by default.
    pub events: Option<Events>,
    /// Timed runs of each whole program (original and tuned, in rotation) in the
    /// final check; 0 skips the check.
    pub check_runs: usize,
    /// Tuning time for the whole program (`--budget-s`): each nest gets the time left
    /// divided by the nests left; candidates beyond it are cut (and said so), nests
    /// reached after it are left out. The whole-program check always runs.
    pub budget: Option<Duration>,
    /// The user accepts results that differ in the last digits of sums added in another
    /// order (`--reassociate`, as `-ffast-math` would): a tuned program that prints
    /// other results is kept, and said so, instead of falling back to bit-exact recipes.
    pub reassociate: bool,
    /// Measurements of a local search around the best transferred recipe where the
    /// transferred ones fall short of what their neighbours reached (`--refine N`,
    /// `pipeline/refine.rs`); 0: none.
    pub refine: usize,
    /// The order in which the database's entries are tried ([`crate::ranker`]): by
    /// embedding, by raw features, or by the votes of either's nearest entries (the default:
    /// raw features' votes, which lead `tune db eval` on the shipped database).
    pub ranker: RankerKind,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("static_only", &self.static_only)
            .field("k", &self.k)
            .field("db", &self.db)
            .field("model", &self.model)
            .field("measure", &self.measure)
            .field("check_runs", &self.check_runs)
            .field("refine", &self.refine)
            .field("ranker", &self.ranker)
            .finish_non_exhaustive()
    }
}

impl Pipeline {
    fn new(static_only: bool) -> Pipeline {
        let models = default_models_dir();
        Pipeline {
            static_only,
            k: 3,
            db: models.join("tune.db"),
            model: models.join("model"),
            measure: adaptive_measure(2, 10),
            timeout: Duration::from_secs(600),
            cache_root: profiling::cache::default_root(),
            toolchain: Toolchain::default(),
            events: None,
            check_runs: 5,
            budget: None,
            reassociate: false,
            refine: 0,
            ranker: RankerKind::RawVotes,
        }
    }

    /// Static, performance and machine features (the profiling pass runs first).
    pub fn full() -> Pipeline {
        Pipeline::new(false)
    }

    /// Static features only.
    pub fn static_only() -> Pipeline {
        Pipeline::new(true)
    }

    /// Number of nearest database entries whose recipes are tried.
    pub fn top_k(mut self, k: usize) -> Pipeline {
        self.k = k.max(1);
        self
    }

    /// Retrieves from the database at `path`.
    pub fn db(mut self, path: impl Into<PathBuf>) -> Pipeline {
        self.db = path.into();
        self
    }

    /// Embeds with the checkpoint in `dir`.
    pub fn model(mut self, dir: impl Into<PathBuf>) -> Pipeline {
        self.model = dir.into();
        self
    }

    /// Measures baseline and candidates as `m` says.
    pub fn measured_with(mut self, m: Measure) -> Pipeline {
        self.measure = m;
        self
    }

    /// Keeps builds, saved data and reports under `dir`.
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Pipeline {
        self.cache_root = dir.into();
        self
    }

    /// Runs of each whole program in the final check (0: no check).
    pub fn check_runs(mut self, runs: usize) -> Pipeline {
        self.check_runs = runs;
        self
    }

    /// The tuning time of a whole program (see [`Pipeline::budget`]).
    pub fn budget(mut self, budget: Option<Duration>) -> Pipeline {
        self.budget = budget;
        self
    }

    /// Tells `events` each step of [`Pipeline::apply`].
    pub fn events(mut self, events: Events) -> Pipeline {
        self.events = Some(events);
        self
    }

    fn say(&self, program: &str, what: &str) {
        if let Some(e) = &self.events {
            e(Event::Step { program, what })
        }
    }

    /// A nest read above 100% of a roof shows the roof measured low (another guest on
    /// the host while it ran): the roofs are measured again (the best of both kept and
    /// cached) and every nest's efficiency read against them. At most
    /// [`ROOF_RAISES`] times; a failed measurement keeps the roofs there are.
    fn raise_roofs(
        &self,
        machine: Option<MachineInfo>,
        nests: &mut [NestReport],
        wholes: &mut [NestReport],
    ) -> Option<MachineInfo> {
        let mut m = machine?;
        for _ in 0..crate::profile::ROOF_RAISES {
            let over = nests.iter().chain(wholes.iter()).any(|n| {
                [n.efficiency_before, n.efficiency_after]
                    .iter()
                    .flatten()
                    .any(|e| *e > 1.0)
            });
            if !over {
                break;
            }
            let Ok(raised) = profiling::machine::raise_roofs(&self.cache_root, &self.toolchain, &m)
            else {
                break;
            };
            m = raised;
            let roof = Roof::of(&m, true);
            for n in nests.iter_mut().chain(wholes.iter_mut()) {
                n.read_efficiencies(&roof);
            }
        }
        Some(m)
    }

    fn measuring(&self) -> Measuring {
        Measuring {
            toolchain: self.toolchain.clone(),
            measure: self.measure.clone(),
            timeout: self.timeout,
            cache_root: self.cache_root.clone(),
        }
    }

    fn run_config(&self, p: &ProgramSpec) -> Result<RunConfig> {
        Ok(RunConfig {
            function: p.function.clone(),
            assume_pure: p.assume_pure.clone(),
            program_args: p.program_args.clone(),
            whole_nests: true,
            ..RunConfig::tuning(p.cc()?, self.cache_root.clone(), self.toolchain.clone())
        })
    }

    /// Times every nest of the program, untransformed, on its saved data.
    pub fn measure(&self, p: &ProgramSpec, m: Measure) -> Result<Vec<NestTiming>> {
        let dry = checked_dry_run(&self.run_config(p)?)?;
        let measuring = Measuring {
            measure: m,
            ..self.measuring()
        };
        let cflags = p.cc()?.cflags;
        let mut out = Vec::new();
        for nest in &dry.nests {
            let bench = NestBench::new(&dry, nest, &cflags, &measuring);
            let r = bench.measure_original()?;
            out.push(NestTiming {
                nest: nest.name.clone(),
                verdict: r.verdict,
                stats: r.stats,
                samples: r.samples,
            });
        }
        Ok(out)
    }

    /// [`Pipeline::apply`] over a program of several `.c` files: each file in turn is
    /// the one whose loops are tuned, the others built as they are. After a file
    /// whose regions are marked (`#pragma scop`, or `--function` found there) the rest
    /// are built as they are: markers narrow what is tuned. A file with no loop to
    /// tune is passed over with the reason; the first such error is returned when no
    /// file had one. Reports come in the order of the files.
    pub fn apply_files(&self, p: &ProgramSpec) -> Result<FilesApplied> {
        let sources = p.sources()?;
        if sources.len() == 1 {
            return Ok(FilesApplied {
                reports: vec![self.apply(p)?],
                passed_over: Vec::new(),
            });
        }
        let mut out = FilesApplied::default();
        let mut first_error = None;
        for source in &sources {
            if out.reports.last().is_some_and(|r| !r.auto_regions) {
                break;
            }
            match self.apply(&p.with_main(source)) {
                Ok(r) => out.reports.push(r),
                Err(Error::Program(e @ ir::Error::NoRegion { .. })) => {
                    out.passed_over.push(PassedOver {
                        file: source.clone(),
                        reason: e.to_string(),
                    });
                    first_error.get_or_insert(Error::Program(e));
                }
                Err(e) => return Err(e),
            }
        }
        match first_error {
            Some(e) if out.reports.is_empty() => Err(e),
            _ => Ok(out),
        }
    }

    /// The ranker `kind` (that [`Pipeline::ranker`] names), over every entry of `db`; a
    /// voting kind wraps the ranker of its voters. Raw features
    /// are standardized over the whole database and always include the performance
    /// group; [`Pipeline::static_only`] concerns the embedding. A random order is
    /// seeded with 1.
    fn ranker_for<'m>(
        &self,
        kind: RankerKind,
        model: &'m Embedder,
        db: &Database,
    ) -> Result<Box<dyn Ranker + 'm>> {
        Ok(match kind {
            RankerKind::Embedding => Box::new(EmbeddingRanker::new(model, db, self.static_only)?),
            RankerKind::RawFeatures => {
                let everyone: Vec<_> = db.entries.iter().collect();
                Box::new(RawFeatureRanker::new(&everyone, db))
            }
            RankerKind::Random => Box::new(RandomRanker::new(1, Vec::new())),
            RankerKind::EmbeddingVotes => Box::new(VoteRanker::new(
                self.ranker_for(RankerKind::Embedding, model, db)?,
                self.k,
            )),
            RankerKind::RawVotes => Box::new(VoteRanker::new(
                self.ranker_for(RankerKind::RawFeatures, model, db)?,
                self.k,
            )),
            RankerKind::Fused => Box::new(FusedRanker::new(
                self.ranker_for(RankerKind::Embedding, model, db)?,
                self.ranker_for(RankerKind::RawFeatures, model, db)?,
            )),
            RankerKind::FusedVotes => Box::new(VoteRanker::new(
                self.ranker_for(RankerKind::Fused, model, db)?,
                self.k,
            )),
        })
    }

    /// Transfer-tunes the program (see the module documentation).
    pub fn apply(&self, p: &ProgramSpec) -> Result<ApplyReport> {
        let clock = Clock::start();
        let mut time = TimeSplit::default();
        let db = Database::load(&self.db).map_err(Error::ReadDatabase)?;
        if db.entries.is_empty() {
            return Err(Error::Usage(format!(
                "{}: the database has no entries",
                self.db.display()
            )));
        }
        let model = clock.add_to(&mut time.embedding_s, || {
            Embedder::load(&self.model).map_err(Error::LoadModel)
        })?;
        self.say(&p.name, "dry run with Save");
        let (dry, machine) = clock.add_to(&mut time.profiling_s, || {
            let dry = checked_dry_run(&self.run_config(p)?)?;
            let cflags = p.cc()?.cflags;
            let machine = machine_info(&self.cache_root, &self.toolchain, &cflags);
            Ok::<_, Error>((dry, machine))
        })?;
        let mut ranker = clock.add_to(&mut time.embedding_s, || {
            self.ranker_for(self.ranker, &model, &db)
        })?;
        let measuring = self.measuring();
        let cflags = p.cc()?.cflags;
        let mut nests = Vec::new();
        let mut left_out = crate::report::left_out(&dry.parsed.program);
        let steady = steady_s;
        let total_s = loop_time_s(&dry);
        for (k, nest) in dry.nests.iter().enumerate() {
            let run = dry.summary.nests.iter().find(|s| s.name == nest.name);
            let line = run.map_or(0, |s| s.line);
            let skip = match run {
                None | Some(NestSummary { invocations: 0, .. }) => {
                    Some("not run by the program: nothing to measure it on".to_string())
                }
                Some(s)
                    if dry.parsed.program.auto_regions && steady(s) < AUTO_MIN_SHARE * total_s =>
                {
                    Some(format!(
                        "{:.2}% of the time of the program's loop nests (found without \
                         markers, nests under {:.0}% are left out)",
                        100.0 * steady(s) / total_s.max(1e-300),
                        100.0 * AUTO_MIN_SHARE
                    ))
                }
                Some(_) => None,
            };
            // This nest's share of the time left.
            let share = self.budget.map(|b| {
                let left = b.saturating_sub(Duration::from_secs_f64(clock.elapsed()));
                left / (dry.nests.len() - k) as u32
            });
            let skip = skip.or_else(|| {
                (share == Some(Duration::ZERO)).then(|| {
                    "not tuned: the time budget (--budget-s) ran out before it".to_string()
                })
            });
            if let Some(reason) = skip {
                left_out.push(crate::report::LeftOut {
                    line,
                    what: format!("nest {}", nest.name),
                    reason,
                });
                continue;
            }
            let bench = NestBench::new(&dry, nest, &cflags, &measuring);
            let ctx = NestContext {
                name: &p.name,
                dry: &dry,
                db: &db,
                machine: machine.as_ref(),
            };
            match self.tune_nest(&ctx, &bench, ranker.as_mut(), &mut time, share) {
                Ok(r) => nests.push(r),
                Err(Error::Unmeasurable(reason)) => left_out.push(crate::report::LeftOut {
                    line,
                    what: format!("nest {}", nest.name),
                    reason,
                }),
                Err(e) => return Err(e),
            }
        }
        // The whole nests, each measured as the program runs it.
        let ctx = NestContext {
            name: &p.name,
            dry: &dry,
            db: &db,
            machine: machine.as_ref(),
        };
        let out_of_time = || {
            self.budget
                .is_some_and(|b| Duration::from_secs_f64(clock.elapsed()) >= b)
        };
        let wholes = self.tune_wholes(
            &ctx,
            &mut nests,
            &cflags,
            &mut time,
            &mut left_out,
            &out_of_time,
        )?;
        let mut wholes = wholes;
        let machine = self.raise_roofs(machine, &mut nests, &mut wholes);
        let mut report = ApplyReport {
            program: dry.parsed.program.name.clone(),
            file: dry.parsed.program.file.clone(),
            k: self.k,
            static_only: self.static_only,
            ranker: self.ranker,
            nests,
            wholes,
            source: String::new(),
            openmp: false,
            check: None,
            check_with_teams: None,
            check_inexact: None,
            time: TimeSplit::default(),
            machine: machine.map(|m| m.cpu_model),
            left_out,
            auto_regions: dry.parsed.program.auto_regions,
        };
        let original = std::fs::read_to_string(&report.file).map_err(Error::read(&report.file))?;
        let emitted = emit(&dry, &report)?;
        report.source = emitted.source;
        report.openmp = emitted.openmp;
        // The whole program, original against tuned: a nest that won on its cutout can
        // still lose in the program (other data placement, other neighbours in the
        // cache); a tuned program that is not faster beyond the noise is given up.
        let any_chosen = report.rows().any(|n| !n.chosen.steps.is_empty());
        // Recipes whose cutouts promise the program almost nothing are not worth a
        // changed file, nor the check that could not tell their gain from noise.
        let promised = promised_share(&dry, &report, total_s);
        let unpromising =
            any_chosen && self.check_runs > 0 && promised < crate::check::MIN_PROMISED_GAIN;
        if unpromising {
            report.revert(
                original.clone(),
                &format!(
                    "together the kept recipes save {:.2}% of the program's loop time on \
                     their cutouts, below the {:.0}% a whole-program check can tell from \
                     noise: the original is kept, unchecked",
                    100.0 * promised,
                    100.0 * crate::check::MIN_PROMISED_GAIN
                ),
            );
        }
        if any_chosen && !unpromising && self.check_runs > 0 {
            let check =
                |report: &ApplyReport, timed: Option<&(String, String)>, time: &mut TimeSplit| {
                    self.say(&p.name, "whole-program check");
                    let check_clock = Clock::start();
                    let mut c = clock.add_to(&mut time.measuring_s, || {
                        crate::check::program_check(
                            &self.toolchain,
                            self.check_runs,
                            total_s,
                            self.timeout,
                            p,
                            crate::check::CheckFiles {
                                tuned: &report.source,
                                order: report.order(),
                                timed,
                                starts_team: report.starts_team(),
                            },
                            &dry.cache.root.join("check"),
                        )
                    })?;
                    c.seconds = check_clock.elapsed();
                    Ok::<_, Error>(c)
                };
            let c = check(&report, emitted.timed.as_ref(), &mut time)?;
            report.check = Some(c);
            // Another choice, written and checked.
            let recheck = |alt: &mut ApplyReport, time: &mut TimeSplit| {
                let again = emit(&dry, alt)?;
                (alt.source, alt.openmp) = (again.source, again.openmp);
                check(alt, again.timed.as_ref(), time)
            };
            // Lost with a recipe that starts an OpenMP team: once more with each
            // nest's fastest candidate that starts none.
            if let Some(mut alt) = report
                .check
                .as_ref()
                .filter(|c| c.reverted)
                .and_then(|_| report.without_teams())
            {
                let second = recheck(&mut alt, &mut time)?;
                alt.check_with_teams = report.check.take();
                alt.check = Some(second);
                report = alt;
            }
            // Faster, but printing other results than the user's program: once more
            // with each nest's fastest candidate that computes in the user's order,
            // else the user's file.
            if !self.reassociate
                && report
                    .check
                    .as_ref()
                    .is_some_and(|c| !c.reverted && !c.same_output)
            {
                if let Some(mut alt) = report.exact_only() {
                    let second = recheck(&mut alt, &mut time)?;
                    alt.check_inexact = report.check.take();
                    alt.check = Some(second);
                    report = alt;
                }
                if let Some(c) = report.check.as_mut().filter(|c| !c.same_output) {
                    c.reverted = true;
                    c.other_results = true;
                }
            }
            if let Some(c) = report.check.as_ref().filter(|c| c.reverted) {
                let why = if c.other_results {
                    "the tuned program printed other results than the original"
                } else {
                    "the whole tuned program was not faster beyond the noise"
                };
                report.revert(original, why);
            }
        }
        time.total_s = clock.elapsed();
        report.time = time;
        Ok(report)
    }

    /// One nest: baseline, features, retrieval, the candidates measured, the choice.
    fn tune_nest(
        &self,
        ctx: &NestContext,
        bench: &NestBench,
        ranker: &mut dyn Ranker,
        time: &mut TimeSplit,
        share: Option<Duration>,
    ) -> Result<NestReport> {
        let clock = Clock::start();
        let nest = bench.nest;
        let program = bench.program;
        let mut base = self.baseline(ctx, bench)?;
        base.counters = clock.add_to(&mut time.profiling_s, || crate::counters::read(bench));
        // The features read the time of the nest's normal form: one more build and run
        // where the nest is not written in it (profiling, not a candidate).
        let normal = crate::features::normal_form(program, nest);
        let feature_s = clock.add_to(&mut time.profiling_s, || {
            let measure = crate::tune_loop::baseline_measure(&self.measure);
            let measure = if base.run.stats.median >= ONE_RUN_BASELINE_S {
                measure.long_reps(1)
            } else {
                measure
            };
            feature_time(bench, normal.as_ref(), base.run.stats.median, &measure)
        })?;
        let (features, counts) = clock.add_to(&mut time.profiling_s, || {
            nest_features(
                program,
                nest,
                normal.as_ref(),
                &ctx.dry.cache.data(),
                feature_s,
                &base.counters,
                ctx.machine,
            )
            .ok_or_else(|| Error::Failed(format!("{}: no features", nest.name)))
        })?;
        let flops = counts.map(|c| (c.flops, c.bytes_compulsory));
        let visited = clock.add_to(&mut time.embedding_s, || {
            // Entries measured with this machine's vector registers first (re-fitting
            // sizes register and vector tiles for this machine either way).
            let isa = embeddings::db::vector_isa(
                ctx.machine
                    .map_or(crate::sizing::Cpu::host().flags, |m| &m.flags),
            );
            let ranked = crate::retrieve::rank_by_isa(
                ranker,
                ctx.db,
                Query::Nest(&features),
                &|e| e.best().is_some(),
                isa,
            )?;
            Ok::<_, Error>(walk(
                ctx.db,
                ranked,
                self.k,
                program,
                nest.region,
                nest.root,
            ))
        })?;
        let mut visited = visited;
        let root = nest_root(program, nest);
        if let Some(root) = root {
            for v in &mut visited {
                v.recipe = dense::fit_to_machine(&v.recipe, program, root, ctx.machine);
            }
            // Register tiles sized elsewhere become one recipe here: a later pick equal
            // to an earlier one is passed over as the same recipe.
            for i in 0..visited.len() {
                if !visited[i].is_pick() {
                    continue;
                }
                if let Some(j) =
                    (0..i).find(|&j| visited[j].is_pick() && visited[j].recipe == visited[i].recipe)
                {
                    visited[i].outcome = crate::retrieve::Outcome::Same(j);
                }
            }
        }
        let mut candidates: Vec<Candidate> = visited
            .iter()
            .map(|v| passed_over(ctx.db, &visited, v))
            .collect();
        let mut picks: Vec<Option<Recipe>> = visited
            .iter()
            .map(|v| v.is_pick().then(|| v.recipe.clone()))
            .collect();
        let rules = root.map_or_else(Vec::new, |root| {
            rule_recipes(program, nest.region, root, ctx.machine)
        });
        budget::admit(
            self.k,
            &mut candidates,
            &mut picks,
            rules,
            &dense::rule_candidate,
        );
        // The program's own team runs this nest (a function its parallel region calls):
        // a recipe runs it on one thread, since a team of its own would start inside
        // the program's.
        let team_calls = ctx
            .dry
            .summary
            .nests
            .iter()
            .find(|s| s.name == nest.name)
            .map_or(0, |s| s.concurrent);
        if team_calls > 0 {
            for i in 0..picks.len() {
                let Some(r) = picks[i].as_ref() else { continue };
                if !r.steps.iter().any(ir::transform::Step::starts_team) {
                    continue;
                }
                let mut serial = Recipe::default();
                for (k, step) in r.steps.iter().enumerate() {
                    match step.serial() {
                        Some(s) => serial.steps.push(s),
                        None => candidates[i].dropped.push(format!(
                            "recipe step {k}: a parallel loop, where the program's own team \
                             runs this nest ({team_calls} of its calls outside the main thread)"
                        )),
                    }
                }
                let c = &mut candidates[i];
                if serial.steps.is_empty() || picks[..i].iter().any(|q| q.as_ref() == Some(&serial))
                {
                    c.verdict = crate::report::CandidateVerdict::NotApplicable;
                    c.why = "on one thread, no step of the recipe applies or it is a recipe \
                             measured already (passed over, not measured)"
                        .into();
                    picks[i] = None;
                } else {
                    c.recipe = serial.clone();
                    picks[i] = Some(serial);
                }
            }
        }
        let time_left =
            || share.map(|d| d.saturating_sub(Duration::from_secs_f64(clock.elapsed())));
        let mut measured = self.measure_picks(
            ctx,
            bench,
            &base,
            &picks,
            Proposer::Transfer,
            &mut candidates,
            time_left(),
        )?;
        self.one_thread(
            ctx,
            bench,
            &base,
            &mut candidates,
            &mut picks,
            &mut measured,
            time_left(),
        )?;
        if self.refine > 0 {
            self.refine(
                ctx,
                bench,
                &base,
                &mut candidates,
                &mut picks,
                &mut measured,
                &time_left,
            )?;
        }
        self.complete_baseline(bench, &mut base, &mut candidates)?;
        clock.add_to(&mut time.building_s, || {
            self.same_order(bench, &mut candidates)
        })?;
        Ok(nest_report(
            ctx, bench, base, candidates, &picks, measured, flops, time, &clock,
        ))
    }

    /// The untransformed nest built and measured on its cutout, its cold runs where
    /// they matter; a nest whose cutout cannot reproduce the program is refused.
    fn baseline(&self, ctx: &NestContext, bench: &NestBench) -> Result<Baseline> {
        let nest = bench.nest;
        let program = bench.program;
        self.say(ctx.name, &format!("{}: baseline", nest.name));
        let builder = Timed::new(bench.builder());
        let runner = Timed::new(bench.runner());
        let built = crate::builder::Builder::build(&builder, &Recipe::default())?;
        // The untransformed cutout is generated from code that builds: a failure
        // is ours, not a verdict on the user's program.
        let exe = match built {
            crate::builder::Built::Exe(exe) => exe,
            crate::builder::Built::Failed(why) | crate::builder::Built::Refused(why) => {
                return Err(Error::Failed(format!(
                    "internal: the cutout of {} does not build under the user's flags ({why}); please report",
                    nest.name
                )))
            }
        };
        // What the dry run saw of the nest: a nest of seconds per run gets one run
        // first, which a candidate several times faster settles (`complete_baseline`).
        let seen = ctx
            .dry
            .summary
            .nests
            .iter()
            .chain(&ctx.dry.summary.wholes)
            .find(|s| s.name == nest.name);
        let dry_s = seen.map_or(0.0, |s| s.min_s);
        let measure = crate::tune_loop::baseline_measure(&self.measure);
        let run = runner.run(
            &exe,
            "original",
            &if dry_s >= ONE_RUN_BASELINE_S {
                measure.long_reps(1)
            } else {
                measure
            },
        )?;
        // Pointers read as arrays are saved apart: where they overlap in the program,
        // the cutout, on separate copies, computes something else.
        let pointer = |a: &String| program.array(a).is_some_and(|x| x.pointer());
        let rows = |a: &String| program.array(a).is_some_and(|x| x.rows);
        if run.verdict != Verdict::Verified
            && (nest.arrays.iter().filter(|a| pointer(a)).count() > 1
                || nest.arrays.iter().any(rows))
        {
            return Err(Error::Unmeasurable(format!(
                "its cutout does not reproduce the program's outputs ({}): its pointers \
                 may overlap in the program",
                run.verdict.describe()
            )));
        }
        if run.verdict != Verdict::Verified {
            return Err(Error::Failed(format!(
                "internal: the cutout of {} does not reproduce its saved outputs under the user's flags ({}); please report",
                nest.name,
                run.verdict.describe()
            )));
        }
        // How often the program runs the nest, and the baseline's cold run where it
        // can matter.
        let calls = seen.map_or(1, |s| s.invocations.max(1));
        let cold_matters = calls as f64 * run.stats.median < COLD_MATTERS_S;
        let first = if cold_matters {
            Some(self.cold(&runner, &exe, run.first_s)?)
        } else {
            None
        };
        Ok(Baseline {
            run,
            exe,
            first,
            calls,
            building_s: builder.seconds(),
            measuring_s: runner.seconds(),
            counters: Vec::new(),
        })
    }

    /// Measures the recipes `picks` (one per candidate; `None`: passed over) through
    /// the tuning loop, one at a time, against the baseline, and records each trial on
    /// its candidate (cold runs for those that beat the baseline warm, where they
    /// matter). Returns the variants measured (the baseline included) and the seconds
    /// spent building and running them.
    #[allow(clippy::too_many_arguments)]
    fn measure_picks(
        &self,
        ctx: &NestContext,
        bench: &NestBench,
        base: &Baseline,
        picks: &[Option<Recipe>],
        proposer: Proposer,
        candidates: &mut [Candidate],
        time_left: Option<Duration>,
    ) -> Result<Measured> {
        let nest = bench.nest;
        let builder = Timed::new(bench.builder());
        let runner = Timed::new(bench.runner());
        let listed = priority::measurement_order(candidates, picks);
        let total = listed.len();
        // What each pick is worth before it runs: a rule's, or the speedup its
        // neighbour gave where it was found.
        let priors: Vec<(&Recipe, priority::Prior)> = candidates
            .iter()
            .zip(picks)
            .filter_map(|(c, p)| p.as_ref().map(|r| (r, priority::Prior::of(c))))
            .collect();
        let base_median = base.run.stats.median;
        let mut strategy = ListedStrategy::new(listed, proposer);
        let mut n = 0;
        let mut trials = tune_nest(
            bench.target(),
            &builder,
            &runner,
            &mut strategy,
            &mut MemoryRecords::default(),
            &Budget {
                kill: Some((crate::tune_loop::KILL_FACTOR, base.run.stats)),
                time: time_left,
                // Built all at once, in parallel, before the first is measured: no
                // build runs beside a measurement.
                batch: total.max(1),
                ..Budget::unlimited()
            },
            &self.measure,
            &mut |recipe, bounds| {
                n += 1;
                let prior = priors.iter().find(|(r, _)| *r == recipe).map(|(_, p)| p);
                let skip = prior.and_then(|p| p.hopeless(base_median, bounds));
                if skip.is_none() {
                    self.say(ctx.name, &format!("{}: candidate {n}/{total}", nest.name));
                }
                skip
            },
        )?;
        // Two close winners, one of them stopped early: measured again in full, so that
        // the choice between them rests on like samples (`priority::close_winners`).
        for i in priority::close_winners(&trials, &base.run.stats) {
            if let Trial::Ran { exe, run, .. } = &mut trials[i] {
                let again = runner.run(exe, "candidate", &self.measure)?;
                if again.verdict == Verdict::Verified {
                    **run = again;
                }
            }
        }
        let measured = 1 + trials
            .iter()
            .filter(|t| matches!(t, Trial::Ran { .. }))
            .count();
        for t in &trials {
            let Some(c) = candidates
                .iter_mut()
                .zip(picks)
                .find(|(_, p)| p.as_ref() == Some(t.recipe()))
                .map(|(c, _)| c)
            else {
                continue;
            };
            record_trial(c, t, &base.run.stats);
            if let (Trial::Ran { exe, run, .. }, true) = (t, base.first.is_some()) {
                if run.verdict == Verdict::Verified
                    && crate::select::beats(&base.run.stats, &run.stats)
                {
                    c.first = Some(self.cold(&runner, exe, run.first_s)?);
                }
            }
        }
        if time_left.is_some() {
            for (c, p) in candidates.iter_mut().zip(picks) {
                if p.as_ref()
                    .is_some_and(|p| !trials.iter().any(|t| t.recipe() == p))
                {
                    c.why = "cut: the nest's share of the time budget (--budget-s) ran out \
                             before it was measured"
                        .into();
                }
            }
        }
        Ok(Measured {
            variants: measured,
            building_s: builder.seconds(),
            measuring_s: runner.seconds(),
        })
    }

    /// The median cold run of a built variant: `first` (the cold run of the
    /// measurement just made) and [`COLD_RUNS`]` - 1` more, each the only run of a
    /// fresh process; infinite when a run fails.
    fn cold(&self, runner: &dyn Runner, exe: &Path, first: f64) -> Result<f64> {
        let once = Measure {
            warmup: 0,
            repetitions: 1,
            target_ci: None,
            counters: Vec::new(),
            ..self.measure.clone()
        };
        let mut v = vec![first];
        for _ in 1..COLD_RUNS {
            let r = runner.run(exe, "cold", &once)?;
            // A variant that fails a run is not to be trusted in the program.
            v.push(if r.verdict == Verdict::Verified {
                r.first_s
            } else {
                f64::INFINITY
            });
        }
        v.sort_by(f64::total_cmp);
        Ok(v[v.len() / 2])
    }
}

/// A nest's time in one program run, from the dry run: its fastest run times its runs,
/// so that a first run's start-up (the first parallel region of a process) does not
/// count.
pub(crate) fn steady_s(s: &NestSummary) -> f64 {
    s.min_s * s.invocations as f64
}

/// The program's loop time per run: its nests' [`steady_s`] summed.
pub(crate) fn loop_time_s(dry: &DryRun) -> f64 {
    dry.summary.nests.iter().map(steady_s).sum()
}

/// A nest whose dry run took this long (seconds, its fastest invocation) gets a baseline
/// of one run at first ([`Pipeline::complete_baseline`]).
pub const ONE_RUN_BASELINE_S: f64 = 1.0;

/// A candidate whose every run is this many times faster than a baseline's one long run
/// settles it ([`Pipeline::complete_baseline`]). Runs of a second and more on a cutout
/// spread by a few percent (the baselines of seidel-2d, floyd-warshall and correlation
/// at LARGE: ±1 to ±5%), a tenth of this gap; the whole-program check confirms the gain
/// where the program runs it.
pub const ONE_RUN_GAIN: f64 = 1.5;

/// Whether a verified candidate's every run is [`ONE_RUN_GAIN`] times below a
/// baseline's one run `one` (seconds).
fn one_run_settled(one: f64, candidates: &[Candidate]) -> bool {
    candidates.iter().any(|c| {
        c.verdict == CandidateVerdict::Verified
            && c.stats
                .is_some_and(|s| s.n > 0 && s.max * ONE_RUN_GAIN <= one)
    })
}

impl Pipeline {
    /// A baseline of one run ([`ONE_RUN_BASELINE_S`]) is settled where a verified
    /// candidate's slowest run is [`ONE_RUN_GAIN`] times below it;
    /// otherwise it gets the rest of its runs, and the candidates' speedups are read
    /// against all of them. Noted on the baseline run's row either way.
    fn complete_baseline(
        &self,
        bench: &NestBench,
        base: &mut Baseline,
        candidates: &mut [Candidate],
    ) -> Result<()> {
        // Only the first look at a nest of seconds ([`ONE_RUN_BASELINE_S`]) has one run.
        if base.run.stats.n != 1 || one_run_settled(base.run.stats.median, candidates) {
            return Ok(());
        }
        let runner = Timed::new(bench.runner());
        let more = runner.run(
            &base.exe,
            "original",
            &crate::tune_loop::baseline_measure(&self.measure)
                .long_reps(crate::tune_loop::BASELINE_LONG_REPS - 1),
        )?;
        base.measuring_s += runner.seconds();
        if more.verdict != Verdict::Verified {
            return Ok(());
        }
        let mut samples = base.run.samples.clone();
        samples.extend(&more.samples);
        base.run.stats = Stats::from_samples(&samples);
        base.run.samples = samples;
        base.run.wall_s += more.wall_s;
        for c in candidates.iter_mut() {
            if let Some(s) = c.stats {
                c.speedup = base.run.stats.median / s.median.max(1e-12);
            }
        }
        Ok(())
    }
}

/// The recipes the rules propose for the nest at `root`, whatever the database holds:
/// register tiles of its products (`pipeline/dense.rs`), time tiles of its time loop
/// (`pipeline/stencil.rs`), a loop order of unit stride (`pipeline/order.rs`). Each is `(rule, what the candidate is called, recipe)`.
fn rule_recipes(
    program: &ir::Program,
    region: usize,
    root: &ir::Loop,
    machine: Option<&MachineInfo>,
) -> Vec<budget::RuleRecipe> {
    let dense = dense::register_tile_recipes(program, root, machine)
        .into_iter()
        .map(|(what, r)| ("register-tile rule", what, r));
    let stencil = stencil::time_tile_recipes(program, root, machine)
        .into_iter()
        .map(|(what, r)| ("time-tile rule", what, r));
    let order = order::loop_order_recipes(program, region, root)
        .into_iter()
        .map(|(what, r)| ("loop-order rule", what, r));
    dense.chain(stencil).chain(order).collect()
}

/// The choice among the measured candidates and the nest's report row.
#[allow(clippy::too_many_arguments)]
fn nest_report(
    ctx: &NestContext,
    bench: &NestBench,
    base: Baseline,
    mut candidates: Vec<Candidate>,
    picks: &[Option<Recipe>],
    measured: Measured,
    flops: Option<(u64, u64)>,
    time: &mut TimeSplit,
    clock: &Clock,
) -> NestReport {
    let nest = bench.nest;
    let program = bench.program;
    let base_timing = Timing {
        stats: base.run.stats,
        first: base.first,
    };
    let kept = judge(&mut candidates, &base_timing, base.calls);
    let building_s = base.building_s + measured.building_s;
    let measuring_s = base.measuring_s + measured.measuring_s;
    time.building_s += building_s;
    time.measuring_s += measuring_s;
    let nest_time = NestTime {
        baseline_s: base.run.wall_s,
        candidates_s: candidates.iter().map(|c| c.run_s).sum(),
        building_s,
        measuring_s,
        total_s: clock.elapsed(),
    };
    let tuned = kept.and_then(|i| candidates[i].stats);
    let roof = ctx.machine.map(|m| Roof::of(m, true));
    let efficiency = |t: f64| -> Option<f64> {
        Some(crate::report::efficiency(
            roof.as_ref()?,
            &nest.name,
            flops?,
            t,
        ))
    };
    let base_stats = base.run.stats;
    let tuned_median = tuned.as_ref().map_or(base_stats.median, |s| s.median);
    NestReport {
        nest: nest.name.clone(),
        line: nest_root(program, nest).map_or(0, |l| l.pos.line),
        baseline: base_stats,
        tuned,
        speedup: base_stats.median / tuned_median.max(1e-12),
        chosen: kept
            .map(|i| candidates[i].recipe.clone())
            .unwrap_or_default(),
        neighbours: candidates
            .iter()
            .zip(picks)
            .filter(|(_, p)| p.is_some())
            .map(|(c, _)| c.from.clone())
            .collect(),
        candidates,
        user_parallel: user_parallel(program, nest),
        counters: base.counters.clone(),
        efficiency_before: efficiency(base_stats.median),
        efficiency_after: efficiency(tuned_median),
        work: flops,
        measured_variants: measured.variants,
        invocations: base.calls,
        baseline_first: base.first,
        baseline_batch: base.run.batch,
        time: nest_time,
    }
}

/// The baseline of a nest: its warm run, its cold runs where they matter, how often
/// the program runs it, and the seconds spent building and running it.
struct Baseline {
    run: profiling::cutout::CutoutRun,
    /// The untransformed cutout, for the runs that complete a baseline of one long run
    /// ([`Pipeline::complete_baseline`]).
    exe: std::path::PathBuf,
    first: Option<f64>,
    calls: u64,
    building_s: f64,
    measuring_s: f64,
    /// Hardware counters of the untransformed nest (`crate::counters`).
    counters: Vec<profiling::cutout::CounterReading>,
}

/// What measuring the candidates took.
struct Measured {
    variants: usize,
    building_s: f64,
    measuring_s: f64,
}

/// What one nest's tuning needs of the program.
struct NestContext<'a> {
    name: &'a str,
    dry: &'a DryRun,
    db: &'a Database,
    machine: Option<&'a MachineInfo>,
}

/// The candidate for an entry met on the retrieval walk; one passed over says why.
fn passed_over(db: &Database, visited: &[Visited], v: &Visited) -> Candidate {
    let e = &db.entries[v.index];
    let mut c = Candidate::unmeasured(
        Neighbour {
            program: e.program.clone(),
            nest: e.nest.clone(),
            distance: v.distance,
            speedup_there: e.speedup(),
        },
        v.recipe.clone(),
        v.dropped
            .iter()
            .map(|(k, why)| format!("recipe step {k}: {why}"))
            .collect(),
    );
    match &v.outcome {
        Outcome::Pick => {}
        Outcome::Empty => {
            c.verdict = CandidateVerdict::NotApplicable;
            c.why = "no step of the recipe applies to this nest (passed over, not measured)".into();
        }
        Outcome::Same(at) => {
            let first = &db.entries[visited[*at].index];
            c.verdict = CandidateVerdict::SameRecipe;
            c.why = format!(
                "re-fitted, the recipe from {} {} again (passed over, not measured)",
                first.program, first.nest
            );
        }
        Outcome::Unreadable(e) => {
            c.verdict = CandidateVerdict::Unreadable;
            c.why = format!("the entry's recipe cannot be read: {e}");
        }
    }
    c
}

/// A trial's outcome on its candidate.
fn record_trial(c: &mut Candidate, t: &Trial, base: &Stats) {
    match t {
        Trial::Refused { why, .. } => {
            c.verdict = CandidateVerdict::Refused;
            c.why = why.clone();
        }
        Trial::BuildFailed { error, .. } => {
            c.verdict = CandidateVerdict::BuildFailed;
            c.why = error.clone();
        }
        Trial::Skipped { why, .. } => c.why = why.clone(),
        Trial::Ran { run, .. } => {
            c.verdict = CandidateVerdict::from(&run.verdict);
            c.run_s = run.wall_s;
            if run.verdict == Verdict::Verified {
                c.speedup = base.median / run.stats.median.max(1e-12);
                c.stats = Some(run.stats);
                c.killed = run.killed;
                c.faster = run.faster;
                c.futile = run.futile;
                c.exact = run.exact;
            } else if let Verdict::Cut { .. } = run.verdict {
                c.killed = true;
                c.why = run.verdict.describe();
            } else {
                c.why = format!("not verified: {}", run.verdict.describe());
            }
        }
    }
}

/// Each candidate's timing as [`select`] judges it: None for one not verified, or
/// verified but given up already (its `why` said).
fn candidate_timings(candidates: &[Candidate]) -> Vec<Option<Timing>> {
    candidates
        .iter()
        .map(|c| {
            c.stats.filter(|_| c.why.is_empty()).map(|stats| Timing {
                stats,
                first: c.first,
            })
        })
        .collect()
}

/// Judges the measured candidates ([`select`]), marks the kept one and says why each
/// verified one was kept or not; returns the kept one.
fn judge(candidates: &mut [Candidate], base: &Timing, calls: u64) -> Option<usize> {
    let timings = candidate_timings(candidates);
    let s = select(base, calls, &timings);
    let interval = |s: &Stats| {
        let ms = profiling::report::ms;
        format!("{}..{} ms", ms(s.median_ci.0), ms(s.median_ci.1))
    };
    // A baseline of one long run, settled by a candidate whose every run is
    // `ONE_RUN_GAIN` times below it (`Pipeline::complete_baseline`).
    let base_interval = if base.stats.n == 1 {
        format!(
            "one run, {} ms: a candidate {}x below it settles it",
            profiling::report::ms(base.stats.median),
            ONE_RUN_GAIN
        )
    } else {
        interval(&base.stats)
    };
    for ((c, j), t) in candidates.iter_mut().zip(&s.judgements).zip(&timings) {
        let (Some(j), Some(t)) = (j, t) else {
            continue;
        };
        c.why = match j {
            Judgement::SlowerCold => format!(
                "verified, {:.2}x faster warm, but not in the program: its cold first run takes {:.4} ms (baseline {:.4} ms) and the nest runs {} time(s) per program run, {:.4} ms in all against the baseline's {:.4} ms",
                c.speedup,
                t.first.unwrap_or(0.0) * 1e3,
                base.first.unwrap_or(0.0) * 1e3,
                calls,
                crate::select::program_time(t.first, calls, t.stats.median) * 1e3,
                crate::select::program_time(base.first, calls, base.stats.median) * 1e3
            ),
            Judgement::Faster => format!(
                "verified, {:.2}x faster beyond the noise (95% interval of its median {}, baseline's {}){}",
                c.speedup,
                interval(&t.stats),
                base_interval.clone(),
                if c.faster {
                    format!(
                        "; stopped after {} timed runs, all below the 95% interval of the best median so far",
                        t.stats.n
                    )
                } else {
                    String::new()
                }
            ),
            Judgement::NotFaster if c.killed => format!(
                "verified, but clearly slower ({:.2}x): stopped after {} timed run(s), slower than \
                 the best median so far (a run over {}x it, or the 95% interval of the runs' mean above it)",
                c.speedup,
                t.stats.n,
                crate::tune_loop::KILL_FACTOR
            ),
            Judgement::NotFaster if c.futile => format!(
                "verified, but not faster beyond the noise ({:.2}x): stopped after 3 timed runs, \
                 not all below the baseline's interval ({}), which the interval of a long run's \
                 median (its min..max until the eighth run) cannot then pass",
                c.speedup,
                base_interval.clone()
            ),
            Judgement::NotFaster => format!(
                "verified, but not faster beyond the noise ({:.2}x; 95% interval of its median {} vs the baseline's {})",
                c.speedup,
                interval(&t.stats),
                base_interval.clone()
            ),
        };
    }
    if let Some(i) = s.best {
        candidates[i].kept = true;
    }
    s.best
}

/// The user's source with every nest's chosen recipe applied, whether it needs OpenMP,
/// and the copies its check times. A whole nest with a chosen recipe stands for the
/// nests inside it.
fn emit(dry: &DryRun, report: &ApplyReport) -> Result<crate::emit::Emitted> {
    crate::emit::emitted(
        &dry.parsed.program,
        &chosen_recipes(dry, report),
        "re-applying the chosen recipes",
        true,
    )
}

/// The share of the program's loop time (`total_s`, seconds per run) that the kept
/// recipes save on their cutouts ([`ApplyReport::promised_saving_s`]); 1 where the loop
/// time is unknown.
fn promised_share(dry: &DryRun, report: &ApplyReport, total_s: f64) -> f64 {
    if total_s <= 0.0 {
        return 1.0;
    }
    let kept_wholes: Vec<&ir::codegen::Nest> = dry
        .wholes
        .iter()
        .filter(|w| {
            report
                .wholes
                .iter()
                .any(|r| r.nest == w.name && !r.chosen.steps.is_empty())
        })
        .collect();
    let in_kept_whole = |name: &str| {
        dry.nests
            .iter()
            .find(|n| n.name == name)
            .is_some_and(|n| kept_wholes.iter().any(|w| n.is_inside(w)))
    };
    report.promised_saving_s(&in_kept_whole) / total_s
}

/// The recipe of every nest and whole nest in `report`, as (region, root loop, recipe),
/// a whole nest's standing for the nests inside it.
fn chosen_recipes(dry: &DryRun, report: &ApplyReport) -> Vec<(usize, usize, Recipe)> {
    let chosen = |name: &str, rows: &[NestReport]| {
        rows.iter()
            .find(|r| r.nest == name)
            .filter(|r| !r.chosen.steps.is_empty())
            .map(|r| r.chosen.clone())
    };
    let wholes: Vec<(&ir::codegen::Nest, Recipe)> = dry
        .wholes
        .iter()
        .filter_map(|w| Some((w, chosen(&w.name, &report.wholes)?)))
        .collect();
    let mut recipes: Vec<(usize, usize, Recipe)> = dry
        .nests
        .iter()
        .filter(|n| !wholes.iter().any(|(w, _)| n.is_inside(w)))
        .filter_map(|n| {
            let r = report.nests.iter().find(|r| r.nest == n.name)?;
            Some((n.region, n.root, r.chosen.clone()))
        })
        .collect();
    recipes.extend(wholes.into_iter().map(|(w, r)| (w.region, w.root, r)));
    recipes
}

/// The loops of `nest` that the user declared parallel, with the analysis' verdict.
fn user_parallel(program: &ir::Program, nest: &ir::codegen::Nest) -> Vec<UserParallel> {
    let Some(root) = program.find_loop(nest.region, nest.root) else {
        return Vec::new();
    };
    std::iter::once(root)
        .chain(ir::program::loops(&root.body))
        .flat_map(|l| {
            l.directives
                .iter()
                .filter(|d| d.is_users() && d.is_parallel_for())
                .map(move |d| UserParallel {
                    line: l.pos.line,
                    var: l.var.clone(),
                    directive: d.to_string(),
                    analysis_agrees: l.kind == ir::program::LoopKind::Map
                        || (l.kind == ir::program::LoopKind::Reduction
                            && d.to_string().contains("reduction(")),
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A verified candidate of these run times (seconds).
    fn measured(runs: &[f64]) -> Candidate {
        let from = Neighbour {
            program: "p".into(),
            nest: "nest0".into(),
            distance: 0.0,
            speedup_there: 1.0,
        };
        let mut c = Candidate::unmeasured(from, Recipe::default(), Vec::new());
        c.verdict = CandidateVerdict::Verified;
        c.stats = Some(Stats::from_samples(runs));
        c
    }

    #[test]
    fn a_baseline_of_one_long_run_is_settled_only_by_a_candidate_whose_every_run_is_far_below() {
        // seidel-2d at LARGE: one baseline run of 21.5 s, a time tile's runs of 10.9 s.
        assert!(one_run_settled(21.5, &[measured(&[10.9, 10.8, 11.0])]));
        // floyd-warshall's best of 1.76x, its slowest run 10.56 s against 18.1 s.
        assert!(one_run_settled(18.1, &[measured(&[10.23, 10.56, 10.27])]));
        // 1.4x: the baseline gets its other runs.
        assert!(!one_run_settled(14.0, &[measured(&[10.0, 10.0, 10.0])]));
        // One slow run of the candidate is enough to ask for them too.
        assert!(!one_run_settled(21.5, &[measured(&[10.9, 15.0, 11.0])]));
        // A candidate that failed its verification settles nothing, however fast.
        let mut wrong = measured(&[1.0, 1.0, 1.0]);
        wrong.verdict = CandidateVerdict::WrongResult;
        assert!(!one_run_settled(21.5, &[wrong.clone()]));
        assert!(one_run_settled(21.5, &[wrong, measured(&[9.0])]));
        assert!(!one_run_settled(21.5, &[]));
    }
}
