//! The tuner's file writes, through the one atomic writer
//! ([`profiling::files::write_atomic`]).

use crate::{Error, Result};
use std::path::Path;

/// Replaces `path` with `text` atomically (parent folders created).
pub fn write(path: &Path, text: &str) -> Result<()> {
    profiling::files::write_atomic(path, text.as_bytes()).map_err(Error::write(path))
}
