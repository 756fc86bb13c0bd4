//! Roofline position of each nest: achieved GFLOP/s and GB/s against the machine's
//! roofs, attainable = min(peak, bandwidth × operational intensity).

use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// The roofs a nest is held against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Roof {
    pub peak_gflops: f64,
    pub bandwidth_gbs: f64,
    /// Where the numbers come from (e.g. "tune machine, 1 thread, AVX-512 FMA / triad").
    pub source: String,
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
    /// Memory bandwidth × operational intensity is below the peak.
    #[serde(rename = "DRAM")]
    Dram,
    /// The floating-point peak.
    #[serde(rename = "FP peak")]
    FpPeak,
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
            Bound::FpPeak => "FP peak",
        })
    }
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
    pub fn new(
        nest: &str,
        versions: usize,
        time_s: f64,
        flops: u64,
        bytes: u64,
        bytes_kind: BytesKind,
        roof: &Roof,
    ) -> RooflineRow {
        let t = time_s.max(1e-12);
        let gflops = flops as f64 / t / 1e9;
        let gbs = bytes as f64 / t / 1e9;
        let oi = if bytes > 0 {
            flops as f64 / bytes as f64
        } else {
            f64::INFINITY
        };
        let memory_roof = roof.bandwidth_gbs * oi;
        let (attainable, bound) = if memory_roof < roof.peak_gflops {
            (memory_roof, Bound::Dram)
        } else {
            (roof.peak_gflops, Bound::FpPeak)
        };
        let efficiency = if flops > 0 {
            gflops / attainable.max(1e-12)
        } else {
            gbs / roof.bandwidth_gbs.max(1e-12)
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
            bound: if flops > 0 { bound } else { Bound::Dram },
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
    let _ = writeln!(
        out,
        "roofline ({:.1} GFLOP/s, {:.1} GB/s: {})",
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
        };
        // 1 GFLOP, 1 GB in 1 s: OI 1 -> memory roof 10 GFLOP/s binds; 1/10 efficient.
        let r = RooflineRow::new(
            "n",
            1,
            1.0,
            1_000_000_000,
            1_000_000_000,
            BytesKind::Compulsory,
            &roof,
        );
        assert_eq!(r.bound, Bound::Dram);
        assert!((r.efficiency - 0.1).abs() < 1e-12);
        // OI 100: the FP peak binds.
        let r = RooflineRow::new(
            "n",
            1,
            1.0,
            50_000_000_000,
            500_000_000,
            BytesKind::Compulsory,
            &roof,
        );
        assert_eq!(r.bound, Bound::FpPeak);
        assert!((r.efficiency - 0.5).abs() < 1e-12);
        assert_eq!(bar(0.71), "[███████░░░]");
    }
}
