//! Snapshots of the C that each recipe step generates, and the refusals of steps that
//! do not apply or are illegal.
//! Update with `INSTA_UPDATE=always cargo test -p ir --test transform_snapshots`.

use ir::codegen::{nest_function_with, nests, CodegenOptions};
use ir::transform::{apply, Recipe, Refusal, Schedule, Step, Transformed};

fn load(program: &str) -> ir::Program {
    let path = format!(
        "{}/../datasets/programs/{program}.c",
        env!("CARGO_MANIFEST_DIR")
    );
    let fopts = ir::FrontendOptions {
        flags: vec!["-DMINI_DATASET".into()],
        ..Default::default()
    };
    ir::load(&path, &fopts).unwrap().program
}

/// A program of the text `text`, written as `name` under `dir`.
fn load_text(dir: &std::path::Path, name: &str, text: &str) -> ir::Program {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    ir::load(&path.display().to_string(), &Default::default())
        .unwrap()
        .program
}

fn try_apply(
    program: &str,
    nest: usize,
    steps: Vec<Step>,
) -> Result<(String, Transformed), Refusal> {
    let p = load(program);
    let n = nests(&p).remove(nest);
    let t = apply(&p, n.region, n.root, &Recipe { steps })?;
    let errors = ir::verify::verify(&t.program);
    assert!(errors.is_empty(), "{errors:?}");
    let c = nest_function_with(&t.program, &n, &t.root, CodegenOptions::default());
    Ok((c, t))
}

fn transformed(program: &str, nest: usize, steps: Vec<Step>) -> String {
    try_apply(program, nest, steps).unwrap().0
}

fn refusal(program: &str, nest: usize, steps: Vec<Step>) -> Refusal {
    match try_apply(program, nest, steps) {
        Err(r) => r,
        Ok((c, _)) => panic!("applied:\n{c}"),
    }
}

fn par(at: usize, collapse: Option<u32>) -> Step {
    Step::Parallelize {
        at,
        schedule: Schedule::Static,
        chunk: None,
        collapse,
    }
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
            sizes: vec![32, 64],
            inner: vec![],
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
            chunk: Some(4),
            collapse: None,
        }]
    ));
}

#[test]
fn vectorize_innermost() {
    insta::assert_snapshot!(transformed(
        "gemm",
        0,
        vec![Step::Vectorize { at: 3, width: None }]
    ));
}

#[test]
fn unroll() {
    insta::assert_snapshot!(transformed(
        "trisolv",
        0,
        vec![Step::Unroll { at: 0, factor: 4 }]
    ));
}

#[test]
fn unroll_and_jam_of_the_gemm_row_loop() {
    // i { j; k { j } }: four rows per iteration, jammed into both j loops and into k.
    let c = transformed("gemm", 0, vec![Step::UnrollJam { at: 0, factor: 4 }]);
    assert!(c.contains("i += 4") && c.contains("if (i + 3 < ni)"), "{c}");
    assert_eq!(
        c.matches("C[i + 3][j] += alpha * A[i + 3][k] * B[k][j];")
            .count(),
        1
    );
    insta::assert_snapshot!(c);
}

#[test]
fn unroll_and_jam_renames_declarations_per_copy() {
    // 2mm: j { double s = 0; k { s += ... }; tmp[i][j] = s; } by 2: s and s_1.
    let c = transformed("2mm", 0, vec![Step::UnrollJam { at: 1, factor: 2 }]);
    assert!(c.contains("double s_1 = 0.0;"), "{c}");
    assert!(c.contains("s_1 += alpha * A[i][k] * B[k][j + 1];"), "{c}");
    insta::assert_snapshot!(c);
}

#[test]
fn scalar_replacement_after_unroll_and_jam() {
    // i { j; j { k } } after the interchange; rows by 4, then four accumulators in k.
    let c = transformed(
        "gemm",
        0,
        vec![
            Step::Interchange {
                at: 2,
                order: vec![1, 0],
            },
            Step::UnrollJam { at: 0, factor: 4 },
            Step::ScalarReplace { at: 3 },
        ],
    );
    for r in ["C_s", "C_s1", "C_s2", "C_s3"] {
        assert!(c.contains(&format!("double {r};")), "{c}");
    }
    assert!(c.contains("C_s3 += alpha * A[i + 3][k] * B[k][j];"), "{c}");
    assert!(c.contains("C[i + 3][j] = C_s3;"), "{c}");
    insta::assert_snapshot!(c);
}

#[test]
fn scalar_replacement_in_a_reduction_loop() {
    let c = transformed(
        "gemm",
        0,
        vec![
            Step::Interchange {
                at: 2,
                order: vec![1, 0],
            },
            Step::ScalarReplace { at: 3 },
        ],
    );
    insta::assert_snapshot!(c);
}

#[test]
fn tile_with_a_second_level() {
    let c = transformed(
        "gemm",
        0,
        vec![Step::Tile {
            at: 2,
            sizes: vec![32, 64],
            inner: vec![8, 16],
        }],
    );
    assert!(c.contains("k_u += 8") && c.contains("j_u += 16"), "{c}");
    insta::assert_snapshot!(c);
}

#[test]
fn retiling_point_loops() {
    // The point loops of a first tiling (min-bounded) tile again.
    let c = transformed(
        "jacobi-2d",
        0,
        vec![
            Step::Tile {
                at: 0,
                sizes: vec![16, 16],
                inner: vec![],
            },
            Step::Tile {
                at: 2,
                sizes: vec![4, 4],
                inner: vec![],
            },
        ],
    );
    insta::assert_snapshot!(c);
}

#[test]
fn tile_a_triangular_band_by_its_bounding_box() {
    // syrk: i { j <= i { .. } }: j's tiles walk [0, n), its points stay below i + 1.
    insta::assert_snapshot!(transformed(
        "syrk",
        0,
        vec![Step::Tile {
            at: 0,
            sizes: vec![8, 4],
            inner: vec![],
        }]
    ));
}

#[test]
fn parallelize_with_collapse() {
    let c = transformed("jacobi-2d", 0, vec![par(0, Some(2))]);
    assert!(
        c.contains("#pragma omp parallel for collapse(2) schedule(static)"),
        "{c}"
    );
    insta::assert_snapshot!(c);
}

#[test]
fn vectorize_with_width() {
    let c = transformed(
        "gemm",
        0,
        vec![Step::Vectorize {
            at: 3,
            width: Some(4),
        }],
    );
    assert!(c.contains("#pragma omp simd simdlen(4)"), "{c}");
}

#[test]
fn fission_and_fusion_undo_each_other() {
    // syrk: i { j { C[i][j] *= beta; k { ... } } }: j splits in two, and fuses back.
    let split = transformed("syrk", 0, vec![Step::Fission { at: 1 }]);
    insta::assert_snapshot!(split);
    let original = transformed("syrk", 0, vec![]);
    let fused = transformed(
        "syrk",
        0,
        vec![Step::Fission { at: 1 }, Step::Fuse { at: 1 }],
    );
    assert_eq!(fused, original);
}

#[test]
fn skewed_seidel_tiles_as_a_parallelogram() {
    // (t, i, j) -> (t, i + 2t, j + i + 2t) makes the sweep fully permutable.
    let steps = vec![
        Step::Skew { at: 0, factor: 2 },
        Step::Skew { at: 1, factor: 1 },
        Step::Tile {
            at: 0,
            sizes: vec![4, 8, 8],
            inner: vec![],
        },
    ];
    let c = transformed("seidel-2d", 0, steps);
    insta::assert_snapshot!(c);
    // Unskewed, the same tiling is illegal.
    assert!(matches!(
        refusal(
            "seidel-2d",
            0,
            vec![Step::Tile {
                at: 0,
                sizes: vec![4, 8, 8],
                inner: vec![]
            }]
        ),
        Refusal::Illegal { .. }
    ));
}

#[test]
fn unroll_and_jam_refusals() {
    // seidel-2d: t { i { j } } carries (<, >, ..) and i carries (<, >): both illegal.
    for at in [0, 1] {
        match refusal("seidel-2d", 0, vec![Step::UnrollJam { at, factor: 2 }]) {
            Refusal::Illegal { why, .. } => assert!(why.contains("backwards"), "{why}"),
            other => panic!("{other:?}"),
        }
    }
    // A directive in the band.
    assert!(matches!(
        refusal(
            "gemm",
            0,
            vec![
                Step::Vectorize { at: 3, width: None },
                Step::UnrollJam { at: 0, factor: 2 },
            ]
        ),
        Refusal::NotApplicable { .. }
    ));
    // Factor out of range.
    assert!(matches!(
        refusal("gemm", 0, vec![Step::UnrollJam { at: 0, factor: 1 }]),
        Refusal::NotApplicable { .. }
    ));
}

#[test]
fn scalar_replacement_refusals() {
    // lu: j { k { A[i][j] -= A[i][k] * A[k][j] } }: A[i][j] stays fixed in k, but
    // A[i][k] may be the same element (the analysis does not use k < i <= j).
    match refusal("lu", 1, vec![Step::ScalarReplace { at: 1 }]) {
        Refusal::Illegal { why, .. } => {
            assert!(
                why.contains("A[i][k] may be the same element as A[i][j]"),
                "{why}"
            )
        }
        other => panic!("{other:?}"),
    }
    // The root has nowhere to put the load and the store.
    assert!(matches!(
        refusal("gemm", 0, vec![Step::ScalarReplace { at: 0 }]),
        Refusal::NotApplicable { .. }
    ));
    // gemm's k loop writes C[i][j] for every j: nothing stays fixed.
    assert!(matches!(
        refusal("gemm", 0, vec![Step::ScalarReplace { at: 2 }]),
        Refusal::NotApplicable { .. }
    ));
}

#[test]
fn tiling_collapse_and_simd_refusals() {
    // Inner sizes must divide the outer ones.
    assert!(matches!(
        refusal(
            "gemm",
            0,
            vec![Step::Tile {
                at: 2,
                sizes: vec![32, 64],
                inner: vec![12, 16],
            }]
        ),
        Refusal::NotApplicable { .. }
    ));
    // gemm's i holds two loops: no band of two to collapse.
    assert!(matches!(
        refusal("gemm", 0, vec![par(0, Some(2))]),
        Refusal::NotApplicable { .. }
    ));
    // i { j { k } } after the interchange: k is a reduction, not collapsible with j.
    assert!(matches!(
        refusal(
            "gemm",
            0,
            vec![
                Step::Interchange {
                    at: 2,
                    order: vec![1, 0]
                },
                par(2, Some(2)),
            ]
        ),
        Refusal::Illegal { .. }
    ));
    // No directive inside a collapsed band.
    assert!(matches!(
        refusal(
            "jacobi-2d",
            0,
            vec![par(0, Some(2)), Step::Vectorize { at: 1, width: None }]
        ),
        Refusal::NotApplicable { .. }
    ));
    assert!(matches!(
        refusal(
            "gemm",
            0,
            vec![Step::Vectorize {
                at: 3,
                width: Some(3)
            }]
        ),
        Refusal::NotApplicable { .. }
    ));
}

#[test]
fn fission_and_fusion_refusals() {
    // atax: i { tmp[i] = 0; j { tmp[i] += ... }; j { y[j] += A[i][j] * tmp[i] } }: the
    // second j loop needs all of tmp[i].
    match refusal("atax", 1, vec![Step::Fuse { at: 1 }]) {
        Refusal::Illegal { why, .. } => assert!(why.contains("'tmp'"), "{why}"),
        other => panic!("{other:?}"),
    }
    // adi: j { ..; i { den = ..; p[i][j] = -r / den; q[i][j] = .. q[i - 1][j] .. } }: den
    // and p[i - 1][j] tie the statements of the i loop together.
    assert!(matches!(
        refusal("adi", 0, vec![Step::Fission { at: 1 }]),
        Refusal::Illegal { .. }
    ));
    // A nest is one loop: its root does not split.
    assert!(matches!(
        refusal("gemm", 0, vec![Step::Fission { at: 0 }]),
        Refusal::NotApplicable { .. }
    ));
    // gemm: j is followed by k, whose header differs.
    assert!(matches!(
        refusal("gemm", 0, vec![Step::Fuse { at: 1 }]),
        Refusal::NotApplicable { .. }
    ));
}

#[test]
fn transformed_nests_do_the_same_work() {
    use ir::counts::nest_counts;
    use ir::interp::Env;
    // Flops and the elements read and written stay; scalar replacement only removes
    // loads and stores of C.
    type Case = (&'static str, Vec<(&'static str, i64)>, Vec<Step>);
    let cases: Vec<Case> = vec![
        (
            "gemm",
            vec![("ni", 20), ("nj", 25), ("nk", 30)],
            vec![
                Step::Interchange {
                    at: 2,
                    order: vec![1, 0],
                },
                Step::Tile {
                    at: 2,
                    sizes: vec![16, 8],
                    inner: vec![],
                },
                // i { if (full) { j; j_t { k_t { j { k } } } } else { i_r { .. } } }
                Step::UnrollJam { at: 0, factor: 3 },
                Step::ScalarReplace { at: 5 },
                Step::ScalarReplace { at: 11 },
            ],
        ),
        (
            "seidel-2d",
            vec![("tsteps", 5), ("n", 12)],
            vec![
                Step::Skew { at: 0, factor: 2 },
                Step::Skew { at: 1, factor: 1 },
                Step::Tile {
                    at: 0,
                    sizes: vec![2, 4, 4],
                    inner: vec![],
                },
            ],
        ),
        (
            "syrk",
            vec![("n", 30), ("m", 20)],
            vec![
                Step::Fission { at: 1 },
                Step::UnrollJam { at: 2, factor: 4 },
            ],
        ),
    ];
    for (name, sizes, steps) in cases {
        let p = load(name);
        let n = nests(&p).remove(0);
        let env = Env::from_pairs(&sizes);
        let before = nest_counts(&p, n.region, n.root, &env, u64::MAX).unwrap();
        let replaces = steps
            .iter()
            .any(|s| matches!(s, Step::ScalarReplace { .. }));
        let t = apply(&p, n.region, n.root, &Recipe { steps }).unwrap();
        let after = nest_counts(&t.program, n.region, t.root.id, &env, u64::MAX).unwrap();
        assert_eq!(
            (after.flops, after.bytes_read, after.bytes_written),
            (before.flops, before.bytes_read, before.bytes_written),
            "{name}"
        );
        if replaces {
            assert!(after.loads < before.loads, "{name}: {after:?} {before:?}");
        } else {
            assert_eq!(
                (after.loads, after.stores),
                (before.loads, before.stores),
                "{name}"
            );
        }
    }
}

#[test]
fn unroll_and_jam_refuses_a_declaration_that_shadows_a_used_name() {
    let text = "# 1 \"t.c\"\nvoid f(int n, double A[100][100], double x[100], double y[100]) {\n  int i, j;\n  double s = 0.0;\n#pragma scop\n  for (i = 0; i < n; i++) {\n    for (j = 0; j < n; j++) {\n      double s = A[i][j];\n      A[i][j] = s + 1.0;\n    }\n    y[i] = s;\n  }\n#pragma endscop\n}\n";
    let mut parsed =
        ir::frontend::parse_preprocessed(ir::source::Preprocessed::new("t.c", text.into()), None)
            .unwrap();
    ir::deps::annotate(&mut parsed.program);
    let p = parsed.program;
    // The i loop (id 0) as the nest: the analysis takes both s for one (sequential i).
    let r = Recipe {
        steps: vec![Step::UnrollJam { at: 0, factor: 2 }],
    };
    match apply(&p, 0, 0, &r) {
        Err(Refusal::NotApplicable { why, .. }) => assert!(why.contains("'s'"), "{why}"),
        other => panic!("{:?}", other.map(|t| t.root)),
    }
}

#[test]
fn parallelize_with_a_private_copy_of_a_work_row() {
    // doitgen: sum[] is written before it is read in every (r, q) iteration; the
    // parallel r loop gets its own copy, and the last iteration gives it back.
    insta::assert_snapshot!(transformed(
        "doitgen",
        0,
        vec![Step::Parallelize {
            at: 0,
            schedule: Schedule::Static,
            chunk: None,
            collapse: None,
        }]
    ));
}

#[test]
fn parallelize_a_reduction_loop_with_an_array_section() {
    // atax: every i adds its row's contribution to all of y[]: a reduction over the
    // whole array, one copy per thread.
    insta::assert_snapshot!(transformed(
        "atax",
        1,
        vec![Step::Parallelize {
            at: 0,
            schedule: Schedule::Static,
            chunk: None,
            collapse: None,
        }]
    ));
}

#[test]
fn vectorize_the_reductions_of_a_whole_nest() {
    // cholesky's row loop `i` holds two dot products over k: `A[i][j] -= A[i][k] *
    // A[j][k]` under j, and `A[i][i] -= A[i][k] * A[i][k]`. In the whole nest each
    // reduced element becomes a scalar (loaded before its loop, stored after), then
    // one partial sum per vector lane.
    use ir::transform::compose::{compose, reduction_parts};
    let p = load("cholesky");
    let n = nests(&p);
    let w = ir::codegen::whole_nests(&p, &n).remove(0);
    assert_eq!(w.name, "whole0");
    let root = p.find_loop(w.region, w.root).unwrap();
    let parts = reduction_parts(root);
    assert_eq!(
        parts.iter().map(|x| x.anchor).collect::<Vec<_>>(),
        vec![2, 3]
    );
    let (recipe, left_out) = compose(&p, w.region, w.root, &parts);
    assert!(left_out.is_empty(), "{left_out:?}");
    assert_eq!(
        recipe.steps,
        vec![
            Step::ScalarReplace { at: 3 },
            Step::Vectorize { at: 3, width: None },
            Step::ScalarReplace { at: 2 },
            Step::Vectorize { at: 2, width: None },
        ]
    );
    let t = apply(&p, w.region, w.root, &recipe).unwrap();
    assert!(ir::verify::verify(&t.program).is_empty());
    let c = nest_function_with(&t.program, &w, &t.root, CodegenOptions::default());
    assert_eq!(c.matches("#pragma omp simd reduction(+:").count(), 2, "{c}");
    insta::assert_snapshot!(c);
    // The element itself cannot be a lane's partial sum.
    let r = refusal("cholesky", 0, vec![Step::Vectorize { at: 0, width: None }]);
    assert!(r.to_string().contains("reduction over array 'A'"), "{r}");
}

/// The whole nest `k` of `program` (see `ir::codegen::whole_nests`).
fn whole(p: &ir::Program, k: usize) -> ir::codegen::Nest {
    ir::codegen::whole_nests(p, &nests(p)).remove(k)
}

#[test]
fn interchange_a_triangle_of_lu_into_row_updates() {
    // lu's row loop i: `for j < i { for k < j: A[i][j] -= A[i][k] * A[k][j];
    // A[i][j] /= A[j][j]; }` reads A[k][j] down a column; interchanged, each k divides
    // A[i][k] and updates the rest of the row with unit stride.
    let p = load("lu");
    let w = whole(&p, 0);
    let recipe = Recipe {
        steps: vec![Step::InterchangeTriangle { at: 1 }],
    };
    let t = apply(&p, w.region, w.root, &recipe).unwrap();
    assert!(ir::verify::verify(&t.program).is_empty());
    let c = nest_function_with(&t.program, &w, &t.root, CodegenOptions::default());
    insta::assert_snapshot!(c);
    // The new inner j loop is parallel (a row update), the outer k sequential.
    let k = &t.root.body[0];
    let ir::Node::Loop(k) = k else { panic!("{c}") };
    assert_eq!(k.var, "k");
    assert_eq!(k.kind, ir::LoopKind::Loop);
    let ir::Node::Loop(j) = &k.body[1] else {
        panic!("{c}")
    };
    assert_eq!((j.var.as_str(), j.kind), ("j", ir::LoopKind::Map));
}

#[test]
fn interchange_a_triangle_is_refused_where_the_diagonal_statement_feeds_an_earlier_k() {
    // T(j) writes x[0], which every later j reads at k = 0 < j: moving T(j) to the
    // diagonal k = j would put that write after those reads.
    let dir = tempfile::tempdir().unwrap();
    let p = load_text(
        dir.path(),
        "tri.c",
        "void f(int n, double x[100]) {\n  int j, k;\n#pragma scop\n  for (int r = 0; r < 2; r++)\n    for (j = 0; j < n; j++) {\n      for (k = 0; k < j; k++)\n        x[j] += x[k];\n      x[0] = x[j];\n    }\n#pragma endscop\n}\n",
    );
    let n = nests(&p);
    let w = ir::codegen::whole_nests(&p, &n);
    // r and j are sequential, k is a reduction: the whole nest is r.
    assert_eq!(w.len(), 1, "{n:?}");
    let r = apply(
        &p,
        w[0].region,
        w[0].root,
        &Recipe {
            steps: vec![Step::InterchangeTriangle { at: 1 }],
        },
    )
    .unwrap_err();
    assert!(matches!(r, Refusal::Illegal { .. }), "{r}");
    assert!(r.to_string().contains("'x' after loop 'k'"), "{r}");
    // Without the write to x[0] it is legal.
    let p = load_text(
        dir.path(),
        "tri.c",
        "void f(int n, double x[100]) {\n  int j, k;\n#pragma scop\n  for (int r = 0; r < 2; r++)\n    for (j = 0; j < n; j++) {\n      for (k = 0; k < j; k++)\n        x[j] += x[k];\n      x[j] = x[j] * 0.5;\n    }\n#pragma endscop\n}\n",
    );
    let w = ir::codegen::whole_nests(&p, &nests(&p));
    apply(
        &p,
        w[0].region,
        w[0].root,
        &Recipe {
            steps: vec![Step::InterchangeTriangle { at: 1 }],
        },
    )
    .unwrap();
    // Not a triangle: gemm's k does not run up to j.
    let g = load("gemm");
    let gn = nests(&g).remove(0);
    let r = apply(
        &g,
        gn.region,
        gn.root,
        &Recipe {
            steps: vec![Step::InterchangeTriangle { at: 0 }],
        },
    )
    .unwrap_err();
    assert!(matches!(r, Refusal::NotApplicable { .. }), "{r}");
}

#[test]
fn time_tile_of_fdtd_2d_with_one_team() {
    // fdtd-2d's time loop: the source row `ey[0][j] = src[t]` (a sweep at row 0), then
    // three sweeps over rows; `hz` reads `ey[i + 1]` two sweeps after `ey` is written,
    // and the next step's `ey` reads `hz[i - 1]`: the tiles lean one row per sweep.
    let p = load("fdtd-2d");
    let w = whole(&p, 0);
    let site =
        ir::transform::time_tile_site(p.find_loop(w.region, w.root).unwrap(), &p.arrays).unwrap();
    assert_eq!((site.sweeps, site.skew, site.parallel), (4, 1, true));
    let recipe = Recipe {
        steps: vec![Step::TimeTile {
            at: 0,
            width: 8,
            depth: 3,
            parallel: true,
        }],
    };
    let t = apply(&p, w.region, w.root, &recipe).unwrap();
    assert!(t.openmp && t.root.is_parallel_for());
    let c = nest_function_with(&t.program, &w, &t.root, CodegenOptions::default());
    insta::assert_snapshot!(c);
    // No later step reaches into the tile.
    let more = Recipe {
        steps: vec![recipe.steps[0].clone(), Step::Unroll { at: 2, factor: 2 }],
    };
    let r = apply(&p, w.region, w.root, &more).unwrap_err();
    assert!(
        r.to_string().contains("part of the time tile of loop 't'"),
        "{r}"
    );
}

#[test]
fn time_tile_refusals() {
    // A sweep that reads a written array along another subscript than its rows (a
    // transpose) cannot be skewed: refused, with the array named.
    let src = "#define N 16\n#define T 4\ndouble A[N][N], B[N][N];\nvoid k(void) {\n  int t, i, j;\n#pragma scop\n  for (t = 0; t < T; t++) {\n    for (i = 1; i < N - 1; i++)\n      for (j = 1; j < N - 1; j++)\n        B[i][j] = A[j][i] + A[i][j];\n    for (i = 1; i < N - 1; i++)\n      for (j = 1; j < N - 1; j++)\n        A[i][j] = B[i][j];\n  }\n#pragma endscop\n}\n";
    let dir = std::env::temp_dir().join(format!("tt-refusal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("transpose.c");
    std::fs::write(&path, src).unwrap();
    let p = ir::load(&path.display().to_string(), &ir::FrontendOptions::default())
        .unwrap()
        .program;
    std::fs::remove_dir_all(&dir).unwrap();
    let w = whole(&p, 0);
    let recipe = |parallel| Recipe {
        steps: vec![Step::TimeTile {
            at: 0,
            width: 4,
            depth: 2,
            parallel,
        }],
    };
    let r = apply(&p, w.region, w.root, &recipe(false)).unwrap_err();
    assert!(
        r.to_string()
            .contains("the first subscript of 'A' is not 'i' plus a constant"),
        "{r}"
    );
    // seidel-2d's one sweep carries its dependences along both loops: with a team,
    // its blocks are pipelined (a tile of the next block two tiles behind: the tiles
    // lean 1 x (2 - 1) rows, and reach one row either side).
    let s = load("seidel-2d");
    let n = nests(&s).remove(0);
    let t = apply(&s, n.region, n.root, &recipe(true)).unwrap();
    let c = nest_function_with(&t.program, &n, &t.root, CodegenOptions::default());
    assert!(c.contains("blocks pipelined over one team"), "{c}");
    assert!(
        c.contains(
            "tune_tt_need = (tune_tt_k - 1) * 1099511627776L + (tune_tt_b - tune_tt_b0) + 1 + 1;"
        ),
        "{c}"
    );
    assert!(!c.contains("omp for") && !c.contains("omp single"), "{c}");
    // Sizes out of range.
    let mut bad = recipe(false);
    bad.steps[0] = Step::TimeTile {
        at: 0,
        width: 0,
        depth: 2,
        parallel: false,
    };
    let r = apply(&s, n.region, n.root, &bad).unwrap_err();
    assert!(r.to_string().contains("1..=4096 rows"), "{r}");
}

#[test]
fn time_tile_sites_of_the_dataset_programs() {
    // Of the 29 dataset programs, the time loops of sweeps over rows are the stencils'
    // (seidel-2d's a nest, the others whole nests); lu's and the solvers' row loops
    // read rows other than their own (a pivot row, a column), adi's sweeps share
    // scalars across rows.
    let dir = format!("{}/../datasets/programs", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".c").map(str::to_string)
        })
        .collect();
    names.sort();
    assert_eq!(names.len(), 29);
    let mut sites = Vec::new();
    for name in &names {
        let p = load(name);
        let ns = nests(&p);
        let wholes = ir::codegen::whole_nests(&p, &ns);
        for n in ns.iter().chain(&wholes) {
            let root = p.find_loop(n.region, n.root).unwrap();
            if let Some(s) = ir::transform::time_tile_site(root, &p.arrays) {
                sites.push(format!(
                    "{name} {} {}x{} {}",
                    n.name, s.sweeps, s.skew, s.parallel
                ));
            }
        }
    }
    assert_eq!(
        sites,
        [
            "fdtd-2d whole0 4x1 true",
            "heat-3d whole0 2x1 true",
            "jacobi-1d whole0 2x1 true",
            "jacobi-2d whole0 2x1 true",
            "seidel-2d nest0 1x1 false",
        ]
    );
}

/// A factorization written with a temporary (`w = A[i][j]; for k: w -= ..;
/// A[i][j] = w / A[j][j]`), written here from Doolittle's method; `after` follows the
/// region in its function.
fn factorization_with_a_temporary(dir: &std::path::Path, inner: &str, after: &str) -> ir::Program {
    load_text(
        dir,
        "ludcmp_w.c",
        &format!(
            "void f(int n, double A[64][64]) {{\n  int i, j, k;\n  double w;\n#pragma scop\n  \
             for (i = 0; i < n; i++) {{\n    for (j = 0; j < i; j++) {{\n      w = A[i][j];\n      \
             for (k = 0; k < j; k++)\n        {inner}\n      A[i][j] = w / A[j][j];\n    }}\n    \
             for (j = i; j < n; j++) {{\n      w = A[i][j];\n      for (k = 0; k < i; k++)\n        \
             w -= A[i][k] * A[k][j];\n      A[i][j] = w;\n    }}\n  }}\n#pragma endscop\n{after}}}\n"
        ),
    )
}

#[test]
fn fold_the_temporary_of_a_factorization_into_its_element() {
    let dir = tempfile::tempdir().unwrap();
    let p = factorization_with_a_temporary(dir.path(), "w -= A[i][k] * A[k][j];", "");
    // Nobody reads w (nor n) after the region.
    assert_eq!(
        p.regions[0].dead_after,
        vec!["n".to_string(), "w".to_string()]
    );
    let w = whole(&p, 0);
    // w is dead after the whole nest: no output of it.
    assert_eq!(w.outputs, vec!["A".to_string()]);
    // i (0), j (1) { k (2) }, j (3) { k (4) }: the second j loop first, so that the
    // first keeps its position.
    let folds = vec![Step::FoldScalar { at: 3 }, Step::FoldScalar { at: 1 }];
    let t = apply(
        &p,
        w.region,
        w.root,
        &Recipe {
            steps: folds.clone(),
        },
    )
    .unwrap();
    assert!(ir::verify::verify(&t.program).is_empty());
    let c = nest_function_with(&t.program, &w, &t.root, CodegenOptions::default());
    insta::assert_snapshot!(c);
    assert!(!c.contains("w -=") && !c.contains("] = w"), "{c}");
    // Folded, it is lu: the triangle interchange and the reduction interchange apply.
    let mut steps = folds;
    steps.extend([
        Step::Interchange {
            at: 3,
            order: vec![1, 0],
        },
        Step::InterchangeTriangle { at: 1 },
    ]);
    apply(&p, w.region, w.root, &Recipe { steps }).unwrap();
    // The pipeline's whole-nest stage finds the folds.
    let parts =
        ir::transform::compose::fold_parts(p.find_loop(w.region, w.root).expect("the whole nest"));
    assert_eq!(
        parts.iter().map(|x| x.anchor).collect::<Vec<_>>(),
        vec![1, 3]
    );
}

#[test]
fn fold_scalar_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let fold = |p: &ir::Program| {
        let w = whole(p, 0);
        apply(
            p,
            w.region,
            w.root,
            &Recipe {
                steps: vec![Step::FoldScalar { at: 1 }],
            },
        )
    };
    // The loop reads the element itself: it would see the partial sum.
    let p = factorization_with_a_temporary(dir.path(), "w -= A[i][k] * A[k][j] + A[i][j];", "");
    let r = fold(&p).unwrap_err();
    assert!(matches!(r, Refusal::Illegal { .. }), "{r}");
    assert!(
        r.to_string().contains("A[i][j] may be the same element"),
        "{r}"
    );
    // The function reads w after the region.
    let p =
        factorization_with_a_temporary(dir.path(), "w -= A[i][k] * A[k][j];", "  A[0][0] = w;\n");
    assert_eq!(p.regions[0].dead_after, vec!["n".to_string()]);
    let r = fold(&p).unwrap_err();
    assert!(
        r.to_string().contains("may be read after the region"),
        "{r}"
    );
    // k + 1 <= j < i stays above row i; k + 2 reaches it (k = j - 1, j = i - 1).
    let p = factorization_with_a_temporary(dir.path(), "w -= A[i][k] * A[k + 1][j];", "");
    fold(&p).unwrap();
    let p = factorization_with_a_temporary(dir.path(), "w -= A[i][k] * A[k + 2][j];", "");
    let r = fold(&p).unwrap_err();
    assert!(
        r.to_string()
            .contains("A[k + 2][j] may be the same element"),
        "{r}"
    );
    // The store reads the element's old value another way: A[i][i] = w / A[i][i]
    // would divide by the folded sum.
    let p = load_text(
        dir.path(),
        "diag.c",
        "void f(int n, double A[64][64]) {\n  int i, k;\n  double w;\n#pragma scop\n  \
         for (i = 0; i < n; i++) {\n    w = A[i][i];\n    for (k = 0; k < i; k++)\n      \
         w -= A[i][k] * A[k][i];\n    A[i][i] = w / A[i][i];\n  }\n#pragma endscop\n}\n",
    );
    let n = &nests(&p);
    let r = apply(
        &p,
        n[0].region,
        n[0].root,
        &Recipe {
            steps: vec![Step::FoldScalar { at: 0 }],
        },
    )
    .unwrap_err();
    assert!(
        r.to_string().contains("A[i][i] may be the same element"),
        "{r}"
    );
    // A read after the folded loop that an earlier `w = ..` used to cover, and a
    // region that a loop of its function runs again: both refused.
    let fold_in = |name: &str, text: &str| {
        let p = load_text(dir.path(), name, text);
        // The region's loop over i, nest or not.
        let root = p.regions[0]
            .body
            .iter()
            .find_map(|n| match n {
                ir::Node::Loop(l) => Some(l.id),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{name}: {:?}", p.regions));
        apply(
            &p,
            0,
            root,
            &Recipe {
                steps: vec![Step::FoldScalar { at: 0 }],
            },
        )
    };
    let pattern =
        "    w = A[i][i];\n    for (k = 0; k < i; k++)\n      w -= A[i][k] * A[i][k];\n    \
                   A[i][i] = w * 0.5;\n";
    let r = fold_in(
        "later.c",
        &format!(
            "void f(int n, double A[64][64], double B[64]) {{\n  int i, k;\n  double w;\n\
             #pragma scop\n  w = 0.0;\n  for (i = 0; i < n; i++) {{\n{pattern}    B[i] = w;\n  }}\n\
             #pragma endscop\n}}\n"
        ),
    )
    .unwrap_err();
    assert!(r.to_string().contains("a read of 'w' may see"), "{r}");
    let again = load_text(
        dir.path(),
        "again.c",
        &format!(
            "void f(int n, double A[64][64], double B[64]) {{\n  int t;\n  double w = 0;\n\
             for (t = 0; t < 2; t++) {{\n  int i, k;\n  B[t] = w;\n#pragma scop\n  for (i = 0; i < n; i++) {{\n\
             {pattern}  }}\n#pragma endscop\n  }}\n}}\n"
        ),
    );
    assert!(
        again.regions[0].dead_after.is_empty(),
        "{:?}",
        again.regions[0].dead_after
    );
    // Where nothing matches the pattern.
    let g = load("gemm");
    let gn = nests(&g).remove(0);
    let r = apply(
        &g,
        gn.region,
        gn.root,
        &Recipe {
            steps: vec![Step::FoldScalar { at: 0 }],
        },
    )
    .unwrap_err();
    assert!(matches!(r, Refusal::NotApplicable { .. }), "{r}");
}

#[test]
fn a_maximum_is_reduced_by_the_team_with_the_max_operator() {
    let dir = tempfile::tempdir().unwrap();
    let p = load_text(
        dir.path(),
        "sweep.c",
        "#include <math.h>\ndouble sweep(int n, double *a, double *b)\n{\n  double err = 0.0;\n  for (int i = 1; i < n - 1; i++)\n    for (int j = 1; j < n - 1; j++) {\n      b[i * n + j] = 0.25 * (a[i * n + j - 1] + a[i * n + j + 1] + a[(i - 1) * n + j] + a[(i + 1) * n + j]);\n      err = fmax(err, fabs(b[i * n + j] - a[i * n + j]));\n    }\n  return err;\n}\n",
    );
    let n = nests(&p).remove(0);
    let t = apply(
        &p,
        n.region,
        n.root,
        &Recipe {
            steps: vec![par(0, None)],
        },
    )
    .unwrap();
    assert!(ir::verify::verify(&t.program).is_empty());
    let c = nest_function_with(&t.program, &n, &t.root, CodegenOptions::default());
    assert!(
        c.contains("#pragma omp parallel for schedule(static) reduction(max:err)"),
        "{c}"
    );
    let v = apply(
        &p,
        n.region,
        n.root,
        &Recipe {
            steps: vec![Step::Vectorize { at: 1, width: None }],
        },
    )
    .unwrap();
    let c = nest_function_with(&v.program, &n, &v.root, CodegenOptions::default());
    assert!(c.contains("#pragma omp simd reduction(max:err)"), "{c}");
}
