//! Every dataset program, at MINI and SMALL, prints exactly what the original prints
//! when run through `tune run`: stdout, stderr and exit code, byte for byte.
//!
//! Both sides are built with `-ffp-contract=off`: with contraction on, gcc may fuse a
//! multiply and an add into an FMA in one build and not in the other (the generated
//! nest functions are separate functions), which changes last digits (2mm and syrk).

use datasets::{Preset, Suite};
use tune_e2e::{cc_run, strings, tune};

fn check(preset: Preset, tune_flags: &[&str]) {
    let suite = Suite::core().unwrap();
    let programs: Vec<_> = suite.programs.iter().collect();
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for chunk in programs.chunks(programs.len().div_ceil(2)) {
            let suite = &suite;
            let failures = &failures;
            s.spawn(move || {
                for p in chunk {
                    let dir = tempfile::tempdir().unwrap();
                    let args = suite.args(p, preset);
                    let want = cc_run(&args, &["-ffp-contract=off"], dir.path());
                    let mut targs = strings(&["run", "--quiet", "-ffp-contract=off"]);
                    targs.extend(tune_flags.iter().map(|s| s.to_string()));
                    targs.extend(args.iter().cloned());
                    let got = tune(&targs, dir.path());
                    if got != want {
                        failures.lock().unwrap().push(format!(
                            "{} {}: tune exit {} vs {}; stderr: {}",
                            p.name,
                            preset.name(),
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
fn mini_outputs_match_the_original() {
    check(Preset::Mini, &[]);
}

#[test]
fn small_outputs_match_the_original() {
    check(Preset::Small, &[]);
}

/// With `--openmp` the outermost parallel loops run on several threads: a loop wrongly
/// called parallel would show up as a different result.
#[test]
fn small_outputs_match_with_openmp_on_parallel_loops() {
    check(Preset::Small, &["--openmp"]);
}
