//! Measurements are exclusive across processes: two `tune profile` commands started at
//! once on fdtd-2d at MINI (81 program runs each: a cutout run per version of its nests,
//! which overlap when nothing keeps them apart) take turns on the machine-wide lock, and no program run of one
//! overlaps a program run of the other (each logs its runs through `TUNE_MEASURE_LOG`,
//! in `CLOCK_MONOTONIC` nanoseconds, which every process of the machine shares). A lock
//! folder that cannot be used leaves the command measuring, with one warning.

use datasets::{Preset, Suite};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use tune_e2e::{strings, tune_bin};

/// `tune profile` of `name` at MINI in `dir`, logging its runs to `log`, the lock in
/// `lock_dir`.
fn profile(name: &str, dir: &Path, lock_dir: &Path, log: &Path) -> Child {
    let suite = Suite::core().unwrap();
    let p = suite.program(name).unwrap();
    let mut args = strings(&[
        "profile",
        "--json",
        "--no-roofline",
        "--counters",
        "none",
        "--warmup",
        "0",
        "--repetitions",
        "3",
    ]);
    args.extend(suite.args(p, Preset::Mini));
    Command::new(tune_bin())
        .args(&args)
        .current_dir(dir)
        .env_remove("TUNE_CACHE")
        .env("TUNE_LOCK_DIR", lock_dir)
        .env("TUNE_MEASURE_LOG", log)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tune starts")
}

/// The `(start, end)` intervals of a log, all of one process.
fn intervals(log: &Path) -> Vec<(u64, u64)> {
    let text = std::fs::read_to_string(log).unwrap();
    let mut pids = std::collections::BTreeSet::new();
    let runs: Vec<(u64, u64)> = text
        .lines()
        .map(|l| {
            let f: Vec<u64> = l.split(' ').map(|x| x.parse().unwrap()).collect();
            assert_eq!(f.len(), 3, "{l}");
            assert!(f[1] <= f[2], "{l}");
            pids.insert(f[0]);
            (f[1], f[2])
        })
        .collect();
    assert_eq!(pids.len(), 1, "{}", log.display());
    runs
}

#[test]
fn program_runs_of_two_processes_never_overlap() {
    let dir = tempfile::tempdir().unwrap();
    let (a_dir, b_dir, locks) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("locks"),
    );
    for d in [&a_dir, &b_dir, &locks] {
        std::fs::create_dir(d).unwrap();
    }
    let (a_log, b_log) = (dir.path().join("a.log"), dir.path().join("b.log"));
    let a = profile("fdtd-2d", &a_dir, &locks, &a_log);
    let b = profile("fdtd-2d", &b_dir, &locks, &b_log);
    for (name, child) in [("a", a), ("b", b)] {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (a_runs, b_runs) = (intervals(&a_log), intervals(&b_log));
    // Dry runs, and a cutout run per version of each nest.
    assert!(a_runs.len() >= 40, "{a_runs:?}");
    assert!(b_runs.len() >= 40, "{b_runs:?}");
    for &(s, e) in &a_runs {
        for &(t, f) in &b_runs {
            assert!(
                e <= t || f <= s,
                "a run of one process ({s}..{e}) overlaps one of the other ({t}..{f})"
            );
        }
    }
    // The two took turns, rather than one waiting for the other to finish everything.
    let mut order: Vec<(u64, char)> = a_runs.iter().map(|r| (r.0, 'a')).collect();
    order.extend(b_runs.iter().map(|r| (r.0, 'b')));
    order.sort();
    let turns = order.windows(2).filter(|w| w[0].1 != w[1].1).count();
    let order: String = order.iter().map(|r| r.1).collect();
    assert!(turns >= 10, "{turns} turns: {order}");
}

#[test]
fn a_lock_folder_that_cannot_be_used_warns_once_and_still_measures() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("runs.log");
    let out = profile(
        "gemm",
        dir.path(),
        &dir.path().join("no").join("such").join("folder"),
        &log,
    )
    .wait_with_output()
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(
        err.matches("machine-wide lock").count(),
        1,
        "one warning: {err}"
    );
    assert!(intervals(&log).len() >= 2);
}
