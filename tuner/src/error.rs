//! The tuner's error: every cause kept as its source, and the exit code a method.

use std::path::PathBuf;

/// What went wrong while tuning. [`Error::exit_code`] tells the user's mistakes (2)
/// from failures while acting on valid input (1).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A wrong argument or option (the message says which and what to do).
    #[error("{0}")]
    Usage(String),
    /// The program could not be read, parsed or transformed.
    #[error(transparent)]
    Program(#[from] ir::Error),
    /// Building or running generated code failed (or its flags were wrong).
    #[error(transparent)]
    Profiling(#[from] profiling::Error),
    /// A suite manifest could not be read.
    #[error(transparent)]
    Suite(#[from] datasets::Error),
    /// A database file could not be read (missing, damaged, another format).
    #[error(transparent)]
    ReadDatabase(embeddings::codec::CodecError),
    /// A database file could not be written.
    #[error(transparent)]
    WriteDatabase(embeddings::codec::CodecError),
    /// A model checkpoint could not be loaded.
    #[error(transparent)]
    LoadModel(embeddings::embed::EmbedError),
    /// The model failed while training or embedding.
    #[error(transparent)]
    Model(#[from] embeddings::embed::EmbedError),
    /// A file the user named could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file of the tuner's could not be written.
    #[error("{path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A record log or journal could not be read or appended to.
    #[error(transparent)]
    Journal(#[from] profiling::files::JournalError),
    /// The chosen recipes could not be applied again to write the tuned program.
    #[error("{what}: {source}")]
    Emit {
        /// The step that failed.
        what: &'static str,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Anything else that failed while acting on valid input.
    #[error("{0}")]
    Failed(String),
    /// A nest that cannot be measured apart from its program (why): it is left as
    /// written, and the other nests are tuned.
    #[error("{0}")]
    Unmeasurable(String),
}

impl Error {
    /// The process exit code: 2 for the user's input, 1 for a failure.
    pub fn exit_code(&self) -> i32 {
        let input = match self {
            Error::Usage(_)
            | Error::Suite(_)
            | Error::ReadDatabase(_)
            | Error::LoadModel(_)
            | Error::Read { .. } => true,
            Error::Program(e) => e.is_input_error(),
            Error::Journal(e) => matches!(e, profiling::files::JournalError::Damaged { .. }),
            Error::Profiling(e) => matches!(e, profiling::Error::Usage(_)),
            Error::WriteDatabase(_)
            | Error::Model(_)
            | Error::Write { .. }
            | Error::Emit { .. }
            | Error::Failed(_)
            | Error::Unmeasurable(_) => false,
        };
        if input {
            2
        } else {
            1
        }
    }

    /// A failed read of `path` (the user's file).
    pub fn read(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Read { path, source }
    }

    /// A failed write of `path` (the tuner's own file).
    pub fn write(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Write { path, source }
    }
}

/// The tuner's result.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_users_mistakes_exit_2_and_failures_exit_1() {
        assert_eq!(Error::Usage("--top-k 0".into()).exit_code(), 2);
        let io = || std::io::Error::from(std::io::ErrorKind::NotFound);
        assert_eq!(Error::read("a.c")(io()).exit_code(), 2);
        assert_eq!(Error::write("out.c")(io()).exit_code(), 1);
        assert_eq!(
            Error::Profiling(profiling::Error::Usage("bad flag".into())).exit_code(),
            2
        );
        assert_eq!(
            Error::Profiling(profiling::Error::Run("crashed".into())).exit_code(),
            1
        );
        assert_eq!(Error::Failed("x".into()).exit_code(), 1);
        // The message is the cause's, with the path in front where there is one.
        assert_eq!(
            Error::read("a.c")(io()).to_string(),
            format!("a.c: {}", io())
        );
    }
}
