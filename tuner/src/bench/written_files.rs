//! The files a program run writes in its working folder, read back after the run: a
//! program's results often go to a file (Rodinia's srad writes an image, hotspot3D a
//! grid of temperatures), and the whole-program check compares those too.
//!
//! A file counts when the run created it or changed its modification time or length.
//! Only the folder itself is read, not its subfolders (tune's own `.tunecache` among
//! them); a file longer than [`crate::bench::KEPT_OUTPUT_BYTES`] is named, not read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The regular files of the working folder: modification time and length by path.
pub type Snapshot = BTreeMap<PathBuf, (Option<SystemTime>, u64)>;

/// At most this many entries are looked at (a folder of many files is not read).
const MAX_ENTRIES: usize = 4096;

/// The files of `dir` (the working folder: `.`) now.
pub fn snapshot(dir: &Path) -> Snapshot {
    let mut out = Snapshot::new();
    let Ok(dir) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in dir.flatten().take(MAX_ENTRIES) {
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_file() {
            out.insert(entry.path(), (meta.modified().ok(), meta.len()));
        }
    }
    out
}

/// Appends to `printed`, for each file that differs from `before` (new, or another
/// modification time or length), a line `== file NAME ==` and its contents (or
/// `(N bytes, not read)` where it is longer than the outputs kept).
pub fn append_changed(dir: &Path, before: &Snapshot, printed: &mut Vec<u8>) {
    for (path, stamp) in snapshot(dir) {
        if before.get(&path) == Some(&stamp) {
            continue;
        }
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        printed.extend_from_slice(format!("\n== file {name} ==\n").as_bytes());
        if stamp.1 as usize > crate::bench::KEPT_OUTPUT_BYTES {
            printed.extend_from_slice(format!("({} bytes, not read)\n", stamp.1).as_bytes());
            continue;
        }
        match std::fs::read(&path) {
            Ok(bytes) => printed.extend_from_slice(&bytes),
            Err(e) => printed.extend_from_slice(format!("(not readable: {e})\n").as_bytes()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_written_after_the_snapshot_is_appended_one_left_alone_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("kept.txt"), "old\n").unwrap();
        let before = snapshot(d);
        std::fs::write(d.join("result.txt"), "1.25 2.50\n").unwrap();
        let mut printed = b"sum 3.75\n".to_vec();
        append_changed(d, &before, &mut printed);
        assert_eq!(
            String::from_utf8(printed).unwrap(),
            "sum 3.75\n\n== file result.txt ==\n1.25 2.50\n"
        );
    }
}
