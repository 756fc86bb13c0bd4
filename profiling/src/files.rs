//! How the project writes files: whole files replaced atomically, and append-only
//! JSON-lines journals.
//!
//! [`write_atomic`] writes a temporary file beside the target, syncs it and renames it
//! over the target, so a reader (or a run after a crash) sees the old file or the new
//! one, never a part. A [`Journal`] appends one synced JSON line per record, so a crash
//! loses at most the line being written; that torn last line is cut off when the
//! journal is opened again, and any other damage is refused with its line number.

use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Replaces `path` with `bytes`: creates the parent folders, writes a temporary file in
/// the same folder (so the rename stays on one file system), syncs it and renames it
/// over `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: not a file name", path.display()),
        )
    })?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir)?;
    }
    // Unique per process and thread: concurrent writers of one target never share a
    // temporary, and the last rename wins with a complete file.
    let tmp_name = format!(".{}.{}.tmp", name.to_string_lossy(), crate::unique_id());
    let tmp = match dir {
        Some(dir) => dir.join(tmp_name),
        None => PathBuf::from(tmp_name),
    };
    let written = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{}:{line}: damaged line: {source}", path.display())]
    Damaged {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}: cannot write a line: {source}", path.display())]
    Encode {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

/// An append-only log of JSON lines, one record per line, each synced to disk before
/// [`Journal::append`] returns.
#[derive(Debug)]
pub struct Journal<T: Serialize + DeserializeOwned> {
    path: PathBuf,
    file: File,
    records: Vec<T>,
}

impl<T: Serialize + DeserializeOwned> Journal<T> {
    /// Opens (or creates) the journal at `path` and reads every record. A torn last
    /// line (one without its newline: a run killed while writing it) is cut off the
    /// file, so the next line starts clean; any other unreadable line is an error.
    pub fn open(path: &Path) -> Result<Journal<T>, JournalError> {
        let io = |source| JournalError::Io {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let (records, complete) = Self::parse(path, &read_or_empty(path)?)?;
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        if file.metadata().map_err(io)?.len() > complete {
            file.set_len(complete).map_err(io)?;
            file.sync_all().map_err(io)?;
        }
        Ok(Journal {
            path: path.to_path_buf(),
            file,
            records,
        })
    }

    /// The records of the journal at `path` (none if there is no file), leaving the file
    /// as it is: a torn last line is skipped, not cut off.
    pub fn read(path: &Path) -> Result<Vec<T>, JournalError> {
        Ok(Self::parse(path, &read_or_empty(path)?)?.0)
    }

    /// Appends `record` as one line and syncs it to disk.
    pub fn append(&mut self, record: &T) -> Result<(), JournalError>
    where
        T: Clone,
    {
        let mut line = serde_json::to_string(record).map_err(|source| JournalError::Encode {
            path: self.path.clone(),
            source,
        })?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.sync_data())
            .map_err(|source| JournalError::Io {
                path: self.path.clone(),
                source,
            })?;
        self.records.push(record.clone());
        Ok(())
    }

    /// Every record, in the order appended.
    pub fn records(&self) -> &[T] {
        &self.records
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The records in `bytes` and the length of its complete lines.
    fn parse(path: &Path, bytes: &[u8]) -> Result<(Vec<T>, u64), JournalError> {
        let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let mut records = Vec::new();
        for (i, line) in bytes[..complete].split(|&b| b == b'\n').enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let record = serde_json::from_slice(line).map_err(|source| JournalError::Damaged {
                path: path.to_path_buf(),
                line: i + 1,
                source,
            })?;
            records.push(record);
        }
        Ok((records, complete as u64))
    }
}

fn read_or_empty(path: &Path) -> Result<Vec<u8>, JournalError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(bytes),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(source) => Err(JournalError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Entry {
        name: String,
        value: f64,
    }

    fn entry(name: &str, value: f64) -> Entry {
        Entry {
            name: name.into(),
            value,
        }
    }

    fn names(records: &[Entry]) -> Vec<&str> {
        records.iter().map(|e| e.name.as_str()).collect()
    }

    #[test]
    fn write_atomic_replaces_and_creates_folders() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/file.json");
        write_atomic(&path, b"first").unwrap();
        write_atomic(&path, b"second").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        let left: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["file.json"], "no temporary is left behind");
    }

    #[test]
    fn journal_round_trip_and_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/journal.jsonl");
        let mut j = Journal::<Entry>::open(&path).unwrap();
        assert!(j.records().is_empty());
        j.append(&entry("a", 1.5)).unwrap();
        j.append(&entry("b", -2.0)).unwrap();
        assert_eq!(j.records(), [entry("a", 1.5), entry("b", -2.0)]);
        drop(j);
        let j = Journal::<Entry>::open(&path).unwrap();
        assert_eq!(j.records(), [entry("a", 1.5), entry("b", -2.0)]);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"name\":\"a\",\"value\":1.5}\n{\"name\":\"b\",\"value\":-2.0}\n"
        );
        assert!(Journal::<Entry>::read(&dir.path().join("none.jsonl"))
            .unwrap()
            .is_empty());
    }

    #[test]
    fn a_torn_last_line_is_cut_off_and_appending_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let mut j = Journal::<Entry>::open(&path).unwrap();
        j.append(&entry("a", 1.0)).unwrap();
        drop(j);
        // A run killed in the middle of its second line.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"name\":\"b\",\"va").unwrap();
        drop(f);
        assert_eq!(names(&Journal::<Entry>::read(&path).unwrap()), ["a"]);
        assert!(std::fs::read_to_string(&path).unwrap().ends_with("\"va"));
        let mut j = Journal::<Entry>::open(&path).unwrap();
        assert_eq!(names(j.records()), ["a"]);
        j.append(&entry("c", 3.0)).unwrap();
        drop(j);
        assert_eq!(
            names(Journal::<Entry>::open(&path).unwrap().records()),
            ["a", "c"]
        );
    }

    #[test]
    fn a_damaged_line_before_the_last_is_refused_with_its_number() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        std::fs::write(
            &path,
            "{\"name\":\"a\",\"value\":1.0}\n{bad}\n{\"name\":\"c\",\"value\":3.0}\n",
        )
        .unwrap();
        let e = Journal::<Entry>::open(&path).unwrap_err();
        assert!(matches!(e, JournalError::Damaged { line: 2, .. }), "{e:?}");
        assert!(
            e.to_string().contains("journal.jsonl:2: damaged line"),
            "{e}"
        );
        assert!(Journal::<Entry>::read(&path).is_err());
    }
}
