//! Benchmark regression reports: `tune bench`.
//!
//! A suite (the programs [`crate::batch::collect_jobs`] finds, and with a batch folder
//! their tuned copies) is built as the user builds it (`$CC $CFLAGS`, `-fopenmp` for
//! tuned copies) with a timer around every `#pragma scop` region, and run in rotation —
//! every benchmark once per round, after warmup rounds — so that slow drifts of the
//! machine spread over all benchmarks alike. Every raw sample is kept. Against a saved
//! baseline each benchmark is classified by [`stats::compare`]: a Mann-Whitney U test
//! and a bootstrap interval of the ratio of medians against a noise threshold.

pub mod report;
pub mod svg;
pub mod written_files;

use crate::environment::Environment;
pub use crate::report::TimeUnit;
use crate::spec::ProgramSpec;
use crate::{Error, Result};
use profiling::build::{build, BuildRequest, Toolchain};
use profiling::cc::CcArgs;
use profiling::run::{run, Exit, RunOptions};
use profiling::stats::{self, Class};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Which copy of a program a benchmark times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// The user's program as it is.
    Original,
    /// Its copy with the kept recipes applied.
    Tuned,
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(match self {
            Variant::Original => "original",
            Variant::Tuned => "tuned",
        })
    }
}

/// One program variant to time.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Benchmark {
    /// `program` or `program:tuned`.
    pub name: String,
    /// The program the variant belongs to.
    pub program: String,
    /// Original or tuned copy.
    pub variant: Variant,
    /// cc-style arguments, the timed source first.
    pub args: Vec<String>,
    /// Built with `-fopenmp` (tuned copies may parallelize).
    pub openmp: bool,
    /// Arguments the program itself is run with.
    pub program_args: Vec<String>,
}

/// The benchmarks of a suite: each job's program, and its tuned copy when `tuned` (a
/// `tune batch` folder) holds one (built with the original's folder on the include
/// path, so that its quoted includes resolve as the original's do).
pub fn benchmarks(jobs: &[ProgramSpec], tuned: Option<&Path>) -> Vec<Benchmark> {
    let mut out = Vec::new();
    for j in jobs {
        out.push(Benchmark::original(&j.name, j.args.clone()));
        let Some(dir) = tuned else { continue };
        let file = dir
            .join("programs")
            .join(&j.name)
            .join(format!("{}.tuned.c", j.name));
        if file.is_file() {
            out.push(Benchmark::tuned(&j.name, &file, &j.args));
        }
    }
    out
}

impl Benchmark {
    /// The program as the user builds it (`args`: cc-style, its source first).
    pub fn original(program: &str, args: Vec<String>) -> Benchmark {
        Benchmark {
            name: program.to_string(),
            program: program.to_string(),
            variant: Variant::Original,
            args,
            openmp: false,
            program_args: Vec::new(),
        }
    }

    /// A tuned copy `file` of the program built with `original_args`: the same flags,
    /// with the original's folder on the quoted include path (`-iquote`) so that its
    /// quoted includes resolve as the original's do; built with OpenMP.
    pub fn tuned(program: &str, file: &Path, original_args: &[String]) -> Benchmark {
        let mut args = vec![file.display().to_string()];
        if let Some(d) = original_args
            .first()
            .and_then(|m| std::path::absolute(m).ok())
            .and_then(|m| m.parent().map(Path::to_path_buf))
        {
            // Quoted includes only: `<unistd.h>` stays the system's even where the
            // user's folder holds a file of that name.
            args.push("-iquote".into());
            args.push(d.display().to_string());
        }
        args.extend(original_args.iter().skip(1).cloned());
        Benchmark {
            name: format!("{program}:tuned"),
            program: program.to_string(),
            variant: Variant::Tuned,
            args,
            openmp: true,
            program_args: Vec::new(),
        }
    }
}

/// How to run a suite.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// The compiler and flags the benchmarks are built with.
    pub toolchain: Toolchain,
    /// Rounds not recorded.
    pub warmup: usize,
    /// Recorded rounds (samples per benchmark).
    pub runs: usize,
    /// A run is killed after this long.
    pub timeout: Duration,
    /// Builds and scratch files.
    pub work: PathBuf,
}

/// The samples of one benchmark.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sampled {
    /// `program` or `program:tuned`.
    pub name: String,
    /// The program the variant belongs to.
    pub program: String,
    /// Original or tuned copy.
    pub variant: Variant,
    /// Seconds per run: the sum of the timed regions (or changed nests), or the whole
    /// run's wall time when the program has none (`unit` says which).
    pub samples: Vec<f64>,
    /// What a sample measures.
    pub unit: TimeUnit,
    /// The whole runs' wall times (seconds), one per sample.
    #[serde(default)]
    pub wall: Vec<f64>,
    /// Median of the samples (seconds).
    pub median: f64,
    /// blake3 of the program's standard output (the same for variants of a program
    /// that compute the same).
    pub output_hash: String,
    /// The output of each run (standard output, then the files it wrote; see
    /// [`written_files`]), warmup included, up to [`KEPT_OUTPUTS`] runs
    /// of at most [`KEPT_OUTPUT_BYTES`] each (a longer one is not kept): what
    /// [`crate::printed::same_results`] compares.
    #[serde(skip)]
    pub outputs: Vec<Vec<u8>>,
}

/// Runs whose output a [`Sampled`] keeps.
pub const KEPT_OUTPUTS: usize = 4;
/// The longest output (standard output and the files written) a [`Sampled`] keeps.
pub const KEPT_OUTPUT_BYTES: usize = 64 << 20;

/// A point of the roofline chart: one nest of one program variant.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RoofPoint {
    /// The program of the nest.
    pub program: String,
    /// Original or tuned copy.
    pub variant: Variant,
    /// The nest (`nest0`, ...).
    pub nest: String,
    /// Operational intensity (flop/byte).
    pub oi: f64,
    /// Achieved GFLOP/s.
    pub gflops: f64,
}

/// The machine's roofs and the nests placed under them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Roofline {
    /// Peak FLOP/s of the machine (GFLOP/s).
    pub peak_gflops: f64,
    /// Memory bandwidth (GB/s).
    pub bandwidth_gbs: f64,
    /// Where the roofs were measured.
    pub source: String,
    /// The cache levels' bandwidth roofs.
    #[serde(default)]
    pub caches: Vec<profiling::roofline::CacheRoof>,
    /// The nests under the roofs.
    pub points: Vec<RoofPoint>,
}

/// One comparison against the baseline.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Change {
    /// The benchmark compared.
    pub name: String,
    /// Median of the baseline (seconds).
    pub base_median: f64,
    /// Median of this run (seconds).
    pub new_median: f64,
    /// New median over baseline median.
    pub ratio: f64,
    /// 95% bootstrap interval of the ratio.
    pub ratio_ci: (f64, f64),
    /// Two-sided Mann-Whitney U p-value.
    pub p_value: f64,
    /// Improved, regressed or unchanged.
    pub class: Class,
}

/// A run compared with a saved baseline.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Comparison {
    /// Name of the baseline compared with.
    pub baseline: String,
    /// What the baseline was measured on.
    pub baseline_environment: Environment,
    /// What differs between the baseline's environment and this run's.
    pub environment_differences: Vec<String>,
    /// Significance level of the U test.
    pub alpha: f64,
    /// Relative change taken as noise.
    pub noise: f64,
    /// One comparison per benchmark in both runs.
    pub changes: Vec<Change>,
    /// In the baseline, not in this run.
    pub missing: Vec<String>,
    /// In this run, not in the baseline.
    pub new: Vec<String>,
}

impl Comparison {
    /// How many benchmarks changed as `class` says.
    pub fn count(&self, class: Class) -> usize {
        self.changes.iter().filter(|c| c.class == class).count()
    }
}

/// Everything a run of `tune bench` measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchReport {
    /// The suite's manifests or folders, as given.
    pub suite: String,
    /// What this run was measured on.
    pub environment: Environment,
    /// Rounds run first and not recorded.
    pub warmup: usize,
    /// Recorded rounds (samples per benchmark).
    pub runs: usize,
    /// Every benchmark with its raw samples.
    pub benchmarks: Vec<Sampled>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The nests placed under the machine's roofs (with `--roofline` or HTML).
    pub roofline: Option<Roofline>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The comparison with a saved baseline (with `--baseline`).
    pub comparison: Option<Comparison>,
}

impl BenchReport {
    /// Tuned-over-original speedups: (program, speedup, 95% interval).
    pub fn speedups(&self) -> Vec<(String, f64, (f64, f64))> {
        let mut out = Vec::new();
        for t in self
            .benchmarks
            .iter()
            .filter(|b| b.variant == Variant::Tuned)
        {
            let Some(o) = self
                .benchmarks
                .iter()
                .find(|b| b.program == t.program && b.variant == Variant::Original)
            else {
                continue;
            };
            // ratio tuned/original; the speedup is its inverse.
            let (lo, hi) = stats::bootstrap_ratio_ci(&o.samples, &t.samples, 0.95, 2000, 1);
            out.push((
                t.program.clone(),
                o.median / t.median.max(1e-12),
                (1.0 / hi.max(1e-12), 1.0 / lo.max(1e-12)),
            ));
        }
        out
    }
}

/// Declarations put at the top of a timed copy, and the calls around each region (or
/// each changed nest, see [`timed_copy`]).
pub const TIMER_DECL: &str = "void tune_bench_enter(void); void tune_bench_leave(void);\n";
/// Starts the timer (a nested or recursive entry is part of the outer one).
pub const TIMER_START: &str = "tune_bench_enter();";
/// Stops it and adds the time to the run's total.
pub const TIMER_STOP: &str = "tune_bench_leave();";
/// The timer, compiled next to the program (its own translation unit, so the program's
/// `-std` cannot hide `clock_gettime`). Its depth and start are per thread, and the
/// total is added to atomically, so a timed nest that some thread of the user's team
/// runs is counted, not torn.
const TIMER_SOURCE: &str = r#"#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
static uint64_t tune_bench_total;
static int tune_bench_registered;
static __thread int tune_bench_depth;
static __thread double tune_bench_t0;
static double tune_bench_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static double tune_bench_read(uint64_t bits) {
  double v;
  memcpy(&v, &bits, sizeof v);
  return v;
}
static void tune_bench_print(void) {
  fprintf(stderr, "tune-bench-seconds: %.9f\n",
          tune_bench_read(__atomic_load_n(&tune_bench_total, __ATOMIC_SEQ_CST)));
}
void tune_bench_enter(void) {
  if (tune_bench_depth++ == 0)
    tune_bench_t0 = tune_bench_now();
}
void tune_bench_leave(void) {
  if (--tune_bench_depth != 0)
    return;
  double dt = tune_bench_now() - tune_bench_t0;
  uint64_t old = __atomic_load_n(&tune_bench_total, __ATOMIC_SEQ_CST), new_bits;
  do {
    double sum = tune_bench_read(old) + dt;
    memcpy(&new_bits, &sum, sizeof sum);
  } while (!__atomic_compare_exchange_n(&tune_bench_total, &old, new_bits, 0,
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
  if (!__atomic_exchange_n(&tune_bench_registered, 1, __ATOMIC_SEQ_CST))
    atexit(tune_bench_print);
}
"#;

/// `text` with a timer around every `#pragma scop` region; `None` without regions.
pub fn timed_source(text: &str) -> Option<String> {
    let mut out = String::from(TIMER_DECL);
    let mut regions = 0;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t == "#pragma scop" {
            out.push_str(TIMER_START);
            out.push('\n');
            regions += 1;
        }
        out.push_str(line);
        out.push('\n');
        if t == "#pragma endscop" {
            out.push_str(TIMER_STOP);
            // Keep the program's own line numbers in diagnostics.
            out.push_str(&format!("\n#line {}\n", i + 2));
        }
    }
    (regions > 0).then_some(out)
}

/// A source that already carries the timer's calls (the whole-program check's copies,
/// with a timer around each changed nest) is built as it is: `text` with the timer's
/// declarations first. The `#line` keeps the user's line numbers in diagnostics.
pub fn timed_copy(text: &str) -> String {
    format!("{TIMER_DECL}#line 1\n{text}")
}

/// What `text` times, and the text to build: a copy made by [`timed_copy`], its
/// `#pragma scop` regions, or (None) the whole run.
fn timed_text(text: &str) -> Option<(String, TimeUnit)> {
    if text.starts_with(TIMER_DECL) {
        return Some((text.to_string(), TimeUnit::Nests));
    }
    timed_source(text).map(|t| (t, TimeUnit::Region))
}

fn timer_path(cfg: &BenchConfig) -> PathBuf {
    cfg.work.join("tune_bench_timer.c")
}

struct Built {
    exe: PathBuf,
    /// What a run's reported time measures: None for its wall time.
    timed: Option<TimeUnit>,
}

fn build_one(cfg: &BenchConfig, b: &Benchmark) -> Result<Built> {
    let args = CcArgs::parse(&b.args)?;
    let file = Path::new(&b.args[0]);
    let text = std::fs::read_to_string(file).map_err(Error::read(file))?;
    let timed = timed_text(&text);
    let timer = timer_path(cfg);
    let mut cflags = args.cflags.clone();
    // The timed copy lives elsewhere: the original's folder resolves its includes.
    if let Some(d) = file.parent() {
        let d = if d.as_os_str().is_empty() {
            Path::new(".")
        } else {
            d
        };
        cflags.push("-iquote".into());
        cflags.push(d.display().to_string());
    }
    let mut extra = args.extra_sources.clone();
    if timed.is_some() {
        extra.push(timer.display().to_string());
    }
    let req_args = CcArgs {
        main: b.name.clone(),
        extra_sources: extra,
        cflags,
        link: args.link.clone(),
    };
    let unit = timed.as_ref().map(|t| t.1);
    let source = timed.map_or(text, |t| t.0);
    let built = build(
        &cfg.toolchain,
        &BuildRequest {
            source: &source,
            args: &req_args,
            runtime: false,
            openmp: b.openmp,
            preprocessed: false,
        },
        &cfg.work.join("builds"),
    )?;
    Ok(Built {
        exe: built.exe,
        timed: unit,
    })
}

/// One run: its time (as `built` times it), its wall time, and what it printed: its
/// standard output, then each file of the working folder that the run wrote (a
/// program's results often go to a file: an image, a grid), under a line with the
/// file's name.
fn run_one(cfg: &BenchConfig, b: &Benchmark, built: &Built) -> Result<(f64, f64, Vec<u8>)> {
    let before = written_files::snapshot(Path::new("."));
    let out = run(
        &built.exe,
        &RunOptions {
            data_dir: None,
            save_versions: 0,
            timeout: Some(cfg.timeout),
            args: b.program_args.clone(),
            capture: true,
            ..Default::default()
        },
        &cfg.work.join("scratch"),
    )?;
    if out.exit != Exit::Code(0) {
        return Err(Error::Failed(format!(
            "{}: the benchmark run ended with {:?}: {}",
            b.name,
            out.exit,
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or("")
        )));
    }
    let seconds = if built.timed.is_some() {
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .find_map(|l| l.strip_prefix("tune-bench-seconds: "))
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| {
                Error::Failed(format!(
                    "{}: the program did not reach the end of its region (no time reported)",
                    b.name
                ))
            })?
    } else {
        out.wall_seconds
    };
    let mut printed = out.stdout;
    written_files::append_changed(Path::new("."), &before, &mut printed);
    Ok((seconds, out.wall_seconds, printed))
}

/// Builds every benchmark, then runs them in rotation (see the module documentation).
/// `events` is told each finished round.
pub fn run_suite(
    cfg: &BenchConfig,
    suite: &str,
    benches: &[Benchmark],
    events: &crate::Events,
) -> Result<BenchReport> {
    run_suite_until(cfg, suite, benches, events, &|_| false)
}

/// What the recorded rounds so far hold, one list per benchmark (in the suite's order):
/// what [`run_suite_until`]'s `settled` reads.
pub struct Rounds<'a> {
    /// The timed samples (seconds), warmup left out.
    pub samples: &'a [Vec<f64>],
    /// The whole runs' wall times (seconds), one per sample.
    pub walls: &'a [Vec<f64>],
    /// The outputs kept so far (see [`Sampled::outputs`]), warmup included.
    pub outputs: &'a [Vec<Vec<u8>>],
}

/// [`run_suite`], ending after the first recorded round at which `settled` says the
/// rounds so far ([`Rounds`]) decide what they are taken for; the report's `runs` is
/// the rounds recorded.
pub fn run_suite_until(
    cfg: &BenchConfig,
    suite: &str,
    benches: &[Benchmark],
    events: &crate::Events,
    settled: &dyn Fn(&Rounds) -> bool,
) -> Result<BenchReport> {
    use rayon::prelude::*;
    if benches.is_empty() {
        return Err(Error::Usage(format!("{suite}: the suite has no programs")));
    }
    // Written once, before the parallel builds read it.
    crate::files::write(&timer_path(cfg), TIMER_SOURCE)?;
    let built: Vec<Built> = benches
        .par_iter()
        .map(|b| build_one(cfg, b))
        .collect::<Result<_>>()?;
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); benches.len()];
    let mut walls: Vec<Vec<f64>> = vec![Vec::new(); benches.len()];
    let mut hashes: Vec<String> = vec![String::new(); benches.len()];
    let mut outputs: Vec<Vec<Vec<u8>>> = vec![Vec::new(); benches.len()];
    let rounds = cfg.warmup + cfg.runs.max(2);
    for round in 0..rounds {
        for (i, (b, e)) in benches.iter().zip(&built).enumerate() {
            let (s, w, h) = run_one(cfg, b, e)?;
            if round >= cfg.warmup {
                samples[i].push(s);
                walls[i].push(w);
            }
            hashes[i] = blake3::hash(&h).to_hex()[..16].to_string();
            if outputs[i].len() < KEPT_OUTPUTS && h.len() <= KEPT_OUTPUT_BYTES {
                outputs[i].push(h);
            }
        }
        events(crate::Event::Round {
            done: round + 1,
            all: rounds,
            benchmarks: benches.len(),
        });
        let so_far = Rounds {
            samples: &samples,
            walls: &walls,
            outputs: &outputs,
        };
        if round >= cfg.warmup && settled(&so_far) {
            break;
        }
    }
    let recorded = samples.first().map_or(0, Vec::len);
    let benchmarks = benches
        .iter()
        .zip(&built)
        .zip(samples.into_iter().zip(hashes).zip(walls).zip(outputs))
        .map(|((b, e), (((s, h), wall), outputs))| Sampled {
            name: b.name.clone(),
            program: b.program.clone(),
            variant: b.variant,
            median: stats::median(&s),
            samples: s,
            unit: e.timed.unwrap_or(TimeUnit::Wall),
            wall,
            output_hash: h,
            outputs,
        })
        .collect();
    Ok(BenchReport {
        suite: suite.to_string(),
        environment: Environment::capture(&cfg.toolchain),
        warmup: cfg.warmup,
        runs: recorded,
        benchmarks,
        roofline: None,
        comparison: None,
    })
}

/// Compares `report` with `baseline` (saved as `name`).
pub fn compare(
    report: &BenchReport,
    baseline: &BenchReport,
    name: &str,
    t: &stats::Thresholds,
) -> Comparison {
    let mut changes = Vec::new();
    let mut new = Vec::new();
    for b in &report.benchmarks {
        let Some(base) = baseline.benchmarks.iter().find(|x| x.name == b.name) else {
            new.push(b.name.clone());
            continue;
        };
        let c = stats::compare(&base.samples, &b.samples, t);
        changes.push(Change {
            name: b.name.clone(),
            base_median: c.base_median,
            new_median: c.new_median,
            ratio: c.ratio,
            ratio_ci: c.ratio_ci,
            p_value: c.p_value,
            class: c.class,
        });
    }
    let missing = baseline
        .benchmarks
        .iter()
        .filter(|b| !report.benchmarks.iter().any(|x| x.name == b.name))
        .map(|b| b.name.clone())
        .collect();
    Comparison {
        baseline: name.to_string(),
        baseline_environment: baseline.environment.clone(),
        environment_differences: baseline.environment.differences(&report.environment),
        alpha: t.alpha,
        noise: t.noise,
        changes,
        missing,
        new,
    }
}

/// Baselines live in `store/baselines/NAME.json`.
pub fn baseline_path(store: &Path, name: &str) -> Result<PathBuf> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        || name.starts_with('.')
    {
        return Err(Error::Usage(format!(
            "baseline name '{name}': use letters, digits, '-', '_' and '.'"
        )));
    }
    Ok(store.join("baselines").join(format!("{name}.json")))
}

/// Saves `report` (raw samples included) as baseline `name`, atomically.
pub fn save_baseline(store: &Path, name: &str, report: &BenchReport) -> Result<PathBuf> {
    let path = baseline_path(store, name)?;
    let mut r = report.clone();
    r.comparison = None;
    crate::files::write(
        &path,
        &serde_json::to_string_pretty(&r).expect("report serializes"),
    )?;
    Ok(path)
}

/// Loads baseline `name`.
pub fn load_baseline(store: &Path, name: &str) -> Result<BenchReport> {
    let path = baseline_path(store, name)?;
    let text = std::fs::read_to_string(&path).map_err(|e| {
        Error::Usage(format!(
            "baseline '{name}' ({}): {e}; save one with --save-baseline {name}",
            path.display()
        ))
    })?;
    serde_json::from_str(&text).map_err(|e| {
        Error::Usage(format!(
            "{}:{}:{}: {e}",
            path.display(),
            e.line(),
            e.column()
        ))
    })
}

/// The roofline of the suite: every nest of every original program profiled on its
/// saved data (a dry run, then each nest alone: `repetitions` timed runs), placed by its
/// operational intensity and GFLOP/s under the machine's measured roofs; tuned variants
/// with a `tune batch` report are placed by their tuned nest times at the same counts.
pub fn roofline(
    jobs: &[ProgramSpec],
    tuned: Option<&Path>,
    cache_root: &Path,
    toolchain: &Toolchain,
    repetitions: u32,
) -> Result<Option<Roofline>> {
    use crate::profile::{profile, ProfileConfig};
    let mut points = Vec::new();
    let mut roof = None;
    for j in jobs {
        let cfg = ProfileConfig {
            run: crate::run::RunConfig::tuning(
                j.cc()?,
                cache_root.to_path_buf(),
                toolchain.clone(),
            ),
            measure: profiling::measure::Measure::default()
                .warmup(1)
                .repetitions(repetitions.max(1))
                .counters(&[]),
            timeout: Duration::from_secs(600),
            roofline: true,
            machine: profiling::machine::MachineOptions::default(),
        };
        let p = profile(&cfg)?;
        if roof.is_none() {
            roof = p.roof.clone();
        }
        let tuned_report: Option<crate::report::ApplyReport> = tuned
            .map(|d| d.join("programs").join(&j.name).join("report.json"))
            .and_then(|f| std::fs::read_to_string(f).ok())
            .and_then(|t| serde_json::from_str(&t).ok());
        for row in &p.roofline {
            // Data that stays in cache has no modelled DRAM traffic: place such a nest
            // by its compulsory bytes (every array element touched once).
            let oi = if row.bytes > 0 {
                row.oi
            } else {
                let compulsory: u64 = p
                    .nests
                    .iter()
                    .filter(|n| n.nest == row.nest)
                    .flat_map(|n| n.models.iter().map(|m| m.bytes_compulsory))
                    .sum();
                row.flops as f64 / compulsory.max(1) as f64
            };
            points.push(RoofPoint {
                program: j.name.clone(),
                variant: Variant::Original,
                nest: row.nest.clone(),
                oi,
                gflops: row.gflops,
            });
            let tuned_time = tuned_report.as_ref().and_then(|r| {
                let n = r.nests.iter().find(|n| n.nest == row.nest)?;
                n.tuned.as_ref().map(|s| s.median)
            });
            if let Some(t) = tuned_time {
                // The report times one invocation; the profile's row covers `versions`.
                let per_call = row.flops as f64 / row.versions.max(1) as f64;
                points.push(RoofPoint {
                    program: j.name.clone(),
                    variant: Variant::Tuned,
                    nest: row.nest.clone(),
                    oi,
                    gflops: per_call / t.max(1e-12) / 1e9,
                });
            }
        }
    }
    Ok(roof.map(|r| Roofline {
        peak_gflops: r.peak_gflops,
        bandwidth_gbs: r.bandwidth_gbs,
        source: r.source,
        caches: r.caches,
        points,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timed_copy_keeps_the_program_and_times_each_region() {
        let src = "int main(void) {\n  int x = 0;\n#pragma scop\n  x++;\n#pragma endscop\n#pragma scop\n  x++;\n#pragma endscop\n  return x;\n}\n";
        let t = timed_source(src).unwrap();
        assert_eq!(t.matches(TIMER_START).count(), 2);
        assert_eq!(t.matches(TIMER_STOP).count(), 2);
        assert!(t.starts_with(TIMER_DECL));
        assert!(t.contains("#pragma endscop\ntune_bench_leave();\n#line 6\n"));
        assert!(timed_source("int main(void) { return 0; }\n").is_none());
        // A copy with its timers already in (the check's) times its nests as it is.
        let copy = timed_copy("int main(void) { tune_bench_enter(); tune_bench_leave(); }\n");
        assert_eq!(timed_text(&copy), Some((copy.clone(), TimeUnit::Nests)));
        assert_eq!(timed_text(src).map(|t| t.1), Some(TimeUnit::Region));
        assert_eq!(timed_text("int main(void) { return 0; }\n"), None);
    }

    #[test]
    fn baseline_names_are_checked() {
        assert!(baseline_path(Path::new("s"), "main-2026.11").is_ok());
        for bad in ["", "../x", "a/b", ".hidden"] {
            assert!(baseline_path(Path::new("s"), bad).is_err(), "{bad}");
        }
    }
}
