//! Tuning records: every measured variant, appended to
//! `.tunecache/<program>/records.jsonl` one JSON line at a time and synced to disk
//! before the next measurement starts. A crash at any moment loses at most the line
//! being written; a torn last line is cut off when the log is opened again, so an
//! interrupted search resumes without repeating a finished measurement.

use crate::{Error, Result};
use ir::transform::Recipe;
use profiling::cutout::Verdict;
use serde::{Deserialize, Serialize};
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub program: String,
    pub nest: String,
    /// Hash of the original nest function: records of a changed nest do not match.
    pub fingerprint: String,
    pub recipe: Recipe,
    pub verdict: Verdict,
    /// Median seconds (0 when the variant did not run).
    pub median_s: f64,
    pub samples: Vec<f64>,
    pub machine: String,
    pub compiler: String,
    pub strategy: String,
    pub unix_ms: u128,
}

impl Record {
    /// The identity of a measurement: nest, its fingerprint and the recipe.
    pub fn key(&self) -> String {
        key(&self.nest, &self.fingerprint, &self.recipe)
    }
}

pub fn key(nest: &str, fingerprint: &str, recipe: &Recipe) -> String {
    format!(
        "{nest}|{fingerprint}|{}",
        serde_json::to_string(recipe).expect("recipe serializes")
    )
}

/// An append-only record log.
#[derive(Debug)]
pub struct RecordLog {
    path: PathBuf,
    records: Vec<Record>,
}

impl RecordLog {
    /// Opens (or creates) the log, dropping a torn last line.
    pub fn open(path: &Path) -> Result<RecordLog> {
        let fail = |e: std::io::Error| Error::Failed(format!("{}: {e}", path.display()));
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(fail)?;
        }
        let text = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(fail(e)),
        };
        let complete = text.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        if complete < text.len() {
            let f = OpenOptions::new().write(true).open(path).map_err(fail)?;
            f.set_len(complete as u64).map_err(fail)?;
            f.sync_all().map_err(fail)?;
        }
        let mut records = Vec::new();
        for (n, line) in String::from_utf8_lossy(&text[..complete])
            .lines()
            .enumerate()
        {
            if line.trim().is_empty() {
                continue;
            }
            let r: Record = serde_json::from_str(line).map_err(|e| {
                Error::Failed(format!("{}:{}: damaged record: {e}", path.display(), n + 1))
            })?;
            records.push(r);
        }
        Ok(RecordLog {
            path: path.to_path_buf(),
            records,
        })
    }

    pub fn records(&self) -> &[Record] {
        &self.records
    }

    pub fn contains(&self, key: &str) -> bool {
        self.records.iter().any(|r| r.key() == key)
    }

    /// Appends one record and syncs it to disk.
    pub fn append(&mut self, r: Record) -> Result<()> {
        let fail = |e: std::io::Error| Error::Failed(format!("{}: {e}", self.path.display()));
        let mut line = serde_json::to_string(&r).expect("record serializes");
        line.push('\n');
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(fail)?;
        f.write_all(line.as_bytes()).map_err(fail)?;
        f.sync_data().map_err(fail)?;
        self.records.push(r);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(nest: &str, median: f64) -> Record {
        Record {
            program: "p".into(),
            nest: nest.into(),
            fingerprint: "f".into(),
            recipe: Recipe::default(),
            verdict: Verdict::Verified,
            median_s: median,
            samples: vec![median],
            machine: "m".into(),
            compiler: "cc".into(),
            strategy: "random".into(),
            unix_ms: 0,
        }
    }

    #[test]
    fn a_torn_last_line_is_dropped_and_appending_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("records.jsonl");
        let mut log = RecordLog::open(&path).unwrap();
        log.append(rec("nest0", 1.0)).unwrap();
        log.append(rec("nest1", 2.0)).unwrap();
        // A crash in the middle of the third line.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"program\":\"p\",\"ne").unwrap();
        drop(f);
        let mut log = RecordLog::open(&path).unwrap();
        assert_eq!(log.records().len(), 2);
        assert!(log.contains(&rec("nest1", 0.0).key()));
        log.append(rec("nest2", 3.0)).unwrap();
        let log = RecordLog::open(&path).unwrap();
        assert_eq!(
            log.records()
                .iter()
                .map(|r| r.nest.as_str())
                .collect::<Vec<_>>(),
            ["nest0", "nest1", "nest2"]
        );
    }

    #[test]
    fn a_damaged_record_in_the_middle_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("records.jsonl");
        std::fs::write(&path, "{bad}\n").unwrap();
        let e = RecordLog::open(&path).unwrap_err().to_string();
        assert!(e.contains("records.jsonl:1: damaged record"), "{e}");
    }
}
