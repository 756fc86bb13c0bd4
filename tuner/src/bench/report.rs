//! `tune bench` reports: Markdown, JSON, and a self-contained HTML page with SVG plots.

use super::svg::{bar_chart, roofline_chart, Bar, BarKind, Point};
use super::{BenchReport, Variant};
use profiling::stats::Class;
use std::fmt::Write;

fn ms(s: f64) -> String {
    format!("{:.3}", s * 1e3)
}

fn spread(v: &[f64]) -> String {
    let m = profiling::stats::median(v);
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !m.is_finite() || m <= 0.0 {
        return "-".into();
    }
    format!(
        "-{:.1}% / +{:.1}%",
        100.0 * (m - lo) / m,
        100.0 * (hi - m) / m
    )
}

/// The report as Markdown (also what the terminal shows).
pub fn markdown(r: &BenchReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# tune bench: {}\n", r.suite);
    for l in r.environment.lines() {
        let _ = writeln!(out, "- {l}");
    }
    let _ = writeln!(
        out,
        "- {} warmup rounds, {} recorded rounds (benchmarks in rotation)\n",
        r.warmup, r.runs
    );
    let _ = writeln!(
        out,
        "| benchmark | median ms | min / max around the median | samples | unit | output |"
    );
    let _ = writeln!(out, "|---|---:|---|---:|---|---|");
    for b in &r.benchmarks {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            b.name,
            ms(b.median),
            spread(&b.samples),
            b.samples.len(),
            b.unit,
            b.output_hash
        );
    }
    let speedups = r.speedups();
    if !speedups.is_empty() {
        let _ = writeln!(
            out,
            "\n| program | tuned speedup | 95% interval |\n|---|---:|---|"
        );
        for (p, s, (lo, hi)) in &speedups {
            let _ = writeln!(out, "| {p} | {s:.2}x | {lo:.2}x .. {hi:.2}x |");
        }
    }
    for b in r.benchmarks.iter().filter(|b| b.variant == Variant::Tuned) {
        if let Some(o) = r
            .benchmarks
            .iter()
            .find(|o| o.program == b.program && o.variant == Variant::Original)
        {
            if o.output_hash != b.output_hash {
                let _ = writeln!(
                    out,
                    "\n**{}: the tuned program's output differs from the original's.**",
                    b.program
                );
            }
        }
    }
    if let Some(c) = &r.comparison {
        let _ = writeln!(
            out,
            "\n## Against baseline `{}`\n\nMann-Whitney U at α = {}, bootstrap 95% interval of the ratio of medians against a noise threshold of ±{:.0}%.\n",
            c.baseline,
            c.alpha,
            c.noise * 100.0
        );
        if !c.environment_differences.is_empty() {
            let _ = writeln!(out, "**The environment differs from the baseline's:**\n");
            for d in &c.environment_differences {
                let _ = writeln!(out, "- {d}");
            }
            let _ = writeln!(out);
        }
        let _ = writeln!(
            out,
            "| benchmark | baseline ms | now ms | change | 95% interval | p | verdict |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---|---:|---|");
        for ch in &c.changes {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:+.1}% | {:+.1}% .. {:+.1}% | {:.3} | {} |",
                ch.name,
                ms(ch.base_median),
                ms(ch.new_median),
                (ch.ratio - 1.0) * 100.0,
                (ch.ratio_ci.0 - 1.0) * 100.0,
                (ch.ratio_ci.1 - 1.0) * 100.0,
                ch.p_value,
                if ch.class == Class::Unchanged {
                    ch.class.to_string()
                } else {
                    format!("**{}**", ch.class)
                }
            );
        }
        for m in &c.missing {
            let _ = writeln!(out, "| {m} | | | | | | not run (in the baseline only) |");
        }
        for m in &c.new {
            let _ = writeln!(out, "| {m} | | | | | | new (not in the baseline) |");
        }
        let _ = writeln!(
            out,
            "\n{} regressed, {} improved, {} unchanged.",
            c.count(Class::Regressed),
            c.count(Class::Improved),
            c.count(Class::Unchanged)
        );
    }
    out
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A self-contained HTML page: the environment, the tables, speedup (or change) bars
/// with their intervals, and the roofline with every nest as a point.
pub fn html(r: &BenchReport) -> String {
    let mut body = String::new();
    let _ = writeln!(body, "<h1>tune bench: {}</h1>", escape(&r.suite));
    let _ = writeln!(body, "<ul>");
    for l in r.environment.lines() {
        let _ = writeln!(body, "<li>{}</li>", escape(&l));
    }
    let _ = writeln!(body, "</ul>");
    if let Some(c) = &r.comparison {
        let bars: Vec<Bar> = c
            .changes
            .iter()
            .map(|ch| Bar {
                label: ch.name.clone(),
                value: ch.ratio,
                lo: ch.ratio_ci.0,
                hi: ch.ratio_ci.1,
                kind: match ch.class {
                    Class::Improved => BarKind::Improved,
                    Class::Regressed => BarKind::Regressed,
                    Class::Unchanged => BarKind::Unchanged,
                },
            })
            .collect();
        let _ = writeln!(
            body,
            "<h2>Against baseline {}</h2><p>{} regressed, {} improved, {} unchanged (time ratio now / baseline, 95% bootstrap interval; noise threshold ±{:.0}%).</p>",
            escape(&c.baseline),
            c.count(Class::Regressed),
            c.count(Class::Improved),
            c.count(Class::Unchanged),
            c.noise * 100.0
        );
        if !c.environment_differences.is_empty() {
            let _ = writeln!(
                body,
                "<p><b>The environment differs from the baseline's:</b></p><ul>"
            );
            for d in &c.environment_differences {
                let _ = writeln!(body, "<li>{}</li>", escape(d));
            }
            let _ = writeln!(body, "</ul>");
        }
        body.push_str(&bar_chart(
            "Time now / baseline",
            "time ratio (lower is faster)",
            &bars,
            1.0,
        ));
    }
    let speedups = r.speedups();
    if !speedups.is_empty() {
        let bars: Vec<Bar> = speedups
            .iter()
            .map(|(p, s, (lo, hi))| Bar {
                label: p.clone(),
                value: *s,
                lo: *lo,
                hi: *hi,
                kind: BarKind::Neutral,
            })
            .collect();
        let _ = writeln!(body, "<h2>Tuned over original</h2>");
        body.push_str(&bar_chart(
            "Speedup of the tuned program",
            "speedup (higher is faster)",
            &bars,
            1.0,
        ));
    }
    if let Some(roof) = &r.roofline {
        let points: Vec<Point> = roof
            .points
            .iter()
            .map(|p| Point {
                label: format!("{} {}", p.program, p.nest),
                group: p.variant.to_string(),
                oi: p.oi,
                gflops: p.gflops,
            })
            .collect();
        let _ = writeln!(body, "<h2>Roofline</h2><p>{}</p>", escape(&roof.source));
        let caches: Vec<(String, f64)> = roof
            .caches
            .iter()
            .map(|c| (format!("L{}", c.level), c.bandwidth_gbs))
            .collect();
        body.push_str(&roofline_chart(
            "Nests under the roofline",
            roof.peak_gflops,
            roof.bandwidth_gbs,
            &caches,
            &points,
        ));
    }
    let _ = writeln!(body, "<h2>Tables</h2><pre>{}</pre>", escape(&markdown(r)));
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tune bench: {}</title>\n<style>body{{font-family:sans-serif;max-width:1000px;margin:2em auto;color:#222}} svg{{display:block;margin:1em 0;max-width:100%;height:auto}} pre{{background:#f6f6f6;padding:1em;overflow-x:auto}}</style></head>\n<body>\n{body}</body></html>\n",
        escape(&r.suite)
    )
}
