//! `tune profile`: the profiling pass. A dry run saves every nest's data per version;
//! then each nest runs alone as a cutout on each saved version (warmup, repetitions,
//! counters, verification), static counts and the cache model place it on the machine's
//! roofline, and everything lands in a Chrome trace report.

use crate::run::{dry_run, DryRun, RunConfig, SAVE_BUDGET};
use crate::{Error, Result};
use profiling::cachemodel::{model, model_warm, CacheSpec};
use profiling::cutout::{BuildRecord, Cutout, CutoutRun};
use profiling::machine::{machine, MachineInfo, MachineOptions};
use profiling::measure::Measure;
use profiling::phases::Phases;
use profiling::report::{render_tree, NestPlace, TraceReport};
use profiling::roofline::{self, BytesKind, Roof, RooflineRow};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// Accesses the interpreter walks per nest version before it samples.
const MODEL_LIMIT: u64 = 20_000_000;

#[derive(Debug, Clone)]
/// How to run the profiling pass.
pub struct ProfileConfig {
    /// The dry run (program, flags, cache).
    pub run: RunConfig,
    /// Warmup, repetitions, counters of each nest's runs.
    pub measure: Measure,
    /// Per-run timeout of a cutout.
    pub timeout: Duration,
    /// Measure the machine (cached per host) and show the roofline.
    pub roofline: bool,
    /// How the machine benchmark runs.
    pub machine: MachineOptions,
}

/// Modelled and static counts of one nest version.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VersionModel {
    /// The saved version (invocation) of the nest.
    pub version: u64,
    /// Floating-point operations of the version.
    pub flops: u64,
    /// Bytes of every distinct element touched once.
    pub bytes_compulsory: u64,
    /// Flops per compulsory byte.
    pub oi: f64,
    /// The data the version touches, as it sits in the caches: the larger of the bytes
    /// read and the bytes written (an element updated in place is one element, where
    /// `bytes_compulsory` counts its read and its write); 0 in profiles written before
    /// it existed.
    #[serde(default)]
    pub footprint_bytes: u64,
    /// Modelled misses per cache level (name, misses) and DRAM bytes.
    pub misses: Vec<(String, u64)>,
    /// Modelled DRAM traffic (bytes).
    pub dram_bytes: u64,
    /// Counts and model are exact (not sampled).
    pub exact: bool,
    /// What the cache model assumed.
    pub note: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
/// One nest's profile.
pub struct NestProfile {
    /// The nest (`nest0`, ...).
    pub nest: String,
    /// Its region.
    pub region: usize,
    /// Line of its root loop in the source.
    pub line: u32,
    /// One run per saved version.
    pub runs: Vec<CutoutRun>,
    /// Counts and cache model per version.
    pub models: Vec<VersionModel>,
    /// Why a model could not be computed, if it could not.
    pub model_error: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
/// What `tune profile` found.
pub struct Profile {
    /// The program's name.
    pub program: String,
    /// Every nest.
    pub nests: Vec<NestProfile>,
    /// The nests under the 1-thread roofs.
    pub roofline: Vec<RooflineRow>,
    /// The roofs (absent with `--no-roofline`).
    pub roof: Option<Roof>,
    /// The machine description.
    pub machine: Option<MachineInfo>,
    /// Build and run history of the cutouts.
    pub history: Vec<BuildRecord>,
    /// The trace report written (Chrome trace JSON).
    pub report: String,
    /// The tree table of the report, as printed.
    pub tree: String,
    /// The harness's own phases, timed.
    pub phases: Vec<profiling::phases::PhaseRecord>,
}

/// The data caches of the machine (sysfs sizes), or typical sizes without it.
pub fn cache_specs(m: Option<&MachineInfo>) -> Vec<CacheSpec> {
    let sizes = m
        .map(|m| m.data_cache_sizes())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| vec![32 << 10, 1 << 20, 32 << 20]);
    sizes
        .iter()
        .enumerate()
        .map(|(k, s)| CacheSpec {
            name: format!("L{}", k + 1),
            size_bytes: *s,
            line_bytes: 64,
        })
        .collect()
}

/// Runs the profiling pass.
pub fn profile(cfg: &ProfileConfig) -> Result<Profile> {
    let phases = Phases::new();
    let top = phases.scope("profile");
    let dry = profiled_dry_run(cfg, &phases)?;
    let mut machine_info = if cfg.roofline {
        let _g = phases.scope("machine");
        Some(machine(
            &cfg.run.cache_root,
            &cfg.run.toolchain,
            &cfg.machine,
        )?)
    } else {
        None
    };
    let program = &dry.parsed.program;
    let mut report = TraceReport::new(&program.name);
    let mut nests = Vec::new();
    let mut history = Vec::new();
    let specs = cache_specs(machine_info.as_ref());
    for nest in &dry.nests {
        let (np, record) = profile_nest(cfg, &dry, nest, &specs, &phases, &mut report)?;
        history.push(record);
        nests.push(np);
    }
    drop(top);
    let (roof, rows) = match &mut machine_info {
        Some(m) => {
            let (mut roof, mut rows) = roofline_rows(m, &nests);
            // A nest above its roof shows the roof measured low (another guest on
            // the host while it ran): measured again, the best kept.
            for _ in 0..ROOF_RAISES {
                if rows.iter().all(|r| r.efficiency <= 1.0) {
                    break;
                }
                let _g = phases.scope("machine");
                *m = profiling::machine::raise_roofs(&cfg.run.cache_root, &cfg.run.toolchain, m)?;
                (roof, rows) = roofline_rows(m, &nests);
            }
            (Some(roof), rows)
        }
        None => (None, Vec::new()),
    };
    let records = phases.records();
    report.add_phases(&records);
    let path = write_report(&mut report, &dry, &nests, &rows, roof.as_ref(), &history)?;
    Ok(Profile {
        program: program.name.clone(),
        nests,
        roofline: rows,
        roof,
        machine: machine_info,
        history,
        report: path.display().to_string(),
        tree: render_tree(&report.tree()),
        phases: records,
    })
}

/// The dry run of the profiling pass (every version saved within the data budget),
/// refused unless the program exited normally and saved its data.
fn profiled_dry_run(cfg: &ProfileConfig, phases: &Phases) -> Result<DryRun> {
    let mut run_cfg = cfg.run.clone();
    run_cfg.save_budget = Some(SAVE_BUDGET);
    let dry = {
        let _g = phases.scope("dry-run");
        dry_run(&run_cfg, phases)?
    };
    if dry.summary.exit_code != 0 {
        let first = String::from_utf8_lossy(&dry.stderr)
            .lines()
            .next()
            .unwrap_or("")
            .to_string();
        return Err(Error::Failed(format!(
            "{}: the program exited with {} during the dry run{}",
            dry.summary.file,
            dry.summary.exit_code,
            if first.is_empty() {
                String::new()
            } else {
                format!(": {first}")
            }
        )));
    }
    if dry.summary.saved.as_ref().is_none_or(|s| s.failed) {
        return Err(Error::Failed(format!(
            "{}: the dry run saved no data",
            dry.summary.file
        )));
    }
    Ok(dry)
}

/// One nest, untransformed, on each saved version: runs, models, its build record.
fn profile_nest(
    cfg: &ProfileConfig,
    dry: &DryRun,
    nest: &ir::codegen::Nest,
    specs: &[CacheSpec],
    phases: &Phases,
    report: &mut TraceReport,
) -> Result<(NestProfile, BuildRecord)> {
    let program = &dry.parsed.program;
    let data = dry.cache.data();
    let region = &program.regions[nest.region];
    let line = ir::program::find_loop(&region.body, nest.root).map_or(0, |l| l.pos.line);
    let cutout = Cutout::new(
        program.clone(),
        nest.clone(),
        data.clone(),
        cfg.run.args.cflags.clone(),
    );
    let original = cutout.original();
    let (build, record) = {
        let _g = phases.scope("compile");
        cutout.build(
            &cfg.run.toolchain,
            &original,
            &dry.cache.root.join("cutouts"),
        )?
    };
    let mut record = BuildRecord {
        variant: format!("{}:{}", nest.name, record.variant),
        ..record
    };
    let mut np = NestProfile {
        nest: nest.name.clone(),
        region: nest.region,
        line,
        runs: Vec::new(),
        models: Vec::new(),
        model_error: None,
    };
    let place = NestPlace {
        region: nest.region,
        function: &region.function,
        nest: &nest.name,
        line,
    };
    let scratch = dry.cache.root.join("scratch");
    for v in profiling::cutout::saved_versions(&data, nest) {
        let run = {
            let _g = phases.scope("measure");
            cutout.run(
                &build.exe,
                &original.name,
                v,
                &cfg.measure,
                cfg.timeout,
                &scratch,
            )?
        };
        report.add_run(&place, &run);
        record.runs += 1;
        record.run_s += run.stats.median;
        np.runs.push(run);
        let _g = phases.scope("model");
        match version_model(
            cfg,
            program,
            nest,
            &profiling::cutout::env_of(&data, nest, v),
            specs,
            v,
        ) {
            Ok(m) => np.models.push(m),
            Err(e) => np.model_error = Some(e),
        }
    }
    Ok((np, record))
}

/// Counts and the cache model of one saved version of a nest.
fn version_model(
    cfg: &ProfileConfig,
    program: &ir::Program,
    nest: &ir::codegen::Nest,
    env: &ir::interp::Env,
    specs: &[CacheSpec],
    version: u64,
) -> std::result::Result<VersionModel, String> {
    let counts = ir::counts::nest_counts(program, nest.region, nest.root, env, MODEL_LIMIT)
        .map_err(|e| e.to_string())?;
    // Unflushed cutouts start with their inputs in cache (restored just before).
    let m = if cfg.measure.flush {
        model(program, nest.region, nest.root, env, specs, MODEL_LIMIT)
    } else {
        model_warm(program, nest.region, nest.root, env, specs, MODEL_LIMIT)
    }
    .map_err(|e| e.to_string())?;
    Ok(VersionModel {
        version,
        flops: counts.flops,
        bytes_compulsory: counts.bytes_compulsory,
        oi: counts.operational_intensity,
        footprint_bytes: counts.bytes_read.max(counts.bytes_written),
        misses: m
            .levels
            .iter()
            .map(|l| (l.name.clone(), l.misses))
            .collect(),
        dram_bytes: m.dram_bytes,
        exact: counts.exact && !m.sampled,
        note: m.note.clone(),
    })
}

/// Times the roofs are measured again while a nest reads above one of them.
pub(crate) const ROOF_RAISES: usize = 2;

/// The 1-thread roofline of the profiled nests.
fn roofline_rows(m: &MachineInfo, nests: &[NestProfile]) -> (Roof, Vec<RooflineRow>) {
    let roof = Roof::of(m, false);
    let mut rows: Vec<RooflineRow> = nests
        .iter()
        .filter(|n| !n.runs.is_empty())
        .map(|n| {
            let time: f64 = n.runs.iter().map(|r| r.stats.median).sum();
            let flops: u64 = n.models.iter().map(|m| m.flops).sum();
            let dram: u64 = n.models.iter().map(|m| m.dram_bytes).sum();
            let compulsory: u64 = n.models.iter().map(|m| m.bytes_compulsory).sum();
            // One run's data: the level it lives in gives the roof. Read and written
            // elements may be the same ones: the larger of the two sets (a lower bound
            // of the data, so the roof is never set by a level slower than the one the
            // data fits).
            let footprint = n
                .models
                .iter()
                .map(|m| {
                    if m.footprint_bytes > 0 {
                        m.footprint_bytes
                    } else {
                        m.bytes_compulsory
                    }
                })
                .max()
                .unwrap_or(0);
            let in_cache = roof.in_cache(footprint);
            // Held against DRAM: the modelled DRAM traffic where the model ran;
            // against a cache level (or without a model): every element once.
            let (bytes, kind) = if !in_cache && n.model_error.is_none() && !n.models.is_empty() {
                (dram, BytesKind::ModelledDram)
            } else {
                (compulsory, BytesKind::Compulsory)
            };
            let work = roofline::Work {
                flops,
                bytes,
                bytes_kind: kind,
                footprint,
            };
            RooflineRow::new(&n.nest, n.runs.len(), time, work, &roof)
        })
        .collect();
    roofline::set_shares(&mut rows);
    (roof, rows)
}

/// Completes the trace report (roofline, history, models) and writes it under the
/// program's `perf/` folder.
fn write_report(
    report: &mut TraceReport,
    dry: &DryRun,
    nests: &[NestProfile],
    rows: &[RooflineRow],
    roof: Option<&Roof>,
    history: &[BuildRecord],
) -> Result<PathBuf> {
    report
        .other
        .insert("file".into(), serde_json::json!(dry.parsed.program.file));
    report.other.insert(
        "roofline".into(),
        serde_json::to_value(rows).expect("rows serialize"),
    );
    if let Some(r) = roof {
        report.other.insert(
            "roof".into(),
            serde_json::to_value(r).expect("roof serializes"),
        );
    }
    report.other.insert(
        "history".into(),
        serde_json::to_value(history).expect("history serializes"),
    );
    let models: Vec<_> = nests
        .iter()
        .map(|n| serde_json::json!({ "nest": n.nest, "models": n.models, "error": n.model_error }))
        .collect();
    report
        .other
        .insert("models".into(), serde_json::Value::Array(models));
    Ok(report.write(&dry.cache.root.join("perf"))?)
}
