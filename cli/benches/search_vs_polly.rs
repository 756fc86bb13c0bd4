//! Schedule search against the compilers: per kernel, `tune search --budget N -o` on the
//! dataset program, then the original under gcc and Polly and the searched program
//! under gcc (+ OpenMP where it has directives), timed in one rotation. Prints per-kernel speedups over gcc and
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
    let s = Setup::from_env("search_vs_polly", false);
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
        let mut args: Vec<String> = vec!["search".into()];
        args.extend(s.program_args(k));
        args.extend([
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
        let (json, secs) = s.tune(&args);
        let results: serde_json::Value = serde_json::from_str(&json).expect("search JSON");
        let nests = results.as_array().map_or(0, |a| a.len());
        let measured: u64 = results
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| r["measured"].as_u64().unwrap_or(0))
            .sum();
        let c = compare(&s, k, &tuned);
        println!(
            "{}",
            c.line(k, &format!("{nests:>8}{measured:>10}{secs:>9.0}"))
        );
        let mut row = c.json(k);
        row["search"] = results;
        row["search_s"] = serde_json::json!(secs);
        rows.push(row);
    }
    let (pg, tg) = geomeans(&rows);
    println!("geomean speedup over gcc: polly {pg:.2}x, searched {tg:.2}x");
    let summary = serde_json::json!({
        "preset": s.preset, "budget": budget, "time_limit_s": limit, "runs": s.runs,
        "kernels": rows, "geomean_polly": pg, "geomean_tuned": tg,
    });
    let path = s.out.join("summary.json");
    std::fs::write(&path, serde_json::to_string_pretty(&summary).unwrap()).unwrap();
    println!("summary: {}", path.display());
}
