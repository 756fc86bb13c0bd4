//! Growing and judging the tuning database.
//!
//! [`build`]: per program of a suite, the schedule search (which also runs the dry run
//! with Save and measures the untransformed nest), then per nest its features and the
//! recipes that beat the baseline, described by loop roles; entries are added and the
//! database file is rewritten (atomically) after each program, so an interrupted build
//! keeps what it finished. [`evaluate`]: leave-one-program-out retrieval quality.

use crate::records::RecordLog;
use crate::run::RunConfig;
use crate::search::{search, NestResult, SearchConfig, Searched};
use crate::transfer::{prepare, Measuring, NestBench};
use crate::{Error, Result};
use embeddings::db::{Database, Entry};
use embeddings::embed::Embedder;
use embeddings::features::{add_performance, static_features, Measured, Normalizer};
use embeddings::FEATURE_VERSION;
use ir::canonical::describe;
use ir::codegen::Nest;
use ir::program::Loop;
use profiling::build::Toolchain;
use profiling::cc::CcArgs;
use profiling::cutout::{env_of, Verdict};
use profiling::machine::{MachineInfo, MachineOptions};
use profiling::measure::Measure;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Recipes kept per entry (best first).
const RECIPES_PER_ENTRY: usize = 5;
/// Accesses the cache model walks per nest before it samples.
const MODEL_LIMIT: u64 = 4_000_000;

#[derive(Debug, Clone)]
pub struct BuildConfig {
    pub suite: PathBuf,
    pub preset: datasets::Preset,
    /// Only these programs (all when empty).
    pub programs: Vec<String>,
    pub budget: usize,
    pub time_limit: Option<Duration>,
    pub strategy: String,
    pub seed: u64,
    pub jobs: usize,
    pub measure: Measure,
    pub timeout: Duration,
    pub cache_root: PathBuf,
    pub out: PathBuf,
    pub toolchain: Toolchain,
}

/// The name of this machine, as records and database entries store it.
pub fn host() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "host".into())
}

/// The machine description (measured once per host, then cached).
pub fn machine_info(cache_root: &Path, tc: &Toolchain) -> Option<MachineInfo> {
    profiling::machine::machine(cache_root, tc, &MachineOptions::default()).ok()
}

/// The root loop of `nest`.
pub fn nest_root<'p>(program: &'p ir::Program, nest: &Nest) -> Option<&'p Loop> {
    ir::program::loops(&program.regions.get(nest.region)?.body)
        .into_iter()
        .find(|l| l.id == nest.root)
}

/// Static and performance features of a nest whose data was saved in `data_dir`
/// (version 0), measured at `time_s` per run, with the static counts they used.
pub fn nest_features(
    program: &ir::Program,
    nest: &Nest,
    data_dir: &Path,
    time_s: f64,
    machine: Option<&MachineInfo>,
) -> Option<(embeddings::NestFeatures, Option<ir::counts::NestCounts>)> {
    let root = nest_root(program, nest)?;
    let env = env_of(data_dir, nest, 0);
    let counts = ir::counts::nest_counts(program, nest.region, nest.root, &env, 50_000_000).ok();
    let cache = profiling::cachemodel::model_warm(
        program,
        nest.region,
        nest.root,
        &env,
        &crate::profile::cache_specs(machine),
        MODEL_LIMIT,
    )
    .ok();
    let mut f = static_features(program, nest, root, &env, counts.as_ref());
    add_performance(
        &mut f,
        &Measured {
            time_s,
            counts: counts.as_ref(),
            cache: cache.as_ref(),
            counters: &[],
        },
        machine,
    );
    Some((f, counts))
}

/// Database entries of a searched program.
pub fn entries_of(s: &Searched, machine: Option<&MachineInfo>) -> Result<Vec<Entry>> {
    let log = RecordLog::open(&s.records)?;
    let nests = ir::codegen::nests(&s.program);
    let mut out = Vec::new();
    for r in &s.results {
        let Some(nest) = nests.iter().find(|n| n.name == r.nest) else {
            continue;
        };
        let Some((f, _)) = nest_features(&s.program, nest, &s.data_dir, r.baseline_s, machine)
        else {
            continue;
        };
        out.push(entry(s, r, nest, f, &log));
    }
    Ok(out)
}

fn entry(
    s: &Searched,
    r: &NestResult,
    nest: &Nest,
    features: embeddings::NestFeatures,
    log: &RecordLog,
) -> Entry {
    let mine: Vec<_> = log.records().iter().filter(|x| x.nest == r.nest).collect();
    let fingerprint = mine
        .iter()
        .find(|x| x.recipe.steps.is_empty())
        .map(|x| x.fingerprint.clone())
        .unwrap_or_default();
    let mut good: Vec<_> = mine
        .iter()
        .filter(|x| {
            x.fingerprint == fingerprint
                && x.verdict == Verdict::Verified
                && !x.recipe.steps.is_empty()
                && x.median_s > 0.0
                && x.median_s < r.baseline_s
        })
        .collect();
    good.sort_by(|a, b| a.median_s.total_cmp(&b.median_s));
    let mut recipes = Vec::new();
    for x in good {
        if recipes.len() >= RECIPES_PER_ENTRY {
            break;
        }
        if let Ok(d) = describe(&s.program, nest.region, nest.root, &x.recipe) {
            let json = serde_json::to_string(&d).expect("role recipes serialize");
            if !recipes.iter().any(|(j, _)| *j == json) {
                recipes.push((json, r.baseline_s / x.median_s));
            }
        }
    }
    Entry {
        program: s.program.name.clone(),
        nest: r.nest.clone(),
        fingerprint,
        features,
        embedding: Vec::new(),
        recipes,
        baseline_s: r.baseline_s,
        tuned_s: r.best_s,
        machine: host(),
        transfers: Vec::new(),
    }
}

/// Searches every program of the suite and adds its nests to the database at
/// `cfg.out` (created if missing). Progress lines go to `progress`.
pub fn build(cfg: &BuildConfig, progress: &mut dyn FnMut(&str)) -> Result<Database> {
    let suite = datasets::Suite::load(&cfg.suite).map_err(|e| Error::Input(e.to_string()))?;
    let mut db = if cfg.out.exists() {
        Database::load(&cfg.out).map_err(|e| Error::Input(e.to_string()))?
    } else {
        Database {
            feature_version: FEATURE_VERSION,
            ..Default::default()
        }
    };
    let machine = machine_info(&cfg.cache_root, &cfg.toolchain);
    for p in &suite.programs {
        if !cfg.programs.is_empty() && !cfg.programs.contains(&p.name) {
            continue;
        }
        let args = CcArgs::parse(&suite.args(p, cfg.preset))?;
        let scfg = SearchConfig {
            run: RunConfig::tuning(args, cfg.cache_root.clone(), cfg.toolchain.clone()),
            budget: cfg.budget,
            strategy: cfg.strategy.clone(),
            seed: cfg.seed,
            measure: cfg.measure.clone(),
            timeout: cfg.timeout,
            jobs: cfg.jobs,
            time_limit: cfg.time_limit,
        };
        let searched = match search(&scfg) {
            Ok(s) => s,
            Err(e) => {
                progress(&format!("{}: skipped: {e}", p.name));
                continue;
            }
        };
        let entries = entries_of(&searched, machine.as_ref())?;
        let n = entries.len();
        let new = Database {
            feature_version: FEATURE_VERSION,
            model: String::new(),
            entries,
        };
        db.merge(new).map_err(Error::Failed)?;
        db.model.clear();
        db.save(&cfg.out)
            .map_err(|e| Error::Failed(e.to_string()))?;
        progress(&format!(
            "{}: {n} nests, best speedups {}",
            p.name,
            searched
                .results
                .iter()
                .map(|r| format!("{:.2}x", r.speedup))
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    Ok(db)
}

/// Embeds every entry with `model` and records which model did.
pub fn embed_all(db: &mut Database, model: &Embedder) -> Result<()> {
    let feats: Vec<&embeddings::NestFeatures> = db.entries.iter().map(|e| &e.features).collect();
    let emb = model
        .embed(&feats, false)
        .map_err(|e| Error::Failed(e.to_string()))?;
    for (e, v) in db.entries.iter_mut().zip(emb) {
        e.embedding = v;
    }
    db.model = model.id();
    Ok(())
}

/// One retrieval method's outcome on one held-out nest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MethodOutcome {
    pub neighbours: Vec<(String, String, f32)>,
    /// Speedups of the transferred recipes (0 = refused, failed or wrong).
    pub speedups: Vec<f64>,
    /// max(1, best transferred speedup): what `tune apply` would keep.
    pub kept: f64,
    /// kept ≥ 90% of the best speedup known for the nest.
    pub hit: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EvalRow {
    pub program: String,
    pub nest: String,
    pub best_known: f64,
    /// The nest's own best recipe (from its search) measured in this evaluation.
    #[serde(default)]
    pub search_best: f64,
    /// The speedup the database records for that recipe (another session's measurement).
    #[serde(default)]
    pub recorded: f64,
    pub methods: BTreeMap<String, MethodOutcome>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EvalReport {
    pub k: usize,
    pub rows: Vec<EvalRow>,
    /// Method → share of held-out nests with a hit.
    pub hit_rate: BTreeMap<String, f64>,
    pub measured: usize,
    pub seconds: f64,
}

#[derive(Debug, Clone)]
pub struct EvalConfig {
    pub db: PathBuf,
    pub suite: PathBuf,
    pub preset: datasets::Preset,
    pub programs: Vec<String>,
    pub k: usize,
    pub seed: u64,
    pub train: models::TrainOptions,
    pub measuring: Measuring,
}

pub const METHODS: [&str; 3] = ["embedding", "raw features", "random"];

/// Leave-one-program-out: for each program of the suite that the database holds, a
/// model is trained without it, and each of its nests gets the first K distinct
/// re-fitted best recipes along each method's order of the other programs' entries
/// (nearest by embedding; nearest by standardized raw features; a random order),
/// measured on the nest's saved data against its baseline. The best known speedup is
/// the nest's own search result measured the same way, or any method's if faster.
pub fn evaluate(cfg: &EvalConfig, progress: &mut dyn FnMut(&str)) -> Result<EvalReport> {
    let started = std::time::Instant::now();
    let db = Database::load(&cfg.db).map_err(|e| Error::Input(e.to_string()))?;
    let suite = datasets::Suite::load(&cfg.suite).map_err(|e| Error::Input(e.to_string()))?;
    let mut rows = Vec::new();
    let mut measured = 0;
    let mut rng = crate::search::Rng::new(cfg.seed);
    for p in &suite.programs {
        if !cfg.programs.is_empty() && !cfg.programs.contains(&p.name) {
            continue;
        }
        let held: Vec<usize> = (0..db.entries.len())
            .filter(|&i| db.entries[i].program == p.name)
            .collect();
        if held.is_empty() {
            continue;
        }
        let train: Vec<&Entry> = db.entries.iter().filter(|e| e.program != p.name).collect();
        let ckpt = embeddings::embed::train(&train, &cfg.train)
            .map_err(|e| Error::Failed(e.to_string()))?;
        let model = Embedder::new(ckpt).map_err(|e| Error::Failed(e.to_string()))?;
        let all_feats: Vec<&embeddings::NestFeatures> =
            db.entries.iter().map(|e| &e.features).collect();
        let emb = model
            .embed(&all_feats, false)
            .map_err(|e| Error::Failed(e.to_string()))?;
        let norm = Normalizer::fit(&train.iter().map(|e| &e.features).collect::<Vec<_>>());
        let raw: Vec<Vec<f32>> = db
            .entries
            .iter()
            .map(|e| norm.apply(&e.features).flat())
            .collect();
        // The held-out program's nests and saved data, as the search left them.
        let (args, dry) = prepare(&suite, p, cfg.preset, &cfg.measuring)?;
        for me in held {
            let e = &db.entries[me];
            let Some(nest) = dry.nests.iter().find(|n| n.name == e.nest) else {
                continue;
            };
            let bench = NestBench::new(&args, &dry, nest, &cfg.measuring)?;
            measured += 1;
            let program = bench.program;
            let usable = |x: &Entry| x.program != p.name && x.best().is_some();
            let others: Vec<usize> = (0..db.entries.len())
                .filter(|&i| usable(&db.entries[i]))
                .collect();
            // Each method's order over the other programs' entries; every method gets
            // the first K distinct re-fitted recipes along its own order.
            let ranked = |vecs: &[Vec<f32>]| -> Vec<(usize, f32)> {
                db.ranked(&vecs[me], vecs, &usable)
                    .into_iter()
                    .map(|n| (n.index, n.distance))
                    .collect()
            };
            let mut random = others.clone();
            for i in (1..random.len()).rev() {
                random.swap(i, rng.below(i + 1));
            }
            let random: Vec<(usize, f32)> = random
                .into_iter()
                .map(|i| (i, embeddings::db::distance(&emb[me], &emb[i])))
                .collect();
            let orders = [ranked(&emb), ranked(&raw), random];
            let mut cache: BTreeMap<String, f64> = BTreeMap::new();
            let mut methods = BTreeMap::new();
            for (name, order) in METHODS.iter().zip(orders) {
                let walk =
                    crate::retrieve::walk(&db, order, cfg.k, program, nest.region, nest.root);
                let mut speedups = Vec::new();
                let mut neighbours = Vec::new();
                for v in walk.iter().filter(|v| v.is_pick()) {
                    let n = &db.entries[v.index];
                    neighbours.push((n.program.clone(), n.nest.clone(), v.distance));
                    speedups.push(bench.cached(&mut cache, &mut measured, &v.recipe)?);
                }
                let kept = speedups.iter().copied().fold(1.0, f64::max);
                methods.insert(
                    name.to_string(),
                    MethodOutcome {
                        neighbours,
                        speedups,
                        kept,
                        hit: false,
                    },
                );
            }
            // The best known: the nest's own best recipe from its search, measured now
            // against the same baseline as the transferred ones (the speedup the
            // database records was measured in another session, against a baseline of
            // its own), or anything a method found that is faster.
            let own = crate::retrieve::walk(&db, [(me, 0.0)], 1, program, nest.region, nest.root);
            let mut search_best = 1.0f64;
            for v in own.iter().filter(|v| v.is_pick()) {
                let s = bench.cached(&mut cache, &mut measured, &v.recipe)?;
                search_best = search_best.max(s);
            }
            let best_known = methods.values().map(|m| m.kept).fold(search_best, f64::max);
            for m in methods.values_mut() {
                m.hit = m.kept >= 0.9 * best_known;
            }
            progress(&format!(
                "{} {}: best known {:.2}x; {}",
                p.name,
                e.nest,
                best_known,
                METHODS
                    .iter()
                    .map(|n| format!("{n} {:.2}x", methods[*n].kept))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            rows.push(EvalRow {
                program: p.name.clone(),
                nest: e.nest.clone(),
                best_known,
                search_best,
                recorded: e.speedup(),
                methods,
            });
        }
    }
    let mut hit_rate = BTreeMap::new();
    for m in METHODS {
        let hits = rows.iter().filter(|r| r.methods[m].hit).count();
        hit_rate.insert(
            m.to_string(),
            if rows.is_empty() {
                0.0
            } else {
                hits as f64 / rows.len() as f64
            },
        );
    }
    Ok(EvalReport {
        k: cfg.k,
        rows,
        hit_rate,
        measured,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The evaluation table.
pub fn render_eval(r: &EvalReport) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<16}{:<8}{:>8}  {:>16}{:>16}{:>16}",
        "program", "nest", "best", "embedding", "raw features", "random"
    );
    for row in &r.rows {
        let _ = write!(
            out,
            "{:<16}{:<8}{:>7.2}x ",
            row.program, row.nest, row.best_known
        );
        for m in METHODS {
            let o = &row.methods[m];
            let _ = write!(
                out,
                "{:>15}",
                format!("{:.2}x {}", o.kept, if o.hit { "hit" } else { "miss" })
            );
            out.push(' ');
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "top-{} reaches >= 90% of the best known speedup on: {}",
        r.k,
        METHODS
            .iter()
            .map(|m| format!("{m} {:.0}%", 100.0 * r.hit_rate[*m]))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        out,
        "{} held-out nests, {} measurements, {:.0} s",
        r.rows.len(),
        r.measured,
        r.seconds
    );
    out
}
