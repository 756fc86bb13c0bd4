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
