//! Snapshots of the C that each recipe step generates.
//! Update with `INSTA_UPDATE=always cargo test -p ir --test transform_snapshots`.

use ir::codegen::{nest_function_with, nests, CodegenOptions};
use ir::transform::{apply, Recipe, Schedule, Step};

fn transformed(program: &str, nest: usize, steps: Vec<Step>) -> String {
    let path = format!(
        "{}/../datasets/programs/{program}.c",
        env!("CARGO_MANIFEST_DIR")
    );
    let fopts = ir::FrontendOptions {
        flags: vec!["-DMINI_DATASET".into()],
        ..Default::default()
    };
    let parsed = ir::load(&path, &fopts).unwrap();
    let n = nests(&parsed.program).remove(nest);
    let t = apply(&parsed.program, n.region, n.root, &Recipe { steps }).unwrap();
    assert!(ir::verify::verify(&t.program).is_empty());
    nest_function_with(&t.program, &n, &t.root, CodegenOptions::default())
}

#[test]
fn interchange() {
    insta::assert_snapshot!(transformed(
        "jacobi-2d",
        0,
        vec![Step::Interchange {
            at: 0,
            order: vec![1, 0]
        }]
    ));
}

#[test]
fn tile_two_levels_of_a_band() {
    insta::assert_snapshot!(transformed(
        "gemm",
        0,
        vec![Step::Tile {
            at: 2,
            sizes: vec![32, 64]
        }]
    ));
}

#[test]
fn parallelize_with_schedule_and_lastprivate() {
    insta::assert_snapshot!(transformed(
        "ludcmp",
        1,
        vec![Step::Parallelize {
            at: 0,
            schedule: Schedule::Dynamic,
            chunk: Some(4)
        }]
    ));
}

#[test]
fn vectorize_innermost() {
    insta::assert_snapshot!(transformed("gemm", 0, vec![Step::Vectorize { at: 3 }]));
}

#[test]
fn unroll() {
    insta::assert_snapshot!(transformed(
        "trisolv",
        0,
        vec![Step::Unroll { at: 0, factor: 4 }]
    ));
}
