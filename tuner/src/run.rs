//! `tune run`: the program through the harness, with Save.

use crate::{Error, Result};
use ir::codegen::{generate, CodegenOptions, Nest};
use ir::program::{Loop, Node};
use profiling::build::{build, BuildRequest, Toolchain};
use profiling::cache::ProgramCache;
use profiling::cc::CcArgs;
use profiling::phases::Phases;
use profiling::run::{run, Exit, RunOptions, RuntimeReport, SavedFile};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// Everything `tune run` needs.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The program and its cc flags.
    pub args: CcArgs,
    /// Tune this function's body instead of the `#pragma scop` regions.
    pub function: Option<String>,
    /// Functions of the user's assumed pure (`--assume-pure`).
    pub assume_pure: Vec<String>,
    /// The cache folder (`.tunecache`).
    pub cache_root: PathBuf,
    /// Versions saved per nest and region; 0 disables Save, negative saves all.
    pub save_versions: i64,
    /// Add OpenMP to parallel loops and build with `-fopenmp`.
    pub openmp: bool,
    /// Kill the program after this long.
    pub timeout: Option<Duration>,
    /// Arguments for the program itself.
    pub program_args: Vec<String>,
    /// The compiler and flags.
    pub toolchain: Toolchain,
    /// Keep the program's stdout/stderr instead of passing them through (profiling).
    pub capture: bool,
    /// Save fewer versions when their data would exceed this many bytes.
    pub save_budget: Option<u64>,
    /// With one version saved per nest: save the invocation where half of the nest's
    /// time was spent instead of the first when the first is much smaller (a second run
    /// of the program; `crate::versions`).
    pub representative: bool,
    /// Time and Save the whole loop nests too (`ir::codegen::whole_nests`): the
    /// whole-nest stage of `tune apply` measures them on that data.
    pub whole_nests: bool,
}

impl RunConfig {
    /// The dry run tuning commands use: the program's output captured, the first
    /// invocation of every nest saved.
    pub fn tuning(args: CcArgs, cache_root: PathBuf, toolchain: Toolchain) -> RunConfig {
        RunConfig {
            args,
            function: None,
            assume_pure: Vec::new(),
            cache_root,
            save_versions: 1,
            openmp: false,
            timeout: None,
            program_args: Vec::new(),
            toolchain,
            capture: true,
            save_budget: None,
            representative: true,
            whole_nests: false,
        }
    }
}

/// Bytes the dry run may save; fewer versions are saved when they would not fit.
pub const SAVE_BUDGET: u64 = 2 << 30;

/// The number of versions to save so that inputs and outputs of every nest, per
/// version, stay within `budget` (from the arrays' declared extents).
pub fn versions_within_budget(
    program: &ir::Program,
    nests: &[Nest],
    requested: i64,
    budget: u64,
) -> i64 {
    let bytes = |name: &str| -> u64 {
        program.array(name).map_or(0, |a| {
            a.extents
                .iter()
                .map(|e| e.unwrap_or(0).max(0) as u64)
                .product::<u64>()
                * a.dtype.size() as u64
        })
    };
    let per_version: u64 = nests
        .iter()
        .map(|n| {
            n.arrays
                .iter()
                .map(|a| bytes(a) * if n.outputs.contains(a) { 2 } else { 1 })
                .sum::<u64>()
        })
        .sum();
    if per_version == 0 {
        return requested;
    }
    let cap = (budget / per_version).max(1) as i64;
    if requested < 0 {
        cap
    } else {
        requested.min(cap)
    }
}

/// One loop and its verdict, in preorder.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoopSummary {
    /// The loop's variable.
    pub var: String,
    /// Depth in the region (0: outermost).
    pub depth: usize,
    /// Line of its `for`.
    pub line: u32,
    /// Parallel, reduction or sequential.
    pub verdict: LoopVerdict,
}

/// What dependence analysis found a loop to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoopVerdict {
    /// No carried dependence (a map).
    Parallel,
    /// Carried dependences only between the parts of `x op= e` statements.
    Reduction,
    /// Anything else.
    Sequential,
}

impl From<ir::program::LoopKind> for LoopVerdict {
    fn from(k: ir::program::LoopKind) -> LoopVerdict {
        match k {
            ir::program::LoopKind::Map => LoopVerdict::Parallel,
            ir::program::LoopKind::Reduction => LoopVerdict::Reduction,
            ir::program::LoopKind::Loop => LoopVerdict::Sequential,
        }
    }
}

impl std::fmt::Display for LoopVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(match self {
            LoopVerdict::Parallel => "parallel",
            LoopVerdict::Reduction => "reduction",
            LoopVerdict::Sequential => "sequential",
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
/// One nest of a dry run.
pub struct NestSummary {
    /// `nest0`, `nest1`, ...
    pub name: String,
    /// Its region.
    pub region: usize,
    /// Line of its root loop.
    pub line: u32,
    /// How often the program ran it.
    pub invocations: u64,
    /// Time over all its runs (seconds).
    pub total_s: f64,
    /// Its shortest run (seconds).
    pub min_s: f64,
    /// Its longest run (seconds).
    pub max_s: f64,
    /// Its loops with their verdicts.
    pub loops: Vec<LoopSummary>,
    /// Calls from threads of the program's own parallel region (not timed, not saved).
    #[serde(default)]
    pub concurrent: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
/// One region of a dry run.
pub struct RegionSummary {
    /// Its index in the program.
    pub index: usize,
    /// The function that holds it.
    pub function: String,
    /// Line of `#pragma scop`.
    pub start_line: u32,
    /// Line of `#pragma endscop`.
    pub end_line: u32,
    /// How often the program ran it.
    pub invocations: u64,
    /// Time over all its runs (seconds).
    pub total_s: f64,
    /// Every loop of the region with its verdict (nests and control loops).
    pub loops: Vec<LoopSummary>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
/// What a dry run saved.
pub struct SaveSummary {
    /// The data folder.
    pub dir: String,
    /// Files written.
    pub files: usize,
    /// Bytes written.
    pub bytes: u64,
    /// Saving failed (the previous data was kept).
    pub failed: bool,
}

/// What `tune run` found and measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunSummary {
    /// The program's name.
    pub program: String,
    /// Its source file.
    pub file: String,
    /// Its exit code.
    pub exit_code: i32,
    /// How it ended.
    pub exit: Exit,
    /// Wall time of the run (seconds).
    pub wall_s: f64,
    /// Every region.
    pub regions: Vec<RegionSummary>,
    /// Every nest.
    pub nests: Vec<NestSummary>,
    /// The whole loop nests, when the run timed them (`RunConfig::whole_nests`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wholes: Vec<NestSummary>,
    /// What was saved.
    pub saved: Option<SaveSummary>,
    /// Content key of the build.
    pub build_key: String,
    /// The build came from the cache.
    pub build_cache_hit: bool,
    /// Compile time (seconds; 0 from the cache).
    pub compile_s: f64,
}

/// The manifest written next to the saved data.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DataManifest {
    /// The program's name.
    pub program: String,
    /// Its source file.
    pub file: String,
    /// The cc flags it was built with.
    pub cflags: Vec<String>,
    /// How the files are named.
    pub layout: String,
    /// Every nest, with its region and root loop.
    pub nests: Vec<Nest>,
    /// Every file saved.
    pub files: Vec<SavedFile>,
}

/// Loops of a body in preorder with their depth.
pub fn loop_summaries(body: &[Node]) -> Vec<LoopSummary> {
    fn go(body: &[Node], depth: usize, out: &mut Vec<LoopSummary>) {
        for n in body {
            match n {
                Node::Loop(l) => {
                    out.push(summary_of(l, depth));
                    go(&l.body, depth + 1, out);
                }
                Node::If(i) => {
                    go(&i.then_body, depth, out);
                    go(&i.else_body, depth, out);
                }
                Node::Block(b) => go(b, depth, out),
                Node::Assign(_) | Node::Decl(_) | Node::Opaque(_) => {}
            }
        }
    }
    let mut out = Vec::new();
    go(body, 0, &mut out);
    out
}

fn summary_of(l: &Loop, depth: usize) -> LoopSummary {
    LoopSummary {
        var: l.var.clone(),
        depth,
        line: l.pos.line,
        verdict: l.kind.into(),
    }
}

/// Parses, analyses and builds the instrumented program; returns the parsed program,
/// its nests and the build.
pub fn prepare(
    cfg: &RunConfig,
    instrument: bool,
    phases: &Phases,
) -> Result<(ir::Parsed, Vec<Nest>, profiling::build::Build, ProgramCache)> {
    let parse = phases.scope("parse");
    let fopts = ir::FrontendOptions {
        cc: cfg.toolchain.cc.clone(),
        flags: cfg.args.preprocessor_flags(),
        function: cfg.function.clone(),
        assume_pure: cfg.assume_pure.clone(),
        other_sources: !cfg.args.extra_sources.is_empty(),
    };
    let parsed = ir::load(&cfg.args.main, &fopts)?;
    let problems = ir::verify::verify(&parsed.program);
    if let Some(p) = problems.first() {
        return Err(Error::Failed(format!(
            "internal error: IR verification failed: {p}"
        )));
    }
    drop(parse);
    let codegen = phases.scope("codegen");
    let generated = generate(
        &parsed,
        CodegenOptions {
            openmp: cfg.openmp,
            instrument,
            whole_nests: cfg.whole_nests,
        },
    );
    drop(codegen);
    let _compile = phases.scope("compile");
    let cache = ProgramCache::new(&cfg.cache_root, &parsed.program.name);
    let b = build(
        &cfg.toolchain,
        &BuildRequest {
            source: &generated.source,
            args: &cfg.args,
            runtime: instrument,
            openmp: cfg.openmp,
            preprocessed: true,
        },
        &cache.builds(),
    )?;
    Ok((parsed, generated.nests, b, cache))
}

/// Everything a dry run produced, for the commands built on it.
#[derive(Debug, Clone)]
pub struct DryRun {
    /// What the run reported.
    pub summary: RunSummary,
    /// The parsed program and the preprocessed text.
    pub parsed: ir::Parsed,
    /// Its nests.
    pub nests: Vec<Nest>,
    /// Its whole loop nests, when the run timed and saved them.
    pub wholes: Vec<Nest>,
    /// Its cache folder.
    pub cache: ProgramCache,
    /// The program's output when `RunConfig::capture` was set.
    pub stdout: Vec<u8>,
    /// The program's standard error when captured.
    pub stderr: Vec<u8>,
}

/// `tune run`: builds the program with the generated regions and runs it, saving data.
pub fn run_program(cfg: &RunConfig) -> Result<RunSummary> {
    Ok(dry_run(cfg, &Phases::new())?.summary)
}

/// The dry run, with its phases recorded in `phases`.
pub fn dry_run(cfg: &RunConfig, phases: &Phases) -> Result<DryRun> {
    let (parsed, nests, b, cache) = prepare(cfg, true, phases)?;
    let program = &parsed.program;
    let run_phase = phases.scope("run");

    let save_versions = match cfg.save_budget {
        Some(budget) => versions_within_budget(program, &nests, cfg.save_versions, budget),
        None => cfg.save_versions,
    };
    let data = cache.data();
    let partial = cache
        .root
        .join(format!("data.partial-{}", std::process::id()));
    let saving = save_versions != 0;
    let run_once = |plan: Vec<(usize, u64)>| {
        if saving {
            let _ = std::fs::remove_dir_all(&partial);
            std::fs::create_dir_all(&partial).map_err(Error::write(&partial))?;
        }
        Ok::<_, Error>(run(
            &b.exe,
            &RunOptions {
                data_dir: saving.then(|| partial.clone()),
                save_versions,
                save_plan: plan,
                timeout: cfg.timeout,
                args: cfg.program_args.clone(),
                capture: cfg.capture,
            },
            &cache.root,
        )?)
    };
    let representative = cfg.representative && save_versions == 1;
    // The versions an earlier run of this build chose, if any (see `versions`).
    let remembered = representative
        .then(|| crate::versions::remembered_plan(&cache.root, &b.key, &cfg.program_args))
        .flatten();
    let choose = representative && remembered.is_none();
    let mut outcome = run_once(remembered.unwrap_or_default())?;
    if choose && outcome.exit == Exit::Code(0) {
        let plan = outcome
            .report
            .as_ref()
            .map(|r| crate::versions::save_plan(r, &nests))
            .unwrap_or_default();
        if !plan.is_empty() {
            let _again = phases.scope("run (representative versions)");
            outcome = run_once(plan.clone())?;
        }
        if outcome.exit == Exit::Code(0) && outcome.report.is_some() {
            crate::versions::remember_plan(&cache.root, &b.key, &cfg.program_args, &plan);
        }
    }
    let report = outcome.report.clone().unwrap_or_default();

    // Keep earlier data unless this run saved a complete new set.
    let mut saved = None;
    if saving {
        let complete = outcome.report.is_some() && !report.save_failed;
        if complete {
            let manifest = DataManifest {
                program: program.name.clone(),
                file: program.file.clone(),
                cflags: cfg.args.cflags.clone(),
                layout: "<array>/<nest>_<version>.npy holds the array (or 0-d scalar) at the \
                         entry of that invocation; <array>/<nest>_<version>.out.npy after it \
                         (outputs only). <nest> is nestK or regionK."
                    .to_string(),
                nests: nests.clone(),
                files: report.saved.clone(),
            };
            let text = serde_json::to_string_pretty(&manifest).expect("manifest serializes");
            crate::files::write(&partial.join("manifest.json"), &text)?;
            let old = cache.root.join(format!("data.old-{}", std::process::id()));
            if data.exists() {
                std::fs::rename(&data, &old).map_err(Error::write(&data))?;
            }
            std::fs::rename(&partial, &data).map_err(Error::write(&data))?;
            let _ = std::fs::remove_dir_all(&old);
        } else {
            let _ = std::fs::remove_dir_all(&partial);
        }
        saved = Some(SaveSummary {
            dir: data.display().to_string(),
            files: if complete { report.saved.len() } else { 0 },
            bytes: if complete {
                report.saved.iter().map(|f| f.bytes).sum()
            } else {
                0
            },
            failed: !complete,
        });
    }

    drop(run_phase);
    let wholes = if cfg.whole_nests {
        ir::codegen::whole_nests(&parsed.program, &nests)
    } else {
        Vec::new()
    };
    let mut summary = summarize(&parsed, &nests, &report, &outcome, &b, saved);
    summary.wholes = nest_summaries(&parsed.program, &wholes, &report);
    let text = serde_json::to_string_pretty(&summary).expect("summary serializes");
    crate::files::write(&cache.run_summary(), &text)?;
    Ok(DryRun {
        summary,
        parsed: parsed.clone(),
        nests,
        wholes,
        cache,
        stdout: outcome.stdout,
        stderr: outcome.stderr,
    })
}

/// The dry run, refused unless the program exited normally and its data was saved.
pub fn checked_dry_run(cfg: &RunConfig) -> Result<DryRun> {
    let dry = dry_run(cfg, &Phases::new())?;
    if dry.summary.exit_code != 0 || dry.summary.saved.as_ref().is_none_or(|s| s.failed) {
        return Err(Error::Failed(format!(
            "{}: the dry run did not finish normally (exit code {})",
            dry.summary.file, dry.summary.exit_code
        )));
    }
    Ok(dry)
}

/// What the runtime reported of each nest (timer slots found by name).
fn nest_summaries(
    program: &ir::Program,
    nests: &[Nest],
    report: &RuntimeReport,
) -> Vec<NestSummary> {
    let slot = |name: &str| report.slots.iter().find(|s| s.name == name);
    nests
        .iter()
        .map(|n| {
            let region = &program.regions[n.region];
            let root = ir::program::find_loop(&region.body, n.root).expect("nest root");
            let s = slot(&n.name);
            NestSummary {
                name: n.name.clone(),
                region: n.region,
                line: root.pos.line,
                invocations: s.map_or(0, |s| s.invocations),
                total_s: s.map_or(0.0, |s| s.total_s),
                min_s: s.map_or(0.0, |s| s.min_s),
                max_s: s.map_or(0.0, |s| s.max_s),
                loops: loop_summaries(std::slice::from_ref(&Node::Loop(root.clone()))),
                concurrent: s.map_or(0, |s| s.concurrent),
            }
        })
        .collect()
}

fn summarize(
    parsed: &ir::Parsed,
    nests: &[Nest],
    report: &RuntimeReport,
    outcome: &profiling::run::RunOutcome,
    b: &profiling::build::Build,
    saved: Option<SaveSummary>,
) -> RunSummary {
    let program = &parsed.program;
    let slot = |name: &str| report.slots.iter().find(|s| s.name == name);
    let regions = program
        .regions
        .iter()
        .map(|r| {
            let s = slot(&format!("region{}", r.index));
            RegionSummary {
                index: r.index,
                function: r.function.clone(),
                start_line: r.start.line,
                end_line: r.end.line,
                invocations: s.map_or(0, |s| s.invocations),
                total_s: s.map_or(0.0, |s| s.total_s),
                loops: loop_summaries(&r.body),
            }
        })
        .collect();
    let nests = nest_summaries(program, nests, report);
    RunSummary {
        program: program.name.clone(),
        file: program.file.clone(),
        exit_code: outcome.exit.shell_code(),
        exit: outcome.exit,
        wall_s: outcome.wall_seconds,
        regions,
        nests,
        wholes: Vec::new(),
        saved,
        build_key: b.key.clone(),
        build_cache_hit: b.cache_hit,
        compile_s: b.compile_seconds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_shrink_to_fit_the_data_budget() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../datasets/programs/jacobi-2d.c"
        );
        let opts = ir::FrontendOptions {
            flags: vec!["-DLARGE_DATASET".into()],
            ..Default::default()
        };
        let parsed = ir::load(dir, &opts).unwrap();
        let nests = ir::codegen::nests(&parsed.program);
        // LARGE: A and B are 1300 x 1300 doubles; per version each nest saves both
        // inputs and its one output: 2 nests x 3 x 13.52 MB = 81.1 MB.
        let per_version = 2 * 3 * 1300 * 1300 * 8;
        assert_eq!(
            versions_within_budget(&parsed.program, &nests, 64, SAVE_BUDGET),
            (SAVE_BUDGET / per_version) as i64
        );
        assert_eq!(
            versions_within_budget(&parsed.program, &nests, 3, SAVE_BUDGET),
            3
        );
        assert_eq!(versions_within_budget(&parsed.program, &nests, -1, 1), 1);
    }
}
