//! Shared driver of the "tuned vs gcc vs Polly" benchmarks: per kernel, a command of
//! `tune` writes the tuned program; then, in one run, the original built with
//! `gcc -O3 -march=native`, the original built with Polly
//! (`clang-19 -O3 -march=native -mllvm -polly`) and the tuned program built with
//! `gcc -O3 -march=native` (and `-fopenmp` where it has OpenMP directives) are run in
//! rotation. Each binary times the region
//! itself (timer calls inserted around `#pragma scop` ... `#pragma endscop` in a copy of
//! the source), so program set-up and output are not counted.
//!
//! Settings (environment): TUNE_BENCH_KERNELS (comma list; the default is the
//! benchmark's: every dataset program for `apply_vs_polly`, [`KERNELS`] for the search), TUNE_BENCH_PRESET
//! (default LARGE), TUNE_BENCH_RUNS (timed runs per binary, default 5), TUNE_BENCH_OUT
//! (folder for sources, binaries and the JSON summary; default target/bench/<name>),
//! TUNE_BENCH_POLYBENCH (the root of a PolyBench/C tree: its kernels as they come, in
//! place of the dataset programs; see [`Setup::polybench`]), TUNE_BENCH_MARCH (the
//! `-march=` of every build, default `native`; `x86-64-v3` builds AVX2 code on a CPU
//! with AVX-512, and `tune` is run with `CFLAGS="-O3 -march=x86-64-v3"` to tune for it).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

pub const KERNELS: [&str; 8] = [
    "gemm",
    "2mm",
    "syrk",
    "covariance",
    "jacobi-2d",
    "heat-3d",
    "atax",
    "lu",
];

pub fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

/// The `-march=` value of every build ([`env_or`] TUNE_BENCH_MARCH, default `native`).
pub fn march() -> String {
    env_or("TUNE_BENCH_MARCH", "native")
}

/// `flags` with `-march=native` replaced by the [`march`] of this run.
fn with_march(flags: &[&str]) -> Vec<String> {
    flags
        .iter()
        .map(|f| match *f {
            "-march=native" => format!("-march={}", march()),
            other => other.to_string(),
        })
        .collect()
}

pub struct Setup {
    pub kernels: Vec<String>,
    pub preset: String,
    pub runs: usize,
    pub out: PathBuf,
    pub programs: PathBuf,
    pub tune: PathBuf,
    /// The root of a PolyBench/C tree (`utilities/polybench.c`, `<group>/<kernel>/
    /// <kernel>.c` and `.h`): its kernels are tuned and timed as they come, each built
    /// with `utilities/polybench.c` and both folders on the include path, its arrays
    /// dumped (`-DPOLYBENCH_DUMP_ARRAYS`, on stderr) to compare outputs; the region
    /// timers go into a copy of the kernel's file as for the dataset programs.
    pub polybench: Option<PathBuf>,
}

/// The kernels of a PolyBench/C tree: every `<dir>/<name>/<name>.c` under `root`,
/// outside `utilities`.
fn polybench_kernels(root: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() && name != "utilities" {
                if p.join(format!("{name}.c")).is_file() {
                    out.push((name.clone(), p.join(format!("{name}.c"))));
                }
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

impl Setup {
    /// The settings of the benchmark `name`; without TUNE_BENCH_KERNELS, its kernels are
    /// [`KERNELS`], or every program of `datasets/programs` where `all` says so.
    pub fn from_env(name: &str, all: bool) -> Setup {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let polybench = std::env::var("TUNE_BENCH_POLYBENCH").ok().map(|r| {
            PathBuf::from(r)
                .canonicalize()
                .expect("TUNE_BENCH_POLYBENCH")
        });
        let default = if let Some(pb) = &polybench {
            polybench_kernels(pb)
                .into_iter()
                .map(|(k, _)| k)
                .collect::<Vec<_>>()
                .join(",")
        } else if all {
            let mut names: Vec<String> = std::fs::read_dir(root.join("datasets").join("programs"))
                .expect("datasets")
                .filter_map(|e| {
                    let p = e.ok()?.path();
                    if p.extension()? != "c" {
                        return None;
                    }
                    Some(p.file_stem()?.to_string_lossy().into_owned())
                })
                .collect();
            names.sort();
            names.join(",")
        } else {
            KERNELS.join(",")
        };
        let kernels = env_or("TUNE_BENCH_KERNELS", &default)
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let out = std::env::var("TUNE_BENCH_OUT")
            .map(PathBuf::from)
            .unwrap_or_else(|_| root.join("target").join("bench").join(name));
        std::fs::create_dir_all(&out).expect("bench output folder");
        Setup {
            kernels,
            preset: env_or("TUNE_BENCH_PRESET", "LARGE"),
            runs: env_or("TUNE_BENCH_RUNS", "5")
                .parse()
                .expect("TUNE_BENCH_RUNS"),
            out: out.canonicalize().expect("bench output folder"),
            programs: root
                .join("datasets")
                .join("programs")
                .canonicalize()
                .expect("datasets"),
            tune: PathBuf::from(env!("CARGO_BIN_EXE_tune")),
            polybench,
        }
    }

    pub fn source(&self, kernel: &str) -> PathBuf {
        match &self.polybench {
            Some(root) => polybench_kernels(root)
                .into_iter()
                .find(|(k, _)| k == kernel)
                .map(|(_, p)| p)
                .unwrap_or_else(|| panic!("no kernel {kernel} under {}", root.display())),
            None => self.programs.join(format!("{kernel}.c")),
        }
    }

    /// What a kernel is built with besides its own file and the preset: the include
    /// folders, and PolyBench's utilities with the arrays dumped.
    pub fn build_args(&self, kernel: &str) -> Vec<String> {
        match &self.polybench {
            Some(root) => {
                let utilities = root.join("utilities");
                let dir = self.source(kernel).parent().unwrap().to_path_buf();
                vec![
                    format!("-I{}", utilities.display()),
                    format!("-I{}", dir.display()),
                    utilities.join("polybench.c").display().to_string(),
                    "-DPOLYBENCH_DUMP_ARRAYS".into(),
                ]
            }
            None => vec![format!("-I{}", self.programs.display())],
        }
    }

    /// The program as `tune apply` takes it: the kernel's file, the others and flags.
    pub fn program_args(&self, kernel: &str) -> Vec<String> {
        let mut args = vec![self.source(kernel).display().to_string()];
        if self.polybench.is_some() {
            args.extend(
                self.build_args(kernel)
                    .into_iter()
                    .filter(|a| a != "-DPOLYBENCH_DUMP_ARRAYS"),
            );
        }
        args
    }

    pub fn preset_flag(&self) -> String {
        format!("-D{}_DATASET", self.preset)
    }

    /// Runs `tune` with `args` (cache under the output folder); returns stdout and the
    /// wall time in seconds.
    pub fn tune(&self, args: &[String]) -> (String, f64) {
        let t0 = Instant::now();
        let mut cmd = Command::new(&self.tune);
        cmd.args(args)
            .env("TUNE_CACHE", self.out.join(".tunecache"));
        if march() != "native" {
            cmd.env("CFLAGS", format!("-O3 -march={}", march()));
        }
        let out = cmd.output().expect("run tune");
        let secs = t0.elapsed().as_secs_f64();
        if !out.status.success() {
            panic!(
                "tune {} failed:\n{}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        (String::from_utf8_lossy(&out.stdout).into_owned(), secs)
    }
}

/// A copy of `source` with the region timed: `double ds_t0 = ds_now();` before the
/// `#pragma scop` line, `ds_report(ds_t0);` after the `#pragma endscop` line.
pub fn timed_copy(source: &Path, to: &Path) {
    let text = std::fs::read_to_string(source).expect("read source");
    let mut out = String::new();
    // A program that is not one of the dataset's has no `common.h`: the timer comes
    // first in its copy.
    if !text.contains("\"common.h\"") {
        out.push_str(TIMER);
    }
    for line in text.lines() {
        let t = line.trim();
        if t == "#pragma scop" {
            out.push_str("  double ds_t0 = ds_now();\n");
        }
        out.push_str(line);
        out.push('\n');
        if t == "#pragma endscop" {
            out.push_str("  ds_report(ds_t0);\n");
        }
    }
    std::fs::write(to, out).expect("write timed copy");
}

/// The region timer of `datasets/programs/common.h`, for programs without it.
const TIMER: &str = "#include <stdio.h>
#include <time.h>
static inline double ds_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static inline void ds_report(double t0)
{
  fprintf(stderr, \"ds-kernel-seconds: %.9f\\n\", ds_now() - t0);
}
";

pub struct Binary {
    pub exe: PathBuf,
    /// It built: a compiler that crashes on a kernel (Polly does on some) leaves its
    /// column empty (no times, a NaN median) instead of ending the benchmark.
    pub built: bool,
    pub times: Vec<f64>,
    pub stdout: String,
}

/// Compiles `source` with `cc` and `flags` into `exe`; the compiler's error otherwise.
pub fn compile(
    cc: &str,
    flags: &[&str],
    source: &Path,
    build: &[String],
    preset: &str,
    exe: &Path,
) -> Result<(), String> {
    let out = Command::new(cc)
        .args(with_march(flags))
        .args(build)
        .arg(preset)
        .arg(source)
        .arg("-o")
        .arg(exe)
        .arg("-lm")
        .output()
        .expect("run the compiler");
    if out.status.success() {
        Ok(())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err
            .lines()
            .find(|l| l.contains("error:"))
            .unwrap_or("failed");
        Err(format!("{cc} {}: {first}", source.display()))
    }
}

/// Runs every binary `runs` times in rotation; records the region times.
pub fn run_rotation(bins: &mut [Binary], runs: usize) {
    for _ in 0..runs {
        for b in bins.iter_mut().filter(|b| b.built) {
            let out = Command::new(&b.exe)
                .env("OMP_NUM_THREADS", env_or("OMP_NUM_THREADS", "2"))
                .output()
                .expect("run the benchmark binary");
            assert!(out.status.success(), "{} failed", b.exe.display());
            let err = String::from_utf8_lossy(&out.stderr);
            let t: f64 = err
                .lines()
                .find_map(|l| l.strip_prefix("ds-kernel-seconds: "))
                .and_then(|v| v.trim().parse().ok())
                .expect("the timed copy reports its region time");
            b.times.push(t);
            // What the program prints, stderr's other lines (PolyBench's dumps) after.
            let mut printed = String::from_utf8_lossy(&out.stdout).into_owned();
            for l in err
                .lines()
                .filter(|l| !l.starts_with("ds-kernel-seconds: "))
            {
                printed.push_str(l);
                printed.push('\n');
            }
            b.stdout = printed;
        }
    }
}

pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    if s.is_empty() {
        return f64::NAN;
    }
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        0.5 * (s[n / 2 - 1] + s[n / 2])
    }
}

/// (min, max) relative to the median, as a "±x%" spread.
pub fn spread(v: &[f64]) -> f64 {
    let m = median(v);
    v.iter().map(|x| (x / m - 1.0).abs()).fold(0.0, f64::max) * 100.0
}

pub fn geomean(v: &[f64]) -> f64 {
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
}

/// Builds and runs the four variants of one kernel (gcc, Polly sequential, Polly with
/// `-polly-parallel` and OpenMP, the tuned program under gcc, with OpenMP where its
/// source has an OpenMP directive: a file tune gave back unchanged is built as the
/// user's); `tuned` is the tuned source.
pub fn measure_kernel(s: &Setup, kernel: &str, tuned: &Path) -> [Binary; 4] {
    let dir = s.out.join(kernel);
    std::fs::create_dir_all(&dir).expect("kernel folder");
    let orig_t = dir.join("orig.timed.c");
    let tuned_t = dir.join("tuned.timed.c");
    timed_copy(&s.source(kernel), &orig_t);
    timed_copy(tuned, &tuned_t);
    let preset = s.preset_flag();
    let tuned_flags = tuned_flags(tuned);
    let builds: [(&str, &[&str], &Path, &str); 4] = [
        ("gcc", &["-O3", "-march=native"], &orig_t, "gcc.exe"),
        (
            "clang-19",
            &["-O3", "-march=native", "-mllvm", "-polly"],
            &orig_t,
            "polly.exe",
        ),
        (
            "clang-19",
            &[
                "-O3",
                "-march=native",
                "-mllvm",
                "-polly",
                "-mllvm",
                "-polly-parallel",
                "-fopenmp",
            ],
            &orig_t,
            "polly-par.exe",
        ),
        ("gcc", tuned_flags, &tuned_t, "tuned.exe"),
    ];
    let mut bins = builds.map(|(cc, flags, src, exe)| {
        let exe = dir.join(exe);
        let built = match compile(cc, flags, src, &s.build_args(kernel), &preset, &exe) {
            Ok(()) => true,
            // gcc builds the original and the tuned program: a failure there is ours.
            Err(e) if cc == "gcc" => panic!("{e}"),
            Err(e) => {
                eprintln!("{kernel}: left out of this column: {e}");
                false
            }
        };
        Binary {
            exe,
            built,
            times: Vec::new(),
            stdout: String::new(),
        }
    });
    run_rotation(&mut bins, s.runs);
    bins
}

/// gcc's flags for the tuned program `tuned`: OpenMP where its source has a directive.
fn tuned_flags(tuned: &Path) -> &'static [&'static str] {
    let openmp = std::fs::read_to_string(tuned)
        .expect("the tuned source")
        .contains("#pragma omp");
    if openmp {
        &["-O3", "-march=native", "-fopenmp"]
    } else {
        &["-O3", "-march=native"]
    }
}

/// How the tuned program's output agrees with the original's when gcc builds both with
/// `-ffp-contract=off` ([`outputs_agree`]; one run each, from the timed copies that
/// [`measure_kernel`] wrote): where they printed other sums, whether products
/// contracted into FMAs otherwise are the whole difference (a sum that cancels, such as
/// a centred array's, is rounding noise that contraction moves).
pub fn agree_without_contraction(s: &Setup, kernel: &str, tuned: &Path) -> String {
    use profiling::build::NO_CONTRACTION;
    let dir = s.out.join(kernel);
    let mut tuned_off = tuned_flags(tuned).to_vec();
    tuned_off.push(NO_CONTRACTION);
    let builds: [(&[&str], &str, &str); 2] = [
        (
            &["-O3", "-march=native", NO_CONTRACTION],
            "orig.timed.c",
            "gcc-nofma.exe",
        ),
        (&tuned_off, "tuned.timed.c", "tuned-nofma.exe"),
    ];
    let mut bins = builds.map(|(flags, src, exe)| {
        let exe = dir.join(exe);
        let built = compile(
            "gcc",
            flags,
            &dir.join(src),
            &s.build_args(kernel),
            &s.preset_flag(),
            &exe,
        )
        .is_ok();
        Binary {
            exe,
            built,
            times: Vec::new(),
            stdout: String::new(),
        }
    });
    if bins.iter().any(|b| !b.built) {
        return "not built".into();
    }
    run_rotation(&mut bins, 1);
    outputs_agree(&bins[0].stdout, &bins[1].stdout)
}

/// Whether clang-19 with Polly is installed.
pub fn have_polly() -> bool {
    Command::new("clang-19")
        .args(["-mllvm", "-polly", "-x", "c", "-c", "-o", "/dev/null", "-"])
        .stdin(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The variants of one kernel, measured.
pub struct Compared {
    pub bins: [Binary; 4],
    /// Median region seconds under gcc, Polly's best (sequential or `-polly-parallel`),
    /// and of the tuned program.
    pub gcc: f64,
    pub polly: f64,
    pub tuned: f64,
    /// Medians of sequential Polly and of `-polly-parallel`.
    pub polly_seq: f64,
    pub polly_par: f64,
    /// Whether the tuned program prints what the gcc-built original prints: byte for
    /// byte, or each array's sum within a relative 1e-9 (contraction into FMAs differs
    /// between differently shaped code under -march=native, so the bits of the arrays,
    /// and their FNV hashes, may differ), or not; where not, how they agree when both
    /// are built with `-ffp-contract=off` ([`agree_without_contraction`]).
    pub outputs: String,
}

/// The `name: n=N sum=S` lines of a dataset program's output.
fn sums(out: &str) -> Vec<(String, f64)> {
    out.lines()
        .filter_map(|l| {
            let (name, rest) = l.split_once(": n=")?;
            let sum = rest
                .split_whitespace()
                .find_map(|w| w.strip_prefix("sum="))?;
            Some((name.to_string(), sum.parse().ok()?))
        })
        .collect()
}

/// How `got` agrees with `want` ([`Compared::outputs`]).
pub fn outputs_agree(want: &str, got: &str) -> String {
    if want == got {
        return "identical".into();
    }
    let (w, g) = (sums(want), sums(got));
    if w.is_empty() {
        let alike = tuner::printed::same_results(
            &[want.as_bytes().to_vec()],
            got.as_bytes(),
            tuner::printed::Order::Changed,
        );
        return if alike {
            "printed values agree (last digit)".into()
        } else {
            "DIFFER".into()
        };
    }
    if w.len() != g.len() {
        return "DIFFER".into();
    }
    let mut worst = 0.0f64;
    for ((wn, wv), (gn, gv)) in w.iter().zip(&g) {
        if wn != gn {
            return "DIFFER".into();
        }
        worst = worst.max((wv - gv).abs() / wv.abs().max(1e-300));
    }
    if worst <= 1e-9 {
        format!("sums agree (rel {worst:.1e})")
    } else {
        format!("DIFFER (sum rel {worst:.1e})")
    }
}

/// Builds and runs the kernel's variants ([`measure_kernel`]) and sums them up.
pub fn compare(s: &Setup, kernel: &str, source: &Path) -> Compared {
    let bins = measure_kernel(s, kernel, source);
    let [gcc, polly_seq, polly_par, tuned] = [0, 1, 2, 3].map(|i| median(&bins[i].times));
    let mut outputs = outputs_agree(&bins[0].stdout, &bins[3].stdout);
    if outputs.starts_with("DIFFER") {
        outputs = format!(
            "{outputs}; with -ffp-contract=off: {}",
            agree_without_contraction(s, kernel, source)
        );
    }
    Compared {
        bins,
        gcc,
        polly: polly_seq.min(polly_par),
        tuned,
        polly_seq,
        polly_par,
        outputs,
    }
}

impl Compared {
    /// A table row: kernel, the medians in ms (Polly's best), both speedups over gcc,
    /// then `middle` (the bench's own columns), outputs, which Polly was best and the
    /// spreads.
    pub fn line(&self, kernel: &str, middle: &str) -> String {
        format!(
            "{:<12}{:>10.2}{:>10.2}{:>10.2}{:>8.2}x{:>8.2}x{middle}  {} (polly seq {:.2}x par {:.2}x; spread gcc ±{:.0}% polly ±{:.0}%/±{:.0}% tuned ±{:.0}%)",
            kernel,
            self.gcc * 1e3,
            self.polly * 1e3,
            self.tuned * 1e3,
            self.gcc / self.polly,
            self.gcc / self.tuned,
            self.outputs,
            self.gcc / self.polly_seq,
            self.gcc / self.polly_par,
            spread(&self.bins[0].times),
            spread(&self.bins[1].times),
            spread(&self.bins[2].times),
            spread(&self.bins[3].times),
        )
    }

    /// The measured fields of a summary row (the bench adds its own).
    pub fn json(&self, kernel: &str) -> serde_json::Value {
        serde_json::json!({
            "kernel": kernel, "gcc_s": self.gcc, "polly_s": self.polly, "tuned_s": self.tuned,
            "polly_speedup": self.gcc / self.polly, "tuned_speedup": self.gcc / self.tuned,
            "polly_seq_s": self.polly_seq, "polly_par_s": self.polly_par,
            "outputs": self.outputs, "gcc_samples": self.bins[0].times,
            "polly_samples": self.bins[1].times, "polly_par_samples": self.bins[2].times,
            "tuned_samples": self.bins[3].times,
        })
    }
}

/// Geomeans of the Polly and tuned speedups over summary rows.
pub fn geomeans(rows: &[serde_json::Value]) -> (f64, f64) {
    let of = |key: &str| {
        geomean(
            &rows
                .iter()
                .map(|r| r[key].as_f64().unwrap())
                .collect::<Vec<_>>(),
        )
    };
    (of("polly_speedup"), of("tuned_speedup"))
}
