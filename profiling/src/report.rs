//! Instrumentation reports in the Chrome Trace Event format (Perfetto and
//! `chrome://tracing` open them): `ph:"X"` complete events for every timed repetition
//! of every nest version and for the harness's phases, `ph:"C"` counter events, and
//! `otherData` with the program, roofline rows and kernel history. The tree table
//! printed by `tune profile` and `tune report` is rebuilt from the events alone.
//!
//! Files: `.tunecache/<program>/perf/report-<unix ms>.json`.

use crate::cutout::CutoutRun;
use crate::measure::Stats;
use crate::phases::PhaseRecord;
use crate::{io_err, Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::fmt::Write;
use std::path::{Path, PathBuf};

const PID_HARNESS: u32 = 1;
const PID_NESTS: u32 = 2;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceEvent {
    pub name: String,
    #[serde(default)]
    pub cat: String,
    pub ph: String,
    /// Microseconds.
    #[serde(default)]
    pub ts: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dur: Option<f64>,
    #[serde(default)]
    pub pid: u32,
    #[serde(default)]
    pub tid: u32,
    #[serde(default)]
    pub args: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceReport {
    #[serde(rename = "traceEvents")]
    pub events: Vec<TraceEvent>,
    #[serde(rename = "displayTimeUnit", default)]
    pub display_time_unit: String,
    #[serde(rename = "otherData", default)]
    pub other: Map<String, Value>,
    /// Where the nest timeline has got to (µs).
    #[serde(skip)]
    cursor: f64,
}

/// Where a nest sits, for labels.
#[derive(Debug, Clone)]
pub struct NestPlace<'a> {
    pub region: usize,
    pub function: &'a str,
    pub nest: &'a str,
    pub line: u32,
}

impl TraceReport {
    pub fn new(program: &str) -> TraceReport {
        let meta = |pid: u32, name: &str| TraceEvent {
            name: "process_name".into(),
            cat: String::new(),
            ph: "M".into(),
            ts: 0.0,
            dur: None,
            pid,
            tid: 0,
            args: json!({ "name": name })
                .as_object()
                .cloned()
                .unwrap_or_default(),
        };
        let mut other = Map::new();
        other.insert("program".into(), json!(program));
        other.insert("format".into(), json!("tune trace report 1"));
        TraceReport {
            events: vec![
                meta(PID_HARNESS, "tune (harness phases)"),
                meta(PID_NESTS, &format!("{program} (nests)")),
            ],
            display_time_unit: "ms".into(),
            other,
            cursor: 0.0,
        }
    }

    /// The harness's own phases, on their real timeline.
    pub fn add_phases(&mut self, phases: &[PhaseRecord]) {
        for p in phases {
            self.events.push(TraceEvent {
                name: p.name.clone(),
                cat: "harness".into(),
                ph: "X".into(),
                ts: p.start_s * 1e6,
                dur: Some(p.dur_s * 1e6),
                pid: PID_HARNESS,
                tid: 0,
                args: json!({ "path": p.path, "depth": p.depth })
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            });
        }
    }

    /// Every timed repetition of one run, end to end on the nest timeline, and its
    /// available counters as a counter event (unavailable ones are listed, not zeroed).
    pub fn add_run(&mut self, place: &NestPlace, run: &CutoutRun) {
        let base = json!({
            "region": place.region,
            "function": place.function,
            "nest": place.nest,
            "line": place.line,
            "version": run.version,
            "variant": run.variant,
            "verdict": run.verdict.describe(),
        });
        let mut counters = Map::new();
        let mut unavailable = Vec::new();
        for c in &run.counters {
            match c.per_rep {
                Some(v) if c.available => {
                    counters.insert(c.name.clone(), json!(v));
                }
                _ => unavailable.push(format!(
                    "{} ({})",
                    c.name,
                    c.reason.clone().unwrap_or_default()
                )),
            }
        }
        if !counters.is_empty() || !unavailable.is_empty() {
            let mut args = counters;
            if !unavailable.is_empty() {
                self.other
                    .insert("unavailable_counters".into(), json!(unavailable));
            }
            args.retain(|_, v| v.is_number());
            self.events.push(TraceEvent {
                name: format!("{} v{} counters per repetition", place.nest, run.version),
                cat: "counters".into(),
                ph: "C".into(),
                ts: self.cursor,
                dur: None,
                pid: PID_NESTS,
                tid: 0,
                args,
            });
        }
        for (rep, s) in run.samples.iter().enumerate() {
            let mut args = base.as_object().cloned().unwrap_or_default();
            args.insert("rep".into(), json!(rep));
            self.events.push(TraceEvent {
                name: format!("{} v{}", place.nest, run.version),
                cat: "nest".into(),
                ph: "X".into(),
                ts: self.cursor,
                dur: Some(s * 1e6),
                pid: PID_NESTS,
                tid: 0,
                args,
            });
            self.cursor += s * 1e6 + 1.0;
        }
    }

    /// Writes `<perf_dir>/report-<unix ms>.json` and returns its path.
    pub fn write(&self, perf_dir: &Path) -> Result<PathBuf> {
        let mut ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        let text = serde_json::to_string_pretty(self).expect("report serializes");
        loop {
            let path = perf_dir.join(format!("report-{ms}.json"));
            if path.exists() {
                ms += 1;
                continue;
            }
            crate::files::write_atomic(&path, text.as_bytes()).map_err(io_err(&path))?;
            return Ok(path);
        }
    }

    pub fn load(path: &Path) -> Result<TraceReport> {
        let text = std::fs::read_to_string(path).map_err(io_err(path))?;
        serde_json::from_str(&text)
            .map_err(|e| Error::Usage(format!("{}: not a tune trace report: {e}", path.display())))
    }

    /// Every report of a program, oldest first.
    pub fn all(perf_dir: &Path) -> Result<Vec<PathBuf>> {
        let mut v: Vec<(u128, PathBuf)> = match std::fs::read_dir(perf_dir) {
            Ok(rd) => rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter_map(|p| {
                    let name = p.file_name()?.to_str()?.to_string();
                    let ms = name
                        .strip_prefix("report-")?
                        .strip_suffix(".json")?
                        .parse()
                        .ok()?;
                    Some((ms, p))
                })
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => {
                return Err(Error::Io {
                    path: perf_dir.display().to_string(),
                    source: e,
                })
            }
        };
        v.sort();
        Ok(v.into_iter().map(|(_, p)| p).collect())
    }

    /// The newest report of a program.
    pub fn latest(perf_dir: &Path) -> Result<Option<PathBuf>> {
        Ok(TraceReport::all(perf_dir)?.pop())
    }

    pub fn program(&self) -> String {
        self.other
            .get("program")
            .and_then(|v| v.as_str())
            .unwrap_or("program")
            .to_string()
    }

    /// The tree: program, regions, nests, versions, with statistics of the samples.
    pub fn tree(&self) -> Vec<TreeRow> {
        struct Leaf {
            region: u64,
            function: String,
            nest: String,
            line: u64,
            version: u64,
            samples: Vec<f64>,
        }
        let mut leaves: Vec<Leaf> = Vec::new();
        for e in self
            .events
            .iter()
            .filter(|e| e.ph == "X" && e.cat == "nest")
        {
            let a = &e.args;
            let region = a.get("region").and_then(Value::as_u64).unwrap_or(0);
            let nest = a
                .get("nest")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string();
            let version = a.get("version").and_then(Value::as_u64).unwrap_or(0);
            let d = e.dur.unwrap_or(0.0) / 1e6;
            match leaves
                .iter_mut()
                .find(|l| l.region == region && l.nest == nest && l.version == version)
            {
                Some(l) => l.samples.push(d),
                None => leaves.push(Leaf {
                    region,
                    function: a
                        .get("function")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    nest,
                    line: a.get("line").and_then(Value::as_u64).unwrap_or(0),
                    version,
                    samples: vec![d],
                }),
            }
        }
        let mut rows = vec![TreeRow {
            label: self.program(),
            depth: 0,
            agg: Agg::default(),
            n: 0,
        }];
        let mut regions: Vec<u64> = leaves.iter().map(|l| l.region).collect();
        regions.dedup();
        for r in regions {
            let first = leaves.iter().find(|l| l.region == r).expect("region leaf");
            let ri = rows.len();
            rows.push(TreeRow {
                label: format!("region{r} {}()", first.function),
                depth: 1,
                agg: Agg::default(),
                n: 0,
            });
            let mut nests: Vec<&str> = leaves
                .iter()
                .filter(|l| l.region == r)
                .map(|l| l.nest.as_str())
                .collect();
            nests.dedup();
            for n in nests {
                let versions: Vec<&Leaf> = leaves
                    .iter()
                    .filter(|l| l.region == r && l.nest == n)
                    .collect();
                let ni = rows.len();
                rows.push(TreeRow {
                    label: format!("{n} (line {})", versions[0].line),
                    depth: 2,
                    agg: Agg::default(),
                    n: 0,
                });
                let mut nest_agg = Agg::default();
                for v in &versions {
                    let s = Stats::from_samples(&v.samples);
                    nest_agg.add(&Agg::of(&s));
                    rows[ni].n += s.n;
                    if versions.len() > 1 {
                        rows.push(TreeRow {
                            label: format!("v{}", v.version),
                            depth: 3,
                            agg: Agg::of(&s),
                            n: s.n,
                        });
                    }
                }
                rows[ni].agg = nest_agg;
                rows[ri].agg.add(&nest_agg);
                rows[ri].n += rows[ni].n;
            }
            let region_agg = rows[ri].agg;
            rows[0].agg.add(&region_agg);
            rows[0].n += rows[ri].n;
        }
        rows
    }
}

/// Statistics of a tree row: a leaf's own, or sums over its children (the time of
/// one execution of everything profiled below it).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Agg {
    pub min: f64,
    pub mean: f64,
    pub median: f64,
    pub max: f64,
}

impl Agg {
    fn of(s: &Stats) -> Agg {
        Agg {
            min: s.min,
            mean: s.mean,
            median: s.median,
            max: s.max,
        }
    }

    fn add(&mut self, o: &Agg) {
        self.min += o.min;
        self.mean += o.mean;
        self.median += o.median;
        self.max += o.max;
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct TreeRow {
    pub label: String,
    pub depth: usize,
    pub agg: Agg,
    /// Samples below this row.
    pub n: usize,
}

/// Milliseconds with four significant digits, however small (`seconds` in seconds).
pub fn ms(seconds: f64) -> String {
    let v = seconds * 1e3;
    match v.abs() {
        0.0 => "0".into(),
        x if x >= 1000.0 => format!("{v:.0}"),
        x if x >= 1e-3 => {
            let decimals = (3 - x.log10().floor() as i32).max(0) as usize;
            format!("{v:.decimals$}")
        }
        _ => format!("{v:.3e}"),
    }
}

/// The tree as a table: element, samples, min, mean, median, max (ms).
pub fn render_tree(rows: &[TreeRow]) -> String {
    let width = rows
        .iter()
        .map(|r| 2 * r.depth + r.label.chars().count())
        .max()
        .unwrap_or(8)
        .max(8)
        + 2;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<width$}{:>8}{:>12}{:>12}{:>12}{:>12}",
        "element", "samples", "min ms", "mean ms", "median ms", "max ms"
    );
    for r in rows {
        let label = format!("{}{}", "  ".repeat(r.depth), r.label);
        let _ = writeln!(
            out,
            "{label:<width$}{:>8}{:>12}{:>12}{:>12}{:>12}",
            r.n,
            ms(r.agg.min),
            ms(r.agg.mean),
            ms(r.agg.median),
            ms(r.agg.max)
        );
    }
    out
}
