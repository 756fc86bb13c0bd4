//! The shipped model and database (`models/default/`), built into the binary: a `tune`
//! copied or installed anywhere finds them without the source tree. They are unpacked
//! once per content into `$XDG_CACHE_HOME/tune/models/<hash>/` (else
//! `$HOME/.cache/tune/models/<hash>/`, else the temporary folder); `$TUNE_MODELS` and
//! `--model`/`--db` override them.

use std::path::{Path, PathBuf};

/// (path inside the models folder, contents)
const SHIPPED: &[(&str, &[u8])] = &[
    ("tune.db", include_bytes!("../../models/default/tune.db")),
    (
        "model/meta.json",
        include_bytes!("../../models/default/model/meta.json"),
    ),
    (
        "model/train.json",
        include_bytes!("../../models/default/model/train.json"),
    ),
    (
        "model/weights.bin",
        include_bytes!("../../models/default/model/weights.bin"),
    ),
];

/// The default models folder: `$TUNE_MODELS`, else the shipped copy unpacked (or, when
/// it cannot be written anywhere, the source tree's `models/default`).
pub fn default_models_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("TUNE_MODELS") {
        return PathBuf::from(dir);
    }
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("models")
        .join("default");
    cache_roots()
        .into_iter()
        .find_map(|root| unpack(&root).ok())
        .unwrap_or(source)
}

fn cache_roots() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|x| !x.is_empty()) {
        out.push(PathBuf::from(x));
    }
    if let Some(h) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        out.push(PathBuf::from(h).join(".cache"));
    }
    out.push(std::env::temp_dir());
    out
}

/// The shipped files under `root/tune/models/<hash>/`, written there unless a complete
/// copy exists (each file written to a temporary name and renamed: a concurrent or
/// killed unpack never leaves a partial file under its real name).
fn unpack(root: &Path) -> std::io::Result<PathBuf> {
    let mut h = blake3::Hasher::new();
    for (name, bytes) in SHIPPED {
        h.update(name.as_bytes());
        h.update(&(bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    let dir = root
        .join("tune")
        .join("models")
        .join(&h.finalize().to_hex()[..16]);
    for (name, bytes) in SHIPPED {
        let path = dir.join(name);
        if std::fs::metadata(&path).is_ok_and(|m| m.len() == bytes.len() as u64) {
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(&tmp, &path)?;
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_files_unpack_once_and_match_the_source_tree() {
        let dir = tempfile::tempdir().unwrap();
        let a = unpack(dir.path()).unwrap();
        let b = unpack(dir.path()).unwrap();
        assert_eq!(a, b);
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/default");
        for (name, _) in SHIPPED {
            assert_eq!(
                std::fs::read(a.join(name)).unwrap(),
                std::fs::read(source.join(name)).unwrap(),
                "{name}"
            );
        }
    }
}
