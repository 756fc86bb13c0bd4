//! Re-fitting recipes by loop role: a recipe found on one nest lands on the loops
//! that play the same roles in another nest, whatever their names, order or positions.

mod common;

use ir::canonical::{canonical_order, describe, refit, roles};
use ir::codegen::nests;
use ir::program::LoopKind;
use ir::transform::{apply, Recipe, Schedule, Step};

fn load_dataset(name: &str) -> ir::Program {
    let path = format!(
        "{}/../datasets/programs/{name}.c",
        env!("CARGO_MANIFEST_DIR")
    );
    let fopts = ir::FrontendOptions {
        flags: vec!["-DMINI_DATASET".into()],
        ..Default::default()
    };
    ir::load(&path, &fopts).unwrap().program
}

/// `#pragma omp parallel for` on the outermost loop.
fn parallel_outer() -> Step {
    Step::Parallelize {
        at: 0,
        schedule: Schedule::Static,
        chunk: None,
        collapse: None,
    }
}

fn load_text(name: &str, text: &str) -> ir::Program {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{name}.c"));
    std::fs::write(&path, text).unwrap();
    ir::load(&path.display().to_string(), &Default::default())
        .unwrap()
        .program
}

/// A matrix product written with other names, the output's column loop outermost.
const JIK: &str = "
double X[40][50], Y[40][60], Z[60][50];
void f(void) {
#pragma scop
  for (int b = 0; b < 50; b++)
    for (int a = 0; a < 40; a++)
      for (int c = 0; c < 60; c++)
        X[a][b] += Y[a][c] * Z[c][b];
#pragma endscop
}
";

/// The textbook i-j-k matrix product.
const IJK: &str = "
double C[30][20], A[30][10], B[10][20];
void mm(void) {
#pragma scop
  for (int i = 0; i < 30; i++)
    for (int j = 0; j < 20; j++)
      for (int k = 0; k < 10; k++)
        C[i][j] += A[i][k] * B[k][j];
#pragma endscop
}
";

#[test]
fn roles_of_a_matrix_product() {
    let p = load_dataset("2mm");
    let n = &nests(&p)[1];
    let root = ir::program::loops(&p.regions[n.region].body)
        .into_iter()
        .find(|l| l.id == n.root)
        .unwrap()
        .clone();
    let r = roles(&root);
    // D[i][j] += tmp[i][k] * C[k][j]: i walks the rows, j the unit-stride columns,
    // k is the reduction.
    assert_eq!(r.len(), 3);
    assert_eq!((r[0].out_dim, r[0].kind), (Some(1), LoopKind::Map));
    assert_eq!((r[1].out_dim, r[1].kind), (Some(0), LoopKind::Map));
    assert_eq!((r[2].out_dim, r[2].kind), (None, LoopKind::Reduction));
    assert!(r[1].unit_stride && r[2].unit_stride && !r[0].unit_stride);
    assert!(r[2].innermost && !r[0].innermost);
    // Canonical order: rows, then the reduction, then the unit-stride columns.
    assert_eq!(canonical_order(&root), vec![0, 2, 1]);
}

#[test]
fn a_recipe_moves_to_the_loops_with_the_same_roles() {
    let src = load_text("ijk", IJK);
    let n = &nests(&src)[0];
    let recipe = Recipe {
        steps: vec![
            Step::Interchange {
                at: 0,
                order: vec![0, 2, 1],
            },
            parallel_outer(),
            Step::Vectorize { at: 2, width: None },
        ],
    };
    let described = describe(&src, n.region, n.root, &recipe).unwrap();
    // The description survives JSON (it is what the database stores).
    let text = serde_json::to_string(&described).unwrap();
    let described: ir::canonical::RoleRecipe = serde_json::from_str(&text).unwrap();

    let dst = load_text("jik", JIK);
    let m = &nests(&dst)[0];
    let fitted = refit(&described, &dst, m.region, m.root);
    // The rows loop a plays the recipe's outermost role only once the nest is in stride
    // order, so the fit starts there, and the recipe's own interchange has nothing left
    // to do.
    assert_eq!(
        fitted.dropped,
        vec![(0, "the loops are already in that order".to_string())]
    );
    // b a c -> a c b: rows outermost and parallel, unit-stride b innermost with simd.
    assert_eq!(
        fitted.recipe.steps,
        vec![
            Step::Interchange {
                at: 0,
                order: vec![1, 2, 0],
            },
            parallel_outer(),
            Step::Vectorize { at: 2, width: None },
        ]
    );
    let t = apply(&dst, m.region, m.root, &fitted.recipe).unwrap();
    let vars: Vec<&str> = std::iter::once(&t.root)
        .chain(ir::program::loops(&t.root.body))
        .map(|l| l.var.as_str())
        .collect();
    assert_eq!(vars, ["a", "c", "b"]);
    assert!(t.root.directives[0]
        .to_string()
        .starts_with("#pragma omp parallel for"));
}

#[test]
fn the_same_nest_gets_the_same_recipe_back() {
    let p = load_dataset("gemm");
    let n = &nests(&p)[0];
    let recipe = Recipe {
        steps: vec![
            Step::Parallelize {
                at: 0,
                schedule: Schedule::Dynamic,
                chunk: Some(4),
                collapse: None,
            },
            Step::Vectorize { at: 3, width: None },
            Step::Vectorize { at: 1, width: None },
        ],
    };
    let d = describe(&p, n.region, n.root, &recipe).unwrap();
    let fitted = refit(&d, &p, n.region, n.root);
    assert_eq!(fitted.recipe, recipe);
}

#[test]
fn tile_sizes_are_fitted_to_trip_counts_and_misfits_are_dropped() {
    let src = load_text(
        "big",
        &JIK.replace("40", "400")
            .replace("50", "500")
            .replace("60", "600"),
    );
    let n = &nests(&src)[0];
    let recipe = Recipe {
        steps: vec![
            Step::Tile {
                at: 0,
                sizes: vec![64, 64, 128],
                inner: vec![],
            },
            // After tiling there are six loops; position 5 is the innermost point loop.
            Step::Unroll { at: 5, factor: 4 },
        ],
    };
    let d = describe(&src, n.region, n.root, &recipe).unwrap();
    assert!(d.steps[1].role.innermost && !d.steps[1].role.tile);
    let dst = load_text("jik", JIK);
    let m = &nests(&dst)[0];
    let fitted = refit(&d, &dst, m.region, m.root);
    // Trip counts 50, 40, 60: sizes larger than the loop shrink to the trip count.
    assert_eq!(
        fitted.recipe.steps[0],
        Step::Tile {
            at: 0,
            sizes: vec![50, 40, 60],
            inner: vec![],
        }
    );
    assert_eq!(fitted.recipe.steps[1], Step::Unroll { at: 5, factor: 4 });

    // Tiles of tiles: a shrunk outer size keeps an inner size that divides it (50 has
    // 25, 40 keeps 32's largest divisor 20, 60 keeps 30), and the recipe still applies.
    let two_level = Recipe {
        steps: vec![Step::Tile {
            at: 0,
            sizes: vec![64, 64, 128],
            inner: vec![32, 32, 32],
        }],
    };
    let d2 = describe(&src, n.region, n.root, &two_level).unwrap();
    let fitted = refit(&d2, &dst, m.region, m.root);
    assert!(fitted.dropped.is_empty(), "{:?}", fitted.dropped);
    assert_eq!(
        fitted.recipe.steps,
        vec![Step::Tile {
            at: 0,
            sizes: vec![50, 40, 60],
            inner: vec![25, 20, 30],
        }]
    );
    // A prime trip count has no divisor to offer: one level of tiles.
    let prime = load_text("prime", &JIK.replace("40", "37"));
    let q = &nests(&prime)[0];
    let fitted = refit(&d2, &prime, q.region, q.root);
    assert_eq!(
        fitted.recipe.steps,
        vec![Step::Tile {
            at: 0,
            sizes: vec![50, 37, 60],
            inner: vec![],
        }]
    );

    // A one-loop nest has no band of three: the tiling is dropped with its reason, the
    // rest still lands.
    let one = load_text(
        "one",
        "double v[100];\nvoid g(void) {\n#pragma scop\n  for (int i = 0; i < 100; i++)\n    v[i] = v[i] * 2.0;\n#pragma endscop\n}\n",
    );
    let o = &nests(&one)[0];
    let fitted = refit(&d, &one, o.region, o.root);
    assert_eq!(fitted.dropped.len(), 1);
    assert!(fitted.dropped[0].1.contains("band"), "{:?}", fitted.dropped);
    assert_eq!(fitted.recipe.steps, vec![Step::Unroll { at: 0, factor: 4 }]);
}

/// The nests of the core suite that are not written in stride order, and a recipe found
/// on each as written: it fits the nest as written again (parallel outermost), not the
/// stride order, whose outermost loop plays another role.
#[test]
fn a_nest_kept_in_its_written_order_gets_its_recipe_back_as_written() {
    let names = common::dataset_names();
    let mut reordered = Vec::new();
    for name in &names {
        let p = load_dataset(name);
        for n in nests(&p) {
            let o = ir::normalize::stride_ordered(&p, n.region, n.root).unwrap();
            if o.recipe.steps.is_empty() {
                continue;
            }
            reordered.push(format!("{name} {}", n.name));
            let recipe = Recipe {
                steps: vec![parallel_outer()],
            };
            let d = describe(&p, n.region, n.root, &recipe).unwrap();
            assert_eq!(refit(&d, &p, n.region, n.root).recipe, recipe, "{name}");
        }
    }
    assert_eq!(
        reordered,
        ["gemver nest1", "lu nest1", "mvt nest1", "syr2k nest0"]
    );
}

/// Every order of a matrix product gets the recipe found on the stride order i-k-j
/// (parallel rows, vector columns) after the interchange that restores that order.
#[test]
fn a_recipe_found_in_stride_order_fits_every_order_of_the_nest() {
    let ikj = "
double C[30][20], A[30][10], B[10][20];
void mm(void) {
#pragma scop
  for (int i = 0; i < 30; i++)
    for (int k = 0; k < 10; k++)
      for (int j = 0; j < 20; j++)
        C[i][j] += A[i][k] * B[k][j];
#pragma endscop
}
";
    let src = load_text("ikj", ikj);
    let n = &nests(&src)[0];
    let recipe = Recipe {
        steps: vec![parallel_outer(), Step::Vectorize { at: 2, width: None }],
    };
    let described = describe(&src, n.region, n.root, &recipe).unwrap();
    for (order, lines) in [
        ("kji", [2usize, 1, 0]),
        ("jik", [1, 0, 2]),
        ("kij", [2, 0, 1]),
    ] {
        let text = ikj.lines().collect::<Vec<_>>();
        let loops = [text[4], text[5], text[6]];
        let mut permuted: Vec<&str> = text[..4].to_vec();
        permuted.extend(lines.iter().map(|&l| loops[l]));
        permuted.extend(&text[7..]);
        let dst = load_text(order, &permuted.join("\n"));
        let m = &nests(&dst)[0];
        let fitted = refit(&described, &dst, m.region, m.root);
        assert!(fitted.dropped.is_empty(), "{order}: {:?}", fitted.dropped);
        assert!(
            matches!(fitted.recipe.steps[0], Step::Interchange { at: 0, .. }),
            "{order}: {:?}",
            fitted.recipe.steps
        );
        assert_eq!(&fitted.recipe.steps[1..], &recipe.steps[..], "{order}");
        let t = apply(&dst, m.region, m.root, &fitted.recipe).unwrap();
        let vars: Vec<&str> = std::iter::once(&t.root)
            .chain(ir::program::loops(&t.root.body))
            .map(|l| l.var.as_str())
            .collect();
        assert_eq!(vars, ["i", "k", "j"], "{order}");
    }
}
