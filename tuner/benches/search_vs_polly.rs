//! Schedule search against the compilers: per kernel, `tune search --budget N -o` on the
//! dataset program, then the original under gcc and Polly and the searched program
//! under gcc + OpenMP, timed in one rotation. Prints per-kernel speedups over gcc and
//! their geomeans.
//!
//! Run: `cargo bench -p tuner --bench search_vs_polly`
//! Settings: TUNE_BENCH_BUDGET (candidates per nest, default 200), TUNE_BENCH_TIME_LIMIT
//! (seconds of search per nest, default 180), and those of `compare/mod.rs`.

mod compare;

use compare::*;

fn main() {
    if !have_polly() {
        eprintln!("clang-19 with Polly is not installed (apt-get install clang-19 libpolly-19-dev libomp-19-dev)");
        std::process::exit(1);
    }
    let s = Setup::from_env("search_vs_polly");
    let budget = env_or("TUNE_BENCH_BUDGET", "200");
    let limit = env_or("TUNE_BENCH_TIME_LIMIT", "180");
    println!(
        "{:<12}{:>10}{:>10}{:>10}{:>9}{:>9}{:>8}{:>10}{:>9}  outputs",
        "kernel",
        "gcc ms",
        "polly ms",
        "tuned ms",
        "polly x",
        "tuned x",
        "nests",
        "measured",
        "search s"
    );
    let mut rows = Vec::new();
    for k in &s.kernels {
        let tuned = s.out.join(format!("{k}.searched.c"));
        let src = s.source(k).display().to_string();
        let (json, secs) = s.tune(&[
            "search".into(),
            src,
            s.preset_flag(),
            "-lm".into(),
            "--budget".into(),
            budget.clone(),
            "--time-limit".into(),
            limit.clone(),
            "--json".into(),
            "-o".into(),
            tuned.display().to_string(),
        ]);
        let results: serde_json::Value = serde_json::from_str(&json).expect("search JSON");
        let nests = results.as_array().map_or(0, |a| a.len());
        let measured: u64 = results
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| r["measured"].as_u64().unwrap_or(0))
            .sum();
        let bins = measure_kernel(&s, k, &tuned);
        let [g, p, t] = [0, 1, 2].map(|i| median(&bins[i].times));
        let same = if bins[2].stdout == bins[0].stdout {
            "identical"
        } else {
            "differ"
        };
        println!(
            "{:<12}{:>10.2}{:>10.2}{:>10.2}{:>8.2}x{:>8.2}x{:>8}{:>10}{:>9.0}  {same} (spread gcc ±{:.0}% polly ±{:.0}% tuned ±{:.0}%)",
            k,
            g * 1e3,
            p * 1e3,
            t * 1e3,
            g / p,
            g / t,
            nests,
            measured,
            secs,
            spread(&bins[0].times),
            spread(&bins[1].times),
            spread(&bins[2].times),
        );
        rows.push(serde_json::json!({
            "kernel": k, "gcc_s": g, "polly_s": p, "tuned_s": t,
            "polly_speedup": g / p, "tuned_speedup": g / t,
            "gcc_samples": bins[0].times, "polly_samples": bins[1].times,
            "tuned_samples": bins[2].times, "search": results, "search_s": secs,
            "outputs": same,
        }));
    }
    let pg = geomean(
        &rows
            .iter()
            .map(|r| r["polly_speedup"].as_f64().unwrap())
            .collect::<Vec<_>>(),
    );
    let tg = geomean(
        &rows
            .iter()
            .map(|r| r["tuned_speedup"].as_f64().unwrap())
            .collect::<Vec<_>>(),
    );
    println!("geomean speedup over gcc: polly {pg:.2}x, searched {tg:.2}x");
    let summary = serde_json::json!({
        "preset": s.preset, "budget": budget, "time_limit_s": limit, "runs": s.runs,
        "kernels": rows, "geomean_polly": pg, "geomean_tuned": tg,
    });
    let path = s.out.join("summary.json");
    std::fs::write(&path, serde_json::to_string_pretty(&summary).unwrap()).unwrap();
    println!("summary: {}", path.display());
}
