//! The `tune` command line.

mod argv;
mod cmd;
mod render;

use clap::{CommandFactory, Parser, Subcommand};
use profiling::build::Toolchain;
use profiling::cc::CcArgs;
use profiling::machine::{machine, MachineOptions};
use profiling::measure::Measure;
use profiling::report::{render_tree, TraceReport};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use tuner::nest_bench::Measuring;
use tuner::profile::{profile, ProfileConfig};
use tuner::run::{run_program, RunConfig};
use tuner::search::{search, SearchConfig};
use tuner::{Error, Pipeline, ProgramSpec, StrategyKind};

/// Autotuning harness for loop-nest C programs.
#[derive(Parser)]
#[command(name = "tune", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the program through the harness: find its loop nests and their verdicts,
    /// run it with the generated regions, Save the regions' and nests' data.
    ///
    /// Example: tune run gemm.c utilities/polybench.c -Iutilities -DSMALL_DATASET -lm
    Run(RunArgs),
    /// Profile every nest: a dry run saves each nest's data per invocation version, then
    /// each nest runs alone on each version (warmup, repetitions, counters, verified
    /// outputs); prints a tree table, the roofline and counters, and writes a Chrome
    /// trace report to .tunecache/<program>/perf/report-<ms>.json.
    ///
    /// Example: tune profile gemm.c -DSMALL_DATASET -lm --repetitions 10
    Profile(ProfileArgs),
    /// Search recipes per nest (transformations checked for legality, compiled, run on
    /// the nest's saved data and verified), append every measurement to
    /// .tunecache/<program>/records.jsonl, and print the best recipe per nest with its
    /// speedup. Resumes from the records: nothing measured is measured again.
    ///
    /// Example: tune search gemm.c -DMEDIUM_DATASET -lm --budget 50
    Search(SearchArgs),
    /// Transfer-tune the program: profile each nest on its saved data, embed it, take
    /// the best recipes of the K nearest tuned nests in the database, re-fit, build,
    /// measure and verify them, keep the fastest that beats the nest beyond the noise,
    /// and write the tuned program (default <name>.tuned.c; build it with -fopenmp).
    ///
    /// Example: tune apply gemm.c -DMEDIUM_DATASET -lm --top-k 3 --report r.json
    Apply(ApplyArgs),
    /// Print an instrumentation report (a Chrome trace written by `tune profile`) as a
    /// tree table; with --program NAME, the newest report of that program.
    Report(ReportArgs),
    /// Benchmark this machine: STREAM-style bandwidth, peak FLOP/s, caches (cached per host).
    Machine(MachineArgs),
    /// The tuning database: build (search a suite), list, merge, embed, eval.
    #[command(subcommand)]
    Db(cmd::db::DbCommand),
    /// The embedding model: train, eval.
    #[command(subcommand)]
    Model(cmd::db::ModelCommand),
    /// Transfer-tune every program of datasets: compilations of several programs
    /// overlap, runs never do; a journal lets --resume finish a killed batch; --shard
    /// splits the work over machines and --merge joins it.
    ///
    /// Example: tune batch datasets/suite.json --preset SMALL --jobs 2 --out results
    Batch(cmd::batch::BatchArgs),
    /// Benchmark a suite (originals, and tuned copies with --tuned): raw samples per
    /// run in rotation, compared with a saved baseline by a Mann-Whitney U test and a
    /// bootstrap interval against a noise threshold; Markdown, JSON or HTML (SVG
    /// plots, roofline); exit code 3 when anything regressed.
    ///
    /// Example: tune bench datasets/suite.json --preset SMALL --baseline main
    Bench(cmd::bench::BenchArgs),
}

#[derive(clap::Args)]
struct ProfileArgs {
    #[command(flatten)]
    program: ProgramArgs,
    /// Runs before timing (not counted).
    #[arg(long, value_name = "N", default_value_t = 1)]
    warmup: u32,
    /// Timed runs per nest version (the minimum with --adaptive).
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    repetitions: u32,
    /// Add runs until the 95% interval of the median is within ±X of it (e.g. 0.02).
    #[arg(long, value_name = "X", value_parser = crate::cmd::fraction)]
    adaptive: Option<f64>,
    /// Upper bound on runs with --adaptive.
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    max_repetitions: u32,
    /// Evict the caches before every run.
    #[arg(long)]
    flush: bool,
    /// perf events to read, comma-separated, or "none".
    #[arg(long, value_name = "LIST")]
    counters: Option<String>,
    /// Invocation versions profiled per nest (-1: all); fewer when their saved data would
    /// exceed 2 GiB.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 64,
        allow_negative_numbers = true,
        value_parser = versions_count
    )]
    versions: i64,
    /// Seconds before a cutout run is killed.
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = crate::cmd::seconds)]
    timeout: f64,
    /// Skip the machine benchmark and the roofline.
    #[arg(long)]
    no_roofline: bool,
}

#[derive(clap::Args)]
struct SearchArgs {
    #[command(flatten)]
    program: ProgramArgs,
    /// Candidate measurements per nest (over all runs of the search on this program).
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = crate::cmd::positive_count)]
    budget: usize,
    /// Which strategy proposes recipes: random, evolutionary or grid.
    #[arg(long, value_name = "S", value_parser = cmd::parse_strategy, default_value = "random")]
    strategy: StrategyKind,
    /// Seed of the strategy.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
    /// Runs before timing (not counted).
    #[arg(long, value_name = "N", default_value_t = 1)]
    warmup: u32,
    /// Timed runs per candidate, at most (measured as `tune apply` measures: runs of
    /// microseconds are repeated to 20 ms, runs of 0.25 s and more skip the warmup).
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    repetitions: u32,
    /// Candidates compiled in parallel.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = crate::cmd::positive_count)]
    jobs: usize,
    /// Seconds before a candidate run is killed.
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = crate::cmd::seconds)]
    timeout: f64,
    /// Wall-time limit per nest for this run, in seconds (the search of a nest ends at
    /// whichever of --budget and this comes first).
    #[arg(long, value_name = "SECS", value_parser = crate::cmd::budget_seconds)]
    time_limit: Option<f64>,
    /// Write the program with every nest's best recipe applied (build it with
    /// -fopenmp when the recipes parallelize).
    #[arg(short = 'o', long = "output", value_name = "OUT.c")]
    output: Option<PathBuf>,
}

#[derive(clap::Args)]
struct ApplyArgs {
    #[command(flatten)]
    program: ProgramArgs,
    /// The tuned program (default: <name>.tuned.c beside the source).
    #[arg(short = 'o', long = "output", value_name = "OUT.c")]
    output: Option<PathBuf>,
    /// Nearest database entries whose recipes are tried: K candidates measured per nest
    /// besides the baseline, the rules' recipes (register tiles, time tiles, loop
    /// orders) taking up to half of them.
    #[arg(long = "top-k", value_name = "K", default_value_t = 3, value_parser = crate::cmd::positive_count)]
    top_k: usize,
    /// Tuning database (default: models/default/tune.db, or $TUNE_MODELS/tune.db).
    #[arg(long, value_name = "DB", value_parser = crate::cmd::existing_file)]
    db: Option<PathBuf>,
    /// Model checkpoint folder (default: models/default/model).
    #[arg(long, value_name = "DIR", value_parser = crate::cmd::existing_dir)]
    model: Option<PathBuf>,
    /// Runs before timing, per variant.
    #[arg(long, value_name = "N", default_value_t = 2)]
    warmup: u32,
    /// Timed runs per variant at most: after 5 (or N when smaller) they stop once the
    /// distribution-free 95% interval of the median is within ±2% of it.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    repetitions: u32,
    /// Write the full report as JSON.
    #[arg(long, value_name = "R.json")]
    report: Option<PathBuf>,
    /// Say why each candidate was kept or refused.
    #[arg(long)]
    explain: bool,
    /// Retrieve by static features only (skip performance features).
    #[arg(long)]
    static_only: bool,
    /// Seconds before a variant's run (warmup and all repetitions) is killed.
    #[arg(long, value_name = "SECS", default_value_t = 600.0, value_parser = crate::cmd::seconds)]
    timeout: f64,
    /// Timed runs of the whole program, original and tuned in rotation, in the final
    /// check (a tuned program not faster beyond the noise is given up); 0 skips it.
    #[arg(long, value_name = "N", default_value_t = 5)]
    check_runs: usize,
    /// Tuning time for the program (seconds): each nest gets the time left divided by
    /// the nests left; candidates and nests beyond it are cut and listed (--explain).
    /// The whole-program check always runs.
    #[arg(long, value_name = "SECS", value_parser = crate::cmd::budget_seconds)]
    budget_s: Option<f64>,
    /// Accept results that differ where floating-point sums are added in another order
    /// (vectorized or parallel reductions, register tiles), as -ffast-math would: a tuned
    /// program that prints other results is kept. Without it, such recipes are given up
    /// where the program's output shows the difference.
    #[arg(long)]
    reassociate: bool,
    /// Where the transferred recipes fall short of what their neighbours reached (under
    /// 90% of it), up to N more measurements of a local search seeded from the best of
    /// them (one edit at a time: a parameter moved, a step added or removed); its
    /// candidates are reported as `refine`.
    #[arg(long, value_name = "N", default_value_t = 0)]
    refine: usize,
    /// In which order the database's entries are tried.
    #[arg(long, value_enum, default_value = "raw-votes")]
    ranker: crate::cmd::RankerArg,
}

#[derive(clap::Args)]
struct ReportArgs {
    // The tree as JSON: --json or --format json.
    #[command(flatten)]
    output: crate::cmd::Output,
    /// Show the newest report of this program instead of a file.
    #[arg(long, value_name = "NAME")]
    program: Option<String>,
    /// Cache folder (default: $TUNE_CACHE or ./.tunecache).
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// A report file (.tunecache/<program>/perf/report-<ms>.json).
    #[arg(value_name = "REPORT.json")]
    file: Option<PathBuf>,
}

#[derive(clap::Args)]
struct MachineArgs {
    // As JSON: --json or --format json.
    #[command(flatten)]
    output: crate::cmd::Output,
    /// Measure again even if this host has a cached result.
    #[arg(long)]
    refresh: bool,
    /// Cache folder (default: $TUNE_CACHE or ./.tunecache).
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
}

/// The program and the options every program command takes.
#[derive(clap::Args)]
struct ProgramArgs {
    /// Tune the whole body of this function instead of the #pragma scop regions.
    #[arg(long, value_name = "F")]
    function: Option<String>,
    /// Assume this function of yours is pure (its value depends on its arguments alone,
    /// and it writes nothing): a call to it may then stand inside a tuned nest.
    /// Repeat, or separate names with commas.
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    assume_pure: Vec<String>,
    #[command(flatten)]
    output: crate::cmd::Output,
    /// Cache folder (default: $TUNE_CACHE or ./.tunecache).
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// The program and cc flags: FILE.c [more.c] [-I..] [-D..] [-U..] [-std=..] [-l..];
    /// arguments for the program itself go after `--`.
    #[arg(
        required = true,
        allow_hyphen_values = true,
        trailing_var_arg = true,
        value_name = "FILE.c [cc flags]"
    )]
    cc: Vec<String>,
}

impl ProgramArgs {
    fn json(&self) -> bool {
        self.output.json()
    }

    /// The dry run of the program as the tuning commands make it (outputs captured,
    /// one version saved per nest).
    fn run_config(&self, args: CcArgs, program_args: Vec<String>) -> RunConfig {
        RunConfig {
            function: self.function.clone(),
            assume_pure: self.assume_pure.clone(),
            program_args,
            ..RunConfig::tuning(args, self.cache_root(), Toolchain::default())
        }
    }

    fn cache_root(&self) -> PathBuf {
        self.cache_dir
            .clone()
            .unwrap_or_else(profiling::cache::default_root)
    }
}

#[derive(clap::Args)]
struct RunArgs {
    #[command(flatten)]
    program: ProgramArgs,
    /// Print no summary (it is still written to .tunecache/<program>/run.json).
    #[arg(long)]
    quiet: bool,
    /// Add OpenMP pragmas on parallel loops and build with -fopenmp.
    #[arg(long)]
    openmp: bool,
    /// Invocation versions saved per nest (0: no Save, -1: all).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 2,
        allow_negative_numbers = true
    )]
    save_versions: i64,
    /// With --save-versions 1: save the invocation of each nest where half of its time
    /// was spent instead of the first when the first is much smaller (runs the program
    /// twice; this is what the tuning commands save).
    #[arg(long)]
    representative: bool,
    /// Time and Save the whole loop nests too (top-level loops whose sequential loops
    /// hold nests: a time loop, a factorization's `k`), as `tune apply` does.
    #[arg(long)]
    whole_nests: bool,
    /// Kill the program after this many seconds.
    #[arg(long, value_name = "SECS", value_parser = crate::cmd::seconds)]
    timeout: Option<f64>,
}

/// `--versions N`: -1 (all) or at least 1.
fn versions_count(s: &str) -> Result<i64, String> {
    match s.parse::<i64>() {
        Ok(n) if n == -1 || n >= 1 => Ok(n),
        Ok(_) => Err("must be -1 (all) or at least 1".to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// A closed pipe on standard output (`tune db list | head`) ends the process quietly, as
/// it does for other command-line tools, instead of panicking in `println!`: the Rust
/// runtime ignores SIGPIPE, which turns the signal into an error every print unwraps.
/// Files are written through `profiling::files::write_atomic`, so nothing saved is left
/// half-written.
fn default_sigpipe() {
    // SAFETY: called first thing in `main`, before any thread is started; SIG_DFL is
    // a valid disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    default_sigpipe();
    let (argv, program_args) = argv::split_argv(&Cli::command(), std::env::args().collect());
    let cli = Cli::parse_from(argv);
    profiling::exclusive::on_warning(|message| eprintln!("tune: warning: {message}"));
    let result = match cli.command {
        Command::Run(a) => cmd_run(a, program_args),
        Command::Profile(a) => cmd_profile(a, program_args),
        Command::Search(a) => cmd_search(a, program_args),
        Command::Apply(a) => cmd_apply(a, program_args),
        Command::Report(a) => cmd_report(a),
        Command::Machine(a) => cmd_machine(a),
        Command::Db(c) => cmd::db::cmd_db(c),
        Command::Model(c) => cmd::db::cmd_model(c),
        Command::Batch(a) => cmd::batch::cmd_batch(a),
        Command::Bench(a) => cmd::bench::cmd_bench(a),
    };
    match result {
        Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
        Err(e) => {
            let msg = e.to_string();
            // Errors about the input start with file:line:col already.
            eprintln!("tune: {msg}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}

fn cmd_run(a: RunArgs, program_args: Vec<String>) -> Result<i32, Error> {
    let args = CcArgs::parse(&a.program.cc)?;
    let json = a.program.json();
    let cfg = RunConfig {
        args,
        function: a.program.function.clone(),
        assume_pure: a.program.assume_pure.clone(),
        cache_root: a.program.cache_root(),
        save_versions: a.save_versions,
        openmp: a.openmp,
        timeout: a.timeout.map(Duration::from_secs_f64),
        program_args,
        toolchain: Toolchain::default(),
        capture: false,
        save_budget: None,
        representative: a.representative,
        whole_nests: a.whole_nests,
    };
    let summary = run_program(&cfg)?;
    if !a.quiet {
        if json {
            eprintln!(
                "{}",
                serde_json::to_string(&summary).expect("summary serializes")
            );
        } else {
            eprint!("{}", render::run::render(&summary));
        }
    }
    Ok(summary.exit_code)
}

fn cmd_profile(a: ProfileArgs, program_args: Vec<String>) -> Result<i32, Error> {
    let args = CcArgs::parse(&a.program.cc)?;
    let json = a.program.json();
    let mut measure = Measure::default()
        .warmup(a.warmup)
        .repetitions(a.repetitions)
        .flush(a.flush);
    if let Some(x) = a.adaptive {
        measure = measure.adaptive(x, a.max_repetitions);
    }
    if let Some(list) = &a.counters {
        let names: Vec<&str> = if list == "none" {
            Vec::new()
        } else {
            list.split(',').collect()
        };
        measure = measure.counters(&names);
    }
    let cfg = ProfileConfig {
        run: RunConfig {
            save_versions: a.versions,
            ..a.program.run_config(args, program_args)
        },
        measure,
        timeout: Duration::from_secs_f64(a.timeout),
        roofline: !a.no_roofline,
        machine: MachineOptions::default(),
    };
    let p = profile(&cfg)?;
    render::print(json, &p, render::profile::render);
    Ok(0)
}

fn cmd_search(a: SearchArgs, program_args: Vec<String>) -> Result<i32, Error> {
    let args = CcArgs::parse(&a.program.cc)?;
    let json = a.program.json();
    let cfg = SearchConfig {
        run: a.program.run_config(args, program_args),
        budget: a.budget,
        strategy: a.strategy,
        seed: a.seed,
        measuring: Measuring {
            toolchain: Toolchain::default(),
            measure: tuner::pipeline::adaptive_measure(a.warmup, a.repetitions),
            timeout: Duration::from_secs_f64(a.timeout),
            cache_root: a.program.cache_root(),
        },
        jobs: a.jobs,
        time_limit: a.time_limit.map(|s| Duration::from_secs_f64(s.max(0.0))),
        nests: Vec::new(),
    };
    let searched = search(&cfg)?;
    if let Some(out) = &a.output {
        let (text, openmp) = searched.tuned_source()?;
        tuner::files::write(out, &text)?;
        if !json {
            eprintln!(
                "wrote {}{}",
                out.display(),
                if openmp { " (build with -fopenmp)" } else { "" }
            );
        }
    }
    render::print(json, &searched.results[..], render::search::render);
    Ok(0)
}

/// The pipeline as `tune apply` and `tune batch` configure it from their options.
pub(crate) struct PipelineOptions<'a> {
    pub(crate) static_only: bool,
    pub(crate) top_k: usize,
    pub(crate) warmup: u32,
    pub(crate) repetitions: u32,
    pub(crate) cache_root: PathBuf,
    pub(crate) db: Option<&'a PathBuf>,
    pub(crate) model: Option<&'a PathBuf>,
    pub(crate) timeout: f64,
    pub(crate) check_runs: usize,
    pub(crate) budget_s: Option<f64>,
    pub(crate) reassociate: bool,
    pub(crate) refine: usize,
    pub(crate) ranker: crate::cmd::RankerArg,
}

impl PipelineOptions<'_> {
    pub(crate) fn pipeline(&self) -> Pipeline {
        let mut p = if self.static_only {
            Pipeline::static_only()
        } else {
            Pipeline::full()
        }
        .top_k(self.top_k)
        .measured_with(tuner::pipeline::adaptive_measure(
            self.warmup,
            self.repetitions.max(3),
        ))
        .cache_dir(self.cache_root.clone());
        if let Some(db) = self.db {
            p = p.db(db);
        }
        if let Some(m) = self.model {
            p = p.model(m);
        }
        p.timeout = Duration::from_secs_f64(self.timeout);
        p.reassociate = self.reassociate;
        p.refine = self.refine;
        p.ranker = self.ranker.into();
        p.check_runs(self.check_runs).budget(
            self.budget_s
                .map(|s| Duration::try_from_secs_f64(s.max(0.0)).unwrap_or(Duration::MAX)),
        )
    }
}

fn cmd_apply(a: ApplyArgs, program_args: Vec<String>) -> Result<i32, Error> {
    let spec = ProgramSpec {
        function: a.program.function.clone(),
        assume_pure: a.program.assume_pure.clone(),
        program_args,
        ..ProgramSpec::named(
            tuner::spec::stem(a.program.cc.first().map_or("", String::as_str)),
            a.program.cc.clone(),
        )
    };
    spec.cc()?;
    let p = PipelineOptions {
        static_only: a.static_only,
        top_k: a.top_k,
        warmup: a.warmup,
        repetitions: a.repetitions,
        cache_root: a.program.cache_root(),
        db: a.db.as_ref(),
        model: a.model.as_ref(),
        timeout: a.timeout,
        check_runs: a.check_runs,
        budget_s: a.budget_s,
        reassociate: a.reassociate,
        refine: a.refine,
        ranker: a.ranker,
    }
    .pipeline();
    // On a terminal, what is being done now: a program may run for minutes.
    let progress = (!a.program.json() && std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .then(|| {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.set_style(
                indicatif::ProgressStyle::with_template("  {spinner} [{elapsed}] {msg}")
                    .expect("template"),
            );
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
    let p = match &progress {
        Some(bar) => {
            let bar = bar.clone();
            p.events(std::sync::Arc::new(move |e| {
                if let tuner::events::Event::Step { program, what } = e {
                    bar.set_message(format!("{program}: {what}"));
                }
            }))
        }
        None => p,
    };
    // An output file names one file: the first one's loops alone are tuned then.
    let applied = if a.output.is_some() {
        p.apply(&spec).map(|r| tuner::report::FilesApplied {
            reports: vec![r],
            passed_over: Vec::new(),
        })
    } else {
        p.apply_files(&spec)
    };
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let applied = applied?;
    let mut written = Vec::new();
    for report in &applied.reports {
        let out = a.output.clone().unwrap_or_else(|| {
            let f = PathBuf::from(&report.file);
            f.with_file_name(format!("{}.tuned.c", report.program))
        });
        tuner::files::write(&out, &report.source)?;
        written.push(out);
    }
    // One file tuned: its report as it always was; several: every file's.
    let several = applied.reports.len() > 1 || !applied.passed_over.is_empty();
    let json = if !several {
        serde_json::to_string_pretty(&applied.reports[0])
    } else {
        serde_json::to_string_pretty(&applied)
    }
    .expect("report serializes");
    if let Some(r) = &a.report {
        tuner::files::write(r, &json)?;
    }
    if a.program.json() {
        println!("{json}");
        return Ok(0);
    }
    for (report, out) in applied.reports.iter().zip(&written) {
        if several {
            println!("{}:", report.file);
        }
        print!("{}", render::apply::render_with(report, a.explain));
        println!(
            "wrote {}{}",
            out.display(),
            // Only where a kept recipe changed the file: the user's own OpenMP is built
            // as they build it.
            if report.openmp
                && report
                    .nests
                    .iter()
                    .chain(&report.wholes)
                    .any(|n| !n.chosen.steps.is_empty())
            {
                " (build with -fopenmp)"
            } else {
                ""
            }
        );
    }
    for p in &applied.passed_over {
        println!("{}: built as it is ({})", p.file, p.reason);
    }
    Ok(0)
}

fn cmd_report(a: ReportArgs) -> Result<i32, Error> {
    let path = match (&a.file, &a.program) {
        (Some(f), _) => f.clone(),
        (None, Some(p)) => {
            let root = a.cache_dir.unwrap_or_else(profiling::cache::default_root);
            let dir = profiling::cache::ProgramCache::new(&root, p)
                .root
                .join("perf");
            TraceReport::latest(&dir)?.ok_or_else(|| {
                Error::Usage(format!("no report for '{p}' under {}", dir.display()))
            })?
        }
        (None, None) => return Err(Error::Usage("give a report file or --program NAME".into())),
    };
    if !path.is_file() {
        return Err(Error::Usage(format!("{}: no such file", path.display())));
    }
    let report = TraceReport::load(&path)?;
    let tree = report.tree();
    if a.output.json() {
        let rows: Vec<serde_json::Value> = tree
            .iter()
            .map(|r| {
                serde_json::json!({"element": r.label, "depth": r.depth, "samples": r.n,
                    "min_s": r.agg.min, "mean_s": r.agg.mean, "median_s": r.agg.median, "max_s": r.agg.max})
            })
            .collect();
        println!("{}", serde_json::Value::Array(rows));
    } else {
        print!("{}", render_tree(&tree));
        if let (Some(roof), Some(rows)) = (report.other.get("roof"), report.other.get("roofline")) {
            if let (Ok(roof), Ok(rows)) = (
                serde_json::from_value::<profiling::roofline::Roof>(roof.clone()),
                serde_json::from_value::<Vec<profiling::roofline::RooflineRow>>(rows.clone()),
            ) {
                println!();
                print!("{}", profiling::roofline::render(&rows, &roof));
            }
        }
    }
    Ok(0)
}

fn cmd_machine(a: MachineArgs) -> Result<i32, Error> {
    let root = a.cache_dir.unwrap_or_else(profiling::cache::default_root);
    let opts = MachineOptions {
        refresh: a.refresh,
        ..MachineOptions::default()
    };
    let m = machine(&root, &Toolchain::default(), &opts)?;
    render::print(a.output.json(), &m, profiling::machine::render);
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn tune_options_may_sit_anywhere_among_cc_flags() {
        let (argv, prog) = argv::split_argv(
            &Cli::command(),
            s(&[
                "tune",
                "run",
                "gemm.c",
                "-DX",
                "--function",
                "k",
                "-Iinc",
                "--json",
                "--save-versions=3",
                "--",
                "a",
                "-b",
            ]),
        );
        assert_eq!(
            argv,
            s(&[
                "tune",
                "run",
                "--function",
                "k",
                "--json",
                "--save-versions=3",
                "--",
                "gemm.c",
                "-DX",
                "-Iinc"
            ])
        );
        assert_eq!(prog, s(&["a", "-b"]));
        let cli = Cli::try_parse_from(argv).unwrap();
        let Command::Run(a) = cli.command else {
            panic!("run")
        };
        assert_eq!(a.program.function.as_deref(), Some("k"));
        assert_eq!(a.save_versions, 3);
        assert_eq!(a.program.cc, s(&["gemm.c", "-DX", "-Iinc"]));
    }

    #[test]
    fn negative_save_versions_parse() {
        let (argv, _) = argv::split_argv(
            &Cli::command(),
            s(&["tune", "run", "--save-versions", "-1", "a.c"]),
        );
        let Command::Run(a) = Cli::try_parse_from(argv).unwrap().command else {
            panic!("run")
        };
        assert_eq!(a.save_versions, -1);
    }
}
