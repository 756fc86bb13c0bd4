//! The `.tunecache/<program>/` layout.
//!
//! ```text
//! .tunecache/<program>/
//!   build/<key>/gen.i, prog        one folder per distinct build (see `build`)
//!   data/<array>/<nest>_<v>.npy    input of <nest> (or region<r>) at its v-th invocation
//!   data/<array>/<nest>_<v>.out.npy  the same array after that invocation (outputs only)
//!   data/manifest.json             what was saved, nests, shapes and dtypes
//!   run.json                       the last `tune run` summary
//! ```

use std::path::{Path, PathBuf};

/// Paths of one program's cache.
#[derive(Debug, Clone)]
pub struct ProgramCache {
    pub root: PathBuf,
}

impl ProgramCache {
    /// `<cache_root>/<program>`.
    pub fn new(cache_root: &Path, program: &str) -> ProgramCache {
        ProgramCache {
            root: cache_root.join(program),
        }
    }

    pub fn builds(&self) -> PathBuf {
        self.root.join("build")
    }

    pub fn data(&self) -> PathBuf {
        self.root.join("data")
    }

    pub fn run_summary(&self) -> PathBuf {
        self.root.join("run.json")
    }
}

/// The default cache root: `$TUNE_CACHE`, else `.tunecache` in the working directory.
pub fn default_root() -> PathBuf {
    std::env::var_os("TUNE_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(".tunecache"))
}
