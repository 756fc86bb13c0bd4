//! Snapshots of generated C, so that every change in code generation shows in review.
//! Update with `INSTA_UPDATE=always cargo test -p ir --test codegen_snapshots`.

use ir::codegen::{nests, region_code, CodegenOptions};

fn code(program: &str, opts: CodegenOptions) -> String {
    let path = format!(
        "{}/../datasets/programs/{program}.c",
        env!("CARGO_MANIFEST_DIR")
    );
    let fopts = ir::FrontendOptions {
        flags: vec!["-DMINI_DATASET".into()],
        ..Default::default()
    };
    let parsed = ir::load(&path, &fopts).unwrap();
    let n = nests(&parsed.program);
    let mut out = String::new();
    for ri in 0..parsed.program.regions.len() {
        let (functions, glue) = region_code(&parsed.program, &n, ri, opts);
        out.push_str(&functions);
        out.push_str("/* ---- glue ---- */\n");
        out.push_str(&glue);
    }
    out
}

#[test]
fn gemm_plain() {
    insta::assert_snapshot!(code("gemm", CodegenOptions::default()));
}

#[test]
fn gemm_instrumented_with_openmp() {
    insta::assert_snapshot!(code(
        "gemm",
        CodegenOptions {
            openmp: true,
            instrument: true,
            whole_nests: false,
        }
    ));
}

#[test]
fn jacobi_2d_nests_under_a_time_loop() {
    insta::assert_snapshot!(code(
        "jacobi-2d",
        CodegenOptions {
            openmp: true,
            instrument: false,
            whole_nests: false,
        }
    ));
}

#[test]
fn ludcmp_scalars_passed_by_pointer_and_lastprivate() {
    insta::assert_snapshot!(code(
        "ludcmp",
        CodegenOptions {
            openmp: true,
            instrument: false,
            whole_nests: false,
        }
    ));
}

#[test]
fn durbin_glue_statements_between_nests() {
    insta::assert_snapshot!(code(
        "durbin",
        CodegenOptions {
            openmp: false,
            instrument: true,
            whole_nests: false,
        }
    ));
}

#[test]
fn pointers_read_as_arrays_and_a_return_that_ends_the_region() {
    // swap_buffers.c: double pointers indexed in[y*nx + x], swapped between sweeps, and
    // a function that returns from its region.
    let path = format!(
        "{}/../tests/fixtures/user-style/swap_buffers.c",
        env!("CARGO_MANIFEST_DIR")
    );
    let parsed = ir::load(&path, &ir::FrontendOptions::default()).unwrap();
    let n = nests(&parsed.program);
    let (functions, glue) = region_code(
        &parsed.program,
        &n,
        0,
        CodegenOptions {
            openmp: false,
            instrument: true,
            whole_nests: false,
        },
    );
    // The glue indexes the pointers with one subscript and ends the region before the
    // return; the nest functions take them as arrays.
    assert!(
        glue.contains("tune_nest0(ny, nx, (void *)out, (void *)in);"),
        "{glue}"
    );
    // The region's slot follows the program's nests.
    let stop = glue
        .find(&format!("tune_rt_stop({}, tune_rv);", n.len()))
        .expect(&glue);
    assert!(stop < glue.find("return total;").unwrap(), "{glue}");
    insta::assert_snapshot!(format!("{functions}/* ---- glue ---- */\n{glue}"));
}
