//! `profiling`: everything that builds and runs code for `tune`.
//!
//! [`cc`] splits cc-style command lines, [`build`] compiles generated translation units
//! with the project's C runtime behind a content-addressed cache, [`run`] executes the
//! result in a child process (timeouts, exit status, the runtime's JSON report), and
//! [`cache`] owns the `.tunecache/<program>/` layout. Nothing here prints to the
//! terminal; callers decide what to show.

pub mod build;
pub mod cache;
pub mod cachemodel;
pub mod cc;
pub mod cutout;
pub mod exclusive;
pub mod files;
pub mod host;
pub mod machine;
pub mod measure;
pub mod npy;
pub mod phases;
pub mod report;
pub mod roofline;
pub mod run;
pub mod stats;

/// The C runtime linked into instrumented programs.
pub const RUNTIME_SOURCE: &str = include_str!("../runtime/tune_rt.c");

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Usage(String),
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("compiling {what} failed (log: {log}): {first_error}")]
    Compile {
        what: String,
        log: String,
        first_error: String,
    },
    #[error("{0}")]
    Run(String),
}

pub type Result<T> = std::result::Result<T, Error>;

/// A name part no other thread or process of this machine uses at the same time (the
/// process id and a per-process counter): for scratch folders and temporary files.
pub(crate) fn unique_id() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

pub(crate) fn io_err(path: impl AsRef<std::path::Path>) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.as_ref().display().to_string();
    move |source| Error::Io { path, source }
}
