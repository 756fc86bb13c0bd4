//! Errors of the frontend and of IR-level passes. Every error about the user's input
//! carries `file:line:col`.

use std::fmt;

/// Where in the user's input something was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub line: u32,
    pub col: u32,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A construct outside the supported subset.
    #[error("{at}: unsupported {what}")]
    Unsupported { at: Location, what: String },
    /// The C parser rejected the preprocessed text.
    #[error("{at}: syntax error: {message}")]
    Syntax { at: Location, message: String },
    /// The input names something that is not there or is inconsistent.
    #[error("{at}: {message}")]
    Invalid { at: Location, message: String },
    /// No region to tune.
    #[error("{file}: {message}")]
    NoRegion { file: String, message: String },
    /// A command-line option names something the file does not have.
    #[error("{file}: {message}")]
    Option { file: String, message: String },
    /// The system preprocessor failed; `message` is its first diagnostic.
    #[error("{message}")]
    Preprocess { message: String },
    /// An input file does not exist.
    #[error("{path}: no such file")]
    Missing { path: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// Errors caused by the user's input (exit code 2), as opposed to the environment.
    pub fn is_input_error(&self) -> bool {
        !matches!(self, Error::Io { .. })
    }
}

pub type Result<T> = std::result::Result<T, Error>;
