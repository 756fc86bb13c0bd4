//! Growing the database: `tune db build`. Per program of a suite, the schedule search
//! (which also runs the dry run with Save and measures the untransformed nest), then
//! per nest its features and the recipes that beat the baseline, described by loop
//! roles; entries are added and the database file is rewritten (atomically) after each
//! program, so an interrupted build keeps what it finished. `tune db embed` embeds
//! every entry with a model.

use super::SuiteSelection;
use crate::events::{Event, Events};
use crate::features::nest_features;
use crate::nest_bench::Measuring;
use crate::records::{open_log, RecordLog};
use crate::run::RunConfig;
use crate::search::{search, NestResult, SearchConfig, Searched};
use crate::strategy::StrategyKind;
use crate::{Error, Result};
use embeddings::db::{Database, Entry};
use embeddings::Embed;
use embeddings::FEATURE_VERSION;
use ir::canonical::describe;
use ir::codegen::Nest;
use profiling::cutout::Verdict;
use profiling::machine::MachineInfo;
use std::path::PathBuf;
use std::time::Duration;

/// Recipes kept per entry (best first).
const RECIPES_PER_ENTRY: usize = 5;

/// How to build a database.
#[derive(Debug, Clone)]
pub struct BuildConfig {
    /// Which programs of which suite.
    pub suite: SuiteSelection,
    /// Candidates measured per nest.
    pub budget: usize,
    /// Search time per nest.
    pub time_limit: Option<Duration>,
    /// Which strategy proposes recipes.
    pub strategy: StrategyKind,
    /// Seed of the strategy.
    pub seed: u64,
    /// Candidates compiled in parallel.
    pub jobs: usize,
    /// How candidates are measured.
    pub measuring: Measuring,
    /// The database file (created or extended).
    pub out: PathBuf,
}

/// Database entries of a searched program, named `name` (the suite's name of the
/// program, which every workflow matches entries by; it differs from the file's stem
/// for loop-order variants, `ORIGIN@nestK-...` in `programs/ORIGIN_at_nestK-....c`).
pub fn entries_of(s: &Searched, name: &str, machine: Option<&MachineInfo>) -> Result<Vec<Entry>> {
    let log = open_log(&s.records)?;
    let nests = ir::codegen::nests(&s.program);
    let mut out = Vec::new();
    for r in &s.results {
        let Some(nest) = nests.iter().find(|n| n.name == r.nest) else {
            continue;
        };
        let Some((f, _)) = nest_features(
            &s.program,
            nest,
            crate::features::normal_form(&s.program, nest).as_ref(),
            &s.data_dir,
            r.feature_s(),
            &r.counters,
            machine,
        ) else {
            continue;
        };
        let mut e = entry(s, name, r, nest, f, &log);
        if let Some(m) = machine {
            e.isa = embeddings::db::vector_isa(&m.flags).to_string();
        }
        out.push(e);
    }
    Ok(out)
}

fn entry(
    s: &Searched,
    name: &str,
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
        program: name.to_string(),
        nest: r.nest.clone(),
        fingerprint,
        features,
        embedding: Vec::new(),
        recipes,
        baseline_s: r.baseline_s,
        tuned_s: r.best_s,
        machine: profiling::host::hostname(),
        isa: String::new(),
        transfers: Vec::new(),
    }
}

/// Searches every program of the suite and adds its nests to the database at
/// `cfg.out` (created if missing); one [`Event::Done`] line per program.
pub fn build(cfg: &BuildConfig, events: &Events) -> Result<Database> {
    let suite = cfg.suite.load()?;
    let mut db = if cfg.out.exists() {
        Database::load(&cfg.out).map_err(Error::ReadDatabase)?
    } else {
        Database {
            feature_version: FEATURE_VERSION,
            ..Default::default()
        }
    };
    let m = &cfg.measuring;
    let machine = crate::features::machine_info(&m.cache_root, &m.toolchain, &[]);
    for p in cfg.suite.programs(&suite) {
        let scfg = SearchConfig {
            run: RunConfig::tuning(
                profiling::cc::CcArgs::parse(&suite.args(p, cfg.suite.preset))?,
                m.cache_root.clone(),
                m.toolchain.clone(),
            ),
            budget: cfg.budget,
            strategy: cfg.strategy,
            seed: cfg.seed,
            measuring: m.clone(),
            jobs: cfg.jobs,
            time_limit: cfg.time_limit,
            nests: p.nests.clone(),
        };
        let searched = match search(&scfg) {
            Ok(s) => s,
            Err(e) => {
                events(Event::Done {
                    line: &format!("{}: skipped: {e}", p.name),
                });
                continue;
            }
        };
        let entries = entries_of(&searched, &p.name, machine.as_ref())?;
        let n = entries.len();
        let new = Database {
            feature_version: FEATURE_VERSION,
            model: String::new(),
            entries,
        };
        db.merge(new).map_err(Error::Failed)?;
        db.model.clear();
        db.save(&cfg.out).map_err(Error::WriteDatabase)?;
        events(Event::Done {
            line: &format!(
                "{}: {n} nests, best speedups {}",
                p.name,
                searched
                    .results
                    .iter()
                    .map(|r| format!("{:.2}x", r.speedup))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
        });
    }
    Ok(db)
}

/// Embeds every entry with `model` and records which model did.
pub fn embed_all(db: &mut Database, model: &dyn Embed) -> Result<()> {
    let feats: Vec<&embeddings::NestFeatures> = db.entries.iter().map(|e| &e.features).collect();
    let emb = model.embed(&feats, false)?;
    for (e, v) in db.entries.iter_mut().zip(emb) {
        e.embedding = v;
    }
    db.model = model.id();
    Ok(())
}
