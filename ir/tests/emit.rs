//! The tuned file: what no recipe changed stays the user's text, and a changed nest
//! keeps the user's macro names.

use ir::transform::{Recipe, Step};

fn fixture(name: &str) -> String {
    format!("{}/tests/emit/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn a_tiled_nest_keeps_the_users_macro_names_and_the_other_nest_its_text() {
    let file = fixture("macros.c");
    let text = std::fs::read_to_string(&file).unwrap();
    let parsed = ir::load(&file, &ir::FrontendOptions::default()).unwrap();
    let program = &parsed.program;
    let nests = ir::codegen::nests(program);
    let second = &nests[1];
    let recipe = Recipe {
        steps: vec![Step::Tile {
            at: 0,
            sizes: vec![8, 8],
            inner: vec![],
        }],
    };
    let (tuned, _) =
        ir::emit::apply_recipes(program, &[(second.region, second.root, recipe)]).unwrap();
    let out =
        ir::emit::tuned_source(&text, &tuned, program, &[(second.region, second.root)]).unwrap();
    // Everything up to the changed nest is the user's, byte for byte.
    let head = text
        .split("  // The nest the test tiles.\n")
        .next()
        .unwrap();
    assert!(out.starts_with(head), "{out}");
    assert!(out.ends_with("#pragma endscop\n}\n"), "{out}");
    let nest = &out[head.len()..];
    // Bounds and subscripts by name; the literal 40 the user wrote as a number stays one.
    for want in ["N - 1", "M", "STEP", "j - STEP", "+ 40"] {
        assert!(nest.contains(want), "{want} missing in:\n{nest}");
    }
    assert!(!nest.contains("< 40") && !nest.contains(" 3;"), "{nest}");
}

#[test]
fn a_changed_loop_of_the_users_parallel_region_stays_a_worksharing_loop_inside_it() {
    let file = format!(
        "{}/../tests/fixtures/user-style/omp_region.c",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&file).unwrap();
    let parsed = ir::load(&file, &ir::FrontendOptions::default()).unwrap();
    let program = &parsed.program;
    let nests = ir::codegen::nests(program);
    // Both worksharing loops are nests, each carrying the region's directive.
    assert_eq!(nests.len(), 2);
    let first = program.find_loop(nests[0].region, nests[0].root).unwrap();
    let directives: Vec<String> = first.directives.iter().map(|d| d.to_string()).collect();
    assert_eq!(
        directives,
        ["#pragma omp parallel private(i, j)", "#pragma omp for"]
    );
    // Where it stands alone (a nest function), the loop is a parallel region of its own.
    let alone = ir::codegen::nest_function(
        program,
        &program.regions[0],
        &nests[0],
        ir::codegen::CodegenOptions::default(),
    );
    assert!(
        alone.contains("#pragma omp parallel private(i, j)\n#pragma omp for\n"),
        "{alone}"
    );
    let recipe = Recipe {
        steps: vec![Step::Unroll { at: 1, factor: 2 }],
    };
    let (tuned, openmp) =
        ir::emit::apply_recipes(program, &[(nests[0].region, nests[0].root, recipe)]).unwrap();
    assert!(openmp);
    let out = ir::emit::tuned_source(&text, &tuned, program, &[(nests[0].region, nests[0].root)])
        .unwrap();
    // The user's region is kept around the changed loop, which keeps its own directive,
    // and the region's directive is not repeated inside the region.
    let head = "#pragma omp parallel private(i, j)\n  {\n    /* Rows of the sweep are shared among the threads. */\n#pragma omp for\n    for (i = 1; i < N - 1; i++) {\n";
    assert!(out.contains(head), "{out}");
    assert_eq!(out.matches("#pragma omp parallel").count(), 1, "{out}");
    assert!(out.contains("#pragma GCC unroll 2\n"), "{out}");
    // The second loop, unchanged, is the user's text.
    let second = text.split("    /* The residual").nth(1).unwrap();
    assert!(out.ends_with(second), "{out}");
}

#[test]
fn a_parallel_region_with_other_statements_is_kept_as_written() {
    let dir = std::env::temp_dir().join(format!("tune-emit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("single.c");
    std::fs::write(
        &file,
        "double x[8];\nvoid f(void) {\n  int i;\n#pragma scop\n#pragma omp parallel\n  {\n    x[0] = 1.0;\n#pragma omp for\n    for (i = 1; i < 8; i++)\n      x[i] = 2.0;\n  }\n  for (i = 0; i < 8; i++)\n    x[i] *= 3.0;\n#pragma endscop\n}\n",
    )
    .unwrap();
    let parsed = ir::load(file.to_str().unwrap(), &ir::FrontendOptions::default()).unwrap();
    let body = &parsed.program.regions[0].body;
    // The block, its directive included, is glue kept as written; the loop after it is
    // still a nest.
    let ir::program::Node::Opaque(o) = &body[0] else {
        panic!("{body:?}")
    };
    assert!(
        o.text
            .starts_with("#pragma omp parallel\n  {\n    x[0] = 1.0;"),
        "{}",
        o.text
    );
    assert!(o.text.ends_with("x[i] = 2.0;\n  }"), "{}", o.text);
    assert_eq!(
        o.reason,
        "statement in the '#pragma omp parallel' block that is not a '#pragma omp for' loop"
    );
    assert_eq!(o.pos.line, 6);
    assert!(o.writes.contains(&"x".to_string()));
    let nests = ir::codegen::nests(&parsed.program);
    assert_eq!(nests.len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_k_and_r_parameter_list_gives_the_parameters_their_types() {
    let dir = std::env::temp_dir().join(format!("tune-knr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("knr.c");
    std::fs::write(
        &file,
        "void scale(n, s, a, p)\n  int n;\n  double s, a[64][64];\n  float *p;\n{\n  int i, j;\n  for (i = 0; i < n; i++)\n    for (j = 0; j < n; j++)\n      a[i][j] = s * a[i][j];\n  p[0] = 1.0f;\n}\nint main(void) { static double a[64][64]; float f; scale(64, 2.0, a, &f); return 0; }\n",
    )
    .unwrap();
    let parsed = ir::load(
        file.to_str().unwrap(),
        &ir::FrontendOptions {
            function: Some("scale".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let nests = ir::codegen::nests(&parsed.program);
    assert_eq!(nests.len(), 1);
    assert_eq!(nests[0].arrays, ["a"]);
    let a = parsed.program.array("a").unwrap();
    assert_eq!(a.extents, [Some(64), Some(64)]);
    assert!(parsed.program.is_param("n"));
    // The pointer store is glue.
    let body = &parsed.program.regions[0].body;
    assert!(body
        .iter()
        .any(|n| matches!(n, ir::program::Node::Opaque(o) if o.text == "p[0] = 1.0f;")));
    std::fs::remove_dir_all(&dir).unwrap();
}
