//! `tuner`: the pipeline behind the `tune` command line, usable as a library.
//!
//! [`run::run_program`] is the foundation of every other command: parse the program,
//! find its nests and their loop verdicts, generate the instrumented program, build it
//! and run it with Save.

pub mod batch;
pub mod bench;
pub mod database;
pub mod environment;
pub mod pipeline;
pub mod profile;
pub mod records;
pub mod retrieve;
pub mod run;
pub mod search;
pub mod space;
pub mod transfer;

/// An error of the pipeline: either the user's input is wrong (exit code 2) or
/// something failed while acting on it (exit code 1).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Input(String),
    #[error("{0}")]
    Failed(String),
}

impl Error {
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Input(_) => 2,
            Error::Failed(_) => 1,
        }
    }
}

impl From<ir::Error> for Error {
    fn from(e: ir::Error) -> Self {
        if e.is_input_error() {
            Error::Input(e.to_string())
        } else {
            Error::Failed(e.to_string())
        }
    }
}

impl From<profiling::Error> for Error {
    fn from(e: profiling::Error) -> Self {
        match e {
            profiling::Error::Usage(m) => Error::Input(m),
            other => Error::Failed(other.to_string()),
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
