//! Running a built program in a child process.

use crate::{io_err, Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How the child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Exit {
    Code(i32),
    Signal(i32),
    TimedOut,
}

impl Exit {
    /// The exit code a shell would report.
    pub fn shell_code(self) -> i32 {
        match self {
            Exit::Code(c) => c,
            Exit::Signal(s) => 128 + s,
            Exit::TimedOut => 124,
        }
    }

    fn from_status(s: ExitStatus) -> Exit {
        use std::os::unix::process::ExitStatusExt;
        match (s.code(), s.signal()) {
            (Some(c), _) => Exit::Code(c),
            (None, Some(sig)) => Exit::Signal(sig),
            _ => Exit::Code(1),
        }
    }
}

/// Timing of one region or nest, as the runtime recorded it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SlotReport {
    pub slot: usize,
    pub name: String,
    pub invocations: u64,
    pub total_s: f64,
    pub min_s: f64,
    pub max_s: f64,
    /// Time of each of the first versions.
    pub times_s: Vec<f64>,
    /// `(invocations done, cumulative seconds)` at evenly spaced invocations (the
    /// spacing doubles as the run goes on): where in the sequence the time was spent.
    #[serde(default)]
    pub marks: Vec<(u64, f64)>,
    /// Calls from threads other than the main one (the program runs it inside its own
    /// parallel region): neither timed nor saved.
    #[serde(default)]
    pub concurrent: u64,
}

/// One file saved by the runtime.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SavedFile {
    pub array: String,
    pub tag: String,
    pub version: u64,
    pub output: bool,
    pub descr: String,
    pub shape: Vec<u64>,
    pub bytes: u64,
}

impl SavedFile {
    /// Path relative to the data folder.
    pub fn relative_path(&self) -> PathBuf {
        let suffix = if self.output { ".out" } else { "" };
        PathBuf::from(&self.array).join(format!("{}_{}{}.npy", self.tag, self.version, suffix))
    }
}

/// The runtime's JSON report.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RuntimeReport {
    pub slots: Vec<SlotReport>,
    pub save_s: f64,
    pub save_failed: bool,
    pub saved: Vec<SavedFile>,
}

/// What happened.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub exit: Exit,
    pub wall_seconds: f64,
    /// `None` when the program ended without reaching its exit handlers (crash, signal).
    pub report: Option<RuntimeReport>,
    /// The child's output when captured.
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Options of one run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Where the runtime saves data; no saving when `None`.
    pub data_dir: Option<PathBuf>,
    /// Versions saved per nest (negative: all).
    pub save_versions: i64,
    /// `(slot, version)`: these slots save that one version instead.
    pub save_plan: Vec<(usize, u64)>,
    pub timeout: Option<Duration>,
    /// Program arguments.
    pub args: Vec<String>,
    /// Keep the child's stdout and stderr (in `RunOutcome`) instead of passing them on.
    pub capture: bool,
}

/// Runs `exe` with stdin, stdout and stderr inherited, so the program's own output
/// passes through unchanged.
pub fn run(exe: &Path, opts: &RunOptions, scratch: &Path) -> Result<RunOutcome> {
    std::fs::create_dir_all(scratch).map_err(io_err(scratch))?;
    // Unique per run: threads of one process may run children in the same folder.
    let id = crate::unique_id();
    let report_path = scratch.join(format!("rt-report-{id}.json"));
    let _ = std::fs::remove_file(&report_path);
    let mut cmd = Command::new(exe);
    cmd.args(&opts.args)
        .env("TUNE_RT_REPORT", &report_path)
        .env("TUNE_RT_SAVE_VERSIONS", opts.save_versions.to_string())
        .env(
            "TUNE_RT_SAVE_PLAN",
            opts.save_plan
                .iter()
                .map(|(slot, v)| format!("{slot}:{v}"))
                .collect::<Vec<_>>()
                .join(","),
        )
        .stdin(Stdio::inherit());
    let out_path = scratch.join(format!("child-{id}.out"));
    let err_path = scratch.join(format!("child-{id}.err"));
    if opts.capture {
        // Files, not pipes: a chatty child can never block on a full pipe.
        cmd.stdin(Stdio::null())
            .stdout(std::fs::File::create(&out_path).map_err(io_err(&out_path))?)
            .stderr(std::fs::File::create(&err_path).map_err(io_err(&err_path))?);
    } else {
        cmd.stdout(Stdio::inherit()).stderr(Stdio::inherit());
    }
    match &opts.data_dir {
        Some(d) => {
            cmd.env("TUNE_RT_DATA", d);
        }
        None => {
            cmd.env_remove("TUNE_RT_DATA");
        }
    }
    // Nothing else of this process runs or compiles while the child runs.
    let machine = crate::exclusive::alone();
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(io_err(exe))?;
    let exit = match opts.timeout {
        None => Exit::from_status(child.wait().map_err(io_err(exe))?),
        Some(limit) => loop {
            if let Some(s) = child.try_wait().map_err(io_err(exe))? {
                break Exit::from_status(s);
            }
            if start.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                break Exit::TimedOut;
            }
            std::thread::sleep(Duration::from_millis(2));
        },
    };
    let wall_seconds = start.elapsed().as_secs_f64();
    drop(machine);
    let report =
        match std::fs::read_to_string(&report_path) {
            Ok(text) => Some(serde_json::from_str(&text).map_err(|e| {
                Error::Run(format!("runtime report {}: {e}", report_path.display()))
            })?),
            Err(_) => None,
        };
    let _ = std::fs::remove_file(&report_path);
    let (stdout, stderr) = if opts.capture {
        let o = std::fs::read(&out_path).unwrap_or_default();
        let e = std::fs::read(&err_path).unwrap_or_default();
        let _ = std::fs::remove_file(&out_path);
        let _ = std::fs::remove_file(&err_path);
        (o, e)
    } else {
        (Vec::new(), Vec::new())
    };
    Ok(RunOutcome {
        exit,
        wall_seconds,
        report,
        stdout,
        stderr,
    })
}
