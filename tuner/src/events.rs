//! What the tuner tells its caller while it works: one [`Event`] type for every
//! workflow, so that the command line draws progress bars or prints lines from one
//! place. Nothing in the tuner prints.

use crate::report::Outcome;
use std::sync::Arc;

/// Progress of a workflow.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// A batch starts: `done` of `total` programs were finished by an earlier run.
    BatchStart {
        /// Programs in the batch.
        total: usize,
        /// Programs an earlier run finished.
        done: usize,
    },
    /// A program of a batch started.
    Begin {
        /// The program's name in the batch.
        program: &'a str,
    },
    /// A step of a program's tuning (`nest0: baseline`, `nest0: candidate 2/3`).
    Step {
        /// The program's name.
        program: &'a str,
        /// What it is doing.
        what: &'a str,
    },
    /// A program of a batch finished (its journal line is written).
    End {
        /// How it ended.
        outcome: &'a Outcome,
    },
    /// A round of a benchmark run in rotation is done.
    Round {
        /// Rounds done.
        done: usize,
        /// Rounds in all (warmup included).
        all: usize,
        /// Benchmarks per round.
        benchmarks: usize,
    },
    /// A unit of a long workflow is done (a program of `db build`, a nest of `db
    /// eval` or `db transfer`): one line for the log.
    Done {
        /// What was done, for the log.
        line: &'a str,
    },
}

/// Where events go.
pub type Events = Arc<dyn Fn(Event) + Send + Sync>;

/// A sink that drops every event.
pub fn silent() -> Events {
    Arc::new(|_| {})
}
