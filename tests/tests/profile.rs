//! `tune profile` on gemm, jacobi-2d and heat-3d (SMALL): one row per nest, and per
//! version inside time loops; every cutout run verified; a Chrome trace report that
//! parses; `tune report` prints the same tree back.

use datasets::{Preset, Suite};
use serde_json::Value;
use tune_e2e::{strings, tune};

fn profile(name: &str, dir: &std::path::Path) -> Value {
    let suite = Suite::core().unwrap();
    let p = suite.program(name).unwrap();
    let mut args = strings(&[
        "profile",
        "--json",
        "--no-roofline",
        "--warmup",
        "0",
        "--repetitions",
        "2",
    ]);
    args.extend(suite.args(p, Preset::Small));
    let out = tune(&args, dir);
    assert_eq!(out.code, 0, "{}", out.stderr_text());
    serde_json::from_slice(&out.stdout).unwrap()
}

fn check(name: &str, nests: usize, versions: usize) {
    let dir = tempfile::tempdir().unwrap();
    let p = profile(name, dir.path());
    let ns = p["nests"].as_array().unwrap();
    assert_eq!(ns.len(), nests, "{name}");
    for n in ns {
        let runs = n["runs"].as_array().unwrap();
        assert_eq!(runs.len(), versions, "{name} {}", n["nest"]);
        for (v, r) in runs.iter().enumerate() {
            assert_eq!(r["version"], v as u64);
            assert_eq!(
                r["verdict"]["verdict"], "verified",
                "{name} {} v{v}",
                n["nest"]
            );
            assert_eq!(r["samples"].as_array().unwrap().len(), 2);
        }
        assert!(n["model_error"].is_null(), "{}", n["model_error"]);
        assert_eq!(n["models"].as_array().unwrap().len(), versions);
    }
    // The trace report is Chrome trace JSON with one X event per sample.
    let path = p["report"].as_str().unwrap();
    let full = dir.path().join(path);
    let trace: Value = serde_json::from_str(&std::fs::read_to_string(&full).unwrap()).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let samples = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == "nest")
        .count();
    assert_eq!(samples, nests * versions * 2);
    assert!(events
        .iter()
        .any(|e| e["ph"] == "X" && e["cat"] == "harness" && e["name"] == "compile"));
    for e in events.iter().filter(|e| e["ph"] == "X") {
        assert!(e["ts"].as_f64().is_some() && e["dur"].as_f64().unwrap() >= 0.0);
    }
    // `tune report` prints the tree: program, region, nests, and versions when > 1.
    let out = tune(&strings(&["report", path]), dir.path());
    assert_eq!(out.code, 0);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.lines().nth(1).unwrap().starts_with(name), "{text}");
    assert_eq!(
        text.lines()
            .filter(|l| l.trim_start().starts_with("nest"))
            .count(),
        nests
    );
    let version_rows = text
        .lines()
        .filter(|l| l.trim_start().starts_with('v'))
        .count();
    assert_eq!(
        version_rows,
        if versions > 1 { nests * versions } else { 0 }
    );
    // And the newest report of the program is found by name.
    let latest = tune(&strings(&["report", "--program", name]), dir.path());
    assert_eq!(latest.stdout, out.stdout);
}

#[test]
fn gemm_has_one_nest() {
    check("gemm", 1, 1);
}

#[test]
fn jacobi_2d_has_a_row_per_time_step() {
    check("jacobi-2d", 2, 40);
}

#[test]
fn heat_3d_has_a_row_per_time_step() {
    check("heat-3d", 2, 40);
}

#[test]
fn a_bad_report_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("r.json"), "{ not json").unwrap();
    let out = tune(&strings(&["report", "r.json"]), dir.path());
    assert_eq!(out.code, 2);
    assert_eq!(out.stderr_text().lines().count(), 1);
    assert!(out
        .stderr_text()
        .starts_with("tune: r.json: not a tune trace report"));
}

#[test]
fn the_roofline_places_gemm_against_measured_roofs() {
    let dir = tempfile::tempdir().unwrap();
    let suite = Suite::core().unwrap();
    let p = suite.program("gemm").unwrap();
    let mut args = strings(&[
        "profile",
        "--json",
        "--warmup",
        "0",
        "--repetitions",
        "2",
        "--flush",
    ]);
    args.extend(suite.args(p, Preset::Small));
    let out = tune(&args, dir.path());
    assert_eq!(out.code, 0, "{}", out.stderr_text());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &v["machine"];
    assert!(m["bandwidth_1"]["triad"].as_f64().unwrap() > 0.0);
    assert!(m["peak_1"]["scalar"].as_f64().unwrap() > 0.0);
    let row = &v["roofline"][0];
    assert_eq!(row["nest"], "nest0");
    assert_eq!(row["share"], 1.0);
    // gemm SMALL: 2·60·70·80 + 60·70 flops, recomputed from the IR.
    assert_eq!(row["flops"], 2 * 60 * 70 * 80 + 60 * 70 + 60 * 70 * 80);
    let eff = row["efficiency"].as_f64().unwrap();
    // Structure, not speed: the roofs are measured while other tests may run.
    assert!(eff > 0.0 && eff.is_finite(), "{eff}");
    // Flushed runs are modelled from cold caches: every line of the footprint misses once.
    let model = &v["nests"][0]["models"][0];
    let footprint_lines = (60 * 70 + 60 * 80 + 80 * 70) * 8 / 64;
    let l3 = model["misses"].as_array().unwrap().last().unwrap()[1]
        .as_u64()
        .unwrap();
    assert!(
        l3 >= footprint_lines as u64 && l3 <= footprint_lines as u64 + 8,
        "{l3}"
    );
    // The machine result is cached per host: a second profile does not measure again.
    let cached: Vec<_> = std::fs::read_dir(dir.path().join(".tunecache/machine"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(cached.len(), 1);
}
