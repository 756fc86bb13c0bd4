//! One module per group of subcommands.

pub mod batch;
pub mod bench;
pub mod db;
