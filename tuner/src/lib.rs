//! `tuner`: transfer tuning of loop nests, as a library.
//!
//! The seams of an autotuner are traits, one implementation per file: the recipe
//! [`space`], the search [`strategy`] (random, evolutionary, grid, a listed set), the
//! [`builder`] (recipe → executable of the nest's cutout, legality included), the
//! [`runner`] (one measurement on the nest's saved data, verified), the [`ranker`]
//! (embedding, raw features, random) and the [`records`] (a resumable log, or memory).
//! [`tune_nest`] is the one loop that drives them; [`Pipeline::apply`] (`tune apply`),
//! [`search::search`] (`tune search`) and the [`workflows`] (`tune db build`, `db
//! transfer`, `db eval`, `tune batch`) all measure through it. [`select`] is the keep
//! decision of transfer tuning as a pure function.
//!
//! [`run::run_program`] is the foundation of every other command: parse the program,
//! find its nests and their loop verdicts, generate the instrumented program, build it
//! and run it with Save. Nothing here prints: progress goes out as [`Event`]s.

#![warn(missing_docs)]

pub mod bench;
pub mod builder;
pub mod check;
pub mod counters;
pub mod emit;
pub mod environment;
mod error;
pub mod events;
pub mod features;
pub mod files;
pub mod models;
pub mod nest_bench;
pub mod pipeline;
pub mod printed;
pub mod profile;
pub mod ranker;
pub mod records;
pub mod report;
pub mod retrieve;
pub mod rng;
pub mod run;
pub mod runner;
pub mod search;
pub mod select;
pub mod sizing;
pub mod space;
pub mod spec;
pub mod strategy;
pub mod target;
pub mod timed;
pub mod tune_loop;
pub mod versions;
pub mod workflows;

pub use error::{Error, Result};
pub use events::{Event, Events};
pub use pipeline::Pipeline;
pub use report::ApplyReport;
pub use spec::ProgramSpec;
pub use strategy::{SearchStrategy, StrategyKind};
pub use tune_loop::{tune_nest, Budget, Trial};
