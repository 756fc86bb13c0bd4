//! `tune run`: the summary of a dry run.

use tuner::run::RunSummary;

fn ms(s: f64) -> String {
    format!("{:.3} ms", s * 1e3)
}

/// The human-readable summary (printed to stderr after the program's own output).
pub fn render(summary: &RunSummary) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "tune: {}: {} region(s), {} nest(s), exit {}",
        summary.file,
        summary.regions.len(),
        summary.nests.len(),
        summary.exit_code
    );
    for r in &summary.regions {
        let _ = writeln!(
            out,
            "  region{} in {}() lines {}-{}: {} invocation(s), {}",
            r.index,
            r.function,
            r.start_line,
            r.end_line,
            r.invocations,
            ms(r.total_s)
        );
        for l in &r.loops {
            let nest = summary
                .nests
                .iter()
                .find(|n| n.region == r.index && n.line == l.line && l.var == n.loops[0].var);
            let tag = match nest {
                Some(n) => format!(
                    "  <- {}: {} invocation(s), total {}, min {}, max {}",
                    n.name,
                    n.invocations,
                    ms(n.total_s),
                    ms(n.min_s),
                    ms(n.max_s)
                ),
                None => String::new(),
            };
            let _ = writeln!(
                out,
                "    {:indent$}for {:<4} {:<10} line {}{}",
                "",
                l.var,
                l.verdict,
                l.line,
                tag,
                indent = 2 * l.depth
            );
        }
    }
    if let Some(s) = &summary.saved {
        if s.failed {
            let _ = writeln!(
                out,
                "  data: not saved (the program did not finish normally or saving failed)"
            );
        } else {
            let _ = writeln!(
                out,
                "  data: {} file(s), {:.1} KiB in {}",
                s.files,
                s.bytes as f64 / 1024.0,
                s.dir
            );
        }
    }
    out
}
