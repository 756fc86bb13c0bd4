//! `tune batch ...`.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;
use tuner::environment::Environment;
use tuner::workflows::batch::{self, BatchConfig};
use tuner::{Error, Event, Events};

#[derive(clap::Args)]
pub struct BatchArgs {
    /// Suite manifests (suite.json), folders (with a suite.json, or of .c files with
    /// #pragma scop regions) or .c files; with --merge, the folders of finished shards.
    #[arg(required = true, value_name = "PATH|MANIFEST")]
    inputs: Vec<PathBuf>,
    /// Dataset size: -D<PRESET>_DATASET is given to every program.
    #[arg(long, default_value = "MEDIUM", value_parser = crate::cmd::parse_preset)]
    preset: datasets::Preset,
    /// A further cc flag for loose .c files (repeatable), e.g. --cc-flag=-Iutilities.
    #[arg(long = "cc-flag", value_name = "FLAG", allow_hyphen_values = true)]
    cc_flags: Vec<String>,
    /// Programs tuned at once (their compilations overlap; runs never do).
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = crate::cmd::positive_count)]
    jobs: usize,
    /// Finish the batch whose journal is in --output (programs it lists are not redone).
    #[arg(long)]
    resume: bool,
    /// Folder of the results: journal.jsonl, summary.json, programs/<name>/.
    /// (`--out DIR` is the same option.)
    #[arg(
        short = 'o',
        long = "output",
        alias = "out",
        value_name = "DIR",
        default_value = "tune-batch"
    )]
    out: PathBuf,
    /// Tune only shard I of N (0-based), e.g. --shard $SLURM_ARRAY_TASK_ID/4.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Join the folders of shards (the inputs) into --output.
    #[arg(long)]
    merge: bool,
    #[arg(long, value_name = "K", default_value_t = 3, value_parser = crate::cmd::positive_count)]
    top_k: usize,
    /// In which order the database's entries are tried.
    #[arg(long, value_enum, default_value = "raw-votes")]
    ranker: crate::cmd::RankerArg,
    /// Tuning database (default: the shipped one, or $TUNE_MODELS/tune.db).
    #[arg(long, value_name = "DB", value_parser = crate::cmd::existing_file)]
    db: Option<PathBuf>,
    /// Model checkpoint folder (default: the shipped one).
    #[arg(long, value_name = "DIR", value_parser = crate::cmd::existing_dir)]
    model: Option<PathBuf>,
    #[arg(long, default_value_t = 2)]
    warmup: u32,
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    repetitions: u32,
    /// Seconds before a run is killed.
    #[arg(long, value_name = "SECS", default_value_t = 600.0, value_parser = crate::cmd::seconds)]
    timeout: f64,
    /// Timed runs of each whole program, original and tuned, in the final check of
    /// `tune apply` (0 skips it).
    #[arg(long, value_name = "N", default_value_t = 5)]
    check_runs: usize,
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    // The summary as JSON: --json or --format json.
    #[command(flatten)]
    output: crate::cmd::Output,
}

pub fn cmd_batch(a: BatchArgs) -> Result<i32, Error> {
    let p = crate::PipelineOptions {
        static_only: false,
        top_k: a.top_k,
        warmup: a.warmup,
        repetitions: a.repetitions,
        cache_root: a
            .cache_dir
            .clone()
            .unwrap_or_else(profiling::cache::default_root),
        db: a.db.as_ref(),
        model: a.model.as_ref(),
        timeout: a.timeout,
        check_runs: a.check_runs,
        budget_s: None,
        reassociate: false,
        refine: 0,
        ranker: a.ranker,
    }
    .pipeline();
    let summary = if a.merge {
        batch::merge(&a.out, &a.inputs, Environment::capture(&p.toolchain))?
    } else {
        let mut jobs = batch::collect_jobs(&a.inputs, a.preset, &a.cc_flags)?;
        if let Some(s) = &a.shard {
            let (i, n) = batch::parse_shard(s)?;
            jobs = batch::shard(jobs, i, n);
        }
        let cfg = BatchConfig {
            pipeline: p,
            jobs: a.jobs,
            out: a.out.clone(),
            resume: a.resume,
        };
        let progress = Progress::new();
        let events: Events = std::sync::Arc::new(move |e| progress.event(e));
        batch::run(&cfg, &jobs, &events)?
    };
    if a.output.json() {
        println!(
            "{}",
            serde_json::to_string_pretty(&summary).expect("summary serializes")
        );
    } else {
        print!("{}", crate::render::batch::render(&summary));
        println!("wrote {}", a.out.join("summary.json").display());
    }
    Ok(if summary.failed > 0 { 1 } else { 0 })
}

/// Bars on a terminal (overall, and one spinner per program in flight); plain lines
/// otherwise.
struct Progress {
    bars: Option<(MultiProgress, ProgressBar)>,
    running: Mutex<HashMap<String, ProgressBar>>,
    finished: Mutex<(usize, usize)>,
}

impl Progress {
    fn new() -> Progress {
        let bars = std::io::stderr().is_terminal().then(|| {
            let m = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
            let all = m.add(ProgressBar::new(0));
            all.set_style(
                ProgressStyle::with_template("{bar:30} {pos}/{len} programs [{elapsed}] {msg}")
                    .expect("template"),
            );
            (m, all)
        });
        Progress {
            bars,
            running: Mutex::new(HashMap::new()),
            finished: Mutex::new((0, 0)),
        }
    }

    fn event(&self, e: Event) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        match e {
            Event::BatchStart { total, done } => {
                *self.finished.lock().unwrap_or_else(|e| e.into_inner()) = (done, total);
                match &self.bars {
                    Some((_, all)) => {
                        all.set_length(total as u64);
                        all.set_position(done as u64);
                    }
                    None => eprintln!(
                        "tune batch: {total} programs, {done} already finished, {} to tune",
                        total - done
                    ),
                }
            }
            Event::Begin { program } => {
                if let Some((m, _)) = &self.bars {
                    let b = m.add(ProgressBar::new_spinner());
                    b.set_style(
                        ProgressStyle::with_template("  {spinner} {prefix:<16} [{elapsed}] {msg}")
                            .expect("template"),
                    );
                    b.set_prefix(program.to_string());
                    b.enable_steady_tick(Duration::from_millis(200));
                    running.insert(program.to_string(), b);
                }
            }
            Event::Step { program, what } => {
                if let Some(b) = running.get(program) {
                    b.set_message(what.to_string());
                }
            }
            Event::End { outcome } => {
                let mut f = self.finished.lock().unwrap_or_else(|e| e.into_inner());
                f.0 += 1;
                let line = match &outcome.error {
                    None => format!(
                        "{}: {} of {} nests tuned, {:.2}x, {:.1} s",
                        outcome.program,
                        outcome.tuned_nests,
                        outcome.nests,
                        outcome.speedup,
                        outcome.seconds
                    ),
                    Some(e) => format!("{}: failed: {e}", outcome.program),
                };
                match &self.bars {
                    Some((m, all)) => {
                        if let Some(b) = running.remove(&outcome.program) {
                            b.finish_and_clear();
                            m.remove(&b);
                        }
                        all.inc(1);
                        let _ = m.println(line);
                    }
                    None => eprintln!("[{}/{}] {line}", f.0, f.1),
                }
            }
            Event::Done { line } => eprintln!("{line}"),
            // Batches time nothing in rotation.
            Event::Round { .. } => {}
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some((_, all)) = &self.bars {
            all.finish_and_clear();
        }
    }
}
