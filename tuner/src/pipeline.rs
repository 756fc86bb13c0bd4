//! The transfer-tuning pipeline, as a library.
//!
//! ```no_run
//! use tuner::pipeline::{Pipeline, ProgramSpec};
//! use profiling::measure::Measure;
//!
//! let program = ProgramSpec::from_args(&["gemm.c", "-DSMALL_DATASET", "-lm"]).unwrap();
//! // Static features only (no profiling pass for the features), the 3 nearest nests.
//! let report = Pipeline::static_only().top_k(3).apply(&program).unwrap();
//! println!("{}", tuner::pipeline::render(&report));
//! // With the profiling pass, and the baseline timed with 3 warmup runs and 10 repetitions.
//! let timings = Pipeline::full()
//!     .measure(&program, Measure::default().warmup(3).repetitions(10))
//!     .unwrap();
//! ```
//!
//! [`Pipeline::apply`]: a dry run with Save; per nest, a baseline measurement on the
//! saved data (the profiling pass: warmup, repetitions, counters, roofline); features and
//! embedding; the K nearest database entries; each entry's best recipe re-fitted to the
//! nest by loop roles, checked for legality, built, measured on the restored data and
//! verified against the saved outputs. A candidate is kept only if it is verified and
//! faster than the untransformed nest by more than the measured noise (its median's 95%
//! interval lies below the baseline's) and it is not slower in the program's terms: a
//! nest invoked `n` times costs its cold first run plus `n - 1` warm runs, and for a nest
//! that runs briefly the cold run (an OpenMP team to start, idle cores to wake) can
//! outweigh a faster warm run, so both are measured there (see [`COLD_RUNS`]). The tuned
//! program is the user's source with the kept recipes applied.

use crate::database::{machine_info, nest_features, nest_root};
use crate::retrieve::Outcome;
use crate::run::{dry_run, RunConfig};
use crate::{Error, Result};
use embeddings::db::Database;
use embeddings::embed::Embedder;
use ir::transform::{apply, Recipe};
use profiling::build::Toolchain;
use profiling::cc::CcArgs;
use profiling::cutout::{Cutout, Verdict};
use profiling::machine::MachineInfo;
use profiling::measure::{Measure, Stats};
use profiling::roofline::{Roof, RooflineRow};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Cold runs (each the first run of the nest in a fresh process) measured for the
/// baseline and for every candidate that beats it warm, when the nest's time in the
/// program is short enough for a cold run to matter ([`COLD_MATTERS_S`]).
pub const COLD_RUNS: usize = 3;

/// A nest whose baseline takes longer than this in the program (invocations times the
/// warm median) is ranked on warm runs alone: its cold run cannot change the outcome.
pub const COLD_MATTERS_S: f64 = 1.0;

/// The shipped model and database (`models/default/`), or `$TUNE_MODELS`.
pub fn default_models_dir() -> PathBuf {
    std::env::var_os("TUNE_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join("models")
                .join("default")
        })
}

/// A program as the compiler would be given it: the source with the region(s) first,
/// then cc flags and further `.c` files.
#[derive(Debug, Clone)]
pub struct ProgramSpec {
    pub args: CcArgs,
    /// Tune this function's body instead of `#pragma scop` regions.
    pub function: Option<String>,
    /// Arguments for the program itself.
    pub program_args: Vec<String>,
}

impl ProgramSpec {
    /// From cc-style arguments, e.g. `["gemm.c", "-DSMALL_DATASET", "-lm"]`.
    pub fn from_args(args: &[&str]) -> Result<ProgramSpec> {
        let v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        Ok(ProgramSpec {
            args: CcArgs::parse(&v)?,
            function: None,
            program_args: Vec::new(),
        })
    }
}

/// How to transfer-tune.
#[derive(Debug, Clone)]
pub struct Pipeline {
    /// Retrieve by static features only (no performance features).
    pub static_only: bool,
    pub k: usize,
    pub db: PathBuf,
    pub model: PathBuf,
    /// How baseline and candidates are measured.
    pub measure: Measure,
    pub timeout: Duration,
    pub cache_root: PathBuf,
    pub toolchain: Toolchain,
    /// Told what the pipeline is doing (for progress bars); silent by default.
    pub progress: Progress,
    /// Timed runs of each whole program (original and tuned, in rotation) in the
    /// final check; 0 skips the check.
    pub check_runs: usize,
}

/// A callback told each step of [`Pipeline::apply`] as a short line ("S1: candidate 2/3").
#[derive(Clone, Default)]
pub struct Progress(Option<std::sync::Arc<ProgressFn>>);

type ProgressFn = dyn Fn(&str) + Send + Sync;

impl Progress {
    pub fn new(f: impl Fn(&str) + Send + Sync + 'static) -> Progress {
        Progress(Some(std::sync::Arc::new(f)))
    }

    fn say(&self, what: &str) {
        if let Some(f) = &self.0 {
            f(what)
        }
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Progress(..)"
        } else {
            "Progress(none)"
        })
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
            measure: Measure::default().warmup(2).repetitions(10).counters(&[]),
            timeout: Duration::from_secs(600),
            cache_root: profiling::cache::default_root(),
            toolchain: Toolchain::default(),
            progress: Progress::default(),
            check_runs: 5,
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

    pub fn db(mut self, path: impl Into<PathBuf>) -> Pipeline {
        self.db = path.into();
        self
    }

    pub fn model(mut self, dir: impl Into<PathBuf>) -> Pipeline {
        self.model = dir.into();
        self
    }

    pub fn measured_with(mut self, m: Measure) -> Pipeline {
        self.measure = m;
        self
    }

    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Pipeline {
        self.cache_root = dir.into();
        self
    }

    /// Runs of each whole program in the final check (0: no check).
    pub fn check_runs(mut self, runs: usize) -> Pipeline {
        self.check_runs = runs;
        self
    }

    /// Calls `f` with a short line at each step of [`Pipeline::apply`].
    pub fn on_progress(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Pipeline {
        self.progress = Progress::new(f);
        self
    }

    fn run_config(&self, p: &ProgramSpec) -> RunConfig {
        RunConfig {
            function: p.function.clone(),
            program_args: p.program_args.clone(),
            ..RunConfig::tuning(
                p.args.clone(),
                self.cache_root.clone(),
                self.toolchain.clone(),
            )
        }
    }

    /// Times every nest of the program, untransformed, on its saved data.
    pub fn measure(&self, p: &ProgramSpec, m: Measure) -> Result<Vec<NestTiming>> {
        let dry = checked_dry_run(&self.run_config(p))?;
        let builds = dry.cache.root.join("cutouts");
        let scratch = dry.cache.root.join("scratch");
        let mut out = Vec::new();
        for nest in &dry.nests {
            let c = Cutout::new(
                dry.parsed.program.clone(),
                nest.clone(),
                dry.cache.data(),
                p.args.cflags.clone(),
            );
            let (r, _) = c.measure(
                &self.toolchain,
                &c.original(),
                0,
                &m,
                self.timeout,
                &builds,
                &scratch,
            )?;
            out.push(NestTiming {
                nest: nest.name.clone(),
                verdict: r.verdict.describe(),
                stats: r.stats,
                samples: r.samples,
            });
        }
        Ok(out)
    }

    /// Transfer-tunes the program (see the module documentation).
    pub fn apply(&self, p: &ProgramSpec) -> Result<ApplyReport> {
        let t_all = Instant::now();
        let mut time = TimeSplit::default();
        let db = Database::load(&self.db).map_err(|e| Error::Input(e.to_string()))?;
        if db.entries.is_empty() {
            return Err(Error::Input(format!(
                "{}: the database has no entries",
                self.db.display()
            )));
        }
        let t0 = Instant::now();
        let model = Embedder::load(&self.model).map_err(|e| Error::Input(e.to_string()))?;
        time.embedding_s += t0.elapsed().as_secs_f64();

        let t0 = Instant::now();
        self.progress.say("dry run with Save");
        let dry = checked_dry_run(&self.run_config(p))?;
        let program = &dry.parsed.program;
        let machine = machine_info(&self.cache_root, &self.toolchain);
        let roof = machine.as_ref().map(roof_of);
        time.profiling_s += t0.elapsed().as_secs_f64();
        let builds = dry.cache.root.join("cutouts");
        let scratch = dry.cache.root.join("scratch");
        // Database entries embedded by this model with all features (re-embedded when
        // the file was embedded otherwise, or when retrieval uses static features only).
        let db_emb: Vec<Vec<f32>> = if db.model == model.id() && !self.static_only {
            db.entries.iter().map(|e| e.embedding.clone()).collect()
        } else {
            let t0 = Instant::now();
            let f: Vec<_> = db.entries.iter().map(|e| &e.features).collect();
            let v = model
                .embed(&f, self.static_only)
                .map_err(|e| Error::Failed(e.to_string()))?;
            time.embedding_s += t0.elapsed().as_secs_f64();
            v
        };
        let mut nests = Vec::new();
        for nest in &dry.nests {
            let cutout = Cutout::new(
                program.clone(),
                nest.clone(),
                dry.cache.data(),
                p.args.cflags.clone(),
            );
            // Profiling pass: the baseline on the saved data.
            self.progress.say(&format!("{}: baseline", nest.name));
            let t0 = Instant::now();
            let original = cutout.original();
            let (b, _) = cutout.build(&self.toolchain, &original, &builds)?;
            time.building_s += t0.elapsed().as_secs_f64();
            let t0 = Instant::now();
            let base = cutout.run(&b.exe, "original", 0, &self.measure, self.timeout, &scratch)?;
            time.measuring_s += t0.elapsed().as_secs_f64();
            if base.verdict != Verdict::Verified {
                return Err(Error::Failed(format!(
                    "{}: the untransformed nest does not reproduce its saved outputs: {}",
                    nest.name,
                    base.verdict.describe()
                )));
            }
            // How often the program runs the nest, and the baseline's cold run where
            // it can matter.
            let calls = dry
                .summary
                .nests
                .iter()
                .find(|s| s.name == nest.name)
                .map_or(1, |s| s.invocations.max(1));
            let cold_matters = calls as f64 * base.stats.median < COLD_MATTERS_S;
            let t0 = Instant::now();
            let base_first = if cold_matters {
                Some(self.cold(&cutout, &b.exe, base.first_s, &scratch)?)
            } else {
                None
            };
            time.measuring_s += t0.elapsed().as_secs_f64();
            let t0 = Instant::now();
            let (features, counts) = nest_features(
                program,
                nest,
                &dry.cache.data(),
                base.stats.median,
                machine.as_ref(),
            )
            .ok_or_else(|| Error::Failed(format!("{}: no features", nest.name)))?;
            let flops = counts.map(|c| (c.flops, c.bytes_compulsory));
            time.profiling_s += t0.elapsed().as_secs_f64();

            // Embedding and retrieval.
            let t0 = Instant::now();
            let q = model
                .embed(&[&features], self.static_only)
                .map_err(|e| Error::Failed(e.to_string()))?
                .remove(0);
            let ranked = db.ranked(&q, &db_emb, &|e| e.best().is_some());
            let walk = crate::retrieve::walk(
                &db,
                ranked.iter().map(|n| (n.index, n.distance)),
                self.k,
                program,
                nest.region,
                nest.root,
            );
            time.embedding_s += t0.elapsed().as_secs_f64();

            // Candidates: the first K distinct re-fitted recipes of the nearest entries;
            // each checked for legality, built, measured, verified.
            let mut candidates: Vec<Candidate> = Vec::new();
            let mut measured = 1; // the baseline
            let beats = |s: &Stats| s.median_ci.1 < base.stats.median_ci.0;
            let picks = walk.iter().filter(|v| v.is_pick()).count();
            let mut pick = 0;
            for v in &walk {
                let entry = &db.entries[v.index];
                let from = Neighbour {
                    program: entry.program.clone(),
                    nest: entry.nest.clone(),
                    distance: v.distance,
                    speedup_there: entry.speedup(),
                };
                let dropped: Vec<String> = v
                    .dropped
                    .iter()
                    .map(|(k, why)| format!("recipe step {k}: {why}"))
                    .collect();
                let mut c = Candidate {
                    from,
                    recipe: v.recipe.clone(),
                    dropped,
                    verdict: String::new(),
                    stats: None,
                    first: None,
                    speedup: 0.0,
                    kept: false,
                    why: String::new(),
                };
                match &v.outcome {
                    Outcome::Pick => {}
                    Outcome::Empty => {
                        c.verdict = "not applicable".into();
                        c.why = "no step of the recipe applies to this nest (passed over, not measured)".into();
                        candidates.push(c);
                        continue;
                    }
                    Outcome::Same(at) => {
                        let first = &db.entries[walk[*at].index];
                        c.verdict = "same recipe".into();
                        c.why = format!(
                            "re-fitted, the recipe from {} {} again (passed over, not measured)",
                            first.program, first.nest
                        );
                        candidates.push(c);
                        continue;
                    }
                    Outcome::Unreadable(e) => {
                        c.verdict = "unreadable".into();
                        c.why = format!("the entry's recipe cannot be read: {e}");
                        candidates.push(c);
                        continue;
                    }
                }
                pick += 1;
                self.progress
                    .say(&format!("{}: candidate {pick}/{picks}", nest.name));
                let t = match apply(program, nest.region, nest.root, &v.recipe) {
                    Ok(t) => t,
                    Err(e) => {
                        c.verdict = "refused".into();
                        c.why = e.to_string();
                        candidates.push(c);
                        continue;
                    }
                };
                let v = cutout.variant("candidate", &t);
                let t0 = Instant::now();
                let built = cutout.build(&self.toolchain, &v, &builds);
                time.building_s += t0.elapsed().as_secs_f64();
                let exe = match built {
                    Ok((b, _)) => b.exe,
                    Err(profiling::Error::Compile { first_error, .. }) => {
                        c.verdict = "build failed".into();
                        c.why = first_error;
                        candidates.push(c);
                        continue;
                    }
                    Err(e) => return Err(e.into()),
                };
                let t0 = Instant::now();
                let r = cutout.run(&exe, "candidate", 0, &self.measure, self.timeout, &scratch)?;
                measured += 1;
                time.measuring_s += t0.elapsed().as_secs_f64();
                c.verdict = r.verdict.describe();
                if r.verdict == Verdict::Verified {
                    c.speedup = base.stats.median / r.stats.median.max(1e-12);
                    c.stats = Some(r.stats);
                    if base_first.is_some() && beats(&r.stats) {
                        let t0 = Instant::now();
                        c.first = Some(self.cold(&cutout, &exe, r.first_s, &scratch)?);
                        time.measuring_s += t0.elapsed().as_secs_f64();
                    }
                }
                candidates.push(c);
            }
            // Keep the fastest candidate that beats the baseline beyond the noise, warm,
            // and is not slower in the program once its cold run is counted.
            let in_program = |first: Option<f64>, s: &Stats| program_time(first, calls, s.median);
            let base_program = in_program(base_first, &base.stats);
            // Candidates have cold runs only where the baseline has them.
            let loses_cold = |c: &Candidate| {
                c.first
                    .zip(c.stats)
                    .is_some_and(|(f, s)| in_program(Some(f), &s) >= base_program)
            };
            for c in candidates.iter_mut() {
                // Refused, unbuildable and repeated candidates already say why.
                if !c.why.is_empty() {
                    continue;
                }
                let Some(s) = &c.stats else {
                    c.why = format!("not verified: {}", c.verdict);
                    continue;
                };
                if beats(s) && loses_cold(c) {
                    c.why = format!(
                        "verified, {:.2}x faster warm, but not in the program: its cold first run takes {:.4} ms (baseline {:.4} ms) and the nest runs {} time(s) per program run, {:.4} ms in all against the baseline's {:.4} ms",
                        c.speedup,
                        c.first.unwrap_or(0.0) * 1e3,
                        base_first.unwrap_or(0.0) * 1e3,
                        calls,
                        in_program(c.first, s) * 1e3,
                        base_program * 1e3
                    );
                } else if beats(s) {
                    c.why = format!(
                        "verified, {:.2}x faster beyond the noise (95% interval of its median {:.4}..{:.4} ms, baseline's {:.4}..{:.4} ms)",
                        c.speedup,
                        s.median_ci.0 * 1e3,
                        s.median_ci.1 * 1e3,
                        base.stats.median_ci.0 * 1e3,
                        base.stats.median_ci.1 * 1e3
                    );
                } else {
                    c.why = format!(
                        "verified, but not faster beyond the noise ({:.2}x; 95% interval of its median {:.4}..{:.4} ms vs the baseline's {:.4}..{:.4} ms)",
                        c.speedup,
                        s.median_ci.0 * 1e3,
                        s.median_ci.1 * 1e3,
                        base.stats.median_ci.0 * 1e3,
                        base.stats.median_ci.1 * 1e3
                    );
                }
            }
            let best = candidates
                .iter()
                .enumerate()
                .filter(|(_, c)| !loses_cold(c))
                .filter_map(|(i, c)| {
                    c.stats
                        .filter(|s| beats(s))
                        .map(|s| (i, in_program(c.first, &s)))
                })
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(i, _)| i);
            if let Some(i) = best {
                candidates[i].kept = true;
            }
            let tuned = best.and_then(|i| candidates[i].stats);
            let efficiency = |t: f64| -> Option<f64> {
                let r = roof.as_ref()?;
                let (fl, by) = flops?;
                Some(RooflineRow::new(&nest.name, 1, t, fl, by, "compulsory", r).efficiency)
            };
            let tuned_median = tuned.as_ref().map_or(base.stats.median, |s| s.median);
            nests.push(NestReport {
                nest: nest.name.clone(),
                line: nest_root(program, nest).map_or(0, |l| l.pos.line),
                baseline: base.stats,
                tuned,
                speedup: base.stats.median / tuned_median.max(1e-12),
                chosen: best
                    .map(|i| candidates[i].recipe.clone())
                    .unwrap_or_default(),
                neighbours: candidates
                    .iter()
                    .zip(&walk)
                    .filter(|(_, v)| v.is_pick())
                    .map(|(c, _)| c.from.clone())
                    .collect(),
                candidates,
                efficiency_before: efficiency(base.stats.median),
                efficiency_after: efficiency(tuned_median),
                measured_variants: measured,
                invocations: calls,
                baseline_first: base_first,
            });
        }
        // The tuned program.
        let recipes: Vec<(usize, usize, Recipe)> = dry
            .nests
            .iter()
            .zip(&nests)
            .map(|(n, r)| (n.region, n.root, r.chosen.clone()))
            .collect();
        let (tuned_program, openmp) = ir::emit::apply_recipes(program, &recipes)
            .map_err(|e| Error::Failed(format!("re-applying the chosen recipes: {e}")))?;
        let text = std::fs::read_to_string(&program.file)
            .map_err(|e| Error::Input(format!("{}: {e}", program.file)))?;
        let mut source = ir::emit::tuned_source(&text, &tuned_program)
            .map_err(|e| Error::Failed(e.to_string()))?;
        let mut openmp = openmp;
        // The whole program, original against tuned: a nest that won on its cutout can
        // still lose in the program (other data placement, other neighbours in the
        // cache); a tuned program that is slower beyond the noise is given up.
        let any_chosen = nests.iter().any(|n| !n.chosen.steps.is_empty());
        let check = if any_chosen && self.check_runs > 0 && p.program_args.is_empty() {
            self.progress.say("whole-program check");
            let t0 = Instant::now();
            let c = self.program_check(p, &source, &dry.cache.root.join("check"))?;
            time.measuring_s += t0.elapsed().as_secs_f64();
            if c.reverted {
                source = text.clone();
                openmp = false;
                for n in nests.iter_mut() {
                    n.chosen = Recipe::default();
                    n.tuned = None;
                    n.speedup = 1.0;
                    n.efficiency_after = n.efficiency_before;
                    for c in n.candidates.iter_mut().filter(|c| c.kept) {
                        c.kept = false;
                        c.why
                            .push_str("; given up: the whole tuned program was slower");
                    }
                }
            }
            Some(c)
        } else {
            None
        };
        time.total_s = t_all.elapsed().as_secs_f64();
        Ok(ApplyReport {
            program: program.name.clone(),
            file: program.file.clone(),
            k: self.k,
            static_only: self.static_only,
            nests,
            source,
            openmp,
            check,
            time,
            machine: machine.map(|m| m.cpu_model),
        })
    }

    /// The median cold run of a built cutout: `first` (the cold run of the measurement
    /// just made) and [`COLD_RUNS`]` - 1` more, each the only run of a fresh process;
    /// infinite when a run fails.
    fn cold(&self, cutout: &Cutout, exe: &Path, first: f64, scratch: &Path) -> Result<f64> {
        let once = Measure {
            warmup: 0,
            repetitions: 1,
            target_ci: None,
            counters: Vec::new(),
            ..self.measure.clone()
        };
        let mut v = vec![first];
        for _ in 1..COLD_RUNS {
            let r = cutout.run(exe, "cold", 0, &once, self.timeout, scratch)?;
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

    /// Times the original and the tuned program (`source`) in rotation, each region
    /// under a timer, and decides whether the tuned one is slower beyond the noise
    /// (Mann-Whitney p < 0.05 and a slower median).
    fn program_check(&self, p: &ProgramSpec, source: &str, work: &Path) -> Result<ProgramCheck> {
        let main = Path::new(&p.args.main);
        let tuned_file = work.join(
            main.file_name()
                .map(|f| f.to_string_lossy().replace(".c", ".tuned.c"))
                .unwrap_or_else(|| "tuned.c".into()),
        );
        crate::run::write_file(&tuned_file, source)?;
        let original: Vec<String> = std::iter::once(&p.args.main)
            .chain(&p.args.extra_sources)
            .chain(&p.args.cflags)
            .chain(&p.args.link)
            .cloned()
            .collect();
        let benches = [
            crate::bench::Benchmark::original(&p.args.main, original.clone()),
            crate::bench::Benchmark::tuned(&p.args.main, &tuned_file, &original),
        ];
        let cfg = crate::bench::BenchConfig {
            toolchain: self.toolchain.clone(),
            warmup: 1,
            runs: self.check_runs.max(2),
            timeout: self.timeout,
            work: work.to_path_buf(),
        };
        let r = crate::bench::run_suite(&cfg, &p.args.main, &benches, &|_, _| {})?;
        let (o, t) = (&r.benchmarks[0], &r.benchmarks[1]);
        let (_, p_value) = crate::bench::stats::mann_whitney_u(&o.samples, &t.samples);
        let reverted = t.median > o.median && p_value < 0.05;
        Ok(ProgramCheck {
            unit: o.unit.clone(),
            original_ms: o.median * 1e3,
            tuned_ms: t.median * 1e3,
            speedup: o.median / t.median.max(1e-12),
            p_value,
            runs: r.runs,
            same_output: o.output_hash == t.output_hash,
            reverted,
        })
    }
}

/// The final check: the whole program, original against tuned.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProgramCheck {
    /// `region` (the sum of the timed scop regions) or `wall` (the whole run).
    pub unit: String,
    /// Medians over the runs.
    pub original_ms: f64,
    pub tuned_ms: f64,
    pub speedup: f64,
    /// Two-sided Mann-Whitney U p-value of the two samples.
    pub p_value: f64,
    pub runs: usize,
    /// Both printed the same bytes (rounding may differ where the compiler fuses
    /// multiply-adds differently).
    pub same_output: bool,
    /// The tuned program was slower beyond the noise: the original is kept.
    pub reverted: bool,
}

fn checked_dry_run(cfg: &RunConfig) -> Result<crate::run::DryRun> {
    let dry = dry_run(cfg, &profiling::phases::Phases::new())?;
    if dry.summary.exit_code != 0 || dry.summary.saved.as_ref().is_none_or(|s| s.failed) {
        return Err(Error::Failed(format!(
            "{}: the dry run did not finish normally (exit code {})",
            dry.summary.file, dry.summary.exit_code
        )));
    }
    Ok(dry)
}

fn roof_of(m: &MachineInfo) -> Roof {
    Roof {
        peak_gflops: m.best_peak_all(),
        bandwidth_gbs: m.bandwidth_all.triad,
        source: format!("tune machine, {} threads, peak FMA / triad", m.threads),
    }
}

/// A variant's time in the program for a nest run `calls` times: its cold run plus
/// `calls - 1` warm runs (the median), or `calls` warm runs when its cold run was not
/// measured.
pub fn program_time(first: Option<f64>, calls: u64, median: f64) -> f64 {
    let calls = calls.max(1);
    match first {
        Some(f) => f + (calls - 1) as f64 * median,
        None => calls as f64 * median,
    }
}

/// Where a candidate recipe came from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Neighbour {
    pub program: String,
    pub nest: String,
    pub distance: f32,
    /// The speedup the recipe reached on that nest.
    pub speedup_there: f64,
}

/// One transferred recipe on one nest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Candidate {
    pub from: Neighbour,
    /// The recipe as re-fitted to this nest.
    pub recipe: Recipe,
    /// Steps of the source recipe that did not apply here, with why.
    pub dropped: Vec<String>,
    /// verified / wrong result ... / refused / build failed / not applicable.
    pub verdict: String,
    pub stats: Option<Stats>,
    /// Median of its cold runs (seconds), measured when it beat the baseline warm and
    /// the nest's time in the program is short ([`COLD_MATTERS_S`]).
    #[serde(default)]
    pub first: Option<f64>,
    pub speedup: f64,
    pub kept: bool,
    /// Why it was kept or not (what `--explain` prints).
    pub why: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NestReport {
    pub nest: String,
    pub line: u32,
    pub baseline: Stats,
    pub tuned: Option<Stats>,
    pub speedup: f64,
    pub chosen: Recipe,
    pub neighbours: Vec<Neighbour>,
    pub candidates: Vec<Candidate>,
    /// Achieved / attainable (roofline, all threads), before and after.
    pub efficiency_before: Option<f64>,
    pub efficiency_after: Option<f64>,
    /// The baseline plus each distinct candidate measured.
    pub measured_variants: usize,
    /// How often the program ran the nest in the dry run.
    #[serde(default)]
    pub invocations: u64,
    /// Median of the baseline's cold runs (seconds), where they were measured.
    #[serde(default)]
    pub baseline_first: Option<f64>,
}

/// Wall time of the tuning, by phase.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TimeSplit {
    pub profiling_s: f64,
    pub embedding_s: f64,
    pub building_s: f64,
    pub measuring_s: f64,
    pub total_s: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ApplyReport {
    pub program: String,
    pub file: String,
    pub k: usize,
    pub static_only: bool,
    pub nests: Vec<NestReport>,
    /// The tuned program's source.
    #[serde(skip)]
    pub source: String,
    /// The tuned program needs `-fopenmp`.
    pub openmp: bool,
    /// The whole-program check (absent when nothing was tuned or the check is off).
    #[serde(default)]
    pub check: Option<ProgramCheck>,
    pub time: TimeSplit,
    pub machine: Option<String>,
}

/// Timing of one untransformed nest ([`Pipeline::measure`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NestTiming {
    pub nest: String,
    pub verdict: String,
    pub stats: Stats,
    pub samples: Vec<f64>,
}

fn pct(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{:.0}%", v * 100.0))
}

/// The report as a terminal table; with `explain`, every candidate with why it was
/// kept or refused.
pub fn render_with(r: &ApplyReport, explain: bool) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<8}{:>6}{:>20}{:>20}{:>9}{:>13}  recipe (from)",
        "nest", "line", "baseline ms", "tuned ms", "speedup", "roofline"
    );
    for n in &r.nests {
        let spread = |s: &Stats| {
            format!(
                "{:.3} ±{:.0}%",
                s.median * 1e3,
                100.0 * (s.median_ci.1 - s.median_ci.0) / 2.0 / s.median.max(1e-12)
            )
        };
        let chosen = n.candidates.iter().find(|c| c.kept);
        let _ = writeln!(
            out,
            "{:<8}{:>6}{:>20}{:>20}{:>8.2}x{:>13}  {}",
            n.nest,
            n.line,
            spread(&n.baseline),
            n.tuned.as_ref().map_or("-".into(), spread),
            n.speedup,
            format!("{}→{}", pct(n.efficiency_before), pct(n.efficiency_after)),
            match chosen {
                Some(c) => format!(
                    "{} (from {} {}, d={:.2})",
                    serde_json::to_string(&c.recipe.steps).expect("steps serialize"),
                    c.from.program,
                    c.from.nest,
                    c.from.distance
                ),
                None if r.check.as_ref().is_some_and(|c| c.reverted) => {
                    "untransformed (the whole tuned program was slower)".into()
                }
                None => "untransformed (no candidate beat it beyond the noise)".into(),
            }
        );
        if explain {
            for c in &n.candidates {
                let _ = writeln!(
                    out,
                    "    {} {} {} d={:.2}: {} — {}",
                    if c.kept { "KEPT" } else { "    " },
                    c.from.program,
                    c.from.nest,
                    c.from.distance,
                    serde_json::to_string(&c.recipe.steps).expect("steps serialize"),
                    if c.why.is_empty() { &c.verdict } else { &c.why }
                );
                for d in &c.dropped {
                    let _ = writeln!(out, "         dropped {d}");
                }
            }
        }
    }
    if let Some(c) = &r.check {
        let _ = writeln!(
            out,
            "whole program ({} time, median of {}): original {:.3} ms, tuned {:.3} ms, {:.2}x (p = {:.3}){}",
            c.unit,
            c.runs,
            c.original_ms,
            c.tuned_ms,
            c.speedup,
            c.p_value,
            if c.reverted {
                "; slower beyond the noise: the original is kept"
            } else {
                ""
            }
        );
    }
    let t = &r.time;
    let _ = writeln!(
        out,
        "tuning time {:.1} s: profiling {:.1} s, embedding {:.2} s, building {:.1} s, measuring {:.1} s",
        t.total_s, t.profiling_s, t.embedding_s, t.building_s, t.measuring_s
    );
    out
}

pub fn render(r: &ApplyReport) -> String {
    render_with(r, false)
}

#[cfg(test)]
mod tests {
    use super::program_time;

    #[test]
    fn a_slow_cold_run_outweighs_a_fast_warm_one_only_in_nests_run_rarely() {
        // Baseline 2 ms warm and cold; candidate 1 ms warm, 7 ms cold (a team to start).
        let (base, cand) = ((Some(2e-3), 2e-3), (Some(7e-3), 1e-3));
        let t = |v: (Option<f64>, f64), n| program_time(v.0, n, v.1);
        assert!(t(cand, 1) > t(base, 1));
        assert!((t(cand, 1) - 7e-3).abs() < 1e-12);
        // Run 10 times: 7 + 9 x 1 = 16 ms against 20 ms.
        assert!((t(cand, 10) - 16e-3).abs() < 1e-12);
        assert!(t(cand, 10) < t(base, 10));
        // Unmeasured cold runs: warm runs only; a nest never seen counts once.
        assert_eq!(program_time(None, 3, 1e-3), 3e-3);
        assert_eq!(program_time(None, 0, 1e-3), 1e-3);
    }
}
