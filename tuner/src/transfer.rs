//! Measuring database recipes on database nests.
//!
//! [`NestBench`] measures re-fitted recipes on one nest's saved data against one
//! baseline measured once (the retrieval evaluation and [`measure`] both use it).
//! [`measure`] (`tune db transfer`) fills each entry's transfer row: every entry's best
//! recipe re-fitted to the nest and measured there. These rows say which nests are
//! alike in the way transfer tuning needs (one's recipe works on the other); the
//! model's contrastive term learns from them
//! ([`embeddings::embed::contrastive_pairs`]).

use crate::retrieve::{walk, Outcome};
use crate::run::{dry_run, DryRun, RunConfig};
use crate::{Error, Result};
use embeddings::db::{Database, Transfer};
use ir::codegen::Nest;
use ir::transform::{apply, Recipe};
use profiling::build::Toolchain;
use profiling::cc::CcArgs;
use profiling::cutout::{Cutout, Verdict};
use profiling::measure::Measure;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// How recipes are measured: toolchain, timer settings, time limit per run.
#[derive(Debug, Clone)]
pub struct Measuring {
    pub toolchain: Toolchain,
    pub measure: Measure,
    pub timeout: Duration,
    pub cache_root: PathBuf,
}

/// A suite program's dry run (parsed program, nests, saved data), as the search left
/// it in the cache.
pub fn prepare(
    suite: &datasets::Suite,
    p: &datasets::Program,
    preset: datasets::Preset,
    m: &Measuring,
) -> Result<(CcArgs, DryRun)> {
    let args = CcArgs::parse(&suite.args(p, preset))?;
    let run = RunConfig::tuning(args.clone(), m.cache_root.clone(), m.toolchain.clone());
    let dry = dry_run(&run, &profiling::phases::Phases::new())?;
    Ok((args, dry))
}

/// One nest's cutout on its saved data and its baseline time.
pub struct NestBench<'a> {
    pub program: &'a ir::Program,
    pub nest: &'a Nest,
    pub cutout: Cutout,
    /// Median of the untransformed nest (seconds).
    pub baseline: f64,
    m: &'a Measuring,
    builds: PathBuf,
    scratch: PathBuf,
}

impl<'a> NestBench<'a> {
    /// Builds the cutout and measures the baseline.
    pub fn new(args: &CcArgs, dry: &'a DryRun, nest: &'a Nest, m: &'a Measuring) -> Result<Self> {
        let program = &dry.parsed.program;
        let cutout = Cutout::new(
            program.clone(),
            nest.clone(),
            dry.cache.data(),
            args.cflags.clone(),
        );
        let builds = dry.cache.root.join("cutouts");
        let scratch = dry.cache.root.join("scratch");
        let (base, _) = cutout.measure(
            &m.toolchain,
            &cutout.original(),
            0,
            &m.measure,
            m.timeout,
            &builds,
            &scratch,
        )?;
        Ok(NestBench {
            program,
            nest,
            cutout,
            baseline: base.stats.median,
            m,
            builds,
            scratch,
        })
    }

    /// Speedup of an already re-fitted `recipe` over the baseline: 1 for the empty
    /// recipe, 0 when it is refused, fails or computes something else.
    pub fn speedup(&self, recipe: &Recipe) -> Result<f64> {
        if recipe.steps.is_empty() {
            return Ok(1.0);
        }
        let Ok(t) = apply(self.program, self.nest.region, self.nest.root, recipe) else {
            return Ok(0.0);
        };
        let v = self.cutout.variant("transfer", &t);
        let (r, _) = self.cutout.measure(
            &self.m.toolchain,
            &v,
            0,
            &self.m.measure,
            self.m.timeout,
            &self.builds,
            &self.scratch,
        )?;
        Ok(if r.verdict == Verdict::Verified && r.stats.median > 0.0 {
            self.baseline / r.stats.median
        } else {
            0.0
        })
    }

    /// [`NestBench::speedup`] through `cache` (one measurement per distinct recipe);
    /// counts measurements in `measured` (the empty recipe is 1x, not a measurement).
    pub fn cached(
        &self,
        cache: &mut BTreeMap<String, f64>,
        measured: &mut usize,
        recipe: &Recipe,
    ) -> Result<f64> {
        if recipe.steps.is_empty() {
            return Ok(1.0);
        }
        let key = serde_json::to_string(recipe).expect("recipes serialize");
        if let Some(s) = cache.get(&key) {
            return Ok(*s);
        }
        let s = self.speedup(recipe)?;
        *measured += 1;
        cache.insert(key, s);
        Ok(s)
    }
}

#[derive(Debug, Clone)]
pub struct TransferConfig {
    pub db: PathBuf,
    pub suite: PathBuf,
    pub preset: datasets::Preset,
    /// Only the nests of these programs (all when empty).
    pub programs: Vec<String>,
    /// Measure again rows that are already complete.
    pub again: bool,
    pub measuring: Measuring,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TransferStats {
    /// Nests whose rows were measured.
    pub nests: usize,
    /// Transfers recorded.
    pub transfers: usize,
    /// Cutout variants measured (distinct re-fitted recipes).
    pub measured: usize,
    /// Nests skipped because their row was complete.
    pub complete: usize,
}

/// Fills the transfer rows of the database at `cfg.db`: for each nest of the suite's
/// programs that the database holds, every entry's best recipe (its own included)
/// re-fitted and measured on the nest's saved data against one baseline. Re-fitted
/// recipes that coincide are measured once; one that keeps nothing counts 1x. The file
/// is rewritten (atomically) after each program, so an interrupted run keeps what it
/// finished, and a later run measures only rows that are incomplete (a source entry
/// added, or its best recipe changed) unless `cfg.again`.
pub fn measure(cfg: &TransferConfig, progress: &mut dyn FnMut(&str)) -> Result<TransferStats> {
    let mut db = Database::load(&cfg.db).map_err(|e| Error::Input(e.to_string()))?;
    let suite = datasets::Suite::load(&cfg.suite).map_err(|e| Error::Input(e.to_string()))?;
    let mut stats = TransferStats::default();
    let sources: Vec<(usize, f32)> = (0..db.entries.len())
        .filter(|&i| db.entries[i].best().is_some())
        .map(|i| (i, 0.0))
        .collect();
    for p in &suite.programs {
        if !cfg.programs.is_empty() && !cfg.programs.contains(&p.name) {
            continue;
        }
        let complete = |j: usize| {
            sources
                .iter()
                .all(|&(i, _)| db.entries[j].transfer_from(&db.entries[i]).is_some())
        };
        let (done, todo): (Vec<usize>, Vec<usize>) = (0..db.entries.len())
            .filter(|&j| db.entries[j].program == p.name)
            .partition(|&j| !cfg.again && complete(j));
        stats.complete += done.len();
        if todo.is_empty() {
            continue;
        }
        let (args, dry) = match prepare(&suite, p, cfg.preset, &cfg.measuring) {
            Ok(x) => x,
            Err(e) => {
                progress(&format!("{}: skipped: {e}", p.name));
                continue;
            }
        };
        for j in todo {
            let Some(nest) = dry.nests.iter().find(|n| n.name == db.entries[j].nest) else {
                progress(&format!(
                    "{} {}: skipped: the program has no such nest now",
                    p.name, db.entries[j].nest
                ));
                continue;
            };
            let bench = NestBench::new(&args, &dry, nest, &cfg.measuring)?;
            let visited = walk(
                &db,
                sources.iter().copied(),
                usize::MAX,
                bench.program,
                nest.region,
                nest.root,
            );
            // Repeated re-fitted recipes (`Same`) come from the cache; an empty one
            // measures as 1x without a run.
            let mut cache = BTreeMap::new();
            let mut row: Vec<Transfer> = Vec::new();
            for v in &visited {
                if let Outcome::Unreadable(_) = v.outcome {
                    continue;
                }
                let s = bench.cached(&mut cache, &mut stats.measured, &v.recipe)?;
                let src = &db.entries[v.index];
                row.push(Transfer {
                    program: src.program.clone(),
                    nest: src.nest.clone(),
                    recipe: src.best().unwrap_or_default().to_string(),
                    speedup: s,
                });
            }
            let best = row.iter().map(|t| t.speedup).fold(1.0, f64::max);
            let own = row
                .iter()
                .find(|t| t.program == p.name && t.nest == db.entries[j].nest)
                .map_or(1.0, |t| t.speedup);
            progress(&format!(
                "{} {}: {} recipes, {} distinct measured; baseline {:.3} ms, own recipe {:.2}x, best {:.2}x",
                p.name,
                db.entries[j].nest,
                row.len(),
                cache.len(),
                bench.baseline * 1e3,
                own,
                best
            ));
            stats.nests += 1;
            stats.transfers += row.len();
            db.entries[j].transfers = row;
        }
        db.save(&cfg.db).map_err(|e| Error::Failed(e.to_string()))?;
    }
    Ok(stats)
}
