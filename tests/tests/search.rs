//! `tune search`: every measurement lands in the record log; killing the search with
//! SIGKILL and starting it again loses no finished measurement and repeats none.

use datasets::{Preset, Suite};
use std::collections::HashSet;
use std::process::Command;
use std::time::{Duration, Instant};
use tune_e2e::{strings, tune, tune_bin};

fn search_args(name: &str, budget: usize) -> Vec<String> {
    let suite = Suite::core().unwrap();
    let p = suite.program(name).unwrap();
    let mut a = strings(&[
        "search",
        "--json",
        "--warmup",
        "0",
        "--repetitions",
        "1",
        "--budget",
    ]);
    a.push(budget.to_string());
    a.extend(suite.args(p, Preset::Mini));
    a
}

fn complete_lines(path: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let end = text.rfind('\n').map_or(0, |i| i + 1);
    text[..end].lines().map(String::from).collect()
}

#[test]
fn a_killed_search_resumes_without_losing_or_repeating_measurements() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join(".tunecache/jacobi-2d/records.jsonl");
    let mut child = Command::new(tune_bin())
        .args(search_args("jacobi-2d", 6))
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while complete_lines(&log).len() < 4 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the search wrote no records"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the search ended before it could be killed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = complete_lines(&log);
    assert!(before.len() >= 4 && before.len() < 14, "{}", before.len());

    let out = tune(&search_args("jacobi-2d", 6), dir.path());
    assert_eq!(out.code, 0, "{}", out.stderr_text());
    let after = complete_lines(&log);
    // Nothing lost: the records written before the kill are still the log's beginning.
    assert_eq!(&after[..before.len()], &before[..]);
    // Nothing repeated: each (nest, recipe) is measured once; each nest has its baseline
    // and exactly its budget of candidates.
    let mut keys = HashSet::new();
    let mut per_nest = std::collections::BTreeMap::new();
    for line in &after {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        let key = format!("{}|{}", r["nest"], r["recipe"]);
        assert!(keys.insert(key.clone()), "measured twice: {key}");
        let e = per_nest
            .entry(r["nest"].as_str().unwrap().to_string())
            .or_insert((0, 0));
        if r["recipe"]["steps"].as_array().unwrap().is_empty() {
            e.0 += 1;
        } else {
            e.1 += 1;
        }
    }
    assert_eq!(per_nest.len(), 2);
    for (nest, (baseline, candidates)) in per_nest {
        assert_eq!((baseline, candidates), (1, 6), "{nest}");
    }
    assert_eq!(after.len(), 2 + 2 * 6);
    // The second run measured exactly what the first had not.
    let results: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let new: usize = results
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["new"].as_u64().unwrap() as usize)
        .sum();
    let old_candidates = before
        .iter()
        .filter(|l| !l.contains("\"steps\":[]"))
        .count();
    assert_eq!(new, 2 * 6 - old_candidates);
}

#[test]
fn gemm_search_reports_verified_candidates_and_a_legal_best_recipe() {
    let dir = tempfile::tempdir().unwrap();
    let out = tune(&search_args("gemm", 5), dir.path());
    assert_eq!(out.code, 0, "{}", out.stderr_text());
    let results: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &results[0];
    assert_eq!(r["nest"], "nest0");
    assert_eq!(r["measured"], 5);
    assert!(r["verified"].as_u64().unwrap() >= 1);
    assert!(r["speedup"].as_f64().unwrap() >= 1.0);
    // The best recipe applies to the nest as it is.
    let recipe: ir::transform::Recipe = serde_json::from_value(r["best"].clone()).unwrap();
    let suite = Suite::core().unwrap();
    let opts = ir::FrontendOptions {
        flags: vec![Preset::Mini.flag()],
        ..Default::default()
    };
    let parsed = ir::load(
        &suite
            .path_of(suite.program("gemm").unwrap())
            .display()
            .to_string(),
        &opts,
    )
    .unwrap();
    let nest = ir::codegen::nests(&parsed.program).remove(0);
    assert!(ir::transform::apply(&parsed.program, nest.region, nest.root, &recipe).is_ok());
    // An unknown strategy is refused as bad input.
    let mut bad = search_args("gemm", 1);
    bad.extend(strings(&["--strategy", "annealing"]));
    let out = tune(&bad, dir.path());
    assert_eq!(out.code, 2);
    assert!(out.stderr_text().contains("unknown strategy 'annealing'"));
}
