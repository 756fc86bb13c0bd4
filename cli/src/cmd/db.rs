//! `tune db ...` and `tune model ...`.

use clap::Subcommand;
use embeddings::db::Database;
use embeddings::embed::{Embedder, TARGET_NAMES};
use profiling::build::Toolchain;
use std::path::PathBuf;
use std::time::Duration;
use tuner::nest_bench::Measuring;
use tuner::workflows::db_build::{self, BuildConfig};
use tuner::workflows::eval::{self, EvalConfig};
use tuner::workflows::refeature::{self, RefeatureConfig};
use tuner::workflows::transfer::{self, TransferConfig};
use tuner::workflows::SuiteSelection;
use tuner::{Error, StrategyKind};

fn default_suite() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("datasets")
        .join("suite.json")
}

fn cache_root(dir: &Option<PathBuf>) -> PathBuf {
    dir.clone().unwrap_or_else(profiling::cache::default_root)
}

fn load_db(path: &std::path::Path) -> Result<Database, Error> {
    Database::load(path).map_err(Error::ReadDatabase)
}

#[derive(Subcommand)]
pub enum DbCommand {
    /// Search every program of a suite and add its nests (features, best recipes by
    /// loop role, times) to the database; the file is rewritten after each program.
    ///
    /// Example: tune db build --preset MEDIUM --budget 24 -o tune.db
    Build(DbBuildArgs),
    /// List the entries of a database.
    List(DbListArgs),
    /// Merge databases into the one --db names (faster results win for the same nest on the
    /// same machine: host name and vector ISA).
    ///
    /// Example: tune db merge --db all.db shard-0.db shard-1.db
    Merge(DbMergeArgs),
    /// Embed every entry with a model (what `tune apply` retrieves by).
    Embed(DbEmbedArgs),
    /// Write a suite of synthetic loop-nest programs (seeded) to grow the database.
    ///
    /// Example: tune db synth --seed 1 --count 48 -o target/synth
    Synth(DbSynthArgs),
    /// Leave-one-program-out retrieval quality: per held-out nest, the best recipes of
    /// its K nearest entries from other programs (by embedding, by raw features, at
    /// random, by both fused by their ranks, and the recipes the embedding's, the raw
    /// features' or the fused order's nearest entries vote for with their transfer rows),
    /// re-fitted and measured on its saved data. Trains a
    /// model per program: needs a tune built with `--features train` (libtorch).
    Eval(DbEvalArgs),
    /// Measure every entry's best recipe, re-fitted, on every nest of the database (on
    /// the nest's saved data, against one baseline): the transfer rows the model's
    /// contrastive term learns from. Resumable: complete rows are kept.
    ///
    /// Example: tune db transfer --db models/default/tune.db
    Transfer(DbTransferArgs),
    /// Extract every entry's features again (after a change of the feature layout)
    /// from its program's dry run, keeping its recipes and times; embeddings are
    /// cleared (train a model and `tune db embed` after). Written only when every
    /// entry's program is in one of the suites.
    ///
    /// Example: tune db refeature --db models/default/tune.db --suite datasets/suite.json
    Refeature(DbRefeatureArgs),
    /// Write loop-order variants of a suite's programs as a suite of their own: each
    /// variant is one program with one nest's perfect band in another legal order (the
    /// rest of the file as it was), named ORIGIN@nestK-bP-ORDER.
    ///
    /// Example: tune db variants -o target/variants
    Variants(DbVariantsArgs),
}

#[derive(clap::Args)]
pub struct DbVariantsArgs {
    /// Suite manifest (default: the shipped datasets/suite.json).
    #[arg(long, value_name = "SUITE.json", value_parser = crate::cmd::existing_file)]
    suite: Option<PathBuf>,
    /// Only these programs (comma-separated).
    #[arg(long, value_delimiter = ',')]
    programs: Vec<String>,
    /// Output folder (suite.json and programs/).
    #[arg(short, long, value_name = "DIR")]
    out: PathBuf,
}

#[derive(clap::Args)]
pub struct DbRefeatureArgs {
    #[arg(long, value_name = "DB", value_parser = crate::cmd::existing_file)]
    db: PathBuf,
    /// Suite manifests the entries come from (repeat the flag; default: the shipped
    /// datasets/suite.json).
    #[arg(long, value_name = "SUITE.json", value_parser = crate::cmd::existing_file)]
    suite: Vec<PathBuf>,
    #[arg(long, default_value = "MEDIUM", value_parser = crate::cmd::parse_preset)]
    preset: datasets::Preset,
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// Drop the entries whose program no longer has their nest (named on stderr).
    #[arg(long)]
    drop_missing: bool,
}

#[derive(clap::Args)]
pub struct DbTransferArgs {
    #[arg(long, value_name = "DB", value_parser = crate::cmd::existing_file)]
    db: PathBuf,
    #[command(flatten)]
    on: SuiteArgs,
    /// Measure complete rows again.
    #[arg(long)]
    again: bool,
    /// Sources per nest instead of every entry: the nest's own recipe, the entries of
    /// other programs nearest by raw features (half), a seeded draw of the rest.
    #[arg(long, value_name = "N", value_parser = crate::cmd::positive_count)]
    sample: Option<usize>,
    /// Seed of the draw (--sample).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Timed repetitions per variant, at most: measured as `tune apply` measures (at
    /// least 5, stopping once the median's interval is within ±2%; runs of microseconds
    /// repeated to 20 ms).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    repetitions: u32,
}

/// Which programs of which suite, at which size, cached where.
#[derive(clap::Args)]
pub struct SuiteArgs {
    /// Suite manifest (default: the shipped datasets/suite.json).
    #[arg(long, value_name = "SUITE.json", value_parser = crate::cmd::existing_file)]
    suite: Option<PathBuf>,
    #[arg(long, default_value = "MEDIUM", value_parser = crate::cmd::parse_preset)]
    preset: datasets::Preset,
    /// Only these programs (comma-separated).
    #[arg(long, value_delimiter = ',')]
    programs: Vec<String>,
    #[arg(long)]
    cache_dir: Option<PathBuf>,
}

/// A weight of the model (`--contrastive-weight`, `--anchor`): refused before any
/// work starts unless it is a number >= 0.
fn non_negative(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(w) if w.is_finite() && w >= 0.0 => Ok(w),
        Ok(_) => Err("must be a number >= 0".to_string()),
        Err(e) => Err(e.to_string()),
    }
}

impl SuiteArgs {
    fn selection(&self) -> SuiteSelection {
        SuiteSelection {
            suite: self.suite.clone().unwrap_or_else(default_suite),
            preset: self.preset,
            programs: self.programs.clone(),
        }
    }
}

fn measuring(repetitions: u32, cache_dir: &Option<PathBuf>) -> Measuring {
    Measuring {
        toolchain: Toolchain::default(),
        measure: tuner::pipeline::adaptive_measure(1, repetitions),
        timeout: Duration::from_secs(60),
        cache_root: cache_root(cache_dir),
    }
}

#[derive(clap::Args)]
pub struct DbBuildArgs {
    #[command(flatten)]
    on: SuiteArgs,
    /// Candidates per nest.
    #[arg(long, value_name = "N", default_value_t = 24, value_parser = crate::cmd::positive_count)]
    budget: usize,
    /// Seconds of search per nest.
    #[arg(long, value_name = "SECS", value_parser = crate::cmd::budget_seconds)]
    time_limit: Option<f64>,
    /// Which strategy proposes recipes: random, evolutionary or grid.
    #[arg(long, value_parser = crate::cmd::parse_strategy, default_value = "evolutionary")]
    strategy: StrategyKind,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = crate::cmd::positive_count)]
    jobs: usize,
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    repetitions: u32,
    /// The database file (created or extended).
    #[arg(short = 'o', long = "output", value_name = "DB")]
    out: PathBuf,
}

#[derive(clap::Args)]
pub struct DbSynthArgs {
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, value_name = "N", default_value_t = 48, value_parser = crate::cmd::positive_count)]
    count: usize,
    /// Families in round-robin order, comma-separated (default: the first eight, as
    /// every seed has always drawn them): matmul, matvec, reduction, stencil, copy,
    /// triangular, elementwise, outer, contraction, path, symmetric.
    #[arg(long, value_name = "F[,F...]", value_delimiter = ',', value_parser = parse_family)]
    families: Vec<datasets::synth::Family>,
    /// Folder for programs/, common.h and suite.json.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    out: PathBuf,
}

fn parse_family(s: &str) -> Result<datasets::synth::Family, String> {
    datasets::synth::Family::parse(s).ok_or_else(|| {
        let names: Vec<&str> = datasets::synth::Family::ALL
            .iter()
            .map(|f| f.name())
            .collect();
        format!("unknown family `{s}` (one of {})", names.join(", "))
    })
}

#[derive(clap::Args)]
pub struct DbListArgs {
    #[command(flatten)]
    db: DbPath,
    #[command(flatten)]
    output: crate::cmd::Output,
    /// JSON rows with each entry's stored embedding and its best recipe's family (the
    /// kinds of step it uses): what `scripts/plot-embeddings.py` draws.
    #[arg(long)]
    embeddings: bool,
}

/// The database a command reads: `--db DB`, as every command takes it (or, as before,
/// the argument `DB`).
#[derive(clap::Args)]
pub struct DbPath {
    /// The database.
    #[arg(
        long = "db",
        value_name = "DB",
        required_unless_present = "db_arg",
        value_parser = crate::cmd::existing_file
    )]
    flag: Option<PathBuf>,
    /// The database, given as an argument (the same as --db).
    #[arg(
        value_name = "DB",
        id = "db_arg",
        conflicts_with = "flag",
        value_parser = crate::cmd::existing_file
    )]
    arg: Option<PathBuf>,
}

impl DbPath {
    fn path(&self) -> PathBuf {
        self.flag
            .clone()
            .or_else(|| self.arg.clone())
            .unwrap_or_default()
    }
}

#[derive(clap::Args)]
pub struct DbMergeArgs {
    /// The database to merge into (created if missing); without it, the first argument.
    #[arg(long = "db", value_name = "DB")]
    into: Option<PathBuf>,
    /// Databases to merge (after the database to merge into, when --db is not given).
    #[arg(value_name = "FROM", required = true)]
    from: Vec<PathBuf>,
}

impl DbMergeArgs {
    /// The database merged into, and those merged into it (which must exist).
    fn split(&self) -> Result<(PathBuf, &[PathBuf]), Error> {
        let (into, from) = match (&self.into, self.from.as_slice()) {
            (Some(into), from) => (into.clone(), from),
            (None, [into, from @ ..]) if !from.is_empty() => (into.clone(), from),
            _ => {
                return Err(Error::Usage(
                    "tune db merge: give the databases to merge into --db DB".into(),
                ))
            }
        };
        if let Some(f) = from.iter().find(|f| !f.is_file()) {
            return Err(Error::Usage(format!("{}: no such file", f.display())));
        }
        Ok((into, from))
    }
}

#[derive(clap::Args)]
pub struct DbEmbedArgs {
    #[command(flatten)]
    db: DbPath,
    #[arg(long, value_name = "DIR", value_parser = crate::cmd::existing_dir)]
    model: PathBuf,
}

#[derive(clap::Args)]
pub struct DbEvalArgs {
    #[arg(long, value_name = "DB", value_parser = crate::cmd::existing_file)]
    db: PathBuf,
    #[command(flatten)]
    on: SuiteArgs,
    #[arg(long = "top-k", value_name = "K", default_value_t = 3, value_parser = crate::cmd::positive_count)]
    k: usize,
    /// Seeds of the fold models' training and of the random order, comma-separated:
    /// one report each, from one run that measures a recipe picked under several seeds
    /// once for all.
    #[arg(
        long,
        value_name = "S[,S...]",
        value_delimiter = ',',
        default_value = "1"
    )]
    seed: Vec<u64>,
    /// Rounds in which the recipes that decide each nest's hits (those within 70% of
    /// its best) are measured again in rotation with the baseline; hits are judged on
    /// their medians (0: on one measurement each).
    #[arg(long, value_name = "N", default_value_t = 3)]
    rounds: usize,
    /// Training epochs of each fold's model (as many as the shipped model's).
    #[arg(long, value_name = "N", default_value_t = 150, value_parser = crate::cmd::positive_count)]
    epochs: usize,
    /// Weight of the contrastive term on the training programs' transfer rows.
    #[arg(long, default_value_t = embeddings::embed::CONTRASTIVE_WEIGHT, value_parser = non_negative, allow_negative_numbers = true)]
    contrastive_weight: f64,
    #[command(flatten)]
    anchor: AnchorArg,
    /// Models per fold and seed: the embedding of an ensemble of N models trained under
    /// seeds derived from the seed (their embeddings side by side; 1: one model).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = crate::cmd::positive_count)]
    ensemble: usize,
    /// Timed repetitions per variant (many held-out nests run for microseconds).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    repetitions: u32,
    /// Read what each picked recipe reaches from the held-out nest's transfer row
    /// instead of measuring it (no dry run, no measurement: seconds per fold). Holds out
    /// the programs of --suite or --programs (every program of the database without
    /// either), each with its loop-order variants.
    #[arg(long)]
    offline: bool,
    #[command(flatten)]
    output: crate::cmd::Output,
}

#[derive(Subcommand)]
pub enum ModelCommand {
    /// Train the embedding model on a database's entries (seeded, repeatable); needs a
    /// tune built with `--features train` (libtorch).
    ///
    /// Example: tune model train --db tune.db -o models/default/model
    Train(ModelTrainArgs),
    /// Prediction error per target of a model on a database.
    Eval(ModelEvalArgs),
}

#[derive(clap::Args)]
pub struct ModelTrainArgs {
    #[arg(long, value_name = "DB", value_parser = crate::cmd::existing_file)]
    db: PathBuf,
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    out: PathBuf,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, value_name = "N", default_value_t = 150, value_parser = crate::cmd::positive_count)]
    epochs: usize,
    #[arg(long, default_value_t = 1e-3, value_parser = crate::cmd::positive)]
    lr: f64,
    /// Weight of the contrastive term on the database's transfer rows
    /// (`tune db transfer`); 0 trains on the performance targets alone.
    #[arg(long, default_value_t = embeddings::embed::CONTRASTIVE_WEIGHT, value_parser = non_negative, allow_negative_numbers = true)]
    contrastive_weight: f64,
    #[command(flatten)]
    anchor: AnchorArg,
}

/// `--anchor W`: the model's embedding anchored at the raw-feature distance
/// (`models::ModelConfig::anchored`).
#[derive(clap::Args)]
struct AnchorArg {
    /// Anchor the embedding at the raw-feature distance: the wide part's weights are
    /// held at their initial values and the learned part is weighted by W (0 ranks as
    /// raw features do). Without it, both parts are trained.
    #[arg(long = "anchor", value_name = "W", value_parser = non_negative, allow_negative_numbers = true)]
    weight: Option<f64>,
}

impl AnchorArg {
    /// The network to train: [`embeddings::embed::model_config`], anchored when asked.
    fn model(&self) -> models::ModelConfig {
        let mut c = embeddings::embed::model_config();
        if let Some(w) = self.weight {
            c.anchored = Some(w as f32);
        }
        c
    }
}

#[derive(clap::Args)]
pub struct ModelEvalArgs {
    #[arg(long, value_name = "DIR", value_parser = crate::cmd::existing_dir)]
    model: PathBuf,
    #[arg(long, value_name = "DB", value_parser = crate::cmd::existing_file)]
    db: PathBuf,
}

pub fn cmd_db(c: DbCommand) -> Result<i32, Error> {
    match c {
        DbCommand::Build(a) => {
            let cfg = BuildConfig {
                suite: a.on.selection(),
                budget: a.budget,
                time_limit: a.time_limit.map(Duration::from_secs_f64),
                strategy: a.strategy,
                seed: a.seed,
                jobs: a.jobs,
                measuring: measuring(a.repetitions, &a.on.cache_dir),
                out: a.out.clone(),
            };
            let db = db_build::build(&cfg, &crate::cmd::lines())?;
            eprintln!("{}: {} entries", a.out.display(), db.entries.len());
            Ok(0)
        }
        DbCommand::List(a) => list(a),
        DbCommand::Merge(a) => {
            let (into_path, from) = a.split()?;
            let mut into = if into_path.exists() {
                load_db(&into_path)?
            } else {
                Database {
                    feature_version: embeddings::FEATURE_VERSION,
                    ..Default::default()
                }
            };
            for f in from {
                let other = load_db(f)?;
                let s = into
                    .merge(other)
                    .map_err(|e| Error::Usage(format!("{}: {e}", f.display())))?;
                eprintln!(
                    "{}: {} added, {} replaced, {} kept",
                    f.display(),
                    s.added,
                    s.replaced,
                    s.kept
                );
            }
            into.save(&into_path).map_err(Error::WriteDatabase)?;
            Ok(0)
        }
        DbCommand::Embed(a) => {
            let path = a.db.path();
            let mut db = load_db(&path)?;
            let m = Embedder::load(&a.model).map_err(Error::LoadModel)?;
            db_build::embed_all(&mut db, &m)?;
            db.save(&path).map_err(Error::WriteDatabase)?;
            eprintln!(
                "{}: {} entries embedded by model {}",
                path.display(),
                db.entries.len(),
                db.model
            );
            Ok(0)
        }
        DbCommand::Synth(a) => {
            let mut opts = datasets::synth::SynthOptions {
                seed: a.seed,
                count: a.count,
                ..Default::default()
            };
            if !a.families.is_empty() {
                opts.families = a.families.clone();
            }
            let programs = datasets::synth::generate(&opts);
            let suite =
                datasets::synth::write_suite(&a.out, &programs).map_err(Error::write(&a.out))?;
            eprintln!("{}: {} programs", suite.display(), programs.len());
            Ok(0)
        }
        DbCommand::Eval(a) if a.offline => {
            let db = load_db(&a.db)?;
            // The programs of the suite named (all of the database's without --suite
            // or --programs).
            let only = if !a.on.programs.is_empty() {
                a.on.programs.clone()
            } else if let Some(s) = &a.on.suite {
                datasets::Suite::load(s)?
                    .programs
                    .iter()
                    .map(|p| p.name.clone())
                    .collect()
            } else {
                Vec::new()
            };
            let mut reports = Vec::new();
            for &seed in &a.seed {
                let train = models::TrainOptions {
                    seed,
                    epochs: a.epochs,
                    contrastive_weight: a.contrastive_weight,
                    ..Default::default()
                };
                reports.push(tuner::workflows::eval_offline::evaluate_offline(
                    &db,
                    &only,
                    a.k,
                    &a.anchor.model(),
                    &train,
                    a.ensemble,
                    &crate::cmd::lines(),
                )?);
            }
            print_eval(&reports, a.output.json());
            Ok(0)
        }
        DbCommand::Eval(a) => {
            let cfg = EvalConfig {
                db: a.db,
                suite: a.on.selection(),
                k: a.k,
                seeds: a.seed,
                rounds: a.rounds,
                model: a.anchor.model(),
                ensemble: a.ensemble,
                train: models::TrainOptions {
                    epochs: a.epochs,
                    contrastive_weight: a.contrastive_weight,
                    ..Default::default()
                },
                measuring: measuring(a.repetitions, &a.on.cache_dir),
            };
            let reports = eval::evaluate(&cfg, &crate::cmd::lines())?;
            print_eval(&reports, a.output.json());
            Ok(0)
        }
        DbCommand::Variants(a) => {
            let sel = SuiteSelection {
                suite: a.suite.clone().unwrap_or_else(default_suite),
                preset: datasets::Preset::Mini,
                programs: a.programs.clone(),
            };
            let (path, n) = tuner::workflows::variants::write_variants(&sel, &a.out)?;
            eprintln!("{}: {n} variants", path.display());
            Ok(0)
        }
        DbCommand::Refeature(a) => {
            let suites = if a.suite.is_empty() {
                vec![default_suite()]
            } else {
                a.suite.clone()
            };
            let cfg = RefeatureConfig {
                db: a.db.clone(),
                suites: suites
                    .into_iter()
                    .map(|suite| SuiteSelection {
                        suite,
                        preset: a.preset,
                        programs: Vec::new(),
                    })
                    .collect(),
                // The nest and its normal form, measured for their ratio: with one
                // repetition, a nest of microseconds is run in batches too short to
                // verify.
                measuring: measuring(10, &a.cache_dir),
                drop_missing: a.drop_missing,
            };
            let r = refeature::refeature(&cfg, &crate::cmd::lines())?;
            for (p, n) in &r.dropped {
                eprintln!(
                    "{}: dropped {p} {n}: the program has no such nest any more",
                    a.db.display()
                );
            }
            eprintln!(
                "{}: {} entries, feature version {}; train a model and embed them",
                a.db.display(),
                r.entries,
                embeddings::FEATURE_VERSION
            );
            Ok(0)
        }
        DbCommand::Transfer(a) => {
            let cfg = TransferConfig {
                db: a.db.clone(),
                suite: a.on.selection(),
                again: a.again,
                measuring: measuring(a.repetitions, &a.on.cache_dir),
                sample: a.sample,
                seed: a.seed,
            };
            let s = transfer::measure(&cfg, &crate::cmd::lines())?;
            eprintln!(
                "{}: {} rows measured ({} transfers, {} variants), {} already complete",
                a.db.display(),
                s.nests,
                s.transfers,
                s.measured,
                s.complete
            );
            Ok(0)
        }
    }
}

/// `tune db list`: one line (or JSON object) per entry.
fn list(a: DbListArgs) -> Result<i32, Error> {
    let db = load_db(&a.db.path())?;
    if a.output.json() || a.embeddings {
        let rows: Vec<_> = db
            .entries
            .iter()
            .map(|e| {
                let mut row = serde_json::json!({
                    "program": e.program, "nest": e.nest, "fingerprint": e.fingerprint,
                    "baseline_s": e.baseline_s, "tuned_s": e.tuned_s,
                    "speedup": e.speedup(), "machine": e.machine,
                    "recipes": e.recipes.len(), "embedded": !e.embedding.is_empty(),
                    "transfers": e.transfers.len(),
                    "best": e.best().and_then(|r| serde_json::from_str::<serde_json::Value>(r).ok()),
                });
                if a.embeddings {
                    row["embedding"] = serde_json::json!(e.embedding);
                    row["family"] = serde_json::json!(e
                        .best()
                        .map(tuner::workflows::eval::recipe_family)
                        .unwrap_or_default());
                }
                row
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows).expect("json"));
    } else {
        let w = crate::render::name_width(db.entries.iter().map(|e| e.program.as_str()), 20);
        println!(
            "{:<w$}{:<8}{:>12}{:>10}{:>9}{:>11}  machine",
            "program", "nest", "baseline ms", "speedup", "recipes", "transfers"
        );
        for e in &db.entries {
            println!(
                "{:<w$}{:<8}{:>12.4}{:>9.2}x{:>9}{:>11}  {}",
                e.program,
                e.nest,
                e.baseline_s * 1e3,
                e.speedup(),
                e.recipes.len(),
                e.transfers.len(),
                e.machine
            );
        }
        println!(
            "{} entries, feature version {}, model {}",
            db.entries.len(),
            db.feature_version,
            if db.model.is_empty() {
                "(not embedded)"
            } else {
                &db.model
            }
        );
    }
    Ok(0)
}

pub fn cmd_model(c: ModelCommand) -> Result<i32, Error> {
    match c {
        ModelCommand::Train(a) => {
            let db = load_db(&a.db)?;
            let entries: Vec<&embeddings::Entry> = db.entries.iter().collect();
            let opts = models::TrainOptions {
                seed: a.seed,
                epochs: a.epochs,
                lr: a.lr,
                contrastive_weight: a.contrastive_weight,
                ..Default::default()
            };
            let ck = embeddings::embed::train(&entries, &a.anchor.model(), &opts)?;
            ck.save(&a.out)
                .map_err(|e| Error::Failed(format!("{}: {e}", a.out.display())))?;
            println!(
                "{}: {} examples, {} epochs, final L1 loss {:.4}, seed {}, data {}",
                a.out.display(),
                ck.meta.n_examples,
                ck.meta.epochs,
                ck.meta.final_loss,
                ck.meta.seed,
                &ck.meta.data_hash[..16.min(ck.meta.data_hash.len())]
            );
            Ok(0)
        }
        ModelCommand::Eval(a) => {
            let db = load_db(&a.db)?;
            let m = Embedder::load(&a.model).map_err(Error::LoadModel)?;
            let entries: Vec<&embeddings::Entry> = db.entries.iter().collect();
            let mae = m.evaluate(&entries)?;
            println!("{:<24}{:>12}", "target", "MAE (std)");
            for (n, v) in TARGET_NAMES.iter().zip(mae) {
                println!("{n:<24}{v:>12.4}");
            }
            Ok(0)
        }
    }
}

/// `tune db eval`'s reports: a JSON object for one seed, an array for several; or one
/// table per seed.
fn print_eval(reports: &[tuner::workflows::eval::EvalReport], json: bool) {
    if json {
        let text = match reports {
            [one] => serde_json::to_string_pretty(one),
            many => serde_json::to_string_pretty(many),
        };
        println!("{}", text.expect("json"));
    } else {
        for r in reports {
            print!("{}", crate::render::eval::render_eval(r));
        }
    }
}
