//! Output for people: one module per command's tables. Output for programs (`--json`)
//! is the serialized report, never these.

pub mod apply;
pub mod batch;
pub mod eval;
pub mod profile;
pub mod run;
pub mod search;
