//! Roofline position of each nest: achieved GFLOP/s and GB/s against the machine's
//! roofs, attainable = min(peak, bandwidth × operational intensity).

use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// The roofs a nest is held against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Roof {
    pub peak_gflops: f64,
    /// DRAM bandwidth.
    pub bandwidth_gbs: f64,
    /// Where the numbers come from (e.g. "tune machine, 1 thread, AVX-512 FMA / triad").
    pub source: String,
    /// The cache levels' roofs, smallest first: a nest whose data fits a level is held
    /// against that level's bandwidth.
    #[serde(default)]
    pub caches: Vec<CacheRoof>,
}

/// The bandwidth roof of one cache level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheRoof {
    pub level: u32,
    /// Bytes the measured threads keep at this level.
    pub capacity_bytes: u64,
    pub bandwidth_gbs: f64,
}

impl Roof {
    /// The roof for a machine's threads (`all`: every thread, else one), cache levels
    /// included.
    pub fn of(m: &crate::machine::MachineInfo, all: bool) -> Roof {
        let (peak, dram, caches, who) = if all {
            (
                m.best_peak_all(),
                m.bandwidth_all.triad,
                &m.cache_bandwidth_all,
                format!("{} threads", m.threads),
            )
        } else {
            (
                m.best_peak_1(),
                m.bandwidth_1.triad,
                &m.cache_bandwidth_1,
                "1 thread".to_string(),
            )
        };
        let caches: Vec<CacheRoof> = caches
            .iter()
            .map(|c| CacheRoof {
                level: c.level,
                capacity_bytes: c.capacity_bytes,
                bandwidth_gbs: c.roof(),
            })
            .collect();
        Roof {
            peak_gflops: peak,
            bandwidth_gbs: dram,
            source: format!(
                "tune machine, {who}: best FMA peak; {}DRAM triad",
                if caches.is_empty() {
                    "".to_string()
                } else {
                    "cache levels' load/triad/update, ".to_string()
                }
            ),
            caches,
        }
    }

    /// The memory level that binds data of `footprint` bytes, and the bandwidth it can
    /// be streamed at: the hierarchical roofline's bound. Every byte passes through L1;
    /// the bytes that do not fit a level come from the one below it, at that level's
    /// rate (an inclusive hierarchy, warm caches); the levels move their parts at once,
    /// so the slowest of them bounds the time (Ilic et al.'s cache-aware roofline: the
    /// minimum over levels of each level's bandwidth times its intensity). An additive
    /// model (each level's part after the other's) is no upper bound: a nest whose
    /// data is just past L1 overlaps its L1 hits with its L2 fills and reads above it.
    pub fn memory(&self, footprint: u64) -> (Bound, f64) {
        let f = footprint as f64;
        if footprint == 0 || self.caches.is_empty() {
            return (Bound::Dram, self.bandwidth_gbs);
        }
        let mut slowest = (Bound::cache(self.caches[0].level), 0.0);
        let mut above = 0.0;
        for c in &self.caches {
            let seconds = (f - above).max(0.0) / c.bandwidth_gbs.max(1e-12);
            if seconds > slowest.1 {
                slowest = (Bound::cache(c.level), seconds);
            }
            if f <= c.capacity_bytes as f64 {
                return (slowest.0, f / slowest.1.max(1e-30));
            }
            above = c.capacity_bytes as f64;
        }
        let seconds = (f - above) / self.bandwidth_gbs.max(1e-12);
        if seconds > slowest.1 {
            slowest = (Bound::Dram, seconds);
        }
        (slowest.0, f / slowest.1.max(1e-30))
    }

    /// Whether data of `footprint` bytes fits one of the cache levels.
    pub fn in_cache(&self, footprint: u64) -> bool {
        footprint > 0 && self.caches.iter().any(|c| footprint <= c.capacity_bytes)
    }
}

/// Which bytes a row's operational intensity counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum BytesKind {
    /// DRAM traffic from the cache model.
    #[serde(rename = "modelled DRAM")]
    ModelledDram,
    /// Every distinct element touched once.
    #[serde(rename = "compulsory")]
    Compulsory,
}

/// Which roof bounds a nest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Bound {
    /// DRAM bandwidth × operational intensity is below the peak.
    #[serde(rename = "DRAM")]
    Dram,
    /// The bandwidth of the cache level the data fits in.
    L1,
    L2,
    L3,
    L4,
    /// The floating-point peak.
    #[serde(rename = "FP peak")]
    FpPeak,
}

impl Bound {
    fn cache(level: u32) -> Bound {
        match level {
            1 => Bound::L1,
            2 => Bound::L2,
            3 => Bound::L3,
            _ => Bound::L4,
        }
    }
}

impl std::fmt::Display for BytesKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(match self {
            BytesKind::ModelledDram => "modelled DRAM",
            BytesKind::Compulsory => "compulsory",
        })
    }
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(match self {
            Bound::Dram => "DRAM",
            Bound::L1 => "L1",
            Bound::L2 => "L2",
            Bound::L3 => "L3",
            Bound::L4 => "L4",
            Bound::FpPeak => "FP",
        })
    }
}

/// What a nest did in the time a row holds it to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Work {
    pub flops: u64,
    /// The bytes its operational intensity counts.
    pub bytes: u64,
    pub bytes_kind: BytesKind,
    /// The data one run touches: the memory level it lives in gives the roof.
    pub footprint: u64,
}

/// One nest under the roofs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RooflineRow {
    pub nest: String,
    pub versions: usize,
    /// Sum of the median times of the profiled versions.
    pub time_s: f64,
    /// Share of the program's profiled time.
    pub share: f64,
    pub flops: u64,
    pub bytes: u64,
    pub bytes_kind: BytesKind,
    pub gflops: f64,
    pub gbs: f64,
    /// flops / byte.
    pub oi: f64,
    pub attainable_gflops: f64,
    /// Achieved over attainable (bandwidth over bandwidth roof when there are no flops).
    pub efficiency: f64,
    pub bound: Bound,
}

impl RooflineRow {
    pub fn new(nest: &str, versions: usize, time_s: f64, work: Work, roof: &Roof) -> RooflineRow {
        let Work {
            flops,
            bytes,
            bytes_kind,
            footprint,
        } = work;
        let t = time_s.max(1e-12);
        let gflops = flops as f64 / t / 1e9;
        let gbs = bytes as f64 / t / 1e9;
        let oi = if bytes > 0 {
            flops as f64 / bytes as f64
        } else {
            f64::INFINITY
        };
        // The data of one run (its footprint) lives in the smallest level that holds it,
        // or nearer: a run that moved its bytes faster than that level's roof read them
        // from a faster level (a warm run, a tile that stays in cache), and is held
        // against the slowest level that reaches its bandwidth (the fastest if none does).
        let (memory, bandwidth) = roof.memory(footprint);
        let (memory, bandwidth) = match bytes > 0 && gbs > bandwidth {
            true => roof
                .caches
                .iter()
                .filter(|c| c.bandwidth_gbs >= gbs)
                .min_by(|a, b| a.bandwidth_gbs.total_cmp(&b.bandwidth_gbs))
                .or_else(|| {
                    roof.caches
                        .iter()
                        .max_by(|a, b| a.bandwidth_gbs.total_cmp(&b.bandwidth_gbs))
                })
                .filter(|c| c.bandwidth_gbs > bandwidth)
                .map_or((memory, bandwidth), |c| {
                    (Bound::cache(c.level), c.bandwidth_gbs)
                }),
            false => (memory, bandwidth),
        };
        let memory_roof = bandwidth * oi;
        let (attainable, bound) = if memory_roof < roof.peak_gflops {
            (memory_roof, memory)
        } else {
            (roof.peak_gflops, Bound::FpPeak)
        };
        let efficiency = if flops > 0 {
            gflops / attainable.max(1e-12)
        } else {
            gbs / bandwidth.max(1e-12)
        };
        RooflineRow {
            nest: nest.to_string(),
            versions,
            time_s,
            share: 0.0,
            flops,
            bytes,
            bytes_kind,
            gflops,
            gbs,
            oi: if oi.is_finite() { oi } else { 0.0 },
            attainable_gflops: if flops > 0 { attainable } else { 0.0 },
            efficiency,
            bound: if flops > 0 { bound } else { memory },
        }
    }
}

/// Fills in each row's share of the total time.
pub fn set_shares(rows: &mut [RooflineRow]) {
    let total: f64 = rows.iter().map(|r| r.time_s).sum();
    for r in rows {
        r.share = if total > 0.0 { r.time_s / total } else { 0.0 };
    }
}

/// `[███████░░░]` for a fraction in [0, 1].
pub fn bar(fraction: f64) -> String {
    let filled = (fraction.clamp(0.0, 1.0) * 10.0).round() as usize;
    format!("[{}{}]", "█".repeat(filled), "░".repeat(10 - filled))
}

pub fn render(rows: &[RooflineRow], roof: &Roof) -> String {
    let mut out = String::new();
    let mut memory = String::new();
    for c in &roof.caches {
        let _ = write!(memory, "L{} {:.1}, ", c.level, c.bandwidth_gbs);
    }
    let _ = writeln!(
        out,
        "roofline ({:.1} GFLOP/s; {memory}DRAM {:.1} GB/s: {})",
        roof.peak_gflops, roof.bandwidth_gbs, roof.source
    );
    let _ = writeln!(
        out,
        "{:<8}{:>7}{:>10}{:>9}{:>9}  {:<32}bytes",
        "nest", "share", "GFLOP/s", "GB/s", "flop/B", "efficiency"
    );
    for r in rows {
        let eff = format!(
            "{} {:>3.0}% {}",
            bar(r.efficiency),
            r.efficiency * 100.0,
            r.bound
        );
        let _ = writeln!(
            out,
            "{:<8}{:>6.1}%{:>10.2}{:>9.2}{:>9.3}  {:<32}{}",
            r.nest,
            r.share * 100.0,
            r.gflops,
            r.gbs,
            r.oi,
            eff,
            r.bytes_kind
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_pick_the_binding_roof() {
        let roof = Roof {
            peak_gflops: 100.0,
            bandwidth_gbs: 10.0,
            source: "test".into(),
            caches: vec![CacheRoof {
                level: 2,
                capacity_bytes: 1 << 20,
                bandwidth_gbs: 50.0,
            }],
        };
        // 1 GFLOP, 1 GB in 1 s: OI 1 -> memory roof 10 GFLOP/s binds; 1/10 efficient.
        let r = RooflineRow::new(
            "n",
            1,
            1.0,
            Work {
                flops: 1_000_000_000,
                bytes: 1_000_000_000,
                bytes_kind: BytesKind::Compulsory,
                footprint: 0,
            },
            &roof,
        );
        assert_eq!(r.bound, Bound::Dram);
        assert!((r.efficiency - 0.1).abs() < 1e-12);
        // Data of 2 MiB: all of it through L2 (50 GB/s), half of it from DRAM (10) at
        // the same time: DRAM's 1 MiB takes longest, an effective 20 GB/s.
        let (bound, bw) = roof.memory(2 << 20);
        assert_eq!(bound, Bound::Dram);
        assert!((bw - 20.0).abs() < 1e-9, "{bw}");
        assert!(!roof.in_cache(2 << 20) && roof.in_cache(1 << 20));
        // Just past a fast level, the fast level's pass over all of it can take
        // longest: 1.1 MiB through L1 at 100 GB/s (11 ms a GB) against 0.1 MiB from L2
        // at 50 (2 ms): L1 binds, at 100 GB/s.
        let two = Roof {
            caches: vec![
                CacheRoof {
                    level: 1,
                    capacity_bytes: 1 << 20,
                    bandwidth_gbs: 100.0,
                },
                CacheRoof {
                    level: 2,
                    capacity_bytes: 8 << 20,
                    bandwidth_gbs: 50.0,
                },
            ],
            ..roof.clone()
        };
        let (bound, bw) = two.memory((1 << 20) + (1 << 20) / 10);
        assert_eq!(bound, Bound::L1);
        assert!((bw - 100.0).abs() < 1e-9, "{bw}");
        // At 4 MiB, L2's 3 MiB (60 ms a GB) outlast L1's 4 (40): L2 binds, at 66.7.
        let (bound, bw) = two.memory(4 << 20);
        assert_eq!(bound, Bound::L2);
        assert!((bw - 4.0 / 3.0 * 50.0).abs() < 1e-9, "{bw}");
        // OI 100: the FP peak binds.
        let r = RooflineRow::new(
            "n",
            1,
            1.0,
            Work {
                flops: 50_000_000_000,
                bytes: 500_000_000,
                bytes_kind: BytesKind::Compulsory,
                footprint: 0,
            },
            &roof,
        );
        assert_eq!(r.bound, Bound::FpPeak);
        assert!((r.efficiency - 0.5).abs() < 1e-12);
        // The same traffic from data that fits L2: held against L2's 50 GB/s.
        let r = RooflineRow::new(
            "n",
            1,
            1.0,
            Work {
                flops: 1_000_000_000,
                bytes: 1_000_000_000,
                bytes_kind: BytesKind::Compulsory,
                footprint: 1 << 19,
            },
            &roof,
        );
        assert_eq!(r.bound, Bound::L2);
        assert!((r.efficiency - 0.02).abs() < 1e-12);
        assert_eq!(format!("{:.0}% {}", r.efficiency * 100.0, r.bound), "2% L2");
        assert_eq!(bar(0.71), "[███████░░░]");
    }

    #[test]
    fn a_run_faster_than_its_levels_roof_is_held_against_the_level_it_read_from() {
        let roof = Roof {
            peak_gflops: 1000.0,
            bandwidth_gbs: 10.0,
            source: "test".into(),
            caches: vec![
                CacheRoof {
                    level: 1,
                    capacity_bytes: 1 << 15,
                    bandwidth_gbs: 200.0,
                },
                CacheRoof {
                    level: 2,
                    capacity_bytes: 1 << 20,
                    bandwidth_gbs: 100.0,
                },
                CacheRoof {
                    level: 3,
                    capacity_bytes: 1 << 25,
                    bandwidth_gbs: 40.0,
                },
            ],
        };
        let row = |gb: f64, footprint: u64| {
            RooflineRow::new(
                "n",
                1,
                1.0,
                Work {
                    flops: 100_000_000,
                    bytes: (gb * 1e9) as u64,
                    bytes_kind: BytesKind::Compulsory,
                    footprint,
                },
                &roof,
            )
        };
        // 64 MiB of data reads as DRAM's (20 GB/s with half of it in L3); 30 GB/s came
        // from L3 (40): 75% L3, not 150%.
        let r = row(30.0, 1 << 26);
        assert_eq!(
            (r.bound, format!("{:.0}", r.efficiency * 100.0)),
            (Bound::L3, "75".into())
        );
        // 150 GB/s: only L1 reaches it.
        let r = row(150.0, 1 << 26);
        assert_eq!(
            (r.bound, format!("{:.0}", r.efficiency * 100.0)),
            (Bound::L1, "75".into())
        );
        // Within its own level's roof it stays there: 5 GB/s of the 20 that half of it
        // from DRAM (10) and half from L3 allow.
        let r = row(5.0, 1 << 26);
        assert_eq!(
            (r.bound, format!("{:.0}", r.efficiency * 100.0)),
            (Bound::Dram, "25".into())
        );
        // Faster than every roof: held against the fastest, and above 100% (a roof
        // measured wrong shows).
        assert!(row(400.0, 1 << 26).efficiency > 1.0);
    }
}
