//! `tune bench ...`.

use profiling::build::Toolchain;
use profiling::stats::{Class, Thresholds};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;
use tuner::bench::{self, report, BenchConfig};
use tuner::Error;

/// Exit code when a benchmark regressed.
const REGRESSED: i32 = 3;

#[derive(clap::Args)]
pub struct BenchArgs {
    /// Suite manifests (suite.json), folders (with a suite.json, or of .c files with
    /// #pragma scop regions) or .c files.
    #[arg(required = true, value_name = "SUITE")]
    suite: Vec<PathBuf>,
    /// Dataset size: -D<PRESET>_DATASET is given to every program.
    #[arg(long, default_value = "MEDIUM", value_parser = crate::cmd::parse_preset)]
    preset: datasets::Preset,
    /// A further cc flag for loose .c files (repeatable), e.g. --cc-flag=-Iutilities.
    #[arg(long = "cc-flag", value_name = "FLAG", allow_hyphen_values = true)]
    cc_flags: Vec<String>,
    /// A `tune batch` folder: its tuned programs are benchmarks too (`name:tuned`).
    #[arg(long, value_name = "DIR", value_parser = crate::cmd::existing_dir)]
    tuned: Option<PathBuf>,
    /// Recorded rounds: samples per benchmark.
    #[arg(long, value_name = "N", default_value_t = 15, value_parser = crate::cmd::positive_count)]
    runs: usize,
    /// Rounds run first and not recorded.
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    /// Save this run (raw samples and environment) as baseline NAME.
    #[arg(long, value_name = "NAME")]
    save_baseline: Option<String>,
    /// Compare with baseline NAME; exit code 3 when anything regressed.
    #[arg(long, value_name = "NAME")]
    baseline: Option<String>,
    /// Significance level of the Mann-Whitney U test.
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
    /// Relative change taken as noise: a change is reported only when its whole 95%
    /// interval lies beyond it (10% by default, as asv does: timings on shared
    /// machines drift by several percent between runs).
    #[arg(long, default_value_t = 0.10)]
    noise_threshold: f64,
    /// Report format on stdout (and in --output).
    #[arg(long, value_enum, default_value_t = ReportFormat::Md)]
    format: ReportFormat,
    /// The same as --format json.
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// Write the report here instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Profile every nest for the roofline chart (default with --format html).
    #[arg(long)]
    roofline: bool,
    /// Baselines and builds (default: ./.tunebench).
    #[arg(long, value_name = "DIR", default_value = ".tunebench")]
    store: PathBuf,
    /// Seconds before a run is killed.
    #[arg(long, value_name = "SECS", default_value_t = 600.0, value_parser = crate::cmd::seconds)]
    timeout: f64,
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
}

/// The formats of a benchmark report.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// Markdown tables.
    Md,
    /// A page with SVG plots.
    Html,
    /// The whole report, raw samples included.
    Json,
}

pub fn cmd_bench(mut a: BenchArgs) -> Result<i32, Error> {
    if a.json {
        a.format = ReportFormat::Json;
    }
    if !(0.0..1.0).contains(&a.alpha) || !(0.0..1.0).contains(&a.noise_threshold) {
        return Err(Error::Usage(
            "--alpha and --noise-threshold must lie in [0, 1)".into(),
        ));
    }
    let jobs = tuner::workflows::batch::collect_jobs(&a.suite, a.preset, &a.cc_flags)?;
    let benches = bench::benchmarks(&jobs, a.tuned.as_deref());
    // Read the baseline first: a missing or damaged one fails before any work.
    let baseline = a
        .baseline
        .as_ref()
        .map(|n| bench::load_baseline(&a.store, n).map(|b| (n.clone(), b)))
        .transpose()?;
    if let Some(n) = &a.save_baseline {
        bench::baseline_path(&a.store, n)?;
    }
    let cfg = BenchConfig {
        toolchain: Toolchain::default(),
        warmup: a.warmup,
        runs: a.runs,
        timeout: Duration::from_secs_f64(a.timeout),
        work: std::path::absolute(&a.store).map_err(Error::read(&a.store))?,
    };
    let suite_name = a
        .suite
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" ");
    let terminal = std::io::stderr().is_terminal();
    let rounds: tuner::Events = std::sync::Arc::new(move |e| {
        if let (
            tuner::Event::Round {
                done,
                all,
                benchmarks,
            },
            true,
        ) = (e, terminal)
        {
            eprint!("\rtune bench: round {done}/{all} of {benchmarks} benchmarks");
            if done == all {
                eprintln!();
            }
        }
    });
    let mut r = bench::run_suite(&cfg, &suite_name, &benches, &rounds)?;
    if a.roofline || a.format == ReportFormat::Html {
        let cache = a
            .cache_dir
            .clone()
            .unwrap_or_else(profiling::cache::default_root);
        r.roofline = bench::roofline(&jobs, a.tuned.as_deref(), &cache, &cfg.toolchain, 3)?;
    }
    if let Some((name, base)) = &baseline {
        let t = Thresholds {
            alpha: a.alpha,
            noise: a.noise_threshold,
            ..Thresholds::default()
        };
        r.comparison = Some(bench::compare(&r, base, name, &t));
    }
    if let Some(n) = &a.save_baseline {
        let path = bench::save_baseline(&a.store, n, &r)?;
        eprintln!("tune bench: saved baseline '{n}' to {}", path.display());
    }
    let text = match a.format {
        ReportFormat::Json => serde_json::to_string_pretty(&r).expect("report serializes") + "\n",
        ReportFormat::Html => report::html(&r),
        ReportFormat::Md => report::markdown(&r),
    };
    match &a.output {
        Some(path) => {
            tuner::files::write(path, &text)?;
            if a.format != ReportFormat::Md {
                print!("{}", report::markdown(&r));
            }
            eprintln!("tune bench: wrote {}", path.display());
        }
        None => print!("{text}"),
    }
    let regressed = r
        .comparison
        .as_ref()
        .map_or(0, |c| c.count(Class::Regressed));
    if regressed > 0 {
        eprintln!("tune bench: {regressed} benchmark(s) regressed");
        return Ok(REGRESSED);
    }
    Ok(0)
}
