//! A legal recipe never changes results: random recipes on every dataset program
//! (MINI) are either refused by legality, or build, run and produce outputs equal to
//! the original's (within the float tolerance of `profiling::npy::compare`).
//! Recipes draw from every step kind (interchange, one- and two-level tiling,
//! parallelization with collapse, simd with widths, unrolling, unroll-and-jam, scalar
//! replacement, fission, fusion, skewing, register and time tiles).

use datasets::{Preset, Suite};
use ir::transform::{apply, Recipe, Refusal, Schedule, Step};
use profiling::build::Toolchain;
use profiling::cutout::{Cutout, Verdict};
use profiling::measure::Measure;
use std::time::Duration;
use tune_e2e::{strings, tune};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn random_step(rng: &mut Rng, loops: usize) -> Step {
    let at = rng.below(loops);
    match rng.below(13) {
        0 => {
            let m = 2 + rng.below(2);
            let mut order: Vec<usize> = (0..m).collect();
            for i in (1..m).rev() {
                order.swap(i, rng.below(i + 1));
            }
            Step::Interchange { at, order }
        }
        1 => {
            let m = 1 + rng.below(3);
            let sizes: Vec<i64> = (0..m).map(|_| [2, 4, 8, 16, 32][rng.below(5)]).collect();
            let inner = if rng.below(3) == 0 {
                sizes.iter().map(|s| s / 2).collect()
            } else {
                Vec::new()
            };
            Step::Tile { at, sizes, inner }
        }
        2 => Step::Parallelize {
            at,
            schedule: if rng.below(2) == 0 {
                Schedule::Static
            } else {
                Schedule::Dynamic
            },
            chunk: [None, Some(1), Some(4)][rng.below(3)],
            collapse: [None, None, Some(2)][rng.below(3)],
        },
        3 => Step::Vectorize {
            at,
            width: [None, None, Some(4)][rng.below(3)],
        },
        4 => Step::Unroll {
            at,
            factor: [2, 4, 8][rng.below(3)],
        },
        // Factor 3 leaves remainders at the MINI sizes.
        5 | 6 => Step::UnrollJam {
            at,
            factor: [2, 3, 4][rng.below(3)],
        },
        7 | 8 => Step::ScalarReplace { at },
        9 => Step::Fission { at },
        10 => Step::Fuse { at },
        // Small tiles and blocks: partial tiles and blocks at the MINI sizes.
        11 => Step::RegisterTile {
            at,
            mr: [2, 3, 4][rng.below(3)],
            nr: [2, 4, 8][rng.below(3)],
            mc: 8,
            kc: [4, 8][rng.below(2)],
            nc: 16,
            parallel: rng.below(2) == 0,
        },
        // Time tiles apply at a time loop of sweeps (seidel-2d's nest): odd sizes,
        // pipelined or not.
        _ if rng.below(4) == 0 => Step::TimeTile {
            at,
            width: [3, 8][rng.below(2)],
            depth: [2, 5][rng.below(2)],
            parallel: rng.below(2) == 0,
        },
        _ => Step::Skew {
            at,
            factor: 1 + rng.below(2) as i64,
        },
    }
}

/// Dry run at MINI, then the program, its nests and a cutout per nest.
fn setup(name: &str, dir: &std::path::Path) -> Vec<Cutout> {
    setup_with(name, dir, false)
}

/// The cutouts of the whole nests of `name` (top-level loops whose sequential loops
/// hold nests), after those of its nests with `wholes`.
fn setup_with(name: &str, dir: &std::path::Path, wholes: bool) -> Vec<Cutout> {
    let suite = Suite::core().unwrap();
    let p = suite.program(name).unwrap();
    let mut args = strings(&["run", "--quiet", "--save-versions", "1"]);
    if wholes {
        args.push("--whole-nests".into());
    }
    args.extend(suite.args(p, Preset::Mini));
    assert_eq!(tune(&args, dir).code, 0, "{name}");
    let opts = ir::FrontendOptions {
        flags: vec![Preset::Mini.flag()],
        ..Default::default()
    };
    let parsed = ir::load(&suite.path_of(p).display().to_string(), &opts).unwrap();
    let data = dir
        .join(".tunecache")
        .join(&parsed.program.name)
        .join("data");
    let mut nests = ir::codegen::nests(&parsed.program);
    if wholes {
        nests.extend(ir::codegen::whole_nests(&parsed.program, &nests));
    }
    nests
        .into_iter()
        .map(|n| {
            Cutout::new(
                parsed.program.clone(),
                n,
                data.clone(),
                vec!["-ffp-contract=off".into()],
            )
        })
        .collect()
}

fn run(c: &Cutout, recipe: &Recipe, dir: &std::path::Path) -> Result<Verdict, Refusal> {
    let t = apply(&c.program, c.nest.region, c.nest.root, recipe)?;
    assert!(
        ir::verify::verify(&t.program).is_empty(),
        "verifier rejects {recipe:?}"
    );
    let v = c.variant("recipe", &t);
    let m = Measure::default().warmup(0).repetitions(1).counters(&[]);
    let (r, _) = c
        .measure(
            &Toolchain::default(),
            &v,
            0,
            &m,
            Duration::from_secs(20),
            &dir.join("builds"),
            &dir.join("scratch"),
        )
        .unwrap();
    Ok(r.verdict)
}

#[test]
fn random_recipes_are_refused_or_verified_on_every_program() {
    let suite = Suite::core().unwrap();
    let mut rng = Rng(0x2545F4914F6CDD1D);
    let (mut applied, mut refused) = (0, 0);
    let mut failures = Vec::new();
    for p in &suite.programs {
        let dir = tempfile::tempdir().unwrap();
        for c in setup(&p.name, dir.path()) {
            let region = &c.program.regions[c.nest.region];
            let root = ir::program::loops(&region.body)
                .into_iter()
                .find(|l| l.id == c.nest.root)
                .unwrap();
            let loops = 1 + ir::program::loops(&root.body).len();
            // One recipe per nest, built step by step: each step is drawn up to three
            // times until the recipe so far applies; every refused draw counts.
            let mut recipe = Recipe::default();
            for _ in 0..1 + rng.below(3) {
                for _ in 0..3 {
                    recipe.steps.push(random_step(&mut rng, loops));
                    match apply(&c.program, c.nest.region, c.nest.root, &recipe) {
                        Ok(_) => break,
                        Err(_) => {
                            refused += 1;
                            recipe.steps.pop();
                        }
                    }
                }
            }
            if recipe.steps.is_empty() {
                continue;
            }
            match run(&c, &recipe, dir.path()) {
                Err(r) => failures.push(format!("{} {}: {recipe:?}: {r}", p.name, c.nest.name)),
                Ok(Verdict::Verified) => applied += 1,
                Ok(other) => failures.push(format!(
                    "{} {}: {recipe:?}: {}",
                    p.name,
                    c.nest.name,
                    other.describe()
                )),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("recipes: {applied} applied and verified, {refused} refused");
    assert!(
        applied >= 30,
        "too few recipes applied: {applied} (refused {refused})"
    );
}

#[test]
fn interchanging_a_gauss_seidel_sweep_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let c = setup("seidel-2d", dir.path()).remove(0);
    // The nest is t { i { j } }: swapping i and j reverses A[i-1][j+1] -> A[i][j].
    let r = Recipe {
        steps: vec![Step::Interchange {
            at: 1,
            order: vec![1, 0],
        }],
    };
    match apply(&c.program, c.nest.region, c.nest.root, &r) {
        Err(Refusal::Illegal { why, .. }) => assert!(why.contains("Lt, Gt"), "{why}"),
        other => panic!("{:?}", other.map(|t| t.root)),
    }
    // Tiling the sweep is illegal for the same reason; parallelizing any loop too.
    let tile = Recipe {
        steps: vec![Step::Tile {
            at: 1,
            sizes: vec![8, 8],
            inner: vec![],
        }],
    };
    assert!(matches!(
        apply(&c.program, c.nest.region, c.nest.root, &tile),
        Err(Refusal::Illegal { .. })
    ));
    let par = Recipe {
        steps: vec![Step::Parallelize {
            at: 2,
            schedule: Schedule::Static,
            chunk: None,
            collapse: None,
        }],
    };
    assert!(matches!(
        apply(&c.program, c.nest.region, c.nest.root, &par),
        Err(Refusal::Illegal { .. })
    ));
}

#[test]
fn gemm_tiled_interchanged_and_parallel_still_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let c = setup("gemm", dir.path()).remove(0);
    // Nest: i(0) { j(1); k(2) { j(3) } }. Tile the k-j band, parallelize i.
    let r = Recipe {
        steps: vec![
            Step::Tile {
                at: 2,
                sizes: vec![8, 16],
                inner: vec![],
            },
            Step::Parallelize {
                at: 0,
                schedule: Schedule::Static,
                chunk: None,
                collapse: None,
            },
            Step::Vectorize { at: 5, width: None },
        ],
    };
    let t = apply(&c.program, c.nest.region, c.nest.root, &r).unwrap();
    let source = c.variant("tiled", &t).source;
    assert!(
        source.contains("#pragma omp parallel for schedule(static)"),
        "{source}"
    );
    assert!(
        source.contains("k_t += 8") && source.contains("j_t += 16"),
        "{source}"
    );
    assert!(source.contains("#pragma omp simd"), "{source}");
    assert_eq!(run(&c, &r, dir.path()).unwrap(), Verdict::Verified);
    // i-k-j to k-i-j is not a perfect band here (i holds two loops): refused.
    let bad = Recipe {
        steps: vec![Step::Interchange {
            at: 0,
            order: vec![1, 0],
        }],
    };
    assert!(matches!(
        apply(&c.program, c.nest.region, c.nest.root, &bad),
        Err(Refusal::NotApplicable { .. })
    ));
}

#[test]
fn triangular_bands_tile_by_their_bounding_box_and_stencil_bands_tile() {
    let dir = tempfile::tempdir().unwrap();
    let lu = setup("lu", dir.path());
    // lu's first nest is the single loop k < j: no band of two.
    let r = Recipe {
        steps: vec![Step::Tile {
            at: 0,
            sizes: vec![4, 4],
            inner: vec![],
        }],
    };
    assert!(matches!(
        apply(&lu[0].program, lu[0].nest.region, lu[0].nest.root, &r),
        Err(Refusal::NotApplicable { .. })
    ));
    // syrk's i { j <= i } band: tiles cover the bounding square, points keep j <= i.
    let syrk = setup("syrk", dir.path()).remove(0);
    let r = Recipe {
        steps: vec![Step::Tile {
            at: 0,
            sizes: vec![8, 4],
            inner: vec![],
        }],
    };
    let t = apply(&syrk.program, syrk.nest.region, syrk.nest.root, &r).unwrap();
    let source = syrk.variant("tri", &t).source;
    assert!(
        source.contains("j < (j_t + 4 < i + 1 ? j_t + 4 : i + 1)"),
        "{source}"
    );
    assert_eq!(run(&syrk, &r, dir.path()).unwrap(), Verdict::Verified);
    let j2 = setup("jacobi-2d", dir.path());
    let r = Recipe {
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
        ],
    };
    assert_eq!(run(&j2[0], &r, dir.path()).unwrap(), Verdict::Verified);
}

#[test]
fn register_tiled_gemm_still_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let c = setup("gemm", dir.path()).remove(0);
    // i { j; k { j } } -> i { j; j { k } } -> k-j tiles -> rows by 4 jammed into every
    // loop -> four accumulators in the point k loop -> simd on the scaling loop.
    // NI = 20 rows: with 3 rows per block the remainder runs too.
    for rows in [4, 3] {
        let r = Recipe {
            steps: vec![
                Step::Interchange {
                    at: 2,
                    order: vec![1, 0],
                },
                Step::Tile {
                    at: 2,
                    sizes: vec![8, 16],
                    inner: vec![],
                },
                Step::UnrollJam {
                    at: 0,
                    factor: rows,
                },
                Step::ScalarReplace { at: 5 },
                Step::Vectorize {
                    at: 1,
                    width: Some(4),
                },
            ],
        };
        let t = apply(&c.program, c.nest.region, c.nest.root, &r).unwrap();
        let source = c.variant("regtile", &t).source;
        let last = rows - 1;
        assert!(
            source.contains(&format!("i += {rows}"))
                && source.contains(&format!("if (i + {last} < ni)"))
                && source.contains("#pragma omp simd simdlen(4)")
                && source.contains(&format!("C_s{last} += alpha * A[i + {last}][k] * B[k][j];")),
            "{source}"
        );
        assert_eq!(run(&c, &r, dir.path()).unwrap(), Verdict::Verified, "{r:?}");
    }
}

#[test]
fn new_steps_verify_on_their_programs() {
    let dir = tempfile::tempdir().unwrap();
    // seidel-2d skewed to a fully permutable band, tiled as a parallelogram.
    let seidel = setup("seidel-2d", dir.path()).remove(0);
    let r = Recipe {
        steps: vec![
            Step::Skew { at: 0, factor: 2 },
            Step::Skew { at: 1, factor: 1 },
            Step::Tile {
                at: 0,
                sizes: vec![4, 8, 8],
                inner: vec![],
            },
        ],
    };
    assert_eq!(run(&seidel, &r, dir.path()).unwrap(), Verdict::Verified);
    // The sweep's own order cannot be jammed.
    let uj = Recipe {
        steps: vec![Step::UnrollJam { at: 0, factor: 2 }],
    };
    assert!(matches!(
        apply(&seidel.program, seidel.nest.region, seidel.nest.root, &uj),
        Err(Refusal::Illegal { .. })
    ));
    // 2mm: j by 3 jammed into k (a declared accumulator per copy, remainder 18 % 3 = 0
    // and 16 rows of i by 3 leave one), two-level tiles of i-j, collapse(2).
    let mm = setup("2mm", dir.path());
    let r = Recipe {
        steps: vec![
            Step::UnrollJam { at: 1, factor: 3 },
            Step::UnrollJam { at: 0, factor: 3 },
        ],
    };
    assert_eq!(run(&mm[0], &r, dir.path()).unwrap(), Verdict::Verified);
    // 2mm's second nest: both parallel loops collapsed, D[i][j] kept in a scalar over
    // k; then two-level tiles of the i-j band.
    let r = Recipe {
        steps: vec![
            Step::Parallelize {
                at: 0,
                schedule: Schedule::Static,
                chunk: None,
                collapse: Some(2),
            },
            Step::ScalarReplace { at: 2 },
        ],
    };
    let t = apply(&mm[1].program, mm[1].nest.region, mm[1].nest.root, &r).unwrap();
    assert!(t.openmp && t.root.directives[0].to_string().contains("collapse(2)"));
    assert_eq!(run(&mm[1], &r, dir.path()).unwrap(), Verdict::Verified);
    let r = Recipe {
        steps: vec![Step::Tile {
            at: 0,
            sizes: vec![8, 8],
            inner: vec![4, 2],
        }],
    };
    assert_eq!(run(&mm[1], &r, dir.path()).unwrap(), Verdict::Verified);
    // syrk: j split into the scaling and the update, then the update's k loop keeps
    // C[i][j] in a scalar.
    let syrk = setup("syrk", dir.path()).remove(0);
    let r = Recipe {
        steps: vec![Step::Fission { at: 1 }, Step::ScalarReplace { at: 3 }],
    };
    assert_eq!(run(&syrk, &r, dir.path()).unwrap(), Verdict::Verified);
    // doitgen: the whole r loop is one parallel nest once each iteration has its own
    // copy of the work row sum[]; the last iteration gives it back (sum is an output).
    let doitgen = setup("doitgen", dir.path());
    assert_eq!(doitgen.len(), 1);
    let r = Recipe {
        steps: vec![Step::Parallelize {
            at: 0,
            schedule: Schedule::Static,
            chunk: None,
            collapse: None,
        }],
    };
    let t = apply(
        &doitgen[0].program,
        doitgen[0].nest.region,
        doitgen[0].nest.root,
        &r,
    )
    .unwrap();
    assert!(t.openmp && t.root.var == "r");
    assert_eq!(run(&doitgen[0], &r, dir.path()).unwrap(), Verdict::Verified);
    // atax: the i loop adds every row's share to all of y[]: parallel with a reduction
    // over the whole array.
    let atax = setup("atax", dir.path());
    let r = Recipe {
        steps: vec![Step::Parallelize {
            at: 0,
            schedule: Schedule::Static,
            chunk: None,
            collapse: None,
        }],
    };
    let t = apply(&atax[1].program, atax[1].nest.region, atax[1].nest.root, &r).unwrap();
    assert!(t.root.directives[0]
        .to_string()
        .contains("reduction(+:y[0:"));
    assert_eq!(run(&atax[1], &r, dir.path()).unwrap(), Verdict::Verified);
}

#[test]
fn vector_register_tiles_with_packed_panels_verify() {
    // gemm's i { j: C *= beta; k { j: C += alpha * A * B } }: the scaling runs first for
    // every row, then the blocked kernel. MINI's 20 x 25 x 30 with 3 x 4 tiles in
    // 6 x 8 x 8 blocks leaves partial tiles and blocks on every edge.
    let dir = tempfile::tempdir().unwrap();
    let tile = |at, parallel| Step::RegisterTile {
        at,
        mr: 3,
        nr: 4,
        mc: 6,
        kc: 8,
        nc: 8,
        parallel,
    };
    let c = setup("gemm", dir.path()).remove(0);
    for parallel in [false, true] {
        let r = Recipe {
            steps: vec![tile(0, parallel)],
        };
        let t = apply(&c.program, c.nest.region, c.nest.root, &r).unwrap();
        assert_eq!(t.openmp, parallel);
        let source = c.variant("regtile", &t).source;
        assert!(
            source.contains("register tile 3x4 of 'C[i][j]', blocks 6x8x8")
                && source.contains("vector_size(32)")
                && source.contains(
                    "tune_rt_c2[tune_rt_x] = tune_rt_c2[tune_rt_x] + tune_rt_p0 * tune_rt_b0[tune_rt_x];"
                )
                && source.contains("tune_rt_dst[0] = alpha * A[i][k];")
                && source.contains("tune_rt_dst[0] = B[k][j];")
                // A whole tile over C's contiguous rows is loaded and stored as vectors.
                && source.contains("tune_rt_full = &C[i][j] - tune_rt_q == 4 - 1;")
                && source.contains("#pragma omp parallel\n") == parallel,
            "{source}"
        );
        assert_eq!(run(&c, &r, dir.path()).unwrap(), Verdict::Verified, "{r:?}");
    }
    // After it, no step may change a loop of the band.
    let r = Recipe {
        steps: vec![tile(0, false), Step::Unroll { at: 3, factor: 2 }],
    };
    let e = apply(&c.program, c.nest.region, c.nest.root, &r).unwrap_err();
    assert!(e.to_string().contains("register tile of loop 'i'"), "{e}");
    // 2mm's `s = 0; for k: s += alpha * A * B; tmp = s` (a scalar accumulator, kept in a
    // buffer over (i, j) meanwhile, its store run after the kernel) and `D *= beta;
    // for k: D += tmp * C` (the scaling first); 3mm's three products, one of each form.
    // syrk's `j <= i` and covariance's `j >= i` (its statements after the k loop
    // divide and mirror): triangles, run over their bounding box, stored inside;
    // syr2k's triangle sums two products per step; trmm's reduction starts after the
    // row (`k = i + 1`) and reads B's row k, which the band writes later.
    let triangles = ["syrk", "covariance", "syr2k"];
    for (program, tiled) in [
        ("2mm", 2),
        ("3mm", 3),
        ("syrk", 1),
        ("covariance", 1),
        ("syr2k", 1),
        ("trmm", 1),
    ] {
        let mut n = 0;
        // trmm's row loop carries a dependence (row i reads the rows after it): the
        // band is its whole nest.
        for c in setup_with(program, dir.path(), program == "trmm") {
            let r = Recipe {
                steps: vec![tile(0, true)],
            };
            let Ok(t) = apply(&c.program, c.nest.region, c.nest.root, &r) else {
                continue;
            };
            n += 1;
            let source = c.variant("regtile", &t).source;
            assert_eq!(
                source.contains("tune_rt_w["),
                source.contains("register tile 3x4 of 's'"),
                "{source}"
            );
            assert_eq!(
                source.contains("if (tune_rt_any)"),
                triangles.contains(&program),
                "{source}"
            );
            // Whole tiles go as vectors; a triangle's only where its four corners are
            // inside (the diagonal crosses the others).
            assert!(source.contains("int tune_rt_full"), "{source}");
            assert_eq!(
                source.contains("tune_rt_jb + 1 * (4 - 1); if (!("),
                triangles.contains(&program),
                "{source}"
            );
            assert_eq!(
                source.contains(
                    "(tune_rt_p0 * tune_rt_b0[tune_rt_x] + tune_rt_p1 * tune_rt_b1[tune_rt_x])"
                ),
                program == "syr2k",
                "{source}"
            );
            // trmm's `k = i + 1` and its product reading B's row k: the row factor
            // packs zeros outside the reduction, rows without a step in a block are
            // neither computed nor stored, row blocks are dealt in turn.
            assert_eq!(
                source.contains("if (!(k >= (i + 1) && k < (m))) { tune_rt_dst[0] = 0; }")
                    && source.contains("schedule(static, 1)")
                    && source.contains("continue;"),
                program == "trmm",
                "{source}"
            );
            assert_eq!(
                run(&c, &r, dir.path()).unwrap(),
                Verdict::Verified,
                "{program} {r:?}"
            );
        }
        assert_eq!(n, tiled, "{program}");
    }
    // A product that reads what it writes is refused (lu's row update reads A).
    let lu = setup("lu", dir.path());
    for c in &lu {
        let e = apply(
            &c.program,
            c.nest.region,
            c.nest.root,
            &Recipe {
                steps: vec![tile(0, false)],
            },
        )
        .unwrap_err();
        assert!(matches!(e, Refusal::NotApplicable { .. }), "{e}");
    }
}

#[test]
fn time_tiles_verify_on_the_stencils() {
    // Each stencil's time loop is its whole nest (seidel-2d's, a nest): tiles of odd
    // and even sizes, blocks that do not divide the steps, with one team (seidel-2d's
    // blocks pipelined) and without, give the original's outputs bit for bit (each
    // point computes as before). adi's sweeps share scalars across their rows: refused,
    // with why.
    let dir = tempfile::tempdir().unwrap();
    for (program, skew, sweeps) in [
        ("jacobi-1d", 1, 2),
        ("jacobi-2d", 1, 2),
        ("heat-3d", 1, 2),
        ("fdtd-2d", 1, 4),
        ("seidel-2d", 1, 1),
        ("adi", 0, 0),
    ] {
        let cutouts = setup_with(program, dir.path(), true);
        let whole = cutouts
            .iter()
            .find(|c| {
                let root = c.program.find_loop(c.nest.region, c.nest.root).unwrap();
                root.var == "t"
            })
            .unwrap_or_else(|| panic!("{program}: no nest of the time loop"));
        let root = whole
            .program
            .find_loop(whole.nest.region, whole.nest.root)
            .unwrap();
        let site = ir::transform::time_tile_site(root, &whole.program.arrays);
        if program == "adi" {
            assert!(site.is_none(), "{program}: {site:?}");
            let r = Recipe {
                steps: vec![Step::TimeTile {
                    at: 0,
                    width: 4,
                    depth: 2,
                    parallel: false,
                }],
            };
            let err = apply(&whole.program, whole.nest.region, whole.nest.root, &r).unwrap_err();
            assert!(
                matches!(&err, Refusal::NotApplicable { why, .. } if why.contains("scalar 'den'")),
                "{err}"
            );
            continue;
        }
        let site = site.unwrap_or_else(|| panic!("{program}: no time tile site"));
        assert_eq!((site.skew, site.sweeps), (skew, sweeps), "{program}");
        assert_eq!(site.parallel, program != "seidel-2d", "{program}");
        // The last size with the innermost parallel loops vectorized (jacobi-1d's row
        // loop itself: `omp for simd`).
        for (width, depth, parallel, simd) in [
            (3, 2, false, false),
            (8, 3, true, false),
            (5, 4, true, true),
        ] {
            let mut steps: Vec<Step> = if simd {
                site.maps
                    .iter()
                    .map(|&at| Step::Vectorize { at, width: None })
                    .collect()
            } else {
                Vec::new()
            };
            steps.push(Step::TimeTile {
                at: 0,
                width,
                depth,
                parallel,
            });
            let r = Recipe { steps };
            let t = apply(&whole.program, whole.nest.region, whole.nest.root, &r).unwrap();
            let source = whole.variant("timetile", &t).source;
            assert!(source.contains("time tile of"), "{source}");
            assert_eq!(
                source.contains("#pragma omp parallel\n"),
                parallel,
                "{source}"
            );
            // seidel-2d's sweep shares no rows: its blocks are pipelined.
            assert_eq!(
                source.contains("__atomic_load_n"),
                parallel && program == "seidel-2d",
                "{source}"
            );
            assert_eq!(
                source.contains("#pragma omp for simd"),
                program == "jacobi-1d" && simd,
                "{source}"
            );
            assert_eq!(
                run(whole, &r, dir.path()).unwrap(),
                Verdict::Verified,
                "{program} {r:?}"
            );
        }
    }
}
