//! The whole-nest stage of `tune apply` on lu (a dataset program): its row loop is a
//! whole nest, measured as the program runs it on the data saved at its entry, and
//! tried with its loops reordered into row updates (the triangle of its `j`/`k` loops
//! interchanged, its second part's reduction moved outside). The reordering keeps every
//! floating-point operation in its order: the tuned program prints what the original
//! prints, bit for bit.

use tune_e2e::{cc_run, strings, tune, workspace};

/// The whole nest's candidate with its loops reordered into row updates.
fn row_updates(w: &serde_json::Value) -> &serde_json::Value {
    w["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["from"]["nest"] == "loops reordered into row updates")
        .unwrap_or_else(|| panic!("not tried: {w}"))
}

#[test]
fn lu_is_tried_with_its_loops_reordered_as_a_whole() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let programs = workspace().join("datasets").join("programs");
    for f in ["lu.c", "common.h"] {
        std::fs::copy(programs.join(f), d.join(f)).unwrap();
    }
    let out = tune(
        &strings(&[
            "apply",
            "lu.c",
            "-DSMALL_DATASET",
            "-lm",
            "--repetitions",
            "5",
            "--report",
            "r.json",
            "--explain",
        ]),
        d,
    );
    assert_eq!(out.code, 0, "{}", out.stderr_text());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("whole0"), "{text}");
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("r.json")).unwrap()).unwrap();
    let wholes = r["wholes"].as_array().unwrap();
    assert_eq!(wholes.len(), 1, "{wholes:?}");
    let w = &wholes[0];
    assert_eq!(w["nest"], "whole0");
    assert_eq!(w["invocations"], 1);
    let reordered = row_updates(w);
    let steps = reordered["recipe"]["steps"].to_string();
    assert!(
        steps.contains("interchange_triangle") && steps.contains("\"order\":[1,0]"),
        "{steps}"
    );
    assert_eq!(reordered["verdict"], "verified", "{reordered}");
    // Built alone, the tuned file prints what the original prints (a*b+c contraction
    // off on both sides: it may fall differently in differently shaped code).
    let want = cc_run(
        &strings(&["lu.c", "-DSMALL_DATASET", "-lm"]),
        &["-ffp-contract=off"],
        d,
    );
    let got = cc_run(
        &strings(&["lu.tuned.c", "-DSMALL_DATASET", "-lm"]),
        &["-fopenmp", "-ffp-contract=off"],
        d,
    );
    assert_eq!((want.code, got.code), (0, 0));
    assert_eq!(got.stdout, want.stdout);
    // A kept whole recipe stands in the file for the recipes of the nests inside.
    if reordered["kept"] == true {
        let tuned = std::fs::read_to_string(d.join("lu.tuned.c")).unwrap();
        assert!(tuned.contains("j = k + 1;"), "{tuned}");
    }
}

/// A factorization written against the PolyBench/C API with a scalar temporary
/// (`w = A[i][j]; for k: w -= ..; A[i][j] = w / ..`, the fixture `factor-w`): the
/// whole-nest stage folds the temporary into its element first, then reorders the
/// loops into row updates; the tuned program dumps what the original dumps.
#[test]
fn a_factorization_with_a_temporary_is_folded_then_reordered() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let root = workspace().join("tests/fixtures/polybench-style");
    let kernel = root.join("linear-algebra/factor-w");
    std::fs::copy(kernel.join("factor-w.c"), d.join("factor-w.c")).unwrap();
    let program = |source: &str| {
        strings(&[
            source,
            &root.join("utilities/polybench.c").display().to_string(),
            &format!("-I{}", root.join("utilities").display()),
            &format!("-I{}", kernel.display()),
            "-DSMALL_DATASET",
            "-lm",
        ])
    };
    let mut args = strings(&["apply", "--repetitions", "5", "--report", "r.json"]);
    args.extend(program("factor-w.c"));
    let out = tune(&args, d);
    assert_eq!(out.code, 0, "{}", out.stderr_text());
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("r.json")).unwrap()).unwrap();
    let w = &r["wholes"][0];
    assert_eq!(w["nest"], "whole0", "{r}");
    let reordered = row_updates(w);
    let steps = reordered["recipe"]["steps"].to_string();
    assert!(
        steps.contains("fold_scalar") && steps.contains("interchange_triangle"),
        "{steps}"
    );
    assert_eq!(reordered["verdict"], "verified", "{reordered}");
    let mut want_args = program("factor-w.c");
    want_args.push("-DPOLYBENCH_DUMP_ARRAYS".into());
    let want = cc_run(&want_args, &["-ffp-contract=off"], d);
    let mut got_args = program("factor-w.tuned.c");
    got_args.push("-DPOLYBENCH_DUMP_ARRAYS".into());
    let got = cc_run(&got_args, &["-fopenmp", "-ffp-contract=off"], d);
    assert_eq!((want.code, got.code), (0, 0));
    assert!(!want.stderr.is_empty());
    assert_eq!(got.stderr, want.stderr, "the dumps differ");
}
