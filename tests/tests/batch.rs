//! `tune batch` over the whole shipped dataset at SMALL with two jobs: killed with
//! SIGKILL (its whole process group: compilers and programs in flight too) at a random
//! moment and resumed, it finishes with exactly the programs of an uninterrupted batch,
//! none lost, none repeated.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tune_e2e::{strings, tune, tune_bin, workspace};

fn batch_args(out: &Path, cache: &Path) -> Vec<String> {
    let mut a = strings(&["batch"]);
    a.push(
        workspace()
            .join("datasets/suite.json")
            .display()
            .to_string(),
    );
    a.extend(strings(&[
        "--preset",
        "SMALL",
        "--jobs",
        "2",
        "--top-k",
        "1",
        "--warmup",
        "0",
        "--repetitions",
        "3",
        "--json",
    ]));
    a.push("--out".into());
    a.push(out.display().to_string());
    a.push("--cache-dir".into());
    a.push(cache.display().to_string());
    a
}

fn complete_lines(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let end = text.rfind('\n').map_or(0, |i| i + 1);
    text[..end].lines().map(String::from).collect()
}

/// program → status, from a journal; panics on a program listed twice.
fn journal(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in complete_lines(&dir.join("journal.jsonl")) {
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        let p = v["program"].as_str().unwrap().to_string();
        if let Some(f) = v["tuned_file"].as_str() {
            assert!(dir.join(f).is_file(), "{p}: {f} is missing");
        }
        let s = v["status"].as_str().unwrap().to_string();
        assert!(out.insert(p.clone(), s).is_none(), "{p} is listed twice");
    }
    out
}

#[test]
fn a_killed_batch_resumes_to_the_programs_of_an_uninterrupted_one() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let programs = datasets::Suite::core().unwrap().programs.len();

    // Uninterrupted.
    let full = dir.path().join("full");
    let out = tune(&batch_args(&full, &cache), dir.path());
    assert!(out.code <= 1, "{}", out.stderr_text());
    let want = journal(&full);
    assert_eq!(want.len(), programs, "{}", out.stderr_text());
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["programs"].as_array().unwrap().len(), programs);
    assert!(summary["environment"]["compiler_version"]
        .as_str()
        .is_some());

    // Killed at a random moment: once a random number of programs (1 to half of
    // them) has finished. The build cache is warm by now, so programs finish quickly.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as usize;
    let kill_after = 1 + nanos % (programs / 2);
    eprintln!("killing after {kill_after} finished programs");
    let killed = dir.path().join("killed");
    let mut child = Command::new(tune_bin())
        .args(batch_args(&killed, &cache))
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let start = Instant::now();
    while complete_lines(&killed.join("journal.jsonl")).len() < kill_after {
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "programs do not finish"
        );
        assert!(child.try_wait().unwrap().is_none(), "the batch ended early");
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: kill(2) on the process group the child leads (process_group(0) above).
    let rc = unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
    assert_eq!(rc, 0, "kill: {}", std::io::Error::last_os_error());
    child.wait().unwrap();
    let before = journal(&killed);
    assert!(
        !before.is_empty() && before.len() < programs,
        "{}",
        before.len()
    );

    // Starting again without --resume is refused and changes nothing.
    let out = tune(&batch_args(&killed, &cache), dir.path());
    assert_eq!(out.code, 2, "{}", out.stderr_text());
    assert!(out.stderr_text().contains("pass --resume"));
    assert_eq!(journal(&killed), before);

    // Resumed: the rest, once each.
    let mut args = batch_args(&killed, &cache);
    args.push("--resume".into());
    let out = tune(&args, dir.path());
    assert!(out.code <= 1, "{}", out.stderr_text());
    let after = journal(&killed);
    for (p, s) in &before {
        assert_eq!(after.get(p), Some(s), "{p} changed on resume");
    }
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    assert_eq!(after, want, "statuses differ from the uninterrupted batch");
}
