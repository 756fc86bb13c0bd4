//! False-positive rate of `tune bench --baseline`: a baseline of a suite of dataset
//! kernels is saved, then the unchanged suite is compared with it N times; every
//! benchmark not classified "unchanged" is a false positive.
//!
//! Settings (environment): TUNE_BENCH_KERNELS (default gemm,atax,jacobi-2d,syrk,lu,
//! trmm), TUNE_BENCH_PRESET (default MEDIUM), TUNE_BENCH_COMPARISONS (default 20),
//! TUNE_BENCH_RUNS (samples per benchmark, default 15), TUNE_BENCH_OUT (default
//! target/bench/bench_false_positives).

use std::path::{Path, PathBuf};
use std::process::Command;

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = std::env::var("TUNE_BENCH_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("target/bench/bench_false_positives"));
    let _ = std::fs::remove_dir_all(out.join(".tunebench/baselines"));
    std::fs::create_dir_all(&out).expect("output folder");
    let kernels: Vec<String> = env_or("TUNE_BENCH_KERNELS", "gemm,atax,jacobi-2d,syrk,lu,trmm")
        .split(',')
        .map(String::from)
        .collect();
    let preset = env_or("TUNE_BENCH_PRESET", "MEDIUM");
    let comparisons: usize = env_or("TUNE_BENCH_COMPARISONS", "20")
        .parse()
        .expect("count");
    let runs = env_or("TUNE_BENCH_RUNS", "15");
    // A manifest of the chosen kernels of the shipped suite.
    let core: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("datasets/suite.json")).expect("suite"),
    )
    .expect("suite json");
    let programs: Vec<serde_json::Value> = core["programs"]
        .as_array()
        .expect("programs")
        .iter()
        .filter(|p| kernels.iter().any(|k| p["name"] == k.as_str()))
        .map(|p| {
            let mut p = p.clone();
            let file = root
                .join("datasets")
                .join(p["file"].as_str().expect("file"));
            p["file"] = file
                .canonicalize()
                .expect("program")
                .display()
                .to_string()
                .into();
            p.as_object_mut().expect("object").remove("verdicts");
            p
        })
        .collect();
    let mut suite = core.clone();
    suite["programs"] = programs.into();
    std::fs::write(out.join("suite.json"), suite.to_string()).expect("manifest");

    let tune = PathBuf::from(env!("CARGO_BIN_EXE_tune"));
    let bench = |extra: &[&str]| -> serde_json::Value {
        let o = Command::new(&tune)
            .args(["bench", "suite.json", "--preset", &preset, "--runs", &runs])
            .args(["--format", "json"])
            .args(extra)
            .current_dir(&out)
            .output()
            .expect("run tune bench");
        assert!(
            o.status.code().is_some_and(|c| c == 0 || c == 3),
            "tune bench failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice(&o.stdout).expect("json report")
    };
    let base = bench(&["--save-baseline", "fp"]);
    let n = base["benchmarks"].as_array().expect("benchmarks").len();
    println!(
        "{n} benchmarks at {preset}, {runs} samples each; {comparisons} comparisons of the unchanged suite"
    );
    let mut flagged = 0;
    let mut rows = Vec::new();
    for i in 0..comparisons {
        let r = bench(&["--baseline", "fp"]);
        let changes = r["comparison"]["changes"]
            .as_array()
            .expect("changes")
            .clone();
        let bad: Vec<String> = changes
            .iter()
            .filter(|c| c["class"] != "unchanged")
            .map(|c| {
                format!(
                    "{} {} ({:+.1}%)",
                    c["name"].as_str().unwrap_or(""),
                    c["class"].as_str().unwrap_or(""),
                    (c["ratio"].as_f64().unwrap_or(1.0) - 1.0) * 100.0
                )
            })
            .collect();
        let worst = changes
            .iter()
            .map(|c| (c["ratio"].as_f64().unwrap_or(1.0) - 1.0).abs())
            .fold(0.0, f64::max);
        println!(
            "comparison {:>2}: largest |change| {:>5.1}%  flagged: {}",
            i + 1,
            worst * 100.0,
            if bad.is_empty() {
                "none".to_string()
            } else {
                bad.join(", ")
            }
        );
        flagged += bad.len();
        rows.push(
            serde_json::json!({"comparison": i + 1, "flagged": bad, "largest_change": worst}),
        );
    }
    let rate = flagged as f64 / (comparisons * n).max(1) as f64;
    println!(
        "false positives: {flagged} of {} classifications ({:.2}%)",
        comparisons * n,
        rate * 100.0
    );
    std::fs::write(
        out.join("summary.json"),
        serde_json::to_string_pretty(&serde_json::json!({
            "benchmarks": n, "preset": preset, "comparisons": comparisons,
            "false_positives": flagged, "rate": rate, "rows": rows,
            "environment": base["environment"],
        }))
        .expect("json"),
    )
    .expect("summary");
}
