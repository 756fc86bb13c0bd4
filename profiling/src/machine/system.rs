//! The static description of the machine: topology, caches, CPU flags and memory, read
//! from Linux sysfs and procfs without running anything.

use super::{data_caches, CacheKind, CacheLevel, KIB, MIB, RELEVANT_FLAGS};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Where the system description is read from (replaceable in tests).
#[derive(Debug, Clone)]
pub(super) struct SysPaths {
    /// `/sys/devices/system/cpu`
    pub(super) cpu: PathBuf,
    /// `/proc/cpuinfo`
    pub(super) cpuinfo: PathBuf,
    /// `/proc/meminfo`
    pub(super) meminfo: PathBuf,
    /// [`crate::host::SOURCES`]
    pub(super) hostname: Vec<PathBuf>,
}

impl SysPaths {
    pub(super) fn linux() -> SysPaths {
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
pub(super) struct Static {
    pub(super) host: String,
    pub(super) cpu_model: String,
    pub(super) cores: u32,
    pub(super) threads: u32,
    pub(super) sockets: u32,
    pub(super) caches: Vec<CacheLevel>,
    pub(super) flags: Vec<String>,
    pub(super) notes: Vec<String>,
    pub(super) mem_available: Option<u64>,
    /// Threads for the all-CPU runs: the online CPUs, or fewer when this process may
    /// only run on fewer (affinity mask, cgroup quota).
    pub(super) usable_threads: u32,
}

pub(super) fn read_static(sys: &SysPaths) -> Static {
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
        kind: if level == 1 {
            CacheKind::Data
        } else {
            CacheKind::Unified
        },
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
pub(super) fn read_caches(cpu_dir: &Path, cpu: u32) -> Vec<CacheLevel> {
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
        let kind = read("type").and_then(|s| CacheKind::parse(&s));
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
    out.sort_by_key(|c| (c.level, c.kind));
    out.dedup();
    out
}

/// `32K`, `1M`, `32768K`, `1G`, `512` (bytes).
pub(super) fn parse_size(s: &str) -> Option<u64> {
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
pub(super) fn parse_cpu_list(s: &str) -> Option<Vec<u32>> {
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
pub(super) fn parse_cpuinfo(text: &str) -> (String, Vec<String>) {
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
