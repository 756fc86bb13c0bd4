//! Extracting a database's features again: `tune db refeature`. After a change of the
//! feature layout (`FEATURE_VERSION`), every entry's features are recomputed from its
//! program's dry run (the nest as it stands in the suite's source, its saved data, the
//! entry's recorded baseline time). Where the nest is not written in its normal form,
//! the time the features read is the recorded one scaled by the ratio of the normal
//! form's time to the nest's own, both measured here, so that an entry recorded on
//! another machine keeps that machine's scale; it keeps its machine group and hardware
//! counters too (the cache model is this machine's). Embeddings made from the old
//! features are cleared (`tune db embed` after a model is trained on the new ones). The
//! file is written only once every entry has new features, so a database never mixes
//! two layouts; an entry whose program no longer has its nest (the frontend now reads
//! the program otherwise) is dropped only when asked (`drop_missing`), and named either
//! way.

use super::{prepare, SuiteSelection};
use crate::events::{Event, Events};
use crate::features::{nest_features, normal_form, normal_form_time};
use crate::nest_bench::{Measuring, NestBench};
use crate::{Error, Result};
use embeddings::db::Database;
use embeddings::FEATURE_VERSION;
use ir::normalize::Normalized;
use profiling::cutout::Verdict;
use std::path::PathBuf;

#[derive(Debug, Clone)]
/// What to extract again.
pub struct RefeatureConfig {
    /// The database, rewritten in place.
    pub db: PathBuf,
    /// The suites whose programs the entries come from.
    pub suites: Vec<SuiteSelection>,
    /// How the dry runs are built and run.
    pub measuring: Measuring,
    /// Drop the entries whose program no longer has their nest.
    pub drop_missing: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
/// What `tune db refeature` did.
pub struct Refeatured {
    /// Entries with new features.
    pub entries: usize,
    /// Entries dropped: (program, nest).
    pub dropped: Vec<(String, String)>,
}

/// The time of the nest's normal form `normal` on the scale of `recorded_s`, the
/// nest's time where its entry was measured: `recorded_s` times the normal form's time
/// over the nest's, both measured here. `recorded_s` itself where the nest is written
/// in normal form, or either run does not verify.
fn normal_form_time_of(
    bench: &NestBench,
    normal: Option<&Normalized>,
    recorded_s: f64,
) -> Result<f64> {
    let measure = &bench.measuring.measure;
    let Some(normal_s) = normal_form_time(bench, normal, measure)? else {
        return Ok(recorded_s);
    };
    let written = bench.measure_with(measure)?;
    Ok(
        if written.verdict == Verdict::Verified && written.stats.median > 0.0 {
            recorded_s * normal_s / written.stats.median
        } else {
            recorded_s
        },
    )
}

/// Recomputes the features of every entry of `cfg.db`.
pub fn refeature(cfg: &RefeatureConfig, events: &Events) -> Result<Refeatured> {
    let mut db = Database::load(&cfg.db).map_err(Error::ReadDatabase)?;
    let mut done = vec![false; db.entries.len()];
    let mut missing = vec![false; db.entries.len()];
    let machine =
        crate::features::machine_info(&cfg.measuring.cache_root, &cfg.measuring.toolchain, &[]);
    for sel in &cfg.suites {
        let suite = sel.load()?;
        for p in sel.programs(&suite) {
            let mine: Vec<usize> = (0..db.entries.len())
                .filter(|&j| !done[j] && db.entries[j].program == p.name)
                .collect();
            if mine.is_empty() {
                continue;
            }
            let (args, dry) = prepare(&suite, p, sel.preset, &cfg.measuring)?;
            let program = &dry.parsed.program;
            for j in mine {
                let e = &mut db.entries[j];
                done[j] = true;
                let Some(nest) = dry.nests.iter().find(|n| n.name == e.nest) else {
                    missing[j] = true;
                    continue;
                };
                let bench = NestBench::new(&dry, nest, &args.cflags, &cfg.measuring);
                let normal = normal_form(program, nest);
                let time_s = normal_form_time_of(&bench, normal.as_ref(), e.baseline_s)?;
                // The dry run reads no counters: the entry keeps those it was built with.
                let (mut f, _) = nest_features(
                    program,
                    nest,
                    normal.as_ref(),
                    &dry.cache.data(),
                    time_s,
                    &[],
                    machine.as_ref(),
                )
                .ok_or_else(|| Error::Failed(format!("{}: {}: no features", p.name, e.nest)))?;
                if !e.features.machine.is_empty() {
                    f.machine = std::mem::take(&mut e.features.machine);
                }
                e.features = f.with_counters_of(&e.features);
                e.embedding.clear();
            }
            events(Event::Done {
                line: &format!("{}: features extracted again", p.name),
            });
        }
    }
    if let Some(j) = done.iter().position(|d| !d) {
        let e = &db.entries[j];
        return Err(Error::Failed(format!(
            "{}: entry {} {} is in none of the suites given; nothing was written",
            cfg.db.display(),
            e.program,
            e.nest
        )));
    }
    let named = |e: &embeddings::db::Entry| (e.program.clone(), e.nest.clone());
    let dropped: Vec<(String, String)> = (0..db.entries.len())
        .filter(|&j| missing[j])
        .map(|j| named(&db.entries[j]))
        .collect();
    if !dropped.is_empty() && !cfg.drop_missing {
        let list: Vec<String> = dropped.iter().map(|(p, n)| format!("{p} {n}")).collect();
        return Err(Error::Failed(format!(
            "{}: {} entries name nests their programs no longer have ({}); nothing was \
             written (--drop-missing drops them)",
            cfg.db.display(),
            dropped.len(),
            list.join(", ")
        )));
    }
    db.entries = std::mem::take(&mut db.entries)
        .into_iter()
        .zip(&missing)
        .filter_map(|(e, gone)| (!gone).then_some(e))
        .collect();
    db.feature_version = FEATURE_VERSION;
    db.model.clear();
    db.save(&cfg.db).map_err(Error::WriteDatabase)?;
    Ok(Refeatured {
        entries: db.entries.len(),
        dropped,
    })
}
