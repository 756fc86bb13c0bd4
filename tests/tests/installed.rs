//! A `tune` binary copied away from the source tree (as `cargo install` leaves it) finds
//! the shipped model and database: they are built in and unpacked into the user's cache.
//! Built without the `train` feature, it links no libtorch and runs without one on the
//! library path: inference is plain Rust.

use std::process::Command;
use tune_e2e::{tune_bin, workspace};

#[test]
fn a_copied_binary_applies_with_the_shipped_model_from_any_folder() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let bin = home.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let tune = bin.join("tune");
    std::fs::copy(tune_bin(), &tune).unwrap();
    let programs = workspace().join("datasets").join("programs");
    for f in ["gemm.c", "common.h"] {
        std::fs::copy(programs.join(f), work.path().join(f)).unwrap();
    }
    let mut cmd = Command::new(&tune);
    if !cfg!(feature = "train") {
        let ldd = Command::new("ldd").arg(&tune).output().unwrap();
        let libs = String::from_utf8_lossy(&ldd.stdout);
        assert!(
            !libs.contains("torch") && !libs.contains("libc10"),
            "tune links libtorch:\n{libs}"
        );
        cmd.env_remove("LD_LIBRARY_PATH");
    }
    let out = cmd
        .args([
            "apply",
            "gemm.c",
            "-DMINI_DATASET",
            "-lm",
            "--repetitions",
            "3",
        ])
        .current_dir(work.path())
        .env("HOME", home.path())
        .env_remove("XDG_CACHE_HOME")
        .env_remove("TUNE_MODELS")
        .env_remove("TUNE_CACHE")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(work.path().join("gemm.tuned.c").is_file());
    // The shipped files were unpacked under the user's cache, once.
    let models = home.path().join(".cache/tune/models");
    let unpacked: Vec<_> = std::fs::read_dir(&models).unwrap().collect();
    assert_eq!(unpacked.len(), 1);
    let dir = unpacked[0].as_ref().unwrap().path();
    for f in ["tune.db", "model/meta.json", "model/weights.bin"] {
        assert!(dir.join(f).is_file(), "{f}");
    }
}
