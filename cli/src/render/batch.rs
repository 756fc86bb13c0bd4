//! `tune batch`: the summary table.

use tuner::workflows::batch::Summary;

/// The summary as a terminal table.
pub fn render(s: &Summary) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<20}{:>8}{:>7}{:>7}{:>10}{:>10}{:>9}  file or error",
        "program", "status", "nests", "tuned", "speedup", "variants", "s"
    );
    for o in &s.programs {
        let _ = writeln!(
            out,
            "{:<20}{:>8}{:>7}{:>7}{:>9.2}x{:>10}{:>9.1}  {}",
            o.program,
            o.status,
            o.nests,
            o.tuned_nests,
            o.speedup,
            o.measured_variants,
            o.seconds,
            o.tuned_file.as_deref().or(o.error.as_deref()).unwrap_or("")
        );
    }
    let _ = writeln!(
        out,
        "{} programs: {} tuned, {} failed; geomean nest speedup {:.2}x; {:.1} s",
        s.programs.len(),
        s.tuned,
        s.failed,
        s.speedup,
        s.seconds
    );
    out
}
