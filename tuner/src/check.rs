//! The whole-program check of `tune apply`: the original and the tuned program, each
//! scop region under a timer, run in rotation; a tuned program not faster beyond the noise
//! (a faster median with Mann-Whitney p < 0.05) is given up. Like for like: both are
//! built by the same compiler with the same flags and OpenMP on (a user's
//! `#pragma omp` means their build has `-fopenmp`, and the tuned file is built with it),
//! and run with the same threads.

use crate::bench::{run_suite, BenchConfig, Benchmark};
use crate::report::ProgramCheck;
use crate::spec::ProgramSpec;
use crate::Result;
use profiling::build::Toolchain;
use std::path::Path;
use std::time::Duration;

/// Times `p` against its tuned source `source` (written under `work`) for `runs`
/// rounds after one warmup round.
pub fn program_check(
    toolchain: &Toolchain,
    runs: usize,
    timeout: Duration,
    p: &ProgramSpec,
    source: &str,
    work: &Path,
) -> Result<ProgramCheck> {
    let args = p.cc()?;
    let main = Path::new(&args.main);
    let tuned_file = work.join(
        main.file_name()
            .map(|f| f.to_string_lossy().replace(".c", ".tuned.c"))
            .unwrap_or_else(|| "tuned.c".into()),
    );
    crate::files::write(&tuned_file, source)?;
    let original: Vec<String> = std::iter::once(&args.main)
        .chain(&args.extra_sources)
        .chain(&args.cflags)
        .chain(&args.link)
        .cloned()
        .collect();
    let benches = [
        Benchmark {
            openmp: true,
            program_args: p.program_args.clone(),
            ..Benchmark::original(&args.main, original.clone())
        },
        Benchmark {
            program_args: p.program_args.clone(),
            ..Benchmark::tuned(&args.main, &tuned_file, &original)
        },
    ];
    let command = |b: &Benchmark| {
        let mut words = vec![toolchain.cc.clone()];
        let cflags = profiling::cc::CcArgs::parse(&b.args).map_or(Vec::new(), |a| a.cflags);
        words.extend(toolchain.base_for(&cflags).iter().cloned());
        words.push("-fopenmp".into());
        words.extend(b.args.iter().cloned());
        words.join(" ")
    };
    let cfg = BenchConfig {
        toolchain: toolchain.clone(),
        warmup: 1,
        runs: runs.max(2),
        timeout,
        work: work.to_path_buf(),
    };
    let r = run_suite(&cfg, &args.main, &benches, &crate::events::silent())?;
    let (o, t) = (&r.benchmarks[0], &r.benchmarks[1]);
    let (_, p_value) = profiling::stats::mann_whitney_u(&o.samples, &t.samples);
    // The last guard: a tuned file is written only when the whole program is faster
    // beyond the noise; an inconclusive comparison keeps the user's file (a program
    // whose parallel region costs more to start than it saves can look faster in
    // some runs and slower in others).
    let reverted = !(t.median < o.median && p_value < 0.05);
    Ok(ProgramCheck {
        unit: o.unit,
        original_ms: o.median * 1e3,
        tuned_ms: t.median * 1e3,
        speedup: o.median / t.median.max(1e-12),
        p_value,
        runs: r.runs,
        same_output: o.output_hash == t.output_hash,
        reverted,
        original_command: command(&benches[0]),
        tuned_command: command(&benches[1]),
        seconds: 0.0,
    })
}
