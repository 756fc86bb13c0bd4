//! The runner seam: one measurement of a built variant on the nest's saved data —
//! warmup, repetitions, verification against the saved outputs. A crash, a hang or a
//! wrong result is the run's verdict, never an error of the tuning.

use crate::Result;
use profiling::cutout::{Cutout, CutoutRun};
use profiling::measure::Measure;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Measures built variants of one nest.
pub trait Runner: Sync {
    /// Runs `exe` as `measure` says; `label` names the run in reports.
    fn run(&self, exe: &Path, label: &str, measure: &Measure) -> Result<CutoutRun>;
}

/// Runs a nest's cutout executables in child processes on the saved version that
/// stands for the nest (`Cutout::version`).
pub struct CutoutRunner<'a> {
    /// The nest alone on its saved data.
    pub cutout: &'a Cutout,
    /// A run (warmup and repetitions) is killed after this long.
    pub timeout: Duration,
    /// Scratch folder of the runs.
    pub scratch: PathBuf,
}

impl Runner for CutoutRunner<'_> {
    fn run(&self, exe: &Path, label: &str, measure: &Measure) -> Result<CutoutRun> {
        Ok(self.cutout.run(
            exe,
            label,
            self.cutout.version,
            measure,
            self.timeout,
            &self.scratch,
        )?)
    }
}
