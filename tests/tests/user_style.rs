//! Programs written as C usually is, outside PolyBench's form (`tests/fixtures/user-style`):
//! `tune apply` under the user's own `-std=c99`, and a tuned file that changes only
//! what a kept recipe changed.

use tune_e2e::{cc_run, strings, tune, workspace};

#[test]
fn a_c99_program_is_tuned_under_its_own_flags_and_untouched_code_stays_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = workspace().join("tests/fixtures/user-style/smooth_c99.c");
    std::fs::copy(&src, d.join("smooth_c99.c")).unwrap();
    let report = d.join("r.json");
    let out = tune(
        &strings(&[
            "apply",
            "smooth_c99.c",
            "-std=c99",
            "-pedantic",
            "--repetitions",
            "5",
            "--report",
            report.to_str().unwrap(),
        ]),
        d,
    );
    // Before, the cutout crashed: aligned_alloc is undeclared under -std=c99.
    assert_eq!(out.code, 0, "{}", out.stderr_text());
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let kept = r["nests"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| !n["chosen"]["steps"].as_array().unwrap().is_empty());
    let original = std::fs::read_to_string(d.join("smooth_c99.c")).unwrap();
    let tuned = std::fs::read_to_string(d.join("smooth_c99.tuned.c")).unwrap();
    if kept {
        // Only the region changed: everything around it is the user's text.
        let before = original.split("#pragma scop").next().unwrap();
        let after = original.split("#pragma endscop").nth(1).unwrap();
        assert!(
            tuned.starts_with(before) && tuned.ends_with(after),
            "{tuned}"
        );
    } else {
        // Nothing kept: the file is the user's, byte for byte (comments and macros).
        assert_eq!(tuned, original);
    }
    // Built as the user builds it (plus OpenMP), it prints what the original prints.
    let flags = ["-std=c99", "-ffp-contract=off", "-fopenmp"];
    let want = cc_run(&strings(&["smooth_c99.c"]), &flags, d);
    let got = cc_run(&strings(&["smooth_c99.tuned.c"]), &flags, d);
    assert_eq!((want.code, got.code), (0, 0));
    assert_eq!(got.stdout, want.stdout);
}
