//! `tune profile`: the tree, the roofline, counters, kernel history.

use profiling::cutout::CutoutRun;
use profiling::roofline;
use tuner::profile::Profile;

/// The tables `tune profile` prints.
pub fn render(p: &Profile) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    out.push_str(&p.tree);
    let bad: Vec<&CutoutRun> = p
        .nests
        .iter()
        .flat_map(|n| &n.runs)
        .filter(|r| !r.verdict.is_ok())
        .collect();
    for r in bad {
        let _ = writeln!(
            out,
            "  ! {} v{}: {}",
            r.nest,
            r.version,
            r.verdict.describe()
        );
    }
    if let Some(roof) = &p.roof {
        out.push('\n');
        out.push_str(&roofline::render(&p.roofline, roof));
    }
    let start = p
        .nests
        .iter()
        .flat_map(|n| n.models.first())
        .next()
        .map_or("", |m| {
            if m.note.contains("warm") {
                "caches warm with the inputs, as in the unflushed runs"
            } else {
                "cold caches, as in the flushed runs"
            }
        });
    let _ = writeln!(
        out,
        "\nmodelled caches (fully associative LRU over 64-byte lines, {start}; per profiled version, summed)"
    );
    for n in &p.nests {
        if let Some(e) = &n.model_error {
            let _ = writeln!(out, "  {:<8} no model: {e}", n.nest);
            continue;
        }
        let mut levels: Vec<(String, u64)> = Vec::new();
        for m in &n.models {
            for (name, misses) in &m.misses {
                match levels.iter_mut().find(|(l, _)| l == name) {
                    Some(e) => e.1 += misses,
                    None => levels.push((name.clone(), *misses)),
                }
            }
        }
        let dram: u64 = n.models.iter().map(|m| m.dram_bytes).sum();
        let text: Vec<String> = levels
            .iter()
            .map(|(l, m)| format!("{l} misses {m}"))
            .collect();
        let _ = writeln!(
            out,
            "  {:<8} {}, DRAM {:.1} KiB (modelled)",
            n.nest,
            text.join(", "),
            dram as f64 / 1024.0
        );
    }
    let mut shown_unavailable = false;
    out.push_str("\ncounters (per repetition, first profiled version)\n");
    for n in &p.nests {
        let Some(run) = n.runs.first() else { continue };
        let avail: Vec<String> = run
            .counters
            .iter()
            .filter_map(|c| Some(format!("{} {:.0}", c.name, c.per_rep?)).filter(|_| c.available))
            .collect();
        let _ = writeln!(
            out,
            "  {:<8} {}",
            n.nest,
            if avail.is_empty() {
                "none available".into()
            } else {
                avail.join(", ")
            }
        );
        if !shown_unavailable {
            let un: Vec<String> = run
                .counters
                .iter()
                .filter(|c| !c.available)
                .map(|c| format!("{} ({})", c.name, c.reason.clone().unwrap_or_default()))
                .collect();
            if !un.is_empty() {
                let _ = writeln!(out, "  unavailable: {}", un.join(", "));
            }
            shown_unavailable = true;
        }
    }
    out.push_str("\nkernel history\n");
    let _ = writeln!(
        out,
        "  {:<22}{:>12}{:>12}{:>8}{:>6}{:>12}  build key",
        "variant", "codegen ms", "compile ms", "cached", "runs", "run ms"
    );
    for h in &p.history {
        let _ = writeln!(
            out,
            "  {:<22}{:>12.2}{:>12.1}{:>8}{:>6}{:>12.4}  {}",
            h.variant,
            h.codegen_s * 1e3,
            h.compile_s * 1e3,
            if h.cache_hit { "yes" } else { "no" },
            h.runs,
            h.run_s * 1e3,
            h.key
        );
    }
    let _ = writeln!(out, "\nreport: {}", p.report);
    out
}
