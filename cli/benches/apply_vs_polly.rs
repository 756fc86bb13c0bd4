//! Transfer tuning against the compilers: per kernel, `tune apply --top-k K` (default
//! model, database and ranker unless TUNE_BENCH_DB / TUNE_BENCH_MODEL /
//! TUNE_BENCH_RANKER (a `--ranker` value) say otherwise) on the
//! dataset program, then the original under gcc and Polly (sequential, and with
//! `-polly-parallel` and OpenMP: the faster of the two is Polly's column, both are on the
//! row) and the tuned program under gcc (+ OpenMP where it has directives), timed in one rotation. Prints per-kernel speedups over gcc, their
//! geomeans, measured variants per nest, tuning wall time, and gemm's GFLOP/s (the
//! region's cold run: the median and the best of the rotation's runs, and its nest warm
//! as `tune apply` measured it) against the machine's peak (itself the best of its runs).
//!
//! Every dataset program by default (29 at LARGE: about an hour on 2 cores), with
//! geomeans of the dense and the solver/stencil families on lines of their own; with
//! TUNE_BENCH_POLYBENCH=<root>, the kernels of a PolyBench/C tree as they come.
//!
//! Run: `cargo bench -p tune-cli --bench apply_vs_polly`
//! Settings: TUNE_BENCH_K (default 3), and those of `compare/mod.rs`.

mod compare;

use compare::*;

/// Kernel families with a geomean line of their own.
const FAMILIES: [(&str, &[&str]); 2] = [
    (
        "dense linear algebra",
        &[
            "gemm", "2mm", "3mm", "syrk", "syr2k", "trmm", "symm", "doitgen",
        ],
    ),
    (
        "solvers and stencils",
        &[
            "lu",
            "ludcmp",
            "cholesky",
            "doitgen",
            "symm",
            "trisolv",
            "durbin",
            "nussinov",
            "seidel-2d",
            "jacobi-1d",
            "jacobi-2d",
            "heat-3d",
            "fdtd-2d",
            "adi",
        ],
    ),
];

fn main() {
    if !have_polly() {
        eprintln!("clang-19 with Polly is not installed (apt-get install clang-19 libpolly-19-dev libomp-19-dev)");
        std::process::exit(1);
    }
    let s = Setup::from_env("apply_vs_polly", true);
    let k = env_or("TUNE_BENCH_K", "3");
    let mut extra: Vec<String> = Vec::new();
    if let Ok(db) = std::env::var("TUNE_BENCH_DB") {
        extra.extend(["--db".into(), db]);
    }
    if let Ok(m) = std::env::var("TUNE_BENCH_MODEL") {
        extra.extend(["--model".into(), m]);
    }
    if let Ok(r) = std::env::var("TUNE_BENCH_RANKER") {
        extra.extend(["--ranker".into(), r]);
    }
    println!(
        "{:<12}{:>10}{:>10}{:>10}{:>9}{:>9}{:>10}{:>9}  outputs",
        "kernel", "gcc ms", "polly ms", "tuned ms", "polly x", "tuned x", "variants", "tune s"
    );
    let mut rows = Vec::new();
    for kernel in &s.kernels {
        let tuned = s.out.join(format!("{kernel}.tuned.c"));
        let report = s.out.join(format!("{kernel}.report.json"));
        let mut args: Vec<String> = vec!["apply".into()];
        args.extend(s.program_args(kernel));
        args.extend([
            s.preset_flag(),
            "-lm".into(),
            "--top-k".into(),
            k.clone(),
            "-o".into(),
            tuned.display().to_string(),
            "--report".into(),
            report.display().to_string(),
        ]);
        args.extend(extra.iter().cloned());
        let (_, secs) = s.tune(&args);
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).expect("report"))
                .expect("report JSON");
        let variants: Vec<u64> = r["nests"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|n| n["measured_variants"].as_u64().unwrap_or(0))
            .collect();
        let c = compare(&s, kernel, &tuned);
        // A file the check gave back unchanged is the user's: its column differs from
        // gcc's by the noise alone.
        let unchanged = std::fs::read(&tuned).ok() == std::fs::read(s.source(kernel)).ok();
        println!(
            "{}{}",
            c.line(
                kernel,
                &format!("{:>10}{secs:>9.0}", format!("{variants:?}"))
            ),
            if unchanged {
                " [tuned file = the user's, unchanged]"
            } else {
                ""
            }
        );
        // The nests' own time as `tune apply` measured the kept variants (warm, on their
        // saved data: invocations times the median), beside the region's cold run.
        let nests_s: f64 = r["nests"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|n| {
                n["invocations"].as_f64().unwrap_or(1.0)
                    * n["tuned"]["median"].as_f64().unwrap_or(0.0)
            })
            .sum();
        let mut row = c.json(kernel);
        row["variants_per_nest"] = serde_json::json!(variants);
        row["tune_s"] = serde_json::json!(secs);
        row["unchanged"] = serde_json::json!(unchanged);
        row["report"] = r;
        rows.push(row);
        let (g, p, t) = (c.gcc, c.polly, c.tuned);
        if kernel == "gemm" && s.preset == "LARGE" {
            // The usual 2·NI·NJ·NK multiply-add flops (alpha·A[i][k] is hoisted out of j).
            let flops = 2.0 * 1000.0 * 1100.0 * 1200.0;
            // The 2-thread FMA peak `tune machine` measures here (cached per host).
            let (machine, _) = s.tune(&["machine".into(), "--json".into()]);
            let peak = serde_json::from_str::<serde_json::Value>(&machine)
                .ok()
                .and_then(|m| {
                    let p = &m["peak_all"];
                    p["avx512_fma"]
                        .as_f64()
                        .or(p["avx2_fma"].as_f64())
                        .or(p["scalar"].as_f64())
                });
            let of_peak =
                |x: f64| peak.map_or(String::new(), |pk| format!(" ({:.0}%)", 100.0 * x / pk));
            let (gg, pp, tt) = (flops / g / 1e9, flops / p / 1e9, flops / t / 1e9);
            // The peak is the best of its runs (noise only slows a run down): the tuned
            // region's best run is its like-for-like counterpart, printed beside the
            // median.
            let best = c.bins[3]
                .times
                .iter()
                .copied()
                .filter(|x| *x > 0.0)
                .fold(f64::INFINITY, f64::min);
            let tb = flops / best / 1e9;
            let nest = if nests_s > 0.0 {
                let x = flops / nests_s / 1e9;
                format!(
                    " (its nest as tune apply measured it: {x:.1}{})",
                    of_peak(x)
                )
            } else {
                String::new()
            };
            println!(
                "gemm GFLOP/s (2·NI·NJ·NK, medians): gcc {gg:.1}{}, polly {pp:.1}{}, tuned {tt:.1}{} \
                 (its best run {tb:.1}{}){nest}; peak (tune machine, all threads, best of its runs) {}",
                of_peak(gg),
                of_peak(pp),
                of_peak(tt),
                of_peak(tb),
                peak.map_or("unknown".into(), |pk| format!("{pk:.1}"))
            );
            if let Some((what, x)) = gemm_ceiling(&s.out) {
                println!(
                    "gemm ceiling, hand-written with the register tile's technique \
                     (scripts/gemm-ceiling.c, {what}, best of 3): {x:.1}{}; tune's best run \
                     at {:.0}% of it, its median at {:.0}%",
                    of_peak(x),
                    100.0 * tb / x,
                    100.0 * tt / x
                );
            }
        }
    }
    let (pg, tg) = geomeans(&rows);
    println!(
        "geomean speedup over gcc: polly {pg:.2}x, tune apply {tg:.2}x ({:.2}x polly's)",
        tg / pg
    );
    // The families the issues judge apart, over those of their kernels that ran.
    for (family, members) in FAMILIES {
        let of: Vec<serde_json::Value> = rows
            .iter()
            .filter(|r| r["kernel"].as_str().is_some_and(|k| members.contains(&k)))
            .cloned()
            .collect();
        if of.is_empty() {
            continue;
        }
        let (p, t) = geomeans(&of);
        println!(
            "  {family} ({} of {}): polly {p:.2}x, tune apply {t:.2}x ({:.2}x polly's)",
            of.len(),
            members.len(),
            t / p
        );
    }
    let summary = serde_json::json!({
        "preset": s.preset, "k": k, "runs": s.runs, "kernels": rows,
        "geomean_polly": pg, "geomean_tuned": tg,
    });
    let path = s.out.join("summary.json");
    std::fs::write(&path, serde_json::to_string_pretty(&summary).unwrap()).unwrap();
    println!("summary: {}", path.display());
}

/// The fastest of `scripts/gemm-ceiling.c`'s packed gemms at LARGE for this machine's
/// vector registers (the rows `scripts/gemm-ceiling.sh` sweeps, at KC = 256), built
/// with gcc -O3 -march=M -fopenmp (`compare::march`): its configuration and GFLOP/s, or None when it
/// cannot be built or run.
fn gemm_ceiling(work: &std::path::Path) -> Option<(String, f64)> {
    use std::process::Command;
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/gemm-ceiling.c");
    let march = format!("-march={}", compare::march());
    let defines = Command::new("cc")
        .args([march.as_str(), "-dM", "-E", "-x", "c", "/dev/null"])
        .output()
        .ok()?;
    let avx512 = String::from_utf8_lossy(&defines.stdout).contains("__AVX512F__");
    let rows: &[u32] = if avx512 { &[8, 12, 14] } else { &[4, 6] };
    let mut best: Option<(String, f64)> = None;
    for mr in rows {
        let exe = work.join(format!("gemm-ceiling-{mr}"));
        let built = Command::new("cc")
            .args([
                "-O3",
                march.as_str(),
                "-fopenmp",
                "-DPACKED",
                "-DNV=2",
                "-DKC=256",
                "-DNC=2048",
            ])
            .arg(format!("-DMR={mr}"))
            .arg(format!("-DMC={}", mr * (240 / mr)))
            .arg(&script)
            .arg("-o")
            .arg(&exe)
            .arg("-lm")
            .status()
            .ok()?;
        if !built.success() {
            return None;
        }
        let out = Command::new(&exe).output().ok()?;
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        // "packed MR=8 NR=16 (64-byte vectors) MC=240 KC=256 NC=2048: 30.1 ms, 87.6 GFLOP/s, ..."
        let gflops = text
            .split(", ")
            .find_map(|p| p.strip_suffix(" GFLOP/s"))
            .and_then(|v| v.trim().parse::<f64>().ok())?;
        let what = text.split(':').next().unwrap_or("").trim().to_string();
        if out.status.success() && best.as_ref().is_none_or(|b| gflops > b.1) {
            best = Some((what, gflops));
        }
    }
    best
}
