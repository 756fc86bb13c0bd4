//! Generated programs (`datasets::synth`) are accepted by the frontend, verify, have
//! nests, and print through `tune run` exactly what the original prints; generation is
//! deterministic per seed.

use datasets::synth::{generate, write_suite, Family, SynthOptions};
use datasets::{Preset, Suite};
use tune_e2e::{cc_run, strings, tune};

const SEED: u64 = 20240611;
const COUNT: usize = 44;

/// Every family, the three drawn only when asked for included.
fn suite(dir: &std::path::Path) -> Suite {
    let programs = generate(&SynthOptions {
        seed: SEED,
        count: COUNT,
        families: Family::ALL.to_vec(),
        ..Default::default()
    });
    Suite::load(&write_suite(dir, &programs).unwrap()).unwrap()
}

#[test]
fn generated_programs_parse_verify_and_have_nests() {
    let dir = tempfile::tempdir().unwrap();
    let suite = suite(dir.path());
    assert_eq!(suite.programs.len(), COUNT);
    for f in Family::ALL {
        let n = suite
            .programs
            .iter()
            .filter(|p| p.family == f.name())
            .count();
        assert_eq!(n, COUNT / Family::ALL.len(), "{}", f.name());
    }
    let failures = frontend_failures(&suite, &[Preset::Mini, Preset::Medium]);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The families drawn only when asked for, in every kind they write: parsed and
/// verified at two sizes (a constant N lets the verifier check subscripts against
/// the extents, where interval programs read row i + 1 under j > i, and symmetric
/// products read the rows of the triangle right of the diagonal).
#[test]
fn families_drawn_when_asked_for_parse_and_verify_in_every_kind() {
    let dir = tempfile::tempdir().unwrap();
    let programs = generate(&SynthOptions {
        seed: SEED,
        count: 60,
        families: vec![Family::Contraction, Family::Path, Family::Symmetric],
        ..Default::default()
    });
    for kind in [
        "-temp-",
        "-mode3-",
        "-batched-",
        "-mttkrp-",
        "-floyd",
        "plus-",
        "-interval-",
        "-wavefront",
        "-symm-lower-",
        "-symm-upper-",
        "-symm-inplace",
        "-symv-",
        "-syr2k-acc-",
        "-gram-both",
    ] {
        assert!(
            programs.iter().any(|p| p.name.contains(kind)),
            "no {kind} program"
        );
    }
    let suite = Suite::load(&write_suite(dir.path(), &programs).unwrap()).unwrap();
    let failures = frontend_failures(&suite, &[Preset::Mini, Preset::Medium]);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every program that the frontend refuses, the verifier faults or that has no nest, at
/// each preset.
fn frontend_failures(suite: &Suite, presets: &[Preset]) -> Vec<String> {
    let mut failures = Vec::new();
    for preset in presets {
        for p in &suite.programs {
            let opts = ir::FrontendOptions {
                flags: vec![preset.flag()],
                ..Default::default()
            };
            match ir::load(&suite.path_of(p).display().to_string(), &opts) {
                Err(e) => failures.push(format!("{} ({}): {e}", p.name, preset.name())),
                Ok(parsed) => {
                    let problems = ir::verify::verify(&parsed.program);
                    if !problems.is_empty() {
                        failures.push(format!("{}: {}", p.name, problems.join("; ")));
                    }
                    if ir::codegen::nests(&parsed.program).is_empty() {
                        failures.push(format!("{}: no nest", p.name));
                    }
                }
            }
        }
    }
    failures
}

/// Training anchors its contrastive term on written programs
/// (`embeddings::embed::anchor_on_written`), telling them from generated ones by name:
/// every generated name must read as generated, and no program of the shipped suite.
#[test]
fn generated_names_read_as_generated_and_the_suites_do_not() {
    for p in generate(&SynthOptions {
        seed: SEED,
        count: COUNT,
        families: Family::ALL.to_vec(),
        ..Default::default()
    }) {
        assert!(embeddings::db::is_generated(&p.name), "{}", p.name);
    }
    let root = tune_e2e::workspace();
    let shipped = Suite::load(&root.join("datasets/suite.json")).unwrap();
    let mut written: Vec<String> = shipped.programs.iter().map(|p| p.name.clone()).collect();
    for dir in ["polybench-style", "user-style"] {
        for f in std::fs::read_dir(root.join("tests/fixtures").join(dir)).unwrap() {
            let path = f.unwrap().path();
            if path.extension().is_some_and(|x| x == "c") {
                written.push(path.file_stem().unwrap().to_string_lossy().into_owned());
            }
        }
    }
    assert!(written.len() > 30, "{written:?}");
    for w in &written {
        assert!(!embeddings::db::is_generated(w), "{w}");
    }
}

/// Every program at MINI, through `tune run`, prints what it prints when compiled
/// directly (both with `-ffp-contract=off`, see `datasets_match.rs`).
#[test]
fn generated_programs_match_the_original_through_tune_run() {
    let dir = tempfile::tempdir().unwrap();
    let suite = suite(dir.path());
    let programs: Vec<_> = suite.programs.iter().collect();
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for chunk in programs.chunks(programs.len().div_ceil(2)) {
            let suite = &suite;
            let failures = &failures;
            s.spawn(move || {
                for p in chunk {
                    let work = tempfile::tempdir().unwrap();
                    let args = suite.args(p, Preset::Mini);
                    let want = cc_run(&args, &["-ffp-contract=off"], work.path());
                    let mut targs = strings(&["run", "--quiet", "-ffp-contract=off"]);
                    targs.extend(args.iter().cloned());
                    let got = tune(&targs, work.path());
                    let dumped = String::from_utf8_lossy(&want.stderr).contains(" fnv=");
                    if want.code != 0 || !dumped || got != want {
                        failures.lock().unwrap().push(format!(
                            "{}: tune exit {} vs {}; stderr: {}",
                            p.name,
                            got.code,
                            want.code,
                            got.stderr_text().lines().next().unwrap_or("")
                        ));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn generation_is_deterministic_per_seed() {
    let opts = |seed| SynthOptions {
        seed,
        count: COUNT,
        ..Default::default()
    };
    let a = generate(&opts(SEED));
    assert_eq!(a, generate(&opts(SEED)));
    // the code, not only the header comment that names the seed, differs
    let code = |p: &datasets::synth::SynthProgram| -> String {
        p.source.lines().skip(2).collect::<Vec<_>>().join("\n")
    };
    let b = generate(&opts(SEED + 1));
    let differing = a.iter().zip(&b).filter(|(x, y)| code(x) != code(y)).count();
    assert!(
        differing > COUNT * 3 / 4,
        "only {differing} programs differ"
    );

    // written suites are byte-identical too
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_suite(d1.path(), &a).unwrap();
    write_suite(d2.path(), &a).unwrap();
    for p in &a {
        let f = format!("programs/{}", p.file_name());
        assert_eq!(
            std::fs::read(d1.path().join(&f)).unwrap(),
            std::fs::read(d2.path().join(&f)).unwrap()
        );
    }
    assert_eq!(
        std::fs::read(d1.path().join("suite.json")).unwrap(),
        std::fs::read(d2.path().join("suite.json")).unwrap()
    );
}
