//! Helpers for the end-to-end tests in `tests/tests/`: build the `tune` binary once,
//! run it (or the system C compiler) on real files, capture what came out.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The repository root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// The `tune` binary, built (once per test process) with the same cargo that runs the
/// tests (with training when this crate's `train` feature is on), unless `TUNE_BIN`
/// names one.
pub fn tune_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("TUNE_BIN") {
            return PathBuf::from(p);
        }
        let mut args = vec!["build", "-p", "tune-cli", "--bin", "tune"];
        if cfg!(feature = "train") {
            args.extend(["--features", "train"]);
        }
        let out = Command::new(env!("CARGO"))
            .args(args)
            .arg("--message-format=json")
            .current_dir(workspace())
            .output()
            .expect("cargo runs");
        assert!(
            out.status.success(),
            "building tune failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .rev()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter_map(|v| {
                v.get("executable")
                    .and_then(|e| e.as_str())
                    .map(PathBuf::from)
            })
            .next()
            .expect("cargo reported the tune executable")
    })
    .clone()
}

/// What a process did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    pub code: i32,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Output {
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

fn capture(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("process starts");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: out.stdout,
        stderr: out.stderr,
    }
}

/// Runs `tune ARGS` in `cwd` (its `.tunecache` goes there).
pub fn tune(args: &[String], cwd: &Path) -> Output {
    capture(
        Command::new(tune_bin())
            .args(args)
            .current_dir(cwd)
            .env_remove("TUNE_CACHE"),
    )
}

/// Compiles `args` (cc-style: sources and flags) with `cc -O3 -march=native` plus
/// `extra`, runs the result in `cwd`, and returns what it printed.
pub fn cc_run(args: &[String], extra: &[&str], cwd: &Path) -> Output {
    let exe = cwd.join("reference-program");
    let build = capture(
        Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
            .args(["-O3", "-march=native"])
            .args(extra)
            .args(args)
            .arg("-o")
            .arg(&exe)
            .current_dir(cwd),
    );
    assert_eq!(
        build.code,
        0,
        "reference build failed: {}",
        build.stderr_text()
    );
    capture(Command::new(&exe).current_dir(cwd))
}

pub fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}
