//! Cutouts: one loop nest run alone, in a child process, on the data that the dry run
//! saved for one of its versions.
//!
//! The cutout program is the nest's function (the original or any variant with the same
//! signature) plus a generated `main` that loads every input from
//! `data/<name>/<nest>_<v>.npy`, runs the nest with warmup and repetitions (inputs
//! restored before each run, outside the timed region; optional cache flush), writes
//! the outputs, and reports raw samples and counters. The outputs are then verified
//! against `data/<name>/<nest>_<v>.out.npy` (see [`crate::npy::compare`]). A crash, a
//! hang past the timeout, a build failure or a wrong result is a verdict, never an
//! error of the harness.

use crate::build::{build, Build, BuildRequest, Toolchain};
use crate::cc::CcArgs;
use crate::measure::{Measure, Stats};
use crate::npy::{compare, read_raw};
use crate::run::{run, Exit, RunOptions};
use crate::{io_err, Error, Result};
use ir::codegen::{nest_function, CodegenOptions, Nest};
use ir::interp::Env;
use ir::program::DType;
use ir::Program;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The C definition of a nest function: the original or a transformed variant with
/// the same name and signature.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Variant {
    pub name: String,
    pub source: String,
    /// Needs `-fopenmp` (OpenMP directives in the source).
    #[serde(default)]
    pub openmp: bool,
}

/// How one run of a variant ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// Ran, and every output matches its reference.
    Verified,
    /// Ran, but an output differs from the reference.
    WrongResult {
        array: String,
        index: usize,
        got: f64,
        want: f64,
        mismatches: usize,
    },
    /// Exited abnormally (signal or non-zero status).
    Crashed { exit: Exit, message: String },
    /// Killed after the timeout.
    TimedOut { seconds: f64 },
    /// Cut in the middle of a run that passed `Measure::kill_after_s` (`bound`): clearly
    /// slower than the best so far, its outputs never written and so not checked.
    Cut { seconds: f64, bound: f64 },
    /// Did not compile.
    BuildFailed { message: String },
    /// Ran, but the dry run saved no reference outputs for this version.
    Unverified,
}

impl Verdict {
    pub fn is_ok(&self) -> bool {
        matches!(self, Verdict::Verified | Verdict::Unverified)
    }

    /// One short line for tables.
    pub fn describe(&self) -> String {
        match self {
            Verdict::Verified => "verified".into(),
            Verdict::Unverified => "ran (no reference)".into(),
            Verdict::WrongResult { array, index, got, want, mismatches } => {
                format!("wrong result: {array}[{index}] = {got} (want {want}), {mismatches} element(s) differ")
            }
            Verdict::Crashed { exit, message } => match exit {
                Exit::Signal(s) => format!("crashed: signal {s} {message}"),
                Exit::Code(c) => format!("crashed: exit {c} {message}"),
                Exit::TimedOut => format!("crashed: {message}"),
            },
            Verdict::TimedOut { seconds } => format!("timed out after {seconds:.1} s"),
            Verdict::Cut { seconds, bound } => format!(
                "cut in a run at {} ms, over the {} ms bound: clearly slower, outputs not checked",
                crate::report::ms(*seconds),
                crate::report::ms(*bound)
            ),
            Verdict::BuildFailed { message } => format!("build failed: {message}"),
        }
        .trim_end()
        .to_string()
    }
}

/// Where a perf event comes from (as the runtime names it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CounterKind {
    /// A PMU event (cycles, instructions, cache misses): absent on most VMs.
    Hardware,
    /// A kernel event (task clock, page faults): always there.
    Software,
    /// An event name the runtime does not know.
    #[serde(other)]
    Unknown,
}

/// One perf event as read around the timed runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CounterReading {
    pub name: String,
    pub kind: CounterKind,
    pub available: bool,
    /// Total over all timed repetitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_rep: Option<f64>,
    /// Why it could not be read (unavailable counters are never reported as zero).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct CutoutReport {
    warmup: u32,
    #[serde(default)]
    first_s: f64,
    #[serde(default)]
    killed: bool,
    /// The last run was cut at the kill bound: no outputs were written.
    #[serde(default)]
    cut: bool,
    #[serde(default)]
    faster: bool,
    #[serde(default)]
    futile: bool,
    #[serde(default = "one")]
    batch: u64,
    samples_s: Vec<f64>,
    counters: Vec<CounterReading>,
}

/// Build of one variant, as the kernel history records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildRecord {
    pub variant: String,
    pub key: String,
    pub codegen_s: f64,
    pub compile_s: f64,
    pub cache_hit: bool,
    /// Runs measured with this build (one per version), and the sum of their medians.
    #[serde(default)]
    pub runs: u32,
    #[serde(default)]
    pub run_s: f64,
}

/// One measured run of a variant on one version of the nest's data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CutoutRun {
    pub nest: String,
    pub variant: String,
    pub version: u64,
    pub verdict: Verdict,
    pub warmup: u32,
    /// Raw samples, seconds.
    pub samples: Vec<f64>,
    pub stats: Stats,
    pub counters: Vec<CounterReading>,
    /// Wall time of the child process (loading, warmup, runs, writing outputs).
    pub wall_s: f64,
    /// The process's first run of the nest, warmup or not: the cold run, which pays
    /// for starting an OpenMP team, waking idle cores, first touches and cold caches.
    #[serde(default)]
    pub first_s: f64,
    /// Repetitions stopped early: a timed run exceeded `Measure::kill_after_s` (the
    /// variant is clearly slower than the best so far).
    #[serde(default)]
    pub killed: bool,
    /// Repetitions stopped early the other way: three or more timed runs were all
    /// shorter than `Measure::faster_than_s` (clearly faster than the best so far).
    #[serde(default)]
    pub faster: bool,
    /// A long run stopped after three timed runs not all below `Measure::beat_s` (the
    /// lower end of the baseline's interval): it cannot beat the baseline beyond the
    /// noise before its eighth run.
    #[serde(default)]
    pub futile: bool,
    /// Calls per timed sample (`Measure::batch_s`): each sample is the mean of this many
    /// consecutive calls. 1: every sample is one run on restored inputs.
    #[serde(default = "one")]
    pub batch: u64,
    /// Verified, and every output equals its reference bit for bit: the variant
    /// computes what the original computes in the same order (no sum reassociated, no
    /// product contracted otherwise), so the program prints the same.
    #[serde(default)]
    pub exact: bool,
}

fn one() -> u64 {
    1
}

/// A nest with its saved data.
#[derive(Debug, Clone)]
pub struct Cutout {
    pub program: Program,
    pub nest: Nest,
    /// The dry run's `data/` folder.
    pub data_dir: PathBuf,
    /// The user's compile flags (`-ffp-contract=off`, `-O2`, ...).
    pub cflags: Vec<String>,
    /// Read-only integer inputs with the same value in every saved version, as C
    /// literals: the call passes them as constants, so the compiler knows the nest's
    /// sizes as it does in a program whose sizes are macros (PolyBench's `int n = N;`
    /// handed to a static kernel). The values are the saved ones, so nothing changes
    /// what the nest computes.
    constants: HashMap<String, String>,
    /// The version tuning measures: the first saved one (the dry run saves the
    /// invocation that stands for the nest, `tuner::versions`).
    pub version: u64,
}

fn c_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

impl Cutout {
    pub fn new(program: Program, nest: Nest, data_dir: PathBuf, cflags: Vec<String>) -> Cutout {
        let versions = saved_versions(&data_dir, &nest);
        let constants = shared_integer_inputs(&data_dir, &nest, &versions);
        let version = versions.first().copied().unwrap_or(0);
        Cutout {
            program,
            nest,
            data_dir,
            cflags,
            constants,
            version,
        }
    }

    /// Whether the untransformed nest carries OpenMP directives of the user's.
    fn user_openmp(&self) -> bool {
        self.program
            .find_loop(self.nest.region, self.nest.root)
            .is_some_and(|l| l.nest_has_openmp())
    }

    /// The nest as the program has it.
    pub fn original(&self) -> Variant {
        let region = &self.program.regions[self.nest.region];
        Variant {
            name: "original".into(),
            source: nest_function(&self.program, region, &self.nest, CodegenOptions::default()),
            // The user's own OpenMP directives run as in their build.
            openmp: self.user_openmp(),
        }
    }

    /// The nest after a recipe, as a variant with the original's signature.
    pub fn variant(&self, name: &str, t: &ir::transform::Transformed) -> Variant {
        Variant {
            name: name.to_string(),
            source: ir::codegen::nest_function_with(
                &t.program,
                &self.nest,
                &t.root,
                CodegenOptions::default(),
            ),
            openmp: t.openmp || t.root.nest_has_openmp(),
        }
    }

    fn array_descr(&self, name: &str) -> (&'static str, usize) {
        match self.program.array(name) {
            Some(a) => (a.dtype.npy_descr(), a.dtype.size()),
            None => ("<f8", 8),
        }
    }

    /// The cutout program in parts: everything up to and including loading the inputs
    /// in `main`, the reset of written scalars before a run, the call of the nest, and
    /// what follows the timing loop.
    pub fn program_parts(&self, v: &Variant) -> (String, String, String, String) {
        let mut s = String::from(
            "#include <math.h>\n\
             #include <stdlib.h>\n\
             extern void tune_co_init(int argc, char **argv);\n\
             extern void tune_co_load(const char *name, const char *descr, unsigned long elem_size, void **out);\n\
             extern unsigned long tune_co_bytes(const char *name);\n\
             extern void *tune_co_alloc(unsigned long bytes) __attribute__((malloc));\n\
             extern void tune_co_place(const char *name, void *block);\n\
             extern void *tune_co_rows(const char *name);\n\
             extern int tune_co_next(void);\n\
             extern long tune_co_batch(void);\n\
             extern void tune_co_start(void);\n\
             extern void tune_co_stop(void);\n\
             extern void tune_co_output(const char *name, const char *descr, unsigned long elem_size, const void *data, int is_array);\n\
             extern void tune_co_finish(void);\n\n",
        );
        for f in &self.program.pure_functions {
            s.push_str(&f.text);
        }
        s.push_str(&v.source);
        // Declarations first, then statements: the program builds under C89 as well.
        let mut decls = String::from("  void *tune_tmp;\n");
        let mut stmts = String::from("  tune_co_init(tune_argc, tune_argv);\n");
        for sc in &self.nest.scalars {
            let t = sc.dtype.c_name();
            let var = if sc.written {
                format!("tune_init_{}", sc.name)
            } else {
                sc.name.clone()
            };
            let _ = writeln!(decls, "  {t} {var};");
            let _ = writeln!(
                stmts,
                "  tune_co_load({}, \"{}\", {}, &tune_tmp);\n  {var} = *({t} *)tune_tmp;",
                c_string(&sc.name),
                sc.dtype.npy_descr(),
                sc.dtype.size()
            );
            if sc.written {
                let _ = writeln!(decls, "  {t} {};", sc.name);
                let _ = writeln!(stmts, "  {} = {var};", sc.name);
            }
        }
        // Each array in a block of its own from the allocator, as a program that
        // allocates its arrays in `main` has them: the compiler then knows that they
        // do not overlap, and compiles the nest as it does in the program (for 2mm's
        // nests the difference is 3-4x: interchange and vectorization need it).
        for a in &self.nest.arrays {
            let (descr, size) = self.array_descr(a);
            let name = c_string(a);
            let _ = writeln!(decls, "  void *{a};");
            let _ = writeln!(
                stmts,
                "  tune_co_load({name}, \"{descr}\", {size}, &tune_tmp);\n  \
                 {a} = tune_co_alloc(tune_co_bytes({name}));\n  tune_co_place({name}, {a});"
            );
            // A pointer to rows gets a table of its rows' starts, as the program has it.
            if self.program.array(a).is_some_and(|x| x.rows) {
                let _ = writeln!(stmts, "  {a} = tune_co_rows({name});");
            }
        }
        s.push_str("\nint main(int tune_argc, char **tune_argv)\n{\n");
        s.push_str(&decls);
        s.push_str(&stmts);
        let mut reset = String::new();
        for sc in self.nest.scalars.iter().filter(|x| x.written) {
            let _ = write!(reset, "{} = tune_init_{}; ", sc.name, sc.name);
        }
        let mut call = String::new();
        let args: Vec<String> = self
            .nest
            .scalars
            .iter()
            .map(|x| {
                if x.written {
                    format!("&{}", x.name)
                } else {
                    self.constants
                        .get(&x.name)
                        .cloned()
                        .unwrap_or_else(|| x.name.clone())
                }
            })
            .chain(self.nest.arrays.iter().cloned())
            .collect();
        let _ = write!(call, "{}({});", self.nest.function_name(), args.join(", "));
        let mut tail = String::new();
        for out in &self.nest.outputs {
            if let Some(sc) = self.nest.scalars.iter().find(|x| &x.name == out) {
                let _ = writeln!(
                    tail,
                    "  tune_co_output({}, \"{}\", {}, &{}, 0);",
                    c_string(out),
                    sc.dtype.npy_descr(),
                    sc.dtype.size(),
                    sc.name
                );
            } else {
                let (descr, size) = self.array_descr(out);
                let _ = if self.program.array(out).is_some_and(|x| x.rows) {
                    writeln!(
                        tail,
                        "  tune_co_output({}, \"{descr}\", {size}, (const void *)0, 2);",
                        c_string(out)
                    )
                } else {
                    writeln!(
                        tail,
                        "  tune_co_output({}, \"{descr}\", {size}, {out}, 1);",
                        c_string(out)
                    )
                };
            }
        }
        tail.push_str("  tune_co_finish();\n  return 0;\n}\n");
        (s, reset, call, tail)
    }

    /// The complete cutout program for `v`.
    pub fn program_source(&self, v: &Variant) -> String {
        let (head, reset, call, tail) = self.program_parts(v);
        // A batch (`Measure::batch_s`) calls the nest again at once; the barrier keeps the
        // compiler from merging or dropping the repeated calls.
        format!(
            "{head}  while (tune_co_next()) {{\n    long tune_k = tune_co_batch();\n    {reset}\n    \
             tune_co_start();\n    {call}\n    while (--tune_k > 0) {{\n      \
             __asm__ __volatile__(\"\" ::: \"memory\");\n      {reset}\n      {call}\n    }}\n    \
             tune_co_stop();\n  }}\n{tail}"
        )
    }

    /// Compiles variant `v` (cached under `builds`).
    pub fn build(
        &self,
        tc: &Toolchain,
        v: &Variant,
        builds: &Path,
    ) -> Result<(Build, BuildRecord)> {
        let t0 = Instant::now();
        let source = self.program_source(v);
        let codegen_s = t0.elapsed().as_secs_f64();
        let args = CcArgs {
            main: format!("{}:{}", self.nest.name, v.name),
            extra_sources: Vec::new(),
            cflags: self.cflags.clone(),
            link: vec!["-lm".into()],
        };
        let b = build(
            tc,
            &BuildRequest {
                source: &source,
                args: &args,
                runtime: true,
                openmp: v.openmp,
                preprocessed: false,
            },
            builds,
        )?;
        let record = BuildRecord {
            variant: v.name.clone(),
            key: b.key.clone(),
            codegen_s,
            compile_s: b.compile_seconds,
            cache_hit: b.cache_hit,
            runs: 0,
            run_s: 0.0,
        };
        Ok((b, record))
    }

    /// Runs a built variant on version `version` and verifies its outputs.
    pub fn run(
        &self,
        exe: &Path,
        variant: &str,
        version: u64,
        m: &Measure,
        timeout: Duration,
        scratch: &Path,
    ) -> Result<CutoutRun> {
        let dir = scratch.join(format!("run-{}", crate::unique_id()));
        let result = self.run_in(exe, variant, version, m, timeout, &dir);
        let _ = std::fs::remove_dir_all(&dir);
        result
    }

    /// One run of a built variant on `version` (no warmup, one repetition): the bytes
    /// of each output array or scalar it wrote, in the order of the nest's outputs, or
    /// None where the run failed or computed something else than the saved outputs.
    pub fn outputs(
        &self,
        exe: &Path,
        version: u64,
        timeout: Duration,
        scratch: &Path,
    ) -> Result<Option<Vec<Vec<u8>>>> {
        let once = Measure {
            warmup: 0,
            repetitions: 1,
            target_ci: None,
            max_repetitions: 1,
            counters: Vec::new(),
            ..Measure::default()
        };
        let dir = scratch.join(format!("run-{}", crate::unique_id()));
        let read = || -> Result<Option<Vec<Vec<u8>>>> {
            let run = self.run_in(exe, "outputs", version, &once, timeout, &dir)?;
            if run.verdict != Verdict::Verified {
                return Ok(None);
            }
            let mut all = Vec::new();
            for name in &self.nest.outputs {
                let path = dir.join("out").join(format!("{name}.npy"));
                if path.is_file() {
                    all.push(read_raw(&path)?.data);
                }
            }
            Ok(Some(all))
        };
        let result = read();
        let _ = std::fs::remove_dir_all(&dir);
        result
    }

    /// [`Cutout::run`] in the folder `dir` (created; the outputs are left under
    /// `dir/out`).
    fn run_in(
        &self,
        exe: &Path,
        variant: &str,
        version: u64,
        m: &Measure,
        timeout: Duration,
        dir: &Path,
    ) -> Result<CutoutRun> {
        let out_dir = dir.join("out");
        std::fs::create_dir_all(&out_dir).map_err(io_err(&out_dir))?;
        let report_path = dir.join("report.json");
        let mut args = vec![
            format!("data={}", self.data_dir.display()),
            format!("tag={}", self.nest.name),
            format!("version={version}"),
            format!("out={}", out_dir.display()),
            format!("report={}", report_path.display()),
        ];
        args.extend(m.runtime_args());
        let outcome = run(
            exe,
            &RunOptions {
                data_dir: None,
                save_versions: 0,
                timeout: Some(timeout),
                args,
                capture: true,
                ..Default::default()
            },
            dir,
        )?;
        let message = String::from_utf8_lossy(&outcome.stderr)
            .lines()
            .next()
            .unwrap_or("")
            .to_string();
        let mut result = CutoutRun {
            nest: self.nest.name.clone(),
            variant: variant.to_string(),
            version,
            verdict: Verdict::Verified,
            warmup: 0,
            samples: Vec::new(),
            stats: Stats::default(),
            counters: Vec::new(),
            wall_s: outcome.wall_seconds,
            first_s: 0.0,
            killed: false,
            faster: false,
            futile: false,
            batch: 1,
            exact: false,
        };
        result.verdict = match outcome.exit {
            Exit::TimedOut => Verdict::TimedOut {
                seconds: timeout.as_secs_f64(),
            },
            Exit::Code(0) => Verdict::Verified,
            other => Verdict::Crashed {
                exit: other,
                message,
            },
        };
        if result.verdict == Verdict::Verified {
            let text = std::fs::read_to_string(&report_path).map_err(io_err(&report_path))?;
            let report: CutoutReport = serde_json::from_str(&text)
                .map_err(|e| Error::Run(format!("{}: {e}", report_path.display())))?;
            result.warmup = report.warmup;
            result.first_s = report.first_s;
            result.killed = report.killed;
            result.faster = report.faster;
            result.futile = report.futile;
            result.batch = report.batch.max(1);
            result.stats = Stats::from_samples(&report.samples_s);
            result.samples = report.samples_s;
            result.counters = report.counters;
            if report.cut {
                result.verdict = Verdict::Cut {
                    seconds: result.samples.last().copied().unwrap_or(0.0),
                    bound: m.kill_after_s.unwrap_or(0.0),
                };
            } else {
                (result.verdict, result.exact) = self.verify(&out_dir, version)?;
            }
        }
        Ok(result)
    }

    /// The verdict on the outputs of `version`, and whether every output equals its
    /// reference bit for bit.
    fn verify(&self, out_dir: &Path, version: u64) -> Result<(Verdict, bool)> {
        let mut any_reference = false;
        let mut exact = true;
        for name in &self.nest.outputs {
            let want_path = self
                .data_dir
                .join(name)
                .join(format!("{}_{version}.out.npy", self.nest.name));
            if !want_path.is_file() {
                continue;
            }
            any_reference = true;
            let got = read_raw(&out_dir.join(format!("{name}.npy")))?;
            let want = read_raw(&want_path)?;
            exact &= got.data == want.data;
            match compare(&got, &want) {
                Ok(None) => {}
                Ok(Some(m)) => {
                    return Ok((
                        Verdict::WrongResult {
                            array: name.clone(),
                            index: m.index,
                            got: m.got,
                            want: m.want,
                            mismatches: m.count,
                        },
                        false,
                    ))
                }
                Err(e) => {
                    return Ok((
                        Verdict::WrongResult {
                            array: format!("{name} ({e})"),
                            index: 0,
                            got: 0.0,
                            want: 0.0,
                            mismatches: 0,
                        },
                        false,
                    ))
                }
            }
        }
        Ok(if any_reference || self.nest.outputs.is_empty() {
            (Verdict::Verified, exact)
        } else {
            (Verdict::Unverified, false)
        })
    }

    /// Builds and runs `v` on `version`; a build failure becomes the run's verdict.
    #[allow(clippy::too_many_arguments)]
    pub fn measure(
        &self,
        tc: &Toolchain,
        v: &Variant,
        version: u64,
        m: &Measure,
        timeout: Duration,
        builds: &Path,
        scratch: &Path,
    ) -> Result<(CutoutRun, Option<BuildRecord>)> {
        match self.build(tc, v, builds) {
            Ok((b, record)) => Ok((
                self.run(&b.exe, &v.name, version, m, timeout, scratch)?,
                Some(record),
            )),
            Err(Error::Compile { first_error, .. }) => Ok((
                CutoutRun {
                    nest: self.nest.name.clone(),
                    variant: v.name.clone(),
                    version,
                    verdict: Verdict::BuildFailed {
                        message: first_error,
                    },
                    warmup: 0,
                    samples: Vec::new(),
                    stats: Stats::default(),
                    counters: Vec::new(),
                    wall_s: 0.0,
                    first_s: 0.0,
                    killed: false,
                    faster: false,
                    futile: false,
                    batch: 1,
                    exact: false,
                },
                None,
            )),
            Err(e) => Err(e),
        }
    }
}

/// Integer inputs of a nest version (sizes, control loop variables) from its saved data.
pub fn env_of(data: &Path, nest: &Nest, version: u64) -> Env {
    let mut env = Env::new();
    for s in nest.scalars.iter().filter(|s| !s.dtype.is_float()) {
        let path = data
            .join(&s.name)
            .join(format!("{}_{version}.npy", nest.name));
        if let Ok(raw) = read_raw(&path) {
            let v = match raw.data.len() {
                8 => i64::from_le_bytes(raw.data[..8].try_into().expect("8 bytes")),
                4 => i32::from_le_bytes(raw.data[..4].try_into().expect("4 bytes")) as i64,
                2 => i16::from_le_bytes(raw.data[..2].try_into().expect("2 bytes")) as i64,
                1 => raw.data[0] as i8 as i64,
                _ => continue,
            };
            env = env.with(&s.name, v);
        }
    }
    env
}

/// Read-only signed integer inputs of `nest` whose value is the same in every saved
/// version (`versions`), as C literals.
fn shared_integer_inputs(data: &Path, nest: &Nest, versions: &[u64]) -> HashMap<String, String> {
    let envs: Vec<Env> = versions.iter().map(|&v| env_of(data, nest, v)).collect();
    let mut out = HashMap::new();
    for s in nest.scalars.iter().filter(|s| !s.written) {
        let suffix = match s.dtype {
            DType::I64 => "LL",
            DType::I32 | DType::I16 => "",
            _ => continue,
        };
        let mut values = envs.iter().map(|e| e.ints.get(&s.name));
        if let Some(Some(first)) = values.next() {
            if values.all(|v| v == Some(first)) {
                out.insert(s.name.clone(), format!("{first}{suffix}"));
            }
        }
    }
    out
}

/// The first version of `nest` whose inputs were saved (0 when none was).
pub fn first_saved_version(data: &Path, nest: &Nest) -> u64 {
    saved_versions(data, nest).first().copied().unwrap_or(0)
}

/// Versions of `nest` whose inputs were saved.
pub fn saved_versions(data: &Path, nest: &Nest) -> Vec<u64> {
    let Some(probe) = nest
        .arrays
        .first()
        .or(nest.scalars.first().map(|s| &s.name))
    else {
        return Vec::new();
    };
    let mut v = BTreeSet::new();
    if let Ok(rd) = std::fs::read_dir(data.join(probe)) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(rest) = name.strip_prefix(&format!("{}_", nest.name)) {
                if let Some(num) = rest.strip_suffix(".npy") {
                    if let Ok(n) = num.parse() {
                        v.insert(n);
                    }
                }
            }
        }
    }
    v.into_iter().collect()
}
