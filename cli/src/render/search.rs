//! `tune search`: the best recipe per nest.

use tuner::search::NestResult;

/// The result table.
pub fn render(results: &[NestResult]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<8}{:>14}{:>12}{:>9}{:>10}  best recipe",
        "nest", "baseline ms", "best ms", "speedup", "verified"
    );
    for r in results {
        let _ = writeln!(
            out,
            "{:<8}{:>14.4}{:>12.4}{:>8.2}x{:>6}/{:<3}  {}",
            r.nest,
            r.baseline_s * 1e3,
            r.best_s * 1e3,
            r.speedup,
            r.verified,
            r.measured,
            serde_json::to_string(&r.best.steps).expect("steps serialize")
        );
    }
    out
}
