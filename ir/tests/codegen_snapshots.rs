//! Snapshots of generated C, so that every change in code generation shows in review.
//! Update with `INSTA_UPDATE=always cargo test -p ir --test codegen_snapshots`.

use ir::codegen::{nests, region_code, CodegenOptions};

/// A dataset program at MINI.
fn load(program: &str) -> ir::Parsed {
    let path = format!(
        "{}/../datasets/programs/{program}.c",
        env!("CARGO_MANIFEST_DIR")
    );
    let fopts = ir::FrontendOptions {
        flags: vec!["-DMINI_DATASET".into()],
        ..Default::default()
    };
    ir::load(&path, &fopts).unwrap()
}

fn code(program: &str, opts: CodegenOptions) -> String {
    let parsed = load(program);
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

#[test]
fn whole_nests_are_timed_and_saved_around_their_loop() {
    // Which top-level loops are whole nests: those whose sequential loops hold nests.
    for (program, wholes) in [
        ("gemm", 0),      // its one loop is a nest
        ("doitgen", 0),   // r is parallel: a nest
        ("cholesky", 1),  // i { j { k }, k }
        ("lu", 1),        // i { j { k }, j { k } }
        ("jacobi-2d", 1), // the time loop
        ("ludcmp", 3),    // k, and the two solves' row loops
        ("seidel-2d", 0), // no parallel loop at all: one nest
    ] {
        let p = load(program).program;
        let n = nests(&p);
        let w = ir::codegen::whole_nests(&p, &n);
        assert_eq!(w.len(), wholes, "{program}: {w:?}");
        for (k, x) in w.iter().enumerate() {
            assert_eq!(x.name, format!("whole{k}"));
            assert_eq!(x.id, n.len() + p.regions.len() + k);
            assert!(x.control.is_empty());
        }
    }
    // The glue around jacobi-2d's time loop: its slot entered, its inputs saved, its
    // timer started; after the loop, stopped and its outputs saved.
    let glue = code(
        "jacobi-2d",
        CodegenOptions {
            openmp: false,
            instrument: true,
            whole_nests: true,
        },
    );
    let enter = glue.find("tune_rt_enter(3, \"whole0\")").expect("entered");
    let stop = glue.find("tune_rt_stop(3, tune_v)").expect("stopped");
    let t_loop = glue.find("for (t = 0").expect("time loop");
    assert!(enter < t_loop && t_loop < stop, "{glue}");
    assert!(
        glue.contains("tune_rt_save(\"A\", \"whole0\", tune_v, 1,"),
        "{glue}"
    );
}

#[test]
fn a_whole_nest_inside_a_glue_loop_is_timed_there_with_its_variable_as_a_parameter() {
    // The repetition loop `r` calls a function: it is glue. The row loop inside it holds
    // two nests with no glue of its own: a whole nest, entered inside `r`'s body, that
    // takes `r` like any scalar from outside it.
    let dir = std::env::temp_dir().join(format!("tune-whole-glue-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("reps.c");
    std::fs::write(
        &file,
        "float a[64][64], b[64][64], c[64][64];\nvoid tick(int r);\nvoid k(int reps) {\n  int r, i, j;\n  for (r = 0; r < reps; r++) {\n    for (i = 1; i < 64; i++) {\n      for (j = 1; j < 64; j++)\n        a[j][i] = a[j - 1][i] + c[j][i] * r;\n      for (j = 1; j < 64; j++)\n        b[i][j] = b[i - 1][j] + c[i][j];\n    }\n    tick(r);\n  }\n}\n",
    )
    .unwrap();
    let opts = ir::FrontendOptions {
        function: Some("k".into()),
        ..Default::default()
    };
    let parsed = ir::load(file.to_str().unwrap(), &opts).unwrap();
    let program = &parsed.program;
    let n = nests(program);
    let wholes = ir::codegen::whole_nests(program, &n);
    assert_eq!(wholes.len(), 1, "{wholes:?}");
    let w = &wholes[0];
    assert_eq!(program.find_loop(0, w.root).unwrap().var, "i");
    assert!(
        w.scalars.iter().any(|s| s.name == "r" && !s.written),
        "{w:?}"
    );
    assert_eq!(n.iter().filter(|x| x.is_inside(w)).count(), 2);
    let (_, glue) = region_code(
        program,
        &n,
        0,
        CodegenOptions {
            openmp: false,
            instrument: true,
            whole_nests: true,
        },
    );
    let r_loop = glue.find("for (r = 0").expect("repetition loop");
    let enter = glue.find("\"whole0\")").expect("entered");
    let tick = glue.find("tick(r);").expect("the call");
    assert!(r_loop < enter && enter < tick, "{glue}");
    std::fs::remove_dir_all(&dir).unwrap();
}
