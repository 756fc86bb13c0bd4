//! The tuned file: what no recipe changed stays the user's text, and a changed nest
//! keeps the user's macro names.

use ir::transform::{Recipe, Step};

fn fixture(name: &str) -> String {
    format!("{}/tests/emit/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Loads `text` as the file `name` in a folder of its own, removed afterwards, under
/// each of `opts` in turn.
fn load_each(name: &str, text: &str, opts: &[ir::FrontendOptions]) -> Vec<ir::Result<ir::Parsed>> {
    let dir = std::env::temp_dir().join(format!("tune-emit-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    let out = opts
        .iter()
        .map(|o| ir::load(file.to_str().unwrap(), o))
        .collect();
    std::fs::remove_dir_all(&dir).unwrap();
    out
}

/// [`load_each`] under one set of options, which must succeed.
fn load_text(name: &str, text: &str, opts: ir::FrontendOptions) -> ir::Parsed {
    load_each(name, text, &[opts]).remove(0).unwrap()
}

/// The user-style fixture `omp_region.c` (a parallel region of worksharing loops):
/// its text, and the program read from it.
fn omp_region() -> (String, ir::Parsed) {
    let file = format!(
        "{}/../tests/fixtures/user-style/omp_region.c",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&file).unwrap();
    (
        text,
        ir::load(&file, &ir::FrontendOptions::default()).unwrap(),
    )
}

/// `#pragma omp parallel for schedule(static)` on loop `at`.
fn parallel(at: usize) -> Step {
    Step::Parallelize {
        at,
        schedule: ir::transform::Schedule::Static,
        chunk: None,
        collapse: None,
    }
}

/// `text` with `recipe` applied to the program's first nest, as `tune apply` writes it.
fn tuned_text(text: &str, program: &ir::Program, recipe: Recipe) -> String {
    let n = &ir::codegen::nests(program)[0];
    let (tuned, _) = ir::emit::apply_recipes(program, &[(n.region, n.root, recipe)]).unwrap();
    ir::emit::tuned_source(text, &tuned, program, &[(n.region, n.root)]).unwrap()
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
    let (text, parsed) = omp_region();
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
    // Every thread of the team stores x[0]: one thread running the block would not
    // compute what the team does in every case (here it would; the rule reads only
    // what the block declares as each thread's own).
    assert_eq!(
        o.reason,
        "'#pragma omp parallel' block: every thread assigns 'x' (line 7)"
    );
    assert_eq!(o.pos.line, 6);
    assert!(o.writes.contains(&"x".to_string()));
    let nests = ir::codegen::nests(&parsed.program);
    assert_eq!(nests.len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_directive_continued_over_two_lines_stays_with_its_block() {
    // `#pragma omp parallel \` + `shared(x)`: the preprocessed text has the directive
    // on one line and a blank line after it, between it and its block.
    let parsed = load_text(
        "cont.c",
        "double x[8];\nvoid f(void) {\n  int i, t = 0;\n  do {\n#pragma omp parallel \\\n    shared(x)\n    {\n      x[0] = 1.0;\n#pragma omp for\n      for (i = 1; i < 8; i++)\n        x[i] = 2.0;\n    }\n  } while (++t < 3);\n  for (i = 0; i < 8; i++)\n    x[i] *= 3.0;\n}\n",
        ir::FrontendOptions {
            function: Some("f".into()),
            ..Default::default()
        },
    );
    let mut texts = Vec::new();
    ir::program::walk_nodes(&parsed.program.regions[0].body, &mut |n, _| {
        if let ir::program::Node::Opaque(o) = n {
            texts.push(o.text.clone());
        }
    });
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("#pragma omp parallel shared(x)\n")
                && t.ends_with("x[i] = 2.0;\n    }")),
        "{texts:#?}"
    );
    assert_eq!(ir::codegen::nests(&parsed.program).len(), 1);
}

#[test]
fn a_k_and_r_parameter_no_declaration_names_is_an_int() {
    let parsed = load_text(
        "knr_int.c",
        "static float w[64];\nvoid scale(p, n)\nfloat *p;\n{\n  int j;\n  for (j = 0; j < n; j++)\n    w[j] = w[j] * 0.5f;\n}\n",
        ir::FrontendOptions::default(),
    );
    assert_eq!(ir::codegen::nests(&parsed.program).len(), 1);
    let n = parsed.program.scalar("n").expect("n is known");
    assert_eq!(n.dtype, ir::DType::I32);
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
    // The pointer is read as an array of the one element it is indexed with.
    let p = parsed.program.array("p").unwrap();
    assert!(p.flat);
    assert_eq!(p.extents, [Some(1)]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs `cc -O2 -ffp-contract=off -fopenmp FILE -lm` in `dir` and returns its stdout.
fn build_and_run(dir: &std::path::Path, file: &str) -> String {
    build_and_run_with(dir, file, &["-DN=40", "-DSTEPS=2"])
}

/// `file` of `dir` built with OpenMP, contraction off and `defines`, run: its output.
fn build_and_run_with(dir: &std::path::Path, file: &str, defines: &[&str]) -> String {
    let exe = dir.join(format!("{file}.exe"));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = std::process::Command::new(cc)
        .args(["-O2", "-ffp-contract=off", "-fopenmp"])
        .args(defines)
        .arg(dir.join(file))
        .arg("-lm")
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let run = std::process::Command::new(&exe).output().unwrap();
    assert!(run.status.success());
    String::from_utf8(run.stdout).unwrap()
}

#[test]
fn pointers_indexed_with_flattened_subscripts_are_arrays_and_the_tuned_file_indexes_them_as_written(
) {
    let src = format!(
        "{}/../tests/fixtures/user-style/pointer_kernels.c",
        env!("CARGO_MANIFEST_DIR")
    );
    let dir = std::env::temp_dir().join(format!("tune-flat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("pointer_kernels.c");
    std::fs::copy(&src, &file).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let parsed = ir::load(file.to_str().unwrap(), &ir::FrontendOptions::default()).unwrap();
    let program = &parsed.program;
    let dims = |name: &str| -> Vec<String> {
        let a = program.array(name).unwrap();
        assert!(a.flat, "{name}");
        a.dims.iter().map(ir::print::expr).collect()
    };
    // a[i*n + k] and b[k*n + j]: rows of n; in[z*nx*ny + y*nx + x]: planes of ny rows
    // of nx, nz planes (the largest first subscript, z + 1 <= nz - 1, plus one); out is
    // written up to plane nz - 2 only.
    assert_eq!(dims("a"), ["n", "n"]);
    assert_eq!(dims("c"), ["n", "n"]);
    assert_eq!(dims("in"), ["nz", "ny", "nx"]);
    assert_eq!(dims("out"), ["nz - 1", "ny", "nx"]);
    let nests = ir::codegen::nests(program);
    let in_function = |f: &str| {
        nests
            .iter()
            .find(|n| program.regions[n.region].function == f)
            .unwrap()
    };
    let (mm, tr, st) = (
        in_function("matmul"),
        in_function("transpose_add"),
        in_function("stencil3d"),
    );
    // The dependence analysis sees the rows: every loop but matmul's k is parallel.
    let kinds = |n: &ir::codegen::Nest| -> Vec<ir::program::LoopKind> {
        let root = program.find_loop(n.region, n.root).unwrap();
        std::iter::once(root)
            .chain(ir::program::loops(&root.body))
            .map(|l| l.kind)
            .collect()
    };
    use ir::program::LoopKind::{Map, Reduction};
    assert_eq!(kinds(mm), [Map, Map, Reduction]);
    assert_eq!(kinds(tr), [Map, Map]);
    assert_eq!(kinds(st), [Map, Map, Map]);
    let recipes = vec![
        (
            mm.region,
            mm.root,
            Recipe {
                steps: vec![parallel(0)],
            },
        ),
        (
            tr.region,
            tr.root,
            Recipe {
                steps: vec![
                    Step::Interchange {
                        at: 0,
                        order: vec![1, 0],
                    },
                    Step::Tile {
                        at: 0,
                        sizes: vec![8, 8],
                        inner: vec![],
                    },
                    parallel(0),
                ],
            },
        ),
        (
            st.region,
            st.root,
            Recipe {
                steps: vec![parallel(1)],
            },
        ),
    ];
    let (tuned, openmp) = ir::emit::apply_recipes(program, &recipes).unwrap();
    assert!(openmp);
    let changed: Vec<(usize, usize)> = recipes.iter().map(|(r, l, _)| (*r, *l)).collect();
    let out = ir::emit::tuned_source(&text, &tuned, program, &changed).unwrap();
    // The user's pointers keep one subscript, as the user wrote them.
    for want in ["a[i * n + k]", "c[i * n + j]", "out[(z * ny + y) * nx + x]"] {
        assert!(out.contains(want), "{want} missing in:\n{out}");
    }
    assert!(
        !out.contains("][") && out.contains("#pragma omp parallel for"),
        "{out}"
    );
    // Everything outside the changed nests is the user's text.
    let main_at = text.find("int main(void)").unwrap();
    assert!(out.ends_with(&text[main_at..]));
    // Each changed nest runs where the pointers do not overlap, the user's nest elsewhere.
    assert_eq!(out.matches("} else {").count(), 3, "{out}");
    assert!(
        out.contains("(const char *)(c + (n) * (n)) <= (const char *)a"),
        "{out}"
    );
    std::fs::write(dir.join("tuned.c"), &out).unwrap();
    eprintln!("{out}");
    assert_eq!(
        build_and_run(&dir, "tuned.c"),
        build_and_run(&dir, "pointer_kernels.c")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_function_assumed_pure_that_another_file_declares_is_no_error() {
    let opts = |other_sources| ir::FrontendOptions {
        assume_pure: vec!["sq".into()],
        other_sources,
        ..Default::default()
    };
    let mut runs = load_each(
        "main.c",
        "double a[8];\nint main(void) {\n  int i;\n  for (i = 0; i < 8; i++)\n    a[i] = 1.0;\n  return 0;\n}\n",
        &[opts(false), opts(true)],
    );
    let with_others = runs.pop().unwrap().unwrap();
    let alone = runs.pop().unwrap().unwrap_err().to_string();
    assert!(
        alone.ends_with("main.c: --assume-pure sq: no function of that name is declared"),
        "{alone}"
    );
    assert!(with_others.program.pure_functions.is_empty());
}

#[test]
fn a_function_on_one_line_with_a_macro_is_rewritten_between_its_own_braces() {
    // `N` expands to four characters on the body's only line: the preprocessed column of
    // the closing brace is not the user's.
    let text = "#define N 1000\nfloat a[N];\nint main(void) { int i; for (i = 0; i < N; i++) a[i] = i; return a[9] > 100.0f; }\n";
    let parsed = load_text("one.c", text, ir::FrontendOptions::default());
    let out = tuned_text(
        text,
        &parsed.program,
        Recipe {
            steps: vec![Step::Unroll { at: 0, factor: 2 }],
        },
    );
    assert!(
        out.starts_with("#define N 1000\nfloat a[N];\nint main(void) {\n"),
        "{out}"
    );
    assert!(out.contains("#pragma GCC unroll 2"), "{out}");
    assert!(
        out.trim_end().ends_with("return a[9] > 100.0f;\n}"),
        "{out}"
    );
}

#[test]
fn enumeration_constants_are_values_and_keep_their_names_in_the_users_file() {
    let text = "enum { SIZE = 40, HALF = SIZE / 2, NEXT };\ndouble a[SIZE][SIZE];\nvoid fill(void)\n{\n  int i, j;\n  for (i = 0; i < SIZE; i++)\n    for (j = 0; j < HALF; j++)\n      a[i][j] = NEXT;\n}\n";
    let parsed = load_text("en.c", text, ir::FrontendOptions::default());
    let program = &parsed.program;
    let a = program.array("a").unwrap();
    assert_eq!(a.extents, [Some(40), Some(40)]);
    let nests = ir::codegen::nests(program);
    assert_eq!(nests.len(), 1);
    let body = ir::codegen::nest_function(
        program,
        &program.regions[0],
        &nests[0],
        ir::codegen::CodegenOptions::default(),
    );
    assert!(body.contains("j < 20") && body.contains("= 21;"), "{body}");
    let out = tuned_text(
        text,
        program,
        Recipe {
            steps: vec![Step::Unroll { at: 1, factor: 2 }],
        },
    );
    assert!(
        out.contains("i < SIZE") && out.contains("j < HALF") && out.contains("= NEXT"),
        "{out}"
    );
}

#[test]
fn a_time_tiled_stencil_over_malloced_rows_prints_what_the_original_prints() {
    // A 2-D stencil as people write it: rows of pointers to malloc'ed memory indexed
    // `a[i * n + j]`, loop variables declared at the top, the time loop's variable
    // read after it. Time-tiled without a team (the loop variables end as the loops
    // leave them) and with one (the file prints only the sums then), the tuned file
    // prints what the original prints.
    let text = r#"#include <stdio.h>
#include <stdlib.h>

static void sweep(int steps, int n, double *a, double *b)
{
  int t, i, j;
  for (t = 0; t < steps; t++) {
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        b[i * n + j] = 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] + a[i * n + j + 1]);
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        a[i * n + j] = b[i * n + j];
  }
#ifdef SHOW_VARS
  printf("%d %d %d\n", t, i, j);
#endif
}

int main(void)
{
  int n = 37, k;
  double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n);
  double s = 0;
  for (k = 0; k < n * n; k++) {
    a[k] = (k % 7) * 0.5;
    b[k] = 0;
  }
  sweep(11, n, a, b);
  for (k = 0; k < n * n; k++)
    s += a[k] * (k % 3 + 1);
  printf("%.17g\n", s);
  free(a);
  free(b);
  return 0;
}
"#;
    let dir = std::env::temp_dir().join(format!("tune-timetile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let parsed = load_text("stencil.c", text, ir::FrontendOptions::default());
    let program = &parsed.program;
    let whole = ir::codegen::whole_nests(program, &ir::codegen::nests(program)).remove(0);
    let root = program.find_loop(whole.region, whole.root).unwrap();
    let site = ir::transform::time_tile_site(root, &program.arrays).unwrap();
    assert_eq!((site.sweeps, site.skew, site.parallel), (2, 1, true));
    let run = |file: &str, text: &str, show: bool| {
        std::fs::write(dir.join(file), text).unwrap();
        let defines: &[&str] = if show { &["-DSHOW_VARS"] } else { &[] };
        build_and_run_with(&dir, file, defines)
    };
    for parallel in [false, true] {
        let recipe = Recipe {
            steps: vec![Step::TimeTile {
                at: 0,
                width: 5,
                depth: 3,
                parallel,
            }],
        };
        let (tuned, _) =
            ir::emit::apply_recipes(program, &[(whole.region, whole.root, recipe)]).unwrap();
        let out =
            ir::emit::tuned_source(text, &tuned, program, &[(whole.region, whole.root)]).unwrap();
        assert!(out.contains("time tile of 't'"), "{out}");
        assert!(out.contains("b[i * n + j] = 0.25"), "{out}");
        let show = !parallel;
        assert_eq!(
            run("tuned.c", &out, show),
            run("original.c", text, show),
            "{out}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `row_pointers.c` tuned with `recipe` on its weight update, `main` changed by `edit`:
/// the tuned file's output and the original's.
fn rows_tuned_and_original(name: &str, edit: &dyn Fn(&str) -> String) -> (String, String, String) {
    rows_tuned_with(
        name,
        edit,
        vec![
            Step::Interchange {
                at: 0,
                order: vec![1, 0],
            },
            parallel(0),
        ],
    )
}

/// [`rows_tuned_and_original`] with `steps` as the recipe.
fn rows_tuned_with(
    name: &str,
    edit: &dyn Fn(&str) -> String,
    steps: Vec<Step>,
) -> (String, String, String) {
    let src = format!(
        "{}/../tests/fixtures/user-style/row_pointers.c",
        env!("CARGO_MANIFEST_DIR")
    );
    let dir = std::env::temp_dir().join(format!("tune-rows-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = edit(&std::fs::read_to_string(&src).unwrap());
    let file = dir.join("rows.c");
    std::fs::write(&file, &text).unwrap();
    let parsed = ir::load(file.to_str().unwrap(), &ir::FrontendOptions::default()).unwrap();
    let program = &parsed.program;
    let nests = ir::codegen::nests(program);
    let update = nests
        .iter()
        .find(|n| program.regions[n.region].function == "adjust_weights")
        .unwrap();
    let recipes = vec![(update.region, update.root, Recipe { steps })];
    let (tuned, _) = ir::emit::apply_recipes(program, &recipes).unwrap();
    let out =
        ir::emit::tuned_source(&text, &tuned, program, &[(update.region, update.root)]).unwrap();
    // Each branch says when it runs (the program's own output is one line at the end).
    let at = out.find("if (tune_apart_oldw").unwrap();
    let open = at + out[at..].find("{\n").unwrap() + 2;
    let mut probe = out.clone();
    let orig = open + probe[open..].find("} else {\n").unwrap() + 9;
    probe.insert_str(orig, "puts(\"as written\");\n");
    probe.insert_str(open, "puts(\"changed\");\n");
    std::fs::write(dir.join("tuned.c"), &probe).unwrap();
    let defines = ["-std=c99", "-pedantic-errors", "-DIN=70", "-DOUT=50"];
    let got = build_and_run_with(&dir, "tuned.c", &defines);
    let want = build_and_run_with(&dir, "rows.c", &defines);
    std::fs::remove_dir_all(&dir).unwrap();
    (out, got, want)
}

/// The lines of `got` that the branches printed, and the rest.
fn branches(got: &str) -> (Vec<&str>, String) {
    let (said, rest): (Vec<&str>, Vec<&str>) = got
        .lines()
        .partition(|l| *l == "changed" || *l == "as written");
    let mut said = said;
    said.dedup();
    (said, rest.join("\n") + "\n")
}

#[test]
fn pointers_to_rows_are_indexed_as_written_and_a_changed_nest_runs_where_rows_stand_apart() {
    let (out, got, want) = rows_tuned_and_original("apart", &|t| t.to_string());
    let (said, rest) = branches(&got);
    assert_eq!((said, rest), (vec!["changed"], want));
    // The rows of both written pointers measured, in order and apart, and the ranges
    // of every pair compared; the user's nest as written otherwise.
    for needle in [
        "int tune_apart_w = 1;",
        "for (tune_r_oldw = 0; tune_r_oldw < (nly + 1); tune_r_oldw++) {",
        "tune_e = tune_s + (ndelta + 1) * sizeof **w;",
        "if (tune_apart_oldw && tune_apart_w && ",
        "(tune_hi_oldw <= tune_lo_w || tune_hi_w <= tune_lo_oldw)",
        "#pragma omp parallel for",
        "w[k][j] += new_dw;",
        "} else {",
    ] {
        assert!(out.contains(needle), "{needle} missing in:\n{out}");
    }
    let update = out.find("void adjust_weights").unwrap();
    assert!(
        out[update..]
            .find("for (int k = 0; k <= nly; k++)")
            .unwrap()
            < out[update..].find("for (int j = 1").unwrap()
    );
}

#[test]
fn rows_that_overlap_in_the_program_run_the_users_nest() {
    // Every row of `w` the same memory: the interchanged, parallel update would race
    // and reorder; the check sends the program to the user's nest.
    let shared = |t: &str| {
        t.replace(
            "  float **oldw = alloc_rows(IN + 1, OUT + 1);",
            "  float **oldw = alloc_rows(IN + 1, OUT + 1);\n  for (i = 1; i <= IN; i++)\n    w[i] = w[0];",
        )
        // Its rows are freed once.
        .replace("  free_rows(w, IN + 1);", "  free(w);")
    };
    let (out, got, want) = rows_tuned_and_original("overlap", &shared);
    assert!(out.contains("tune_apart_w"), "{out}");
    let (said, rest) = branches(&got);
    assert_eq!((said, rest), (vec!["as written"], want));
}

#[test]
fn a_local_array_initialized_with_constants_is_assigned_and_its_loop_parallel() {
    // `float sum[BS] = {0.f};` in a blocked loop: the elements assigned after the
    // declaration, the array private to each block, so the block loop is parallel.
    let text = "#include <stdio.h>\n#define N 96\n#define BS 8\nfloat a[N][N], out[N];\n\
int main(void)\n{\n  int i, j, k;\n  for (i = 0; i < N; i++)\n    for (j = 0; j < N; j++)\n\
      a[i][j] = (float)((i + 2 * j) % 7);\n  for (i = 0; i < N; i += BS) {\n\
    float sum[BS] = {0.f};\n    float w[4] = {1.0f, -2.0f};\n    for (j = 0; j < N; j++)\n\
      for (k = 0; k < BS; k++)\n        sum[k] += a[i + k][j] * w[j % 2];\n\
    for (k = 0; k < BS; k++)\n      out[i + k] = sum[k] + w[3];\n  }\n\
  for (i = 0; i < N; i++)\n    printf(\"%.1f\\n\", out[i]);\n  return 0;\n}\n";
    let parsed = load_text("init.c", text, ir::FrontendOptions::default());
    let program = &parsed.program;
    let nests = ir::codegen::nests(program);
    assert_eq!(nests.len(), 2, "{:?}", program.regions[0].body);
    let root = program.find_loop(nests[1].region, nests[1].root).unwrap();
    assert_eq!(root.kind, ir::program::LoopKind::Map);
    let assigned: Vec<String> = root
        .body
        .iter()
        .filter_map(|n| match n {
            ir::program::Node::Assign(a) => Some(ir::print::expr(&a.target)),
            _ => None,
        })
        .collect();
    assert_eq!(assigned.len(), 12);
    assert_eq!(assigned[0], "sum[0]");
    assert_eq!(assigned[11], "w[3]");
    let n = &nests[1];
    let recipe = Recipe {
        steps: vec![parallel(0)],
    };
    let (tuned, _) = ir::emit::apply_recipes(program, &[(n.region, n.root, recipe)]).unwrap();
    let out = ir::emit::tuned_source(text, &tuned, program, &[(n.region, n.root)]).unwrap();
    assert!(out.contains("#pragma omp parallel for"), "{out}");
    let dir = std::env::temp_dir().join(format!("tune-init-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("init.c"), text).unwrap();
    std::fs::write(dir.join("tuned.c"), &out).unwrap();
    assert_eq!(
        build_and_run_with(&dir, "tuned.c", &[]),
        build_and_run_with(&dir, "init.c", &[])
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_users_parallel_loop_directive_moves_with_an_interchange_to_the_new_outer_loop() {
    // The user's `omp parallel for` (continued over two lines) on the column loop: the
    // interchange puts it, as written, on the row loop, which carries no dependence.
    let with_directive = |t: &str| {
        t.replace(
            "  ly[0] = 1.0f;\n  for (j = 1; j <= ndelta; j++) {",
            "  ly[0] = 1.0f;\n#pragma omp parallel for shared(w, oldw) \\\n    private(j, k, new_dw)\n  for (j = 1; j <= ndelta; j++) {",
        )
    };
    let interchange = vec![Step::Interchange {
        at: 0,
        order: vec![1, 0],
    }];
    let (out, got, want) = rows_tuned_with("directive", &with_directive, interchange);
    assert!(
        out.contains("#pragma omp parallel for shared(w, oldw) private(j, k, new_dw)\n  for (int k = 0; k <= nly; k++) {")
            || out.contains("#pragma omp parallel for shared(w, oldw) private(j, k, new_dw)\n  for (k = 0; k <= nly; k++) {"),
        "{out}"
    );
    // The user's two lines are replaced, not left above the check.
    assert_eq!(out.matches("#pragma omp parallel for").count(), 2, "{out}");
    assert!(!out.contains("\\\n    private(j, k, new_dw)\n  {"), "{out}");
    let (said, rest) = branches(&got);
    assert_eq!((said, rest), (vec!["changed"], want));
}

#[test]
fn a_changed_nest_on_a_line_with_other_code_keeps_the_check_in_its_reprinted_function() {
    // The nest shares its line with a statement: the function is printed anew, and the
    // changed nest still runs only where the rows stand apart.
    let one_line = |t: &str| {
        t.replace(
            "  ly[0] = 1.0f;\n  for (j = 1; j <= ndelta; j++) {",
            "  ly[0] = 1.0f; for (j = 1; j <= ndelta; j++) {",
        )
    };
    let (out, got, want) = rows_tuned_and_original("oneline", &one_line);
    assert!(out.contains("if (tune_apart_oldw && tune_apart_w"), "{out}");
    assert!(!out.contains("ly[0] = 1.0f; for"), "printed anew:\n{out}");
    let (said, rest) = branches(&got);
    assert_eq!((said, rest), (vec!["changed"], want));
}

#[test]
fn pointers_of_one_name_in_two_functions_are_two_arrays_spelled_as_written() {
    // `w` is a flat row in one function and rows in the other; `d` has other extents
    // in each. The later function's are arrays of their own (named apart inside), and
    // the tuned file, its nest functions and its checks spell them `w` and `d`.
    let text = "#include <stdio.h>\n#include <stdlib.h>\n\
void scale(float *w, float *d, int m)\n{\n  int i;\n  for (i = 0; i <= m; i++)\n    w[i] = 2.0f * d[i];\n}\n\
void update(float **w, float *d, int n, int m)\n{\n  int j, k;\n  for (j = 0; j < m; j++)\n    for (k = 0; k < n; k++)\n      w[k][j] += d[j] * (float)k;\n}\n\
int main(void)\n{\n  int i, j;\n  float **w = malloc(50 * sizeof(float *));\n  float row[41], d[41];\n  double s = 0.0;\n\
  for (i = 0; i < 50; i++) {\n    w[i] = malloc(30 * sizeof(float));\n    for (j = 0; j < 30; j++)\n      w[i][j] = (float)(i - j);\n  }\n\
  for (i = 0; i < 41; i++)\n    d[i] = (float)i / 41.0f;\n  scale(row, d, 40);\n  update(w, d, 50, 30);\n\
  for (i = 0; i < 50; i++)\n    for (j = 0; j < 30; j++)\n      s += w[i][j];\n  printf(\"%.3f %.3f\\n\", s, row[40]);\n  return 0;\n}\n";
    let parsed = load_text("twice.c", text, ir::FrontendOptions::default());
    let program = &parsed.program;
    let kinds: Vec<(String, bool, Option<String>)> = program
        .arrays
        .iter()
        .filter(|a| a.pointer())
        .map(|a| (a.name.clone(), a.rows, a.source.clone()))
        .collect();
    assert!(kinds.contains(&("w".into(), false, None)), "{kinds:?}");
    assert!(
        kinds.contains(&("w__tune1".into(), true, Some("w".into()))),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&("d__tune1".into(), false, Some("d".into()))),
        "{kinds:?}"
    );
    let nests = ir::codegen::nests(program);
    let n = nests
        .iter()
        .find(|n| program.regions[n.region].function == "update")
        .unwrap();
    assert_eq!(n.arrays, ["w__tune1", "d__tune1"]);
    let f = ir::codegen::nest_function(program, &program.regions[n.region], n, Default::default());
    assert!(
        f.contains("float **w") && f.contains("w[k][j] += d[j]"),
        "{f}"
    );
    let recipe = Recipe {
        steps: vec![
            Step::Interchange {
                at: 0,
                order: vec![1, 0],
            },
            parallel(0),
        ],
    };
    let (tuned, _) = ir::emit::apply_recipes(program, &[(n.region, n.root, recipe)]).unwrap();
    let out = ir::emit::tuned_source(text, &tuned, program, &[(n.region, n.root)]).unwrap();
    assert!(!out.contains("__tune1["), "{out}");
    assert!(out.contains("(const char *)w[tune_r_w__tune1]"), "{out}");
    let dir = std::env::temp_dir().join(format!("tune-twice-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("twice.c"), text).unwrap();
    std::fs::write(dir.join("tuned.c"), &out).unwrap();
    assert_eq!(
        build_and_run_with(&dir, "tuned.c", &[]),
        build_and_run_with(&dir, "twice.c", &[])
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_checks_timers_wrap_each_changed_nest_in_both_files_and_nothing_else() {
    // The changed nest is the body of an `if` without braces: the timers must stay
    // inside it. The second nest is not changed and gets no timer.
    let text = "void f(int n, double *a, double *b) {\n  int i, j;\n  if (n > 1)\n    for (i = 0; i < n; i++)\n      for (j = 0; j < n; j++)\n        a[i * n + j] = 2.0 * b[i * n + j];\n  for (i = 0; i < n; i++)\n    b[i * n] = 3.0 * a[i * n];\n}\n";
    let parsed = load_text(
        "timers.c",
        text,
        ir::FrontendOptions {
            function: Some("f".into()),
            ..Default::default()
        },
    );
    let program = &parsed.program;
    let n = &ir::codegen::nests(program)[0];
    let recipe = Recipe {
        steps: vec![parallel(0)],
    };
    let (tuned, _) =
        ir::emit::apply_recipes(program, &[(n.region, n.root, recipe.clone())]).unwrap();
    let (was, now) = ir::emit::timed_sources(
        text,
        &tuned,
        program,
        &[(n.region, n.root)],
        "enter();",
        "leave();",
    )
    .unwrap();
    // The user's file: the nest's own lines in a block between the timers.
    let nest = "    for (i = 0; i < n; i++)\n      for (j = 0; j < n; j++)\n        a[i * n + j] = 2.0 * b[i * n + j];\n";
    assert_eq!(
        was,
        text.replace(nest, &format!("{{ enter();\n{nest}leave(); }}\n"))
    );
    // The tuned file: what `tune apply` writes, with the same block around its nest.
    let written = tuned_text(text, program, recipe);
    assert_eq!(was.matches("enter();").count(), 1);
    assert_eq!(now.matches("enter();").count(), 1);
    let block = now
        .split("{ enter();\n")
        .nth(1)
        .and_then(|rest| rest.split("leave(); }\n").next())
        .unwrap();
    assert!(block.contains("#pragma omp parallel for"), "{now}");
    assert_eq!(
        now.replace("{ enter();\n", "").replace("leave(); }\n", ""),
        written
    );
    // The `if` still governs the whole block.
    assert!(now.contains("if (n > 1)\n{ enter();\n"), "{now}");
}

#[test]
fn a_changed_nest_in_the_users_parallel_block_is_timed_inside_it() {
    let (text, parsed) = omp_region();
    let program = &parsed.program;
    let n = &ir::codegen::nests(program)[0];
    let recipe = Recipe {
        steps: vec![Step::Unroll { at: 1, factor: 2 }],
    };
    let (tuned, _) = ir::emit::apply_recipes(program, &[(n.region, n.root, recipe)]).unwrap();
    // Each thread of the user's team times its part of the worksharing loop: the
    // timers stand inside the user's region, around the loop and its own directive.
    let (was, now) = ir::emit::timed_sources(
        &text,
        &tuned,
        program,
        &[(n.region, n.root)],
        "enter();",
        "leave();",
    )
    .unwrap();
    for t in [&was, &now] {
        assert_eq!(t.matches("#pragma omp parallel").count(), 1, "{t}");
        let region = t.split("#pragma omp parallel").nth(1).unwrap();
        assert!(region.contains("{ enter();\n#pragma omp for\n"), "{t}");
        assert_eq!(t.matches("enter();").count(), 1, "{t}");
    }
}

#[test]
fn a_register_tile_over_malloced_rows_is_printed_with_the_users_one_subscript() {
    // A product into `c[i * n + j]` (a pointer read as rows of n): the register tile's
    // kernel reads the band's shape from the rows, and the tuned file indexes the
    // pointers with one subscript, as the user wrote them. With a team and without,
    // the tuned file prints what the original prints.
    let text = r#"#include <stdio.h>
#include <stdlib.h>

static void product(int n, const double *a, const double *b, double *c)
{
  int i, j, k;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      c[i * n + j] = 0.0;
      for (k = 0; k < n; k++)
        c[i * n + j] += a[i * n + k] * b[k * n + j];
    }
}

int main(void)
{
  int n = 45, k;
  double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n);
  double *c = malloc(sizeof(double) * n * n);
  double s = 0;
  for (k = 0; k < n * n; k++) {
    a[k] = (k % 7) * 0.5;
    b[k] = (k % 5) * 0.25;
  }
  product(n, a, b, c);
  for (k = 0; k < n * n; k++)
    s += c[k] * (k % 3 + 1);
  printf("%.17g\n", s);
  free(a);
  free(b);
  free(c);
  return 0;
}
"#;
    let dir = std::env::temp_dir().join(format!("tune-flat-rt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let parsed = load_text("product.c", text, ir::FrontendOptions::default());
    let program = &parsed.program;
    assert!(program.array("c").unwrap().flat);
    for parallel in [false, true] {
        let out = tuned_text(
            text,
            program,
            Recipe {
                steps: vec![Step::RegisterTile {
                    at: 0,
                    mr: 4,
                    nr: 8,
                    mc: 16,
                    kc: 32,
                    nc: 64,
                    parallel,
                }],
            },
        );
        assert!(out.contains("register tile 4x8 of 'c[i * n + j]'"), "{out}");
        assert!(!out.contains("]["), "{out}");
        std::fs::write(dir.join("tuned.c"), &out).unwrap();
        std::fs::write(dir.join("original.c"), text).unwrap();
        assert_eq!(
            build_and_run_with(&dir, "tuned.c", &[]),
            build_and_run_with(&dir, "original.c", &[]),
            "{out}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
