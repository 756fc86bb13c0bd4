//! What this machine can do: topology, caches, memory bandwidth and peak FLOP/s.
//!
//! [`machine`] describes the host `tune` runs on, for roofline-style reasoning
//! and cache-aware tuning. Topology and caches come from Linux sysfs
//! (`/sys/devices/system/cpu`) and `/proc/cpuinfo`; throughput comes from
//! `runtime/machine_bench.c`, compiled with `$CC -O3 -march=native -fopenmp` and run
//! twice: on one thread and on every online CPU (fewer when this process's affinity or
//! cgroup allows fewer, with a note), with `OMP_NUM_THREADS`, `OMP_PROC_BIND=close` and
//! `OMP_PLACES=cores`. A full measurement takes about 10 s on a small machine.
//!
//! Units and conventions:
//!
//! - Bandwidth is in GB/s (1e9 bytes/s), best of the repetitions, counted the STREAM
//!   way: each element explicitly read or written counts 8 bytes once and
//!   write-allocate traffic is not counted, so per element `load` (`s += a[i]`) moves
//!   8 bytes, `store` (`a[i] = x`) 8, `copy` (`b[i] = a[i]`) 16 and `triad`
//!   (`a[i] = b[i] + s*c[i]`) 24. Stores are ordinary (cacheable) stores, as in
//!   likwid-bench's `stream`/`copy`/`store` kernels without `_mem`. Each of the three
//!   arrays holds [`MachineInfo::array_bytes`], by default four times the total
//!   last-level cache and at least 64 MiB.
//! - Peak is in GFLOP/s (1e9 flop/s): independent multiply-add chains on registers,
//!   2 flops per FMA per lane, flops of all threads over the wall time of the slowest.
//!   `scalar` is plain double code, `avx2_fma` uses 256-bit FMAs and `avx512_fma`
//!   512-bit ones; the vector variants are `None` on CPUs without them.
//!
//! Results are cached per host in
//! `<cache_root>/machine/<host>-<key>.json`, the key being 16 hex digits of a blake3
//! hash of the CPU model, the relevant CPU flags, the compiler and the benchmark
//! source; the benchmark executable is built under `<cache_root>/machine/build/`.
//! A damaged cache file is measured again. Nothing here prints to the terminal.

use crate::build::Toolchain;
use crate::{io_err, Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The benchmark program's source.
pub const BENCH_SOURCE: &str = include_str!("../runtime/machine_bench.c");

/// Flags the benchmark is compiled with (after `$CC`; `$CFLAGS` is not used, so that
/// the numbers do not depend on the user's flags).
pub const BENCH_FLAGS: &[&str] = &["-O3", "-march=native", "-fopenmp"];

/// The CPU flags worth reporting (and keying the cache on).
const RELEVANT_FLAGS: &[&str] = &["avx2", "fma", "avx512f"];

const MIB: u64 = 1 << 20;
const KIB: u64 = 1 << 10;

/// One cache of the first online CPU, as sysfs describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheLevel {
    /// 1 for L1, 2 for L2, ...
    pub level: u32,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: String,
    /// Size of one instance of this cache.
    pub size_bytes: u64,
    pub line_bytes: u64,
    /// How many logical CPUs share one instance.
    pub shared_by_cpus: u32,
}

/// Memory bandwidth in GB/s (1e9 bytes/s), STREAM byte counting (see the module
/// documentation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bandwidth {
    /// `s += a[i]`: 8 bytes per element.
    pub load: f64,
    /// `a[i] = x`: 8 bytes per element (write-allocate reads not counted).
    pub store: f64,
    /// `b[i] = a[i]`: 16 bytes per element.
    pub copy: f64,
    /// `a[i] = b[i] + s*c[i]`: 24 bytes per element.
    pub triad: f64,
}

/// Peak double-precision throughput in GFLOP/s (2 flops per FMA per lane).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Peak {
    pub scalar: f64,
    /// 256-bit FMA; `None` when the CPU lacks AVX2 or FMA.
    pub avx2_fma: Option<f64>,
    /// 512-bit FMA; `None` when the CPU lacks AVX-512F.
    pub avx512_fma: Option<f64>,
}

impl Peak {
    /// The widest measured variant: AVX-512, else AVX2, else scalar.
    pub fn best(&self) -> f64 {
        self.avx512_fma.or(self.avx2_fma).unwrap_or(self.scalar)
    }
}

/// Everything `tune machine` knows about the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineInfo {
    pub host: String,
    pub cpu_model: String,
    /// Physical cores (distinct package/core pairs among the online CPUs).
    pub cores: u32,
    /// Online logical CPUs.
    pub threads: u32,
    pub sockets: u32,
    /// Caches of the first online CPU, by level then kind.
    pub caches: Vec<CacheLevel>,
    /// The relevant CPU flags present: `avx2`, `fma`, `avx512f`.
    pub flags: Vec<String>,
    /// First line of `$CC --version`.
    pub compiler: String,
    /// Measured on one thread.
    pub bandwidth_1: Bandwidth,
    /// Measured on `threads` threads.
    pub bandwidth_all: Bandwidth,
    pub peak_1: Peak,
    pub peak_all: Peak,
    pub measured_at_unix: u64,
    /// Bytes per array of the bandwidth kernels (three arrays).
    pub array_bytes: u64,
    /// Fallbacks and caveats (assumed cache sizes, capped arrays, ...).
    #[serde(default)]
    pub notes: Vec<String>,
}

impl MachineInfo {
    /// Best single-thread peak in GFLOP/s: AVX-512 if measured, else AVX2, else scalar.
    pub fn best_peak_1(&self) -> f64 {
        self.peak_1.best()
    }

    /// Best all-threads peak in GFLOP/s.
    pub fn best_peak_all(&self) -> f64 {
        self.peak_all.best()
    }

    /// Size of one instance of the last-level data (or unified) cache, 0 if none known.
    pub fn llc_bytes(&self) -> u64 {
        self.last_level().map(|c| c.size_bytes).unwrap_or(0)
    }

    /// Last-level cache over the whole machine: one instance times the number of
    /// instances (online CPUs / CPUs sharing one).
    pub fn llc_total_bytes(&self) -> u64 {
        llc_total(&self.caches, self.threads)
    }

    /// Data and unified cache sizes, one per level in level order (L1d, L2, L3, ...).
    pub fn data_cache_sizes(&self) -> Vec<u64> {
        data_caches(&self.caches).map(|c| c.size_bytes).collect()
    }

    fn last_level(&self) -> Option<&CacheLevel> {
        data_caches(&self.caches).last()
    }
}

fn data_caches(caches: &[CacheLevel]) -> impl Iterator<Item = &CacheLevel> {
    let mut seen = BTreeSet::new();
    caches
        .iter()
        .filter(|c| c.kind != "Instruction")
        .filter(move |c| seen.insert(c.level))
}

fn llc_total(caches: &[CacheLevel], threads: u32) -> u64 {
    match data_caches(caches).last() {
        Some(c) => {
            let share = c.shared_by_cpus.max(1) as u64;
            let instances = (threads.max(1) as u64).div_ceil(share);
            c.size_bytes * instances
        }
        None => 0,
    }
}

/// What [`machine`] should do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineOptions {
    /// Measure again even when a cached result exists.
    pub refresh: bool,
    /// Bytes per array of the bandwidth kernels; default max(4 × total LLC, 64 MiB).
    /// Rounded down to a multiple of 256 bytes, at least 1 MiB, and capped so that the
    /// three arrays take at most half the available memory.
    pub array_bytes: Option<u64>,
    /// Repetitions of every bandwidth kernel (best is kept); the peak kernels use
    /// min(repetitions, 5). Default 10.
    pub repetitions: u32,
}

impl Default for MachineOptions {
    fn default() -> Self {
        MachineOptions {
            refresh: false,
            array_bytes: None,
            repetitions: 10,
        }
    }
}

/// Describes this machine: from the cache when an earlier measurement with the same
/// key and array size exists (and `!opts.refresh`), else by measuring (which takes
/// some seconds) and caching the result.
pub fn machine(cache_root: &Path, tc: &Toolchain, opts: &MachineOptions) -> Result<MachineInfo> {
    let sys = SysPaths::linux();
    machine_with(cache_root, tc, opts, &sys, DEFAULT_MIN_SECONDS)
}

/// Minimum duration of one timed peak-FLOP/s run.
const DEFAULT_MIN_SECONDS: f64 = 0.2;

/// Where the system description is read from (replaceable in tests).
#[derive(Debug, Clone)]
struct SysPaths {
    /// `/sys/devices/system/cpu`
    cpu: PathBuf,
    /// `/proc/cpuinfo`
    cpuinfo: PathBuf,
    /// `/proc/meminfo`
    meminfo: PathBuf,
    /// [`crate::host::SOURCES`]
    hostname: Vec<PathBuf>,
}

impl SysPaths {
    fn linux() -> SysPaths {
        SysPaths {
            cpu: PathBuf::from("/sys/devices/system/cpu"),
            cpuinfo: PathBuf::from("/proc/cpuinfo"),
            meminfo: PathBuf::from("/proc/meminfo"),
            hostname: crate::host::SOURCES.iter().map(PathBuf::from).collect(),
        }
    }
}

/// The static part: what can be read without running anything.
#[derive(Debug, Clone)]
struct Static {
    host: String,
    cpu_model: String,
    cores: u32,
    threads: u32,
    sockets: u32,
    caches: Vec<CacheLevel>,
    flags: Vec<String>,
    notes: Vec<String>,
    mem_available: Option<u64>,
    /// Threads for the all-CPU runs: the online CPUs, or fewer when this process may
    /// only run on fewer (affinity mask, cgroup quota).
    usable_threads: u32,
}

fn machine_with(
    cache_root: &Path,
    tc: &Toolchain,
    opts: &MachineOptions,
    sys: &SysPaths,
    min_seconds: f64,
) -> Result<MachineInfo> {
    let st = read_static(sys);
    let compiler = tc.version()?;
    let dir = cache_root.join("machine");
    let file = dir.join(format!(
        "{}-{}.json",
        st.host,
        cache_key(&st.cpu_model, &st.flags, &compiler)
    ));
    let mut notes = st.notes.clone();
    let array_bytes = array_size(&st, opts.array_bytes, &mut notes);

    if !opts.refresh {
        if let Some(cached) = load_cached(&file) {
            if cached.array_bytes == array_bytes {
                return Ok(cached);
            }
        }
    }

    let exe = build_bench(tc, &compiler, &dir.join("build"))?;
    let reps = opts.repetitions.max(1);
    let one = run_bench(&exe, array_bytes, reps, 1, min_seconds)?;
    let all = run_bench(&exe, array_bytes, reps, st.usable_threads, min_seconds)?;
    let measured_at_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let info = MachineInfo {
        host: st.host,
        cpu_model: st.cpu_model,
        cores: st.cores,
        threads: st.threads,
        sockets: st.sockets,
        caches: st.caches,
        flags: st.flags,
        compiler,
        bandwidth_1: one.bandwidth,
        bandwidth_all: all.bandwidth,
        peak_1: one.peak,
        peak_all: all.peak,
        measured_at_unix,
        array_bytes: one.array_bytes,
        notes,
    };
    store_cached(&file, &info)?;
    Ok(info)
}

/// 16 hex digits of blake3(CPU model, relevant flags, compiler, benchmark source).
fn cache_key(cpu_model: &str, flags: &[String], compiler: &str) -> String {
    let mut h = blake3::Hasher::new();
    let mut feed = |label: &str, bytes: &[u8]| {
        h.update(label.as_bytes());
        h.update(&(bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    feed("model", cpu_model.as_bytes());
    for f in flags {
        feed("flag", f.as_bytes());
    }
    feed("compiler", compiler.as_bytes());
    feed("source", BENCH_SOURCE.as_bytes());
    h.finalize().to_hex()[..16].to_string()
}

/// The array size to use: the caller's, else max(4 × total LLC, 64 MiB), capped so
/// that the three arrays take at most half the available memory.
fn array_size(st: &Static, wanted: Option<u64>, notes: &mut Vec<String>) -> u64 {
    let mut bytes = match wanted {
        Some(b) => b,
        None => (4 * llc_total(&st.caches, st.threads)).max(64 * MIB),
    };
    if let Some(avail) = st.mem_available {
        let cap = (avail / 6) / MIB * MIB;
        if cap >= MIB && bytes > cap {
            notes.push(format!(
                "arrays capped at {} (half the available memory for three arrays); \
                 bandwidth may include cache effects",
                human_bytes(cap)
            ));
            bytes = cap;
        }
    }
    // the benchmark works on blocks of 32 doubles
    (bytes / 256 * 256).max(MIB)
}

fn load_cached(file: &Path) -> Option<MachineInfo> {
    let text = std::fs::read_to_string(file).ok()?;
    let info: MachineInfo = serde_json::from_str(&text).ok()?;
    let finite = |b: &Bandwidth| {
        [b.load, b.store, b.copy, b.triad]
            .iter()
            .all(|v| v.is_finite() && *v > 0.0)
    };
    (finite(&info.bandwidth_1) && finite(&info.bandwidth_all)).then_some(info)
}

fn store_cached(file: &Path, info: &MachineInfo) -> Result<()> {
    let text = serde_json::to_string_pretty(info)
        .map_err(|e| Error::Run(format!("serializing machine description: {e}")))?;
    crate::files::write_atomic(file, (text + "\n").as_bytes()).map_err(io_err(file))
}

// ------------------------------------------------------------------ system description

fn read_static(sys: &SysPaths) -> Static {
    let mut notes = Vec::new();
    let host = read_host(&sys.hostname);
    let cpuinfo = std::fs::read_to_string(&sys.cpuinfo).unwrap_or_default();
    let (cpu_model, all_flags) = parse_cpuinfo(&cpuinfo);
    let flags: Vec<String> = RELEVANT_FLAGS
        .iter()
        .filter(|f| all_flags.iter().any(|g| g == *f))
        .map(|f| f.to_string())
        .collect();

    let online = std::fs::read_to_string(sys.cpu.join("online"))
        .ok()
        .and_then(|s| parse_cpu_list(&s));
    let online = match online {
        Some(list) if !list.is_empty() => list,
        _ => {
            let n = std::thread::available_parallelism()
                .map(|n| n.get() as u32)
                .unwrap_or(1);
            notes.push(format!(
                "{} unreadable: assuming CPUs 0..{}",
                sys.cpu.join("online").display(),
                n
            ));
            (0..n).collect()
        }
    };
    let threads = online.len() as u32;

    let mut packages = BTreeSet::new();
    let mut cores = BTreeSet::new();
    let mut topology_ok = true;
    for &cpu in &online {
        let topo = sys.cpu.join(format!("cpu{cpu}/topology"));
        let pkg = read_u64(&topo.join("physical_package_id"));
        let core = read_u64(&topo.join("core_id"));
        match (pkg, core) {
            (Some(p), Some(c)) => {
                packages.insert(p);
                cores.insert((p, c));
            }
            _ => topology_ok = false,
        }
    }
    let (cores, sockets) = if topology_ok && !cores.is_empty() {
        (cores.len() as u32, packages.len() as u32)
    } else {
        notes.push("CPU topology unreadable: assuming one socket, one thread per core".into());
        (threads, 1)
    };

    let mut caches = read_caches(&sys.cpu, online[0]);
    if data_caches(&caches).next().is_none() {
        notes
            .push("no cache description in sysfs: assuming L1d 32 KiB, L2 1 MiB, L3 32 MiB".into());
        caches = assumed_caches(threads);
    }

    let mut usable_threads = threads.max(1);
    if let Ok(n) = std::thread::available_parallelism() {
        let n = n.get() as u32;
        if n < usable_threads {
            notes.push(format!(
                "this process may use {n} of the {threads} online CPUs: \
                 the all-threads figures use {n} threads"
            ));
            usable_threads = n;
        }
    }

    let mem_available = std::fs::read_to_string(&sys.meminfo)
        .ok()
        .and_then(|t| parse_meminfo_available(&t));

    Static {
        host,
        cpu_model,
        cores,
        threads,
        sockets,
        caches,
        flags,
        notes,
        mem_available,
        usable_threads,
    }
}

fn assumed_caches(threads: u32) -> Vec<CacheLevel> {
    let level = |level, size_bytes, shared_by_cpus| CacheLevel {
        level,
        kind: if level == 1 { "Data" } else { "Unified" }.into(),
        size_bytes,
        line_bytes: 64,
        shared_by_cpus,
    };
    vec![
        level(1, 32 * KIB, 1),
        level(2, MIB, 1),
        level(3, 32 * MIB, threads.max(1)),
    ]
}

/// The host name, restricted to characters safe in a file name (it names the cache file).
fn read_host(sources: &[PathBuf]) -> String {
    let clean: String = crate::host::hostname_from(sources)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let clean = clean.trim_start_matches('.').to_string();
    if clean.is_empty() {
        "localhost".into()
    } else {
        clean
    }
}

fn read_u64(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Caches of `cpu` from `<cpu_dir>/cpu<cpu>/cache/index*/`, sorted by level then kind
/// (Data, Instruction, Unified). Entries missing a field are skipped.
fn read_caches(cpu_dir: &Path, cpu: u32) -> Vec<CacheLevel> {
    let dir = cpu_dir.join(format!("cpu{cpu}/cache"));
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name();
        if !name.to_string_lossy().starts_with("index") {
            continue;
        }
        let p = e.path();
        let read = |f: &str| std::fs::read_to_string(p.join(f)).ok();
        let level = read("level").and_then(|s| s.trim().parse::<u32>().ok());
        let kind = read("type").map(|s| s.trim().to_string());
        let size = read("size").and_then(|s| parse_size(&s));
        let (Some(level), Some(kind), Some(size_bytes)) = (level, kind, size) else {
            continue;
        };
        if size_bytes == 0 {
            continue;
        }
        let line_bytes = read("coherency_line_size")
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(64);
        let shared_by_cpus = read("shared_cpu_list")
            .and_then(|s| parse_cpu_list(&s))
            .map(|l| l.len() as u32)
            .filter(|&n| n > 0)
            .unwrap_or(1);
        out.push(CacheLevel {
            level,
            kind,
            size_bytes,
            line_bytes,
            shared_by_cpus,
        });
    }
    out.sort_by(|a, b| (a.level, &a.kind).cmp(&(b.level, &b.kind)));
    out.dedup();
    out
}

/// `32K`, `1M`, `32768K`, `1G`, `512` (bytes).
fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], KIB),
        'M' | 'm' => (&s[..s.len() - 1], MIB),
        'G' | 'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}

/// A kernel CPU list: `0-3,8,10-11`.
fn parse_cpu_list(s: &str) -> Option<Vec<u32>> {
    let s = s.trim();
    let mut out = Vec::new();
    if s.is_empty() {
        return Some(out);
    }
    for part in s.split(',') {
        let part = part.trim();
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if b < a || b - a > 1 << 16 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

/// The model name and every flag of the first processor in `/proc/cpuinfo`.
fn parse_cpuinfo(text: &str) -> (String, Vec<String>) {
    let mut model = None;
    let mut flags = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim();
        let value = value.trim();
        match key {
            "model name" | "Model" | "cpu model" | "cpu"
                if model.is_none() && !value.is_empty() =>
            {
                model = Some(value.to_string())
            }
            "flags" | "Features" if flags.is_none() => {
                flags = Some(value.split_whitespace().map(String::from).collect())
            }
            _ => {}
        }
    }
    (
        model.unwrap_or_else(|| "unknown CPU".into()),
        flags.unwrap_or_default(),
    )
}

fn parse_meminfo_available(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * KIB)
}

// ------------------------------------------------------------------ the benchmark

/// Compiles the benchmark under `dir/<key>/` unless an identical build exists.
fn build_bench(tc: &Toolchain, compiler: &str, dir: &Path) -> Result<PathBuf> {
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
struct BenchResult {
    array_bytes: u64,
    bandwidth: Bandwidth,
    peak: Peak,
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

fn run_bench(
    exe: &Path,
    array_bytes: u64,
    reps: u32,
    threads: u32,
    min_seconds: f64,
) -> Result<BenchResult> {
    let _machine = crate::exclusive::alone();
    let mut child = Command::new(exe)
        .arg(array_bytes.to_string())
        .arg(reps.to_string())
        .arg(threads.to_string())
        .arg(format!("{min_seconds}"))
        .env("OMP_NUM_THREADS", threads.to_string())
        .env("OMP_PROC_BIND", "close")
        .env("OMP_PLACES", "cores")
        .env("OMP_DYNAMIC", "false")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(io_err(exe))?;

    // Generous: three kernels' worth of traffic at 0.5 GB/s per repetition, plus the
    // peak kernels (three variants, five runs, calibration) and start-up.
    let traffic = 7.0 * array_bytes as f64 * reps as f64 / 0.5e9;
    let limit = Duration::from_secs_f64(120.0 + traffic + 100.0 * min_seconds);
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
    parse_output(&stdout).map_err(|e| {
        Error::Run(format!(
            "machine benchmark ({threads} threads) printed unusable output: {e}"
        ))
    })
}

fn parse_output(stdout: &str) -> std::result::Result<BenchResult, String> {
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

// ------------------------------------------------------------------ rendering

/// A readable multi-line description for the terminal.
pub fn render(m: &MachineInfo) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "host      {}", m.host);
    let _ = writeln!(
        s,
        "cpu       {} ({} socket{}, {} core{}, {} thread{})",
        m.cpu_model,
        m.sockets,
        plural(m.sockets),
        m.cores,
        plural(m.cores),
        m.threads,
        plural(m.threads)
    );
    let flags = if m.flags.is_empty() {
        "-".to_string()
    } else {
        m.flags.join(" ")
    };
    let _ = writeln!(s, "flags     {flags}");
    let _ = writeln!(s, "compiler  {}", m.compiler);
    let _ = writeln!(s, "caches");
    for c in &m.caches {
        let suffix = match c.kind.as_str() {
            "Data" => "d",
            "Instruction" => "i",
            _ => "",
        };
        let _ = writeln!(
            s,
            "  L{}{:<2} {:>10}  line {:>3} B  shared by {} cpu{}",
            c.level,
            suffix,
            human_bytes(c.size_bytes),
            c.line_bytes,
            c.shared_by_cpus,
            plural(c.shared_by_cpus)
        );
    }
    let all = format!("{} threads", m.threads);
    let _ = writeln!(s);
    let _ = writeln!(s, "{:<20}{:>12}{:>12}", "", "1 thread", all);
    let row = |s: &mut String, name: &str, a: Option<f64>, b: Option<f64>| {
        let f = |v: Option<f64>| v.map(|x| format!("{x:.1}")).unwrap_or_else(|| "-".into());
        let (what, unit) = name.rsplit_once(' ').unwrap_or((name, ""));
        let _ = writeln!(s, "{:<12}{:<8}{:>12}{:>12}", what, unit, f(a), f(b));
    };
    let (b1, ba) = (&m.bandwidth_1, &m.bandwidth_all);
    row(&mut s, "load GB/s", Some(b1.load), Some(ba.load));
    row(&mut s, "store GB/s", Some(b1.store), Some(ba.store));
    row(&mut s, "copy GB/s", Some(b1.copy), Some(ba.copy));
    row(&mut s, "triad GB/s", Some(b1.triad), Some(ba.triad));
    let (p1, pa) = (&m.peak_1, &m.peak_all);
    row(&mut s, "scalar GFLOP/s", Some(p1.scalar), Some(pa.scalar));
    row(&mut s, "avx2 fma GFLOP/s", p1.avx2_fma, pa.avx2_fma);
    row(&mut s, "avx512 fma GFLOP/s", p1.avx512_fma, pa.avx512_fma);
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "bandwidth: 3 arrays of {}, STREAM byte counting (load 8, store 8, copy 16, \
         triad 24 bytes per element; no write-allocate), best of repetitions",
        human_bytes(m.array_bytes)
    );
    let _ = writeln!(s, "peak: 2 flops per FMA per lane, best of repetitions");
    let _ = writeln!(s, "measured {}", utc_date(m.measured_at_unix));
    for n in &m.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
}

fn plural(n: u32) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn human_bytes(b: u64) -> String {
    if b >= 1 << 30 && b.trailing_zeros() >= 30 {
        format!("{} GiB", b >> 30)
    } else if b >= MIB && b.trailing_zeros() >= 20 {
        format!("{} MiB", b >> 20)
    } else if b >= KIB && b.trailing_zeros() >= 10 {
        format!("{} KiB", b >> 10)
    } else {
        format!("{b} B")
    }
}

/// `YYYY-MM-DD HH:MM:SS UTC` from Unix seconds (proleptic Gregorian calendar).
fn utc_date(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Shift the epoch to 0000-03-01 so leap days fall at the end of a year; 146097 days
    // make a 400-year era.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_describes_a_data_cache_here() {
        let sys = SysPaths::linux();
        if !sys.cpu.join("online").exists() {
            return; // not Linux
        }
        let st = read_static(&sys);
        assert!(st.threads >= 1 && st.cores >= 1 && st.sockets >= 1);
        let real = read_caches(&sys.cpu, 0);
        assert!(
            data_caches(&real).next().is_some(),
            "no data cache in sysfs: {real:?}"
        );
        assert!(data_caches(&real).all(|c| c.size_bytes >= 1024 && c.line_bytes > 0));
    }

    #[test]
    fn parses_sizes_lists_and_cpuinfo() {
        assert_eq!(parse_size("32K\n"), Some(32 * 1024));
        assert_eq!(parse_size("32768K"), Some(32 * MIB));
        assert_eq!(parse_size("1M"), Some(MIB));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("x"), None);
        assert_eq!(
            parse_cpu_list("0-3,8,10-11\n"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpu_list("0"), Some(vec![0]));
        assert_eq!(parse_cpu_list("3-1"), None);
        let (model, flags) =
            parse_cpuinfo("processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu avx2 fma\n");
        assert_eq!(model, "AMD EPYC");
        assert_eq!(flags, ["fpu", "avx2", "fma"]);
        assert_eq!(utc_date(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc_date(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc_date(1_700_000_000), "2023-11-14 22:13:20 UTC");
    }

    fn fake_sys(root: &Path, with_caches: bool) -> SysPaths {
        let cpu = root.join("cpu");
        for c in 0..4u32 {
            let topo = cpu.join(format!("cpu{c}/topology"));
            std::fs::create_dir_all(&topo).unwrap();
            std::fs::write(topo.join("physical_package_id"), "0\n").unwrap();
            std::fs::write(topo.join("core_id"), format!("{}\n", c / 2)).unwrap();
        }
        std::fs::write(cpu.join("online"), "0-3\n").unwrap();
        if with_caches {
            for (i, (level, kind, size, shared)) in [
                (1, "Data", "48K", "0,2"),
                (1, "Instruction", "32K", "0,2"),
                (2, "Unified", "2048K", "0,2"),
                (3, "Unified", "8M", "0-1"),
            ]
            .into_iter()
            .enumerate()
            {
                let d = cpu.join(format!("cpu0/cache/index{i}"));
                std::fs::create_dir_all(&d).unwrap();
                std::fs::write(d.join("level"), format!("{level}\n")).unwrap();
                std::fs::write(d.join("type"), format!("{kind}\n")).unwrap();
                std::fs::write(d.join("size"), format!("{size}\n")).unwrap();
                std::fs::write(d.join("coherency_line_size"), "64\n").unwrap();
                std::fs::write(d.join("shared_cpu_list"), format!("{shared}\n")).unwrap();
            }
        }
        std::fs::write(
            root.join("cpuinfo"),
            "model name\t: Test CPU\nflags\t\t: sse2 avx2 fma avx512f\n",
        )
        .unwrap();
        std::fs::write(root.join("hostname"), "box/1\n").unwrap();
        SysPaths {
            cpu,
            cpuinfo: root.join("cpuinfo"),
            meminfo: root.join("meminfo"),
            hostname: vec![root.join("hostname")],
        }
    }

    #[test]
    fn fake_sysfs_topology_and_caches() {
        let tmp = tempfile::tempdir().unwrap();
        let st = read_static(&fake_sys(tmp.path(), true));
        assert_eq!((st.threads, st.cores, st.sockets), (4, 2, 1));
        assert_eq!(st.host, "box_1");
        assert_eq!(st.cpu_model, "Test CPU");
        assert_eq!(st.flags, ["avx2", "fma", "avx512f"]);
        // (this host may have fewer than the 4 fake CPUs, which adds an affinity note)
        assert!(
            st.notes.iter().all(|n| n.contains("this process may use")),
            "{:?}",
            st.notes
        );
        assert_eq!(st.caches.len(), 4);
        assert_eq!(st.caches[0].kind, "Data");
        assert_eq!(st.caches[1].kind, "Instruction");
        assert_eq!(st.caches[0].shared_by_cpus, 2);
        // 8 MiB shared by 2 of 4 CPUs: two instances.
        assert_eq!(llc_total(&st.caches, st.threads), 16 * MIB);
        let mut notes = vec![];
        assert_eq!(array_size(&st, None, &mut notes), 64 * MIB);
        assert_eq!(array_size(&st, Some(5 * MIB), &mut notes), 5 * MIB);
    }

    #[test]
    fn missing_caches_fall_back_with_a_note() {
        let tmp = tempfile::tempdir().unwrap();
        let st = read_static(&fake_sys(tmp.path(), false));
        assert!(st.notes.iter().any(|n| n.contains("assuming L1d 32 KiB")));
        let sizes: Vec<u64> = data_caches(&st.caches).map(|c| c.size_bytes).collect();
        assert_eq!(sizes, [32 * KIB, MIB, 32 * MIB]);
    }

    #[test]
    fn output_parsing_rejects_missing_numbers() {
        let good = r#"{"threads": 1, "array_bytes": 4194304, "repetitions": 2, "convention": "x",
            "bandwidth": {"load": 10, "store": 5, "copy": 8, "triad": 9},
            "peak": {"scalar": 4, "avx2_fma": 30, "avx512_fma": null}, "checksum": 1}"#;
        let r = parse_output(good).unwrap();
        assert_eq!(r.peak.avx512_fma, None);
        assert_eq!(r.peak.avx2_fma, Some(30.0));
        let bad = good.replace("\"triad\": 9", "\"triad\": null");
        assert!(parse_output(&bad).is_err());
        assert!(parse_output("garbage").is_err());
    }

    fn check_sane(b: &Bandwidth, p: &Peak) {
        for v in [b.load, b.store, b.copy, b.triad, p.scalar] {
            assert!(v.is_finite() && v > 0.0, "{b:?} {p:?}");
        }
        for v in [p.avx2_fma, p.avx512_fma].into_iter().flatten() {
            assert!(v.is_finite() && v > 0.0, "{p:?}");
        }
    }

    /// Builds and runs the real benchmark with tiny arrays and short peak runs.
    #[test]
    fn benchmark_smoke() {
        let tmp = tempfile::tempdir().unwrap();
        let tc = Toolchain::default();
        let compiler = tc.version().unwrap();
        let exe = build_bench(&tc, &compiler, &tmp.path().join("build")).unwrap();
        let r = run_bench(&exe, 4 * MIB, 2, 1, 0.02).unwrap();
        assert_eq!(r.array_bytes, 4 * MIB);
        check_sane(&r.bandwidth, &r.peak);
        // a second build is a cache hit
        assert_eq!(
            build_bench(&tc, &compiler, &tmp.path().join("build")).unwrap(),
            exe
        );
    }

    /// The whole path with tiny settings: measure, reuse, survive a damaged cache file.
    #[test]
    fn caches_and_remeasures_damaged_files() {
        let tmp = tempfile::tempdir().unwrap();
        let tc = Toolchain::default();
        let sys = SysPaths::linux();
        let opts = MachineOptions {
            refresh: false,
            array_bytes: Some(2 * MIB),
            repetitions: 2,
        };
        let first = machine_with(tmp.path(), &tc, &opts, &sys, 0.01).unwrap();
        check_sane(&first.bandwidth_1, &first.peak_1);
        check_sane(&first.bandwidth_all, &first.peak_all);
        assert_eq!(first.array_bytes, 2 * MIB);
        assert!(first.best_peak_1() >= first.peak_1.scalar);
        assert!(!first.data_cache_sizes().is_empty());
        assert!(first.llc_bytes() > 0);
        let text = render(&first);
        assert!(
            text.contains("triad") && text.contains(&first.host),
            "{text}"
        );

        let files: Vec<PathBuf> = std::fs::read_dir(tmp.path().join("machine"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        assert_eq!(files.len(), 1, "{files:?}");
        let name = files[0].file_name().unwrap().to_string_lossy().to_string();
        assert!(name.starts_with(&format!("{}-", first.host)), "{name}");

        // reused: identical, including the time stamp
        let again = machine_with(tmp.path(), &tc, &opts, &sys, 0.01).unwrap();
        assert_eq!(again, first);

        // a damaged file is measured again and rewritten
        std::fs::write(&files[0], "{\"host\": 1").unwrap();
        let fresh = machine_with(tmp.path(), &tc, &opts, &sys, 0.01).unwrap();
        check_sane(&fresh.bandwidth_1, &fresh.peak_1);
        assert!(load_cached(&files[0]).is_some());

        // a different array size is not served from the cache
        let bigger = MachineOptions {
            array_bytes: Some(3 * MIB),
            ..opts
        };
        assert_eq!(
            machine_with(tmp.path(), &tc, &bigger, &sys, 0.01)
                .unwrap()
                .array_bytes,
            3 * MIB
        );
    }
}
