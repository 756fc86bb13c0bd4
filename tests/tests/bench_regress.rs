//! `tune bench`: a planted 60% slowdown in one benchmark of a small suite is flagged as
//! exactly that one regression (exit code 3); with no change, nothing is flagged over
//! repeated comparisons; reports carry the environment; the HTML report is one
//! self-contained page with its SVG plots.

use std::path::Path;
use tune_e2e::{strings, tune};

/// A program whose region does REPS sweeps of one kernel over arrays that stay in cache
/// (compute-bound, so shared-memory-bandwidth noise stays out): REPS=8 is exactly 60%
/// more work than REPS=5.
fn program(kernel: &str) -> String {
    let body = match kernel {
        "axpy" => "for (int i = 0; i < N; i++) y[i] = y[i] + 1.0001 * x[i];",
        "stencil" => "for (int i = 1; i < N - 1; i++) y[i] = 0.33 * (x[i - 1] + x[i] + x[i + 1]);\n      for (int i = 1; i < N - 1; i++) x[i] = y[i];",
        _ => "for (int i = 0; i < N; i++) s += x[i] * y[i];",
    };
    format!(
        r#"#include <stdio.h>
#define N 4000
static double x[N], y[N];
int main(void) {{
  double s = 0.0;
  for (int i = 0; i < N; i++) {{ x[i] = (double)(i % 17) / 17.0; y[i] = (double)(i % 5); }}
#pragma scop
  for (int r = 0; r < REPS * 3000; r++) {{
      {body}
  }}
#pragma endscop
  printf("%.6e %.6e\n", s, x[N / 2] + y[N / 3]);
  return 0;
}}
"#
    )
}

fn write_suite(dir: &Path, slow: Option<&str>) {
    let mut programs = Vec::new();
    for k in ["axpy", "dot", "stencil"] {
        std::fs::write(dir.join(format!("{k}.c")), program(k)).unwrap();
        let reps = if Some(k) == slow { 8 } else { 5 };
        programs.push(serde_json::json!({
            "name": k, "file": format!("{k}.c"), "family": "test",
            "flags": [format!("-DREPS={reps}")]
        }));
    }
    let suite = serde_json::json!({
        "name": "regress", "description": "three streaming kernels",
        "presets": ["MINI"], "preset_flag": "-D{preset}_DATASET", "programs": programs
    });
    std::fs::write(
        dir.join("suite.json"),
        serde_json::to_string_pretty(&suite).unwrap(),
    )
    .unwrap();
}

fn bench(dir: &Path, extra: &[&str]) -> (i32, serde_json::Value, String) {
    let mut a = strings(&[
        "bench",
        "suite.json",
        "--preset",
        "MINI",
        "--runs",
        "25",
        "--format",
        "json",
    ]);
    a.extend(strings(extra));
    // This VM's speed drifts with the host's load (up to a third of its time stolen):
    // between a baseline and a later run every benchmark can move by 10-20% together
    // (25% seen once), so the test classifies beyond 30% and plants a change well past
    // that.
    a.extend(strings(&["--noise-threshold", "0.3"]));
    let out = tune(&a, dir);
    let v = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.code, v, out.stderr_text())
}

fn classes(v: &serde_json::Value) -> Vec<(String, String)> {
    v["comparison"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["class"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_planted_slowdown_is_the_one_regression_and_no_change_flags_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path(), None);
    let (code, v, err) = bench(dir.path(), &["--save-baseline", "base"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["benchmarks"].as_array().unwrap().len(), 3);
    for b in v["benchmarks"].as_array().unwrap() {
        assert_eq!(b["samples"].as_array().unwrap().len(), 25);
        assert_eq!(b["unit"], "region");
        assert!(b["median"].as_f64().unwrap() > 1e-4, "{b}");
    }
    let env = &v["environment"];
    for key in ["cpu_model", "compiler", "compiler_version", "tune_version"] {
        assert!(!env[key].as_str().unwrap().is_empty(), "{key}");
    }
    assert!(env["cores"].as_u64().unwrap() >= 1);
    assert!(dir.path().join(".tunebench/baselines/base.json").is_file());

    // No change: nothing flagged, repeatedly.
    for round in 0..3 {
        let (code, v, err) = bench(dir.path(), &["--baseline", "base"]);
        let c = classes(&v);
        assert_eq!(c.len(), 3, "{err}");
        assert!(
            c.iter().all(|(_, k)| k == "unchanged"),
            "round {round}: {c:?}"
        );
        assert_eq!(code, 0, "{err}");
        assert!(v["comparison"]["environment_differences"]
            .as_array()
            .unwrap()
            .is_empty());
    }

    // 60% more work in one benchmark: exactly that one regressed, exit code 3.
    write_suite(dir.path(), Some("dot"));
    let (code, v, err) = bench(dir.path(), &["--baseline", "base"]);
    assert_eq!(code, 3, "{err}\n{}", v["comparison"]);
    let c = classes(&v);
    assert_eq!(
        c,
        [
            ("axpy".to_string(), "unchanged".to_string()),
            ("dot".to_string(), "regressed".to_string()),
            ("stencil".to_string(), "unchanged".to_string()),
        ],
        "{v}"
    );
    let dot = &v["comparison"]["changes"][1];
    let ratio = dot["ratio"].as_f64().unwrap();
    assert!((1.35..1.9).contains(&ratio), "{ratio}");
    assert!(dot["p_value"].as_f64().unwrap() < 0.05);
    assert!(err.contains("1 benchmark(s) regressed"), "{err}");

    // The Markdown and HTML reports of the same comparison.
    let mut a = strings(&["bench", "suite.json", "--preset", "MINI", "--runs", "5"]);
    a.extend(strings(&[
        "--baseline",
        "base",
        "--format",
        "html",
        "-o",
        "r.html",
    ]));
    let out = tune(&a, dir.path());
    assert_eq!(out.code, 3, "{}", out.stderr_text());
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.contains("## Against baseline `base`"), "{md}");
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(
        html.matches("<svg").count(),
        2,
        "change bars and the roofline"
    );
    assert!(html.contains("Nests under the roofline"));
    assert!(html.matches("<circle").count() >= 3, "a point per nest");
    assert!(!html.contains("src=\"http"), "self-contained");

    // A missing baseline is bad input, before any work.
    let (code, _, err) = bench(dir.path(), &["--baseline", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("baseline 'nope'"), "{err}");
}
