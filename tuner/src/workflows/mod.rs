//! The workflows built on the tuning loop: growing the database (`db_build`), filling
//! its transfer rows (`transfer`), judging retrieval (`eval`) and tuning many programs
//! (`batch`).

pub mod batch;
pub mod db_build;
pub mod eval;
pub mod eval_offline;
pub mod refeature;
pub mod speedups;
pub mod transfer;
pub mod variants;

use crate::nest_bench::Measuring;
use crate::run::{checked_dry_run, DryRun, RunConfig};
use crate::Result;
use profiling::cc::CcArgs;
use std::path::PathBuf;

/// Which programs of which suite, at which size.
#[derive(Debug, Clone)]
pub struct SuiteSelection {
    /// The suite manifest.
    pub suite: PathBuf,
    /// The dataset size.
    pub preset: datasets::Preset,
    /// Only these programs (all when empty).
    pub programs: Vec<String>,
}

impl SuiteSelection {
    /// Reads the manifest.
    pub fn load(&self) -> Result<datasets::Suite> {
        Ok(datasets::Suite::load(&self.suite)?)
    }

    /// The selected programs of `suite`, in manifest order.
    pub fn programs<'s>(
        &'s self,
        suite: &'s datasets::Suite,
    ) -> impl Iterator<Item = &'s datasets::Program> + 's {
        suite
            .programs
            .iter()
            .filter(|p| self.programs.is_empty() || self.programs.contains(&p.name))
    }
}

/// A suite program's finished dry run (parsed program, nests, saved data), as a
/// search left it in the cache.
pub fn prepare(
    suite: &datasets::Suite,
    p: &datasets::Program,
    preset: datasets::Preset,
    m: &Measuring,
) -> Result<(CcArgs, DryRun)> {
    let args = CcArgs::parse(&suite.args(p, preset))?;
    let run = RunConfig::tuning(args.clone(), m.cache_root.clone(), m.toolchain.clone());
    Ok((args, checked_dry_run(&run)?))
}

/// Database entries made up for tests.
#[cfg(test)]
pub(crate) mod test_entry {
    use embeddings::db::Entry;
    use embeddings::features::{ACCESS_DIM, GLOBAL_DIM, LOOP_DIM, MACHINE_DIM, PERF_DIM};
    use embeddings::NestFeatures;

    /// An entry whose features are `x` everywhere, with best recipe `recipe`.
    pub(crate) fn entry(program: &str, x: f32, recipe: &str) -> Entry {
        Entry {
            program: program.into(),
            nest: "nest0".into(),
            fingerprint: String::new(),
            features: NestFeatures {
                version: embeddings::FEATURE_VERSION,
                loops: vec![vec![x; LOOP_DIM]],
                loop_parent: vec![None],
                accesses: vec![vec![x; ACCESS_DIM]],
                access_loop: vec![0],
                global: vec![x; GLOBAL_DIM],
                perf: vec![0.0; PERF_DIM],
                perf_mask: vec![0.0; PERF_DIM],
                machine: vec![0.0; MACHINE_DIM],
            },
            embedding: Vec::new(),
            recipes: vec![(recipe.into(), 2.0)],
            baseline_s: 1.0,
            tuned_s: 0.5,
            machine: "m".into(),
            isa: String::new(),
            transfers: Vec::new(),
        }
    }
}
