//! Loop-order variants (`tune db variants`): each is one of the suite's programs with
//! one nest's perfect band in another legal order, the rest of the file untouched, and
//! it prints bit for bit what the original prints (each output element sums its terms
//! in the same order). A database built over them names its entries as the suite does.

use datasets::{Preset, Suite};
use tune_e2e::{cc_run, strings, tune, workspace};

#[test]
fn variants_of_three_programs_compute_what_the_originals_compute() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("v");
    let r = tune(
        &strings(&[
            "db",
            "variants",
            "--programs",
            "gemm,mvt,heat-3d",
            "-o",
            out.to_str().unwrap(),
        ]),
        dir.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr_text());
    assert!(
        r.stderr_text().contains("13 variants"),
        "{}",
        r.stderr_text()
    );
    let suite = Suite::load(&out.join("suite.json")).unwrap();
    let names: Vec<&str> = suite.programs.iter().map(|p| p.name.as_str()).collect();
    // gemm: its k-j band turned; mvt: both nests' i-j bands; heat-3d: every other order
    // of each sweep's three loops.
    assert!(names.contains(&"gemm@nest0-b2-10"), "{names:?}");
    assert!(names.contains(&"mvt@nest0-b0-10") && names.contains(&"mvt@nest1-b0-10"));
    assert_eq!(
        names.iter().filter(|n| n.starts_with("heat-3d@")).count(),
        10
    );
    let shipped = Suite::load(&workspace().join("datasets/suite.json")).unwrap();
    for p in &suite.programs {
        let origin = shipped.program(p.name.split('@').next().unwrap()).unwrap();
        // A database build searches only the nest the variant changed.
        let changed = p.name.split('@').nth(1).unwrap().split('-').next().unwrap();
        assert_eq!(p.nests, [changed], "{}", p.name);
        // The variant differs from its origin only inside one nest.
        let a = std::fs::read_to_string(shipped.path_of(origin)).unwrap();
        let b = std::fs::read_to_string(suite.path_of(p)).unwrap();
        assert_ne!(a, b, "{}", p.name);
        assert_eq!(a.lines().next(), b.lines().next(), "{}", p.name);
        let work = tempfile::tempdir().unwrap();
        // Without contraction: which multiply-adds gcc fuses depends on the loop order
        // it vectorizes (`datasets_match.rs`).
        let exact = ["-ffp-contract=off"];
        let want = cc_run(&shipped.args(origin, Preset::Mini), &exact, work.path());
        let got = cc_run(&suite.args(p, Preset::Mini), &exact, work.path());
        assert_eq!(want.code, 0);
        assert!(want.stderr_text().contains("fnv="), "{}", p.name);
        assert_eq!(got, want, "{}", p.name);
    }

    // A database built over the variants names each entry as the suite does (the file
    // is `gemm_at_nest0-b2-10.c`): evaluations hold a variant out with its origin and
    // transfer rows find its entry by that name.
    let db = dir.path().join("v.db");
    let r = tune(
        &strings(&[
            "db",
            "build",
            "--suite",
            out.join("suite.json").to_str().unwrap(),
            "--preset",
            "MINI",
            "--programs",
            "gemm@nest0-b2-10",
            "--budget",
            "2",
            "--repetitions",
            "3",
            "-o",
            db.to_str().unwrap(),
        ]),
        dir.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr_text());
    let r = tune(
        &strings(&["db", "list", "--db", db.to_str().unwrap(), "--json"]),
        dir.path(),
    );
    let rows: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let names: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["program"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["gemm@nest0-b2-10"]);
}
