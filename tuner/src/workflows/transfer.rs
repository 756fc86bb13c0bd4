//! Measuring database recipes on database nests: `tune db transfer` fills each
//! entry's transfer row, every entry's best recipe re-fitted to the nest and measured
//! there. These rows say which nests are alike in the way transfer tuning needs (one's
//! recipe works on the other); the model's contrastive term learns from them
//! ([`embeddings::embed::contrastive_pairs`]).

use super::speedups::Speedups;
use super::{prepare, SuiteSelection};
use crate::events::{Event, Events};
use crate::nest_bench::{Measuring, NestBench};
use crate::ranker::{Query, RandomRanker, Ranker, RawFeatureRanker};
use crate::retrieve::{walk, Outcome};
use crate::{Error, Result};
use embeddings::db::{Database, Entry, Transfer};
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
    /// Sources per nest (`--sample N`): the nest's own best recipe, the entries of other
    /// programs nearest by raw features (half), and a seeded draw of the rest; None:
    /// every entry. A database of hundreds of nests cannot measure every pair.
    pub sample: Option<usize>,
    /// Seed of the draw.
    pub seed: u64,
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
    let all: Vec<usize> = (0..db.entries.len())
        .filter(|&i| db.entries[i].best().is_some())
        .collect();
    let rows: Vec<Vec<usize>> = match cfg.sample {
        None => vec![all.clone(); db.entries.len()],
        Some(n) => (0..db.entries.len())
            .map(|j| sampled(&db, j, &all, n, cfg.seed))
            .collect::<Result<_>>()?,
    };
    for p in cfg.suite.programs(&suite) {
        let complete = |j: usize| {
            rows[j]
                .iter()
                .all(|&i| db.entries[j].transfer_from(&db.entries[i]).is_some())
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
                rows[j].iter().map(|&i| (i, 0.0)),
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
            // Transfers from sources outside this row (measured before, or drawn by
            // another sample) stay.
            let mut kept: Vec<Transfer> = std::mem::take(&mut db.entries[j].transfers)
                .into_iter()
                .filter(|t| {
                    !row.iter()
                        .any(|r| r.program == t.program && r.nest == t.nest)
                })
                .collect();
            kept.extend(row);
            db.entries[j].transfers = kept;
        }
        db.save(&cfg.db).map_err(Error::WriteDatabase)?;
    }
    Ok(stats)
}

/// The sources of entry `j`'s row when rows are sampled: `j` itself (when it has a
/// recipe), then up to half of `n` entries of other programs nearest by standardized
/// raw features, then a seeded draw of others, `n` in all (every source when fewer).
fn sampled(db: &Database, j: usize, all: &[usize], n: usize, seed: u64) -> Result<Vec<usize>> {
    let me = &db.entries[j];
    let mut out: Vec<usize> = all.iter().copied().filter(|&i| i == j).collect();
    let others = |x: &Entry| x.origin() != me.origin() && x.best().is_some();
    let everyone: Vec<&Entry> = db.entries.iter().collect();
    let mut raw = RawFeatureRanker::new(&everyone, db);
    for (i, _) in raw.rank(db, Query::Entry(j), &others)? {
        if out.len() > n / 2 {
            break;
        }
        out.push(i);
    }
    let key = format!("{seed}/{}/{}", me.program, me.nest);
    let mut random = RandomRanker::new(
        u64::from_le_bytes(
            blake3::hash(key.as_bytes()).as_bytes()[..8]
                .try_into()
                .expect("8 bytes"),
        ),
        Vec::new(),
    );
    for (i, _) in random.rank(db, Query::Entry(j), &|x: &Entry| x.best().is_some())? {
        if out.len() >= n.max(1) {
            break;
        }
        if !out.contains(&i) {
            out.push(i);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflows::test_entry::entry;

    #[test]
    fn a_sampled_row_holds_the_nest_its_nearest_others_and_a_seeded_draw() {
        let db = Database {
            feature_version: embeddings::FEATURE_VERSION,
            model: String::new(),
            entries: vec![
                entry("a", 0.0, "ra"),
                entry("a@nest0-b0-10", 0.01, "rv"),
                entry("b", 0.1, "rb"),
                entry("c", 0.2, "rc"),
                entry("d", 5.0, "rd"),
                entry("e", 6.0, "re"),
            ],
        };
        let all: Vec<usize> = (0..6).collect();
        // Four: itself, the two nearest of other programs (not its own variant), one
        // drawn.
        let row = sampled(&db, 0, &all, 4, 1).unwrap();
        assert_eq!(row.len(), 4);
        assert_eq!(&row[..3], &[0, 2, 3]);
        assert!([1, 4, 5].contains(&row[3]), "{row:?}");
        assert_eq!(row, sampled(&db, 0, &all, 4, 1).unwrap(), "seeded");
        // The draws of seeds differ somewhere.
        let draws: std::collections::BTreeSet<usize> = (0..16)
            .map(|s| sampled(&db, 0, &all, 4, s).unwrap()[3])
            .collect();
        assert!(draws.len() > 1, "{draws:?}");
        // Asking for more than there is gives every entry once.
        let mut every = sampled(&db, 0, &all, 10, 1).unwrap();
        every.sort_unstable();
        assert_eq!(every, all);
    }
}
