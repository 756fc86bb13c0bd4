//! A register tile adds every product of a reduction in the user's order, each with
//! an FMA; gcc may compile the user's loop without them (correlation's
//! `s += data[k][i] * data[k][j]`, its products vectorized and added one by one). The
//! tuned program then prints other last digits, and a sum that cancels (the centred
//! `data`, around 0) reads as another number. Built with `-ffp-contract=off`, both
//! compute the same bits: `tune apply` tells this apart from a sum in another order and
//! keeps the tile.

use tune_e2e::{cc_run, strings, tune, workspace};

#[test]
fn a_register_tile_that_only_contracts_otherwise_is_kept_and_computes_the_same_bits() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for f in ["correlation.c", "common.h"] {
        std::fs::copy(workspace().join("datasets/programs").join(f), d.join(f)).unwrap();
    }
    let report = d.join("r.json");
    let out = tune(
        &strings(&[
            "apply",
            "correlation.c",
            "-DMEDIUM_DATASET",
            "-lm",
            "--top-k",
            "1",
            "--report",
            report.to_str().unwrap(),
        ]),
        d,
    );
    assert_eq!(out.code, 0, "{}", out.stderr_text());
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    // The product nest (nest3) keeps a register tile: not bit for bit, in order.
    let nest3 = r["nests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["nest"] == "nest3")
        .unwrap();
    let kept = nest3["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kept"] == true)
        .unwrap_or_else(|| panic!("{nest3}"));
    assert!(
        kept["recipe"].to_string().contains("register_tile"),
        "{kept}"
    );
    assert_eq!(
        (kept["exact"].as_bool(), kept["same_order"].as_bool()),
        (Some(false), Some(true))
    );
    let check = &r["check"];
    assert_eq!(check["reverted"], false, "{check}");
    assert_eq!(check["same_output"], true, "{check}");
    // Both built without contraction: every output bit for bit (standard error prints
    // each array's FNV-1a hash), and the same printed sums.
    let flags = ["-DMEDIUM_DATASET", "-ffp-contract=off", "-fopenmp"];
    let want = cc_run(&strings(&["correlation.c", "-lm"]), &flags, d);
    let got = cc_run(&strings(&["correlation.tuned.c", "-lm"]), &flags, d);
    assert_eq!((want.code, got.code), (0, 0));
    assert_eq!(got.stdout, want.stdout);
    assert_eq!(got.stderr_text(), want.stderr_text());
    assert!(std::fs::read_to_string(d.join("correlation.tuned.c"))
        .unwrap()
        .contains("register tile"));
}
