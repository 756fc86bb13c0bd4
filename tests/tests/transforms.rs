//! A legal recipe never changes results: random recipes on every dataset program
//! (MINI) are either refused by legality, or build, run and produce outputs equal to
//! the original's (within the float tolerance of `profiling::npy::compare`).

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
    match rng.below(5) {
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
            Step::Tile {
                at,
                sizes: (0..m).map(|_| [2, 4, 8, 16, 32][rng.below(5)]).collect(),
            }
        }
        2 => Step::Parallelize {
            at,
            schedule: if rng.below(2) == 0 {
                Schedule::Static
            } else {
                Schedule::Dynamic
            },
            chunk: [None, Some(1), Some(4)][rng.below(3)],
        },
        3 => Step::Vectorize { at },
        _ => Step::Unroll {
            at,
            factor: [2, 4, 8][rng.below(3)],
        },
    }
}

/// Dry run at MINI, then the program, its nests and a cutout per nest.
fn setup(name: &str, dir: &std::path::Path) -> Vec<Cutout> {
    let suite = Suite::core().unwrap();
    let p = suite.program(name).unwrap();
    let mut args = strings(&["run", "--quiet", "--save-versions", "1"]);
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
    ir::codegen::nests(&parsed.program)
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
            for _ in 0..3 {
                let steps = (0..1 + rng.below(3))
                    .map(|_| random_step(&mut rng, loops))
                    .collect();
                let recipe = Recipe { steps };
                match run(&c, &recipe, dir.path()) {
                    Err(_) => refused += 1,
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
            },
            Step::Parallelize {
                at: 0,
                schedule: Schedule::Static,
                chunk: None,
            },
            Step::Vectorize { at: 5 },
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
fn triangular_bands_are_not_tiled_and_stencil_bands_are() {
    let dir = tempfile::tempdir().unwrap();
    let lu = setup("lu", dir.path());
    // lu's first nest is the triangular j { k < j } band: not rectangular.
    let r = Recipe {
        steps: vec![Step::Tile {
            at: 0,
            sizes: vec![4, 4],
        }],
    };
    assert!(matches!(
        apply(&lu[0].program, lu[0].nest.region, lu[0].nest.root, &r),
        Err(Refusal::NotApplicable { .. })
    ));
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
            },
        ],
    };
    assert_eq!(run(&j2[0], &r, dir.path()).unwrap(), Verdict::Verified);
}
