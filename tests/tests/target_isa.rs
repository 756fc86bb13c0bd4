//! A build for another vector ISA than the CPU's: `CFLAGS=-march=x86-64-v3` on a CPU
//! with AVX-512 builds AVX2 code, whose 16 vector registers of 32 bytes a register tile
//! sized for AVX-512's 32 of 64 bytes would spill. `tune apply` sizes for what the
//! compiler targets (its predefined macros under the build's flags), so every register
//! tile it measures is sized for AVX2, the database's tiles re-fitted to it.

use std::process::Command;
use tune_e2e::{tune_bin, workspace};

#[test]
fn register_tiles_are_sized_for_the_isa_the_build_targets() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for f in ["gemm.c", "common.h"] {
        std::fs::copy(workspace().join("datasets/programs").join(f), d.join(f)).unwrap();
    }
    let report = d.join("r.json");
    let out = Command::new(tune_bin())
        .args(["apply", "gemm.c", "-DSMALL_DATASET", "--report"])
        .arg(&report)
        .current_dir(d)
        .env_remove("TUNE_CACHE")
        .env("CFLAGS", "-O3 -march=x86-64-v3")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let tiles: Vec<&serde_json::Value> = r["nests"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|n| n["candidates"].as_array().unwrap())
        .flat_map(|c| c["recipe"]["steps"].as_array().unwrap())
        .filter(|s| s["step"] == "register_tile")
        .collect();
    assert!(!tiles.is_empty(), "{r}");
    for t in tiles {
        // Two 32-byte vectors of doubles per row, and rows to fill 16 registers beside
        // the two column vectors and the broadcast.
        assert_eq!(
            (t["nr"].as_u64(), t["mr"].as_u64()),
            (Some(8), Some(6)),
            "{t}"
        );
    }
}
