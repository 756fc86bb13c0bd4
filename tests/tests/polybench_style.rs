//! Programs written against the PolyBench/C API (`#include <polybench.h>`,
//! `POLYBENCH_2D`, `_PB_N`, `SCALAR_VAL`, `POLYBENCH_DUMP_ARRAYS`), built the way
//! PolyBench documents, with the harness's `.c` file on the command line: unmodified,
//! `tune run` prints exactly what the original prints. The fixture's `polybench.h` is
//! the project's own implementation of that API.

use tune_e2e::{cc_run, strings, tune, workspace};

const PROGRAMS: &[(&str, &str)] = &[
    ("linear-algebra/matvec-t", "matvec-t"),
    ("stencils/blur-2d", "blur-2d"),
    ("datamining/colnorm", "colnorm"),
    ("linear-algebra/factor-w", "factor-w"),
];

fn args(dir: &str, name: &str, extra: &[&str]) -> Vec<String> {
    let root = workspace().join("tests/fixtures/polybench-style");
    let mut v = vec![
        root.join(dir)
            .join(format!("{name}.c"))
            .display()
            .to_string(),
        root.join("utilities/polybench.c").display().to_string(),
        format!("-I{}", root.join("utilities").display()),
        format!("-I{}", root.join(dir).display()),
        "-DPOLYBENCH_DUMP_ARRAYS".to_string(),
        "-ffp-contract=off".to_string(),
    ];
    v.extend(extra.iter().map(|s| s.to_string()));
    v.push("-lm".into());
    v
}

fn check(extra: &[&str]) {
    for (dir, name) in PROGRAMS {
        for preset in ["-DMINI_DATASET", "-DSMALL_DATASET"] {
            let tmp = tempfile::tempdir().unwrap();
            let mut e = vec![preset];
            e.extend_from_slice(extra);
            let a = args(dir, name, &e);
            let want = cc_run(&a, &[], tmp.path());
            assert!(
                !want.stderr.is_empty(),
                "{name}: the reference dumps its arrays"
            );
            let mut t = strings(&["run", "--quiet"]);
            t.extend(a);
            let got = tune(&t, tmp.path());
            assert_eq!(
                got.code,
                want.code,
                "{name} {preset}: {}",
                got.stderr_text()
            );
            assert!(
                got.stdout == want.stdout && got.stderr == want.stderr,
                "{name} {preset} {extra:?}: output differs"
            );
        }
    }
}

#[test]
fn polybench_api_programs_run_unmodified() {
    check(&[]);
}

#[test]
fn c99_prototypes_give_variable_length_array_parameters() {
    check(&["-DPOLYBENCH_USE_C99_PROTO"]);
}

#[test]
fn scalar_loop_bounds_and_other_data_types() {
    check(&["-DPOLYBENCH_USE_SCALAR_LB", "-DDATA_TYPE_IS_DOUBLE"]);
}

#[test]
fn verdicts_of_the_api_programs() {
    let root = workspace().join("tests/fixtures/polybench-style");
    let (dir, name) = PROGRAMS[0];
    let opts = ir::FrontendOptions {
        flags: vec![
            format!("-I{}", root.join("utilities").display()),
            "-DMINI_DATASET".into(),
        ],
        ..Default::default()
    };
    let parsed = ir::load(
        &root
            .join(dir)
            .join(format!("{name}.c"))
            .display()
            .to_string(),
        &opts,
    )
    .unwrap();
    assert_eq!(
        datasets::verdict_table(&parsed.program),
        "j parallel\ni reduction\n  j parallel\ni parallel\n  j reduction\n"
    );
}
