//! The pipeline API: transfer-tune a program with the shipped model and database, and
//! time its nests untransformed.
//!
//! Run: `cargo run -p tuner --example pipeline -- datasets/programs/gemm.c -DSMALL_DATASET -lm`

use profiling::measure::Measure;
use tuner::{Pipeline, ProgramSpec};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = if args.is_empty() {
        vec!["datasets/programs/gemm.c", "-DSMALL_DATASET", "-lm"]
    } else {
        args.iter().map(String::as_str).collect()
    };
    let program = ProgramSpec::from_args(&args)?;

    // Every nest untransformed: 3 warmup runs, 10 timed runs on its saved data.
    let timings =
        Pipeline::full().measure(&program, Measure::default().warmup(3).repetitions(10))?;
    for t in &timings {
        println!(
            "{}: median {:.4} ms (min {:.4}, max {:.4}), {}",
            t.nest,
            t.stats.median * 1e3,
            t.stats.min * 1e3,
            t.stats.max * 1e3,
            t.verdict.describe()
        );
    }

    // Static features only, the 3 nearest tuned nests.
    let report = Pipeline::static_only().top_k(3).apply(&program)?;
    for n in &report.nests {
        println!("{}: {:.2}x with {:?}", n.nest, n.speedup, n.chosen.steps);
    }
    let out = std::env::temp_dir().join(format!("{}.tuned.c", report.program));
    std::fs::write(&out, &report.source)?;
    println!("tuned program: {}", out.display());
    Ok(())
}
