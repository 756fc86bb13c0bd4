//! Measuring database recipes on database nests: `tune db transfer` fills each
//! entry's transfer row, every entry's best recipe re-fitted to the nest and measured
//! there. These rows say which nests are alike in the way transfer tuning needs (one's
//! recipe works on the other); the model's contrastive term learns from them
//! ([`embeddings::embed::contrastive_pairs`]).

use super::speedups::Speedups;
use super::{prepare, SuiteSelection};
use crate::events::{Event, Events};
use crate::nest_bench::{Measuring, NestBench};
use crate::retrieve::{walk, Outcome};
use crate::{Error, Result};
use embeddings::db::{Database, Transfer};
use std::path::PathBuf;

#[derive(Debug, Clone)]
/// How to fill the transfer rows.
pub struct TransferConfig {
    /// The database.
    pub db: PathBuf,
    /// Which programs of which suite.
    pub suite: SuiteSelection,
    /// Measure again rows that are already complete.
    pub again: bool,
    /// How recipes are measured.
    pub measuring: Measuring,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
/// What `tune db transfer` did.
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
pub fn measure(cfg: &TransferConfig, events: &Events) -> Result<TransferStats> {
    let mut db = Database::load(&cfg.db).map_err(Error::ReadDatabase)?;
    let suite = cfg.suite.load()?;
    let mut stats = TransferStats::default();
    let sources: Vec<(usize, f32)> = (0..db.entries.len())
        .filter(|&i| db.entries[i].best().is_some())
        .map(|i| (i, 0.0))
        .collect();
    for p in cfg.suite.programs(&suite) {
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
        let (args, dry) = match prepare(&suite, p, cfg.suite.preset, &cfg.measuring) {
            Ok(x) => x,
            Err(e) => {
                events(Event::Done {
                    line: &format!("{}: skipped: {e}", p.name),
                });
                continue;
            }
        };
        for j in todo {
            let Some(nest) = dry.nests.iter().find(|n| n.name == db.entries[j].nest) else {
                events(Event::Done {
                    line: &format!(
                        "{} {}: skipped: the program has no such nest now",
                        p.name, db.entries[j].nest
                    ),
                });
                continue;
            };
            let bench = NestBench::new(&dry, nest, &args.cflags, &cfg.measuring);
            let mut speedups = Speedups::new(&bench)?;
            let visited: Vec<_> = walk(
                &db,
                sources.iter().copied(),
                usize::MAX,
                bench.program,
                nest.region,
                nest.root,
            )
            .into_iter()
            .filter(|v| !matches!(v.outcome, Outcome::Unreadable(_)))
            .collect();
            // Repeated re-fitted recipes (`Same`) are measured once; an empty one is 1x
            // without a run.
            let recipes: Vec<_> = visited.iter().map(|v| v.recipe.clone()).collect();
            let measured = speedups.of(&recipes)?;
            stats.measured += speedups.distinct();
            let row: Vec<Transfer> = visited
                .iter()
                .zip(measured)
                .map(|(v, s)| {
                    let src = &db.entries[v.index];
                    Transfer {
                        program: src.program.clone(),
                        nest: src.nest.clone(),
                        recipe: src.best().unwrap_or_default().to_string(),
                        speedup: s,
                    }
                })
                .collect();
            let best = row.iter().map(|t| t.speedup).fold(1.0, f64::max);
            let own = row
                .iter()
                .find(|t| t.program == p.name && t.nest == db.entries[j].nest)
                .map_or(1.0, |t| t.speedup);
            events(Event::Done {
                line: &format!(
                    "{} {}: {} recipes, {} distinct measured; baseline {:.3} ms, own recipe {:.2}x, best {:.2}x",
                    p.name,
                    db.entries[j].nest,
                    row.len(),
                    speedups.distinct(),
                    speedups.baseline * 1e3,
                    own,
                    best
                ),
            });
            stats.nests += 1;
            stats.transfers += row.len();
            db.entries[j].transfers = row;
        }
        db.save(&cfg.db).map_err(Error::WriteDatabase)?;
    }
    Ok(stats)
}
