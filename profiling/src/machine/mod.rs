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

mod bench;
mod render;
mod system;
#[cfg(test)]
mod tests;

pub use render::render;

use crate::build::Toolchain;
use crate::{io_err, Error, Result};
use bench::{build_bench, run_bench};
use render::human_bytes;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};
use system::{read_static, Static, SysPaths};

/// The benchmark program's source.
pub const BENCH_SOURCE: &str = include_str!("../../runtime/machine_bench.c");

/// Flags the benchmark is compiled with (after `$CC`; `$CFLAGS` is not used, so that
/// the numbers do not depend on the user's flags).
pub const BENCH_FLAGS: &[&str] = &[
    "-O3",
    "-march=native",
    // gcc 12 prefers 256-bit vectors on CPUs with AVX-512; the bandwidth kernels are
    // to use the widest loads the CPU has, as likwid-bench's *_avx512 kernels do.
    "-mprefer-vector-width=512",
    "-fopenmp",
];

/// The CPU flags worth reporting (and keying the cache on).
const RELEVANT_FLAGS: &[&str] = &["avx2", "fma", "avx512f"];

const MIB: u64 = 1 << 20;
const KIB: u64 = 1 << 10;

/// What a cache holds, as sysfs names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum CacheKind {
    Data,
    Instruction,
    Unified,
}

impl CacheKind {
    /// The kind sysfs writes in `cache/indexN/type`.
    pub fn parse(s: &str) -> Option<CacheKind> {
        match s.trim() {
            "Data" => Some(CacheKind::Data),
            "Instruction" => Some(CacheKind::Instruction),
            "Unified" => Some(CacheKind::Unified),
            _ => None,
        }
    }
}

/// One cache of the first online CPU, as sysfs describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheLevel {
    /// 1 for L1, 2 for L2, ...
    pub level: u32,
    pub kind: CacheKind,
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

/// Bandwidth with the working set of one cache level: arrays of half the cache per
/// thread (every instance the threads use), the kernels repeated over them so that the
/// data stays there. GB/s, STREAM byte counting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheBandwidth {
    /// 1 for L1, 2 for L2, ...
    pub level: u32,
    /// Bytes the measured threads can keep at this level (every instance they use).
    pub capacity_bytes: u64,
    /// Bytes per array of the kernels.
    pub array_bytes: u64,
    /// `s += a[i]`.
    pub load: f64,
    /// `a[i] = b[i] + s*c[i]`.
    pub triad: f64,
    /// `a[i] = s*a[i] + t` (16 bytes per element; 0 in a description measured before it
    /// existed).
    #[serde(default)]
    pub update: f64,
}

impl CacheBandwidth {
    /// The roof of this level: the fastest of its load, triad and update kernels.
    pub fn roof(&self) -> f64 {
        self.load.max(self.triad).max(self.update)
    }
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
    /// Per data cache level (L1d, L2, L3), one thread.
    #[serde(default)]
    pub cache_bandwidth_1: Vec<CacheBandwidth>,
    /// Per data cache level, on `threads` threads.
    #[serde(default)]
    pub cache_bandwidth_all: Vec<CacheBandwidth>,
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
    /// This machine as code built for the vector ISA `target` (CPU flags, as
    /// [`crate::build::Toolchain::target_flags`] gives them) sees it: the flags it
    /// does not target are dropped, and so are the peaks of the instructions it cannot
    /// use (AVX-512 FMAs for a build for AVX2), with a note. Unchanged where the build
    /// targets all of this CPU's relevant flags.
    pub fn targeted(mut self, target: &[String]) -> MachineInfo {
        let has = |f: &str| target.iter().any(|t| t == f);
        let dropped: Vec<String> = self.flags.iter().filter(|f| !has(f)).cloned().collect();
        if dropped.is_empty() {
            return self;
        }
        self.flags.retain(|f| has(f));
        for p in [&mut self.peak_1, &mut self.peak_all] {
            if !has("avx512f") {
                p.avx512_fma = None;
            }
            if !(has("avx2") && has("fma")) {
                p.avx2_fma = None;
            }
        }
        self.notes.push(format!(
            "the build does not target {} (its flags): sizes and peaks are for {}",
            dropped.join(", "),
            if self.flags.is_empty() {
                "scalar and 128-bit vector code".to_string()
            } else {
                self.flags.join(", ")
            }
        ));
        self
    }

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
        .filter(|c| c.kind != CacheKind::Instruction)
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

/// What this CPU is, read without running anything (`/proc/cpuinfo` and sysfs): its
/// relevant flags and its caches. For choices that depend on the CPU's shape, not its
/// speeds (register tiles and cache blocks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuShape {
    /// The relevant CPU flags present (as [`MachineInfo::flags`]).
    pub flags: Vec<String>,
    /// Caches of the first online CPU (as [`MachineInfo::caches`]).
    pub caches: Vec<CacheLevel>,
}

/// This machine's [`CpuShape`].
pub fn cpu_shape() -> CpuShape {
    let st = read_static(&SysPaths::linux());
    CpuShape {
        flags: st.flags,
        caches: st.caches,
    }
}

/// Minimum duration of one timed peak-FLOP/s run.
const DEFAULT_MIN_SECONDS: f64 = 0.2;

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
    let file = cached_file(&dir, &st, &compiler);
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
    // Cache levels in rounds apart in time, the best of each kept: a roof measured low
    // while another process shared the cores would put nests above it.
    let mut cache_bandwidth_1 = cache_bandwidths(&exe, &st.caches, 1)?;
    let mut cache_bandwidth_all = cache_bandwidths(&exe, &st.caches, st.usable_threads)?;
    for _ in 1..CACHE_ROUNDS {
        best_of(
            &mut cache_bandwidth_1,
            cache_bandwidths(&exe, &st.caches, 1)?,
        );
        let all = cache_bandwidths(&exe, &st.caches, st.usable_threads)?;
        best_of(&mut cache_bandwidth_all, all);
    }
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
        cache_bandwidth_1,
        cache_bandwidth_all,
        peak_1: one.peak,
        peak_all: all.peak,
        measured_at_unix,
        array_bytes: one.array_bytes,
        notes,
    };
    store_cached(&file, &info)?;
    Ok(info)
}

/// Where the description of this host under `compiler` is cached.
fn cached_file(dir: &Path, st: &Static, compiler: &str) -> std::path::PathBuf {
    dir.join(format!(
        "{}-{}.json",
        st.host,
        cache_key(&st.cpu_model, &st.flags, compiler)
    ))
}

/// Measures the roofs of `info` once more, the FMA peaks, memory and every cache level,
/// on one thread and on all, and keeps the faster of the two measurements of each (cached for the
/// next command). A nest found above one of its roofs calls it: on a host shared with
/// other guests a roof measured while they ran reads low, and noise only ever makes a
/// bandwidth smaller, so the best measurement is the roof.
pub fn raise_roofs(cache_root: &Path, tc: &Toolchain, info: &MachineInfo) -> Result<MachineInfo> {
    let st = read_static(&SysPaths::linux());
    let dir = cache_root.join("machine");
    let exe = build_bench(tc, &info.compiler, &dir.join("build"))?;
    let reps = MachineOptions::default().repetitions;
    let mut out = info.clone();
    let one = run_bench(&exe, info.array_bytes, reps, 1, DEFAULT_MIN_SECONDS)?;
    let all = run_bench(
        &exe,
        info.array_bytes,
        reps,
        st.usable_threads,
        DEFAULT_MIN_SECONDS,
    )?;
    let faster = |a: &mut Bandwidth, b: Bandwidth| {
        a.load = a.load.max(b.load);
        a.store = a.store.max(b.store);
        a.copy = a.copy.max(b.copy);
        a.triad = a.triad.max(b.triad);
    };
    faster(&mut out.bandwidth_1, one.bandwidth);
    faster(&mut out.bandwidth_all, all.bandwidth);
    let higher = |a: &mut Peak, b: Peak| {
        let max = |x: Option<f64>, y: Option<f64>| match (x, y) {
            (Some(x), Some(y)) => Some(x.max(y)),
            (x, y) => x.or(y),
        };
        a.scalar = a.scalar.max(b.scalar);
        a.avx2_fma = max(a.avx2_fma, b.avx2_fma);
        a.avx512_fma = max(a.avx512_fma, b.avx512_fma);
    };
    higher(&mut out.peak_1, one.peak);
    higher(&mut out.peak_all, all.peak);
    best_of(
        &mut out.cache_bandwidth_1,
        cache_bandwidths(&exe, &out.caches, 1)?,
    );
    best_of(
        &mut out.cache_bandwidth_all,
        cache_bandwidths(&exe, &out.caches, st.usable_threads)?,
    );
    // Only a description of this very host and compiler is cached over.
    if st.host == info.host && st.cpu_model == info.cpu_model {
        store_cached(&cached_file(&dir, &st, &info.compiler), &out)?;
    }
    Ok(out)
}

/// Rounds of the cache-level kernels (each the best of its repetitions).
const CACHE_ROUNDS: usize = 3;

/// The faster of two measurements of the same levels, per level and kernel.
fn best_of(into: &mut [CacheBandwidth], other: Vec<CacheBandwidth>) {
    for (a, b) in into.iter_mut().zip(other) {
        a.load = a.load.max(b.load);
        a.triad = a.triad.max(b.triad);
        a.update = a.update.max(b.update);
    }
}

/// Load, triad and update bandwidth of every data cache level on `threads` threads:
/// arrays of half the level's capacity, where the capacity counts every instance the
/// threads use; below L1, also arrays of twice the level above's capacity (data just
/// past the faster level, where a level streams fastest: a roof holds for every
/// footprint that lives in the level), the faster of the two per kernel.
fn cache_bandwidths(
    exe: &Path,
    caches: &[CacheLevel],
    threads: u32,
) -> Result<Vec<CacheBandwidth>> {
    let mut out = Vec::new();
    let mut above: Option<u64> = None;
    for c in data_caches(caches) {
        let instances = (threads.max(1) as u64).div_ceil(c.shared_by_cpus.max(1) as u64);
        let capacity_bytes = c.size_bytes * instances;
        let run = |array_bytes: u64| {
            // Each timed repetition moves at least 256 MiB.
            let inner = (256 * MIB / array_bytes).max(1);
            bench::run_cache_bench(exe, array_bytes, 5, threads, inner)
        };
        // Three arrays for the triad: together half the capacity.
        let array_bytes = (capacity_bytes / 6 / 256 * 256).max(256 * threads as u64);
        let (mut load, mut triad, mut update) = run(array_bytes)?;
        if let Some(faster) = above {
            let small = (2 * faster / 256 * 256).max(256 * threads as u64);
            if small < array_bytes {
                let (l, t, u) = run(small)?;
                (load, triad, update) = (load.max(l), triad.max(t), update.max(u));
            }
        }
        above = Some(capacity_bytes);
        out.push(CacheBandwidth {
            level: c.level,
            capacity_bytes,
            array_bytes,
            load,
            triad,
            update,
        });
    }
    Ok(out)
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
