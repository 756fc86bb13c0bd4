//! The throughput benchmark (`runtime/machine_bench.c`): built once per compiler and
//! source, run alone on the machine, its JSON output checked.

use super::{Bandwidth, Peak, BENCH_FLAGS, BENCH_SOURCE};
use crate::build::Toolchain;
use crate::{io_err, Error, Result};
use serde::Deserialize;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Compiles the benchmark under `dir/<key>/` unless an identical build exists.
pub(super) fn build_bench(tc: &Toolchain, compiler: &str, dir: &Path) -> Result<PathBuf> {
    let mut h = blake3::Hasher::new();
    for part in [
        tc.cc.as_str(),
        compiler,
        &BENCH_FLAGS.join(" "),
        BENCH_SOURCE,
    ] {
        h.update(&(part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    let key = h.finalize().to_hex()[..16].to_string();
    let bdir = dir.join(&key);
    let exe = bdir.join("machine_bench");
    if exe.is_file() {
        return Ok(exe);
    }
    std::fs::create_dir_all(&bdir).map_err(io_err(&bdir))?;
    let src = bdir.join("machine_bench.c");
    std::fs::write(&src, BENCH_SOURCE).map_err(io_err(&src))?;
    let tmp = bdir.join(format!("machine_bench.tmp{}", std::process::id()));
    let mut parts = tc.cc.split_whitespace();
    let program = parts.next().unwrap_or("cc").to_string();
    let mut command: Vec<String> = vec![program];
    command.extend(parts.map(String::from));
    command.extend(BENCH_FLAGS.iter().map(|s| s.to_string()));
    command.push("-o".into());
    command.push(tmp.display().to_string());
    command.push(src.display().to_string());
    if let Err(e) = crate::build::compile(&command, &bdir.join("build.log"), "machine benchmark") {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, &exe).map_err(io_err(&exe))?;
    Ok(exe)
}

/// One run of the benchmark.
#[derive(Debug, Clone)]
pub(super) struct BenchResult {
    pub(super) array_bytes: u64,
    pub(super) bandwidth: Bandwidth,
    pub(super) peak: Peak,
}

#[derive(Deserialize)]
struct RawOutput {
    array_bytes: u64,
    bandwidth: RawBandwidth,
    peak: RawPeak,
}

#[derive(Deserialize)]
struct RawBandwidth {
    load: Option<f64>,
    store: Option<f64>,
    copy: Option<f64>,
    triad: Option<f64>,
}

#[derive(Deserialize)]
struct RawPeak {
    scalar: Option<f64>,
    avx2_fma: Option<f64>,
    avx512_fma: Option<f64>,
}

pub(super) fn run_bench(
    exe: &Path,
    array_bytes: u64,
    reps: u32,
    threads: u32,
    min_seconds: f64,
) -> Result<BenchResult> {
    // Generous: three kernels' worth of traffic at 0.5 GB/s per repetition, plus the
    // peak kernels (three variants, five runs, calibration) and start-up.
    let traffic = 7.0 * array_bytes as f64 * reps as f64 / 0.5e9;
    let limit = Duration::from_secs_f64(120.0 + traffic + 100.0 * min_seconds);
    let args = [
        array_bytes.to_string(),
        reps.to_string(),
        threads.to_string(),
        format!("{min_seconds}"),
    ];
    let stdout = run_exe(exe, &args, threads, limit)?;
    parse_output(&stdout).map_err(|e| {
        Error::Run(format!(
            "machine benchmark ({threads} threads) printed unusable output: {e}"
        ))
    })
}

/// Load, triad and update bandwidth (GB/s) with `array_bytes` per array, each timed
/// repetition running the kernels `inner` times over data that stays in cache.
pub(super) fn run_cache_bench(
    exe: &Path,
    array_bytes: u64,
    reps: u32,
    threads: u32,
    inner: u64,
) -> Result<(f64, f64, f64)> {
    let traffic = 48.0 * array_bytes as f64 * inner as f64 * reps as f64 / 0.5e9;
    let limit = Duration::from_secs_f64(60.0 + traffic);
    let args = [
        array_bytes.to_string(),
        reps.to_string(),
        threads.to_string(),
        "0.2".to_string(),
        inner.to_string(),
    ];
    let stdout = run_exe(exe, &args, threads, limit)?;
    parse_cache_output(&stdout).map_err(|e| {
        Error::Run(format!(
            "machine benchmark ({threads} threads, cache mode) printed unusable output: {e}"
        ))
    })
}

pub(super) fn parse_cache_output(stdout: &str) -> std::result::Result<(f64, f64, f64), String> {
    #[derive(Deserialize)]
    struct Raw {
        bandwidth: RawCache,
    }
    #[derive(Deserialize)]
    struct RawCache {
        load: Option<f64>,
        triad: Option<f64>,
        update: Option<f64>,
    }
    let raw: Raw = serde_json::from_str(stdout.trim()).map_err(|e| e.to_string())?;
    let need = |name: &str, v: Option<f64>| match v {
        Some(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(format!("no valid {name}")),
    };
    Ok((
        need("load bandwidth", raw.bandwidth.load)?,
        need("triad bandwidth", raw.bandwidth.triad)?,
        need("update bandwidth", raw.bandwidth.update)?,
    ))
}

/// Runs the benchmark alone on the machine with `args`; its standard output.
fn run_exe(exe: &Path, args: &[String], threads: u32, limit: Duration) -> Result<String> {
    let _machine = crate::exclusive::alone();
    let mut child = Command::new(exe)
        .args(args)
        .env("OMP_NUM_THREADS", threads.to_string())
        .env("OMP_PROC_BIND", "close")
        .env("OMP_PLACES", "cores")
        .env("OMP_DYNAMIC", "false")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(io_err(exe))?;
    let start = Instant::now();
    let status = loop {
        match child.try_wait().map_err(io_err(exe))? {
            Some(s) => break s,
            None if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Error::Run(format!(
                    "machine benchmark ({threads} threads) did not finish in {:.0} s",
                    limit.as_secs_f64()
                )));
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    if let Some(mut s) = child.stdout.take() {
        let _ = s.read_to_string(&mut stdout);
    }
    if let Some(mut s) = child.stderr.take() {
        let _ = s.read_to_string(&mut stderr);
    }
    if !status.success() {
        return Err(Error::Run(format!(
            "machine benchmark ({threads} threads) failed ({status}): {}",
            stderr.trim()
        )));
    }
    Ok(stdout)
}

pub(super) fn parse_output(stdout: &str) -> std::result::Result<BenchResult, String> {
    let raw: RawOutput = serde_json::from_str(stdout.trim()).map_err(|e| e.to_string())?;
    let need = |name: &str, v: Option<f64>| match v {
        Some(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(format!("no valid {name}")),
    };
    let opt = |v: Option<f64>| v.filter(|x| x.is_finite() && *x > 0.0);
    Ok(BenchResult {
        array_bytes: raw.array_bytes,
        bandwidth: Bandwidth {
            load: need("load bandwidth", raw.bandwidth.load)?,
            store: need("store bandwidth", raw.bandwidth.store)?,
            copy: need("copy bandwidth", raw.bandwidth.copy)?,
            triad: need("triad bandwidth", raw.bandwidth.triad)?,
        },
        peak: Peak {
            scalar: need("scalar peak", raw.peak.scalar)?,
            avx2_fma: opt(raw.peak.avx2_fma),
            avx512_fma: opt(raw.peak.avx512_fma),
        },
    })
}
