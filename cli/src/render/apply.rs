//! `tune apply`: the per-nest table and, with --explain, every candidate with why it was kept or refused.

use profiling::measure::Stats;
use tuner::ApplyReport;

fn pct(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{:.0}%", v * 100.0))
}

/// The report as a terminal table; with `explain`, every candidate with why it was
/// kept or refused.
pub fn render_with(r: &ApplyReport, explain: bool) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    if explain {
        let _ = writeln!(
            out,
            "retrieval: the first {} distinct recipes in {} order{}; d = distance there",
            r.k,
            r.ranker,
            if r.static_only {
                " (static features only)"
            } else {
                ""
            }
        );
    }
    let _ = writeln!(
        out,
        "{:<8}{:>6}{:>20}{:>20}{:>9}{:>13}  recipe (from)",
        "nest", "line", "baseline ms", "tuned ms", "speedup", "roofline"
    );
    // The whole nests follow their nests: a kept recipe there replaces theirs.
    for n in r.nests.iter().chain(&r.wholes) {
        let spread = |s: &Stats| {
            format!(
                "{} ±{:.0}%",
                profiling::report::ms(s.median),
                100.0 * (s.median_ci.1 - s.median_ci.0) / 2.0 / s.median.max(1e-12)
            )
        };
        let chosen = n.candidates.iter().find(|c| c.kept);
        let _ = writeln!(
            out,
            "{:<8}{:>6}{:>20}{:>20}{:>8.2}x{:>13}  {}",
            n.nest,
            n.line,
            spread(&n.baseline),
            n.tuned.as_ref().map_or("-".into(), spread),
            n.speedup,
            format!("{}→{}", pct(n.efficiency_before), pct(n.efficiency_after)),
            match chosen {
                Some(c) => format!(
                    "{} (from {} {}, d={:.2})",
                    serde_json::to_string(&c.recipe.steps).expect("steps serialize"),
                    c.from.program,
                    c.from.nest,
                    c.from.distance
                ),
                None if r.check.as_ref().is_some_and(|c| c.other_results) => {
                    "untransformed (the tuned program printed other results than the original)"
                        .into()
                }
                None if r.check.as_ref().is_some_and(|c| c.reverted) => {
                    "untransformed (the whole tuned program was not faster beyond the noise)".into()
                }
                None => "untransformed (no candidate beat it beyond the noise)".into(),
            }
        );
        if explain {
            for u in &n.user_parallel {
                let _ = writeln!(
                    out,
                    "    the user's '{}' on loop '{}' (line {}): {}",
                    u.directive,
                    u.var,
                    u.line,
                    if u.analysis_agrees {
                        "the dependence analysis agrees, it is parallel"
                    } else {
                        "the dependence analysis cannot prove it parallel; kept as the user's claim"
                    }
                );
            }
            if n.baseline_batch > 1 {
                let _ = writeln!(
                    out,
                    "    timed in batches of {} consecutive calls a sample (it leaves its outputs unchanged when run again)",
                    n.baseline_batch
                );
            }
            let t = &n.time;
            let ran = n.candidates.iter().filter(|c| c.run_s > 0.0).count();
            let _ = writeln!(
                out,
                "    time {:.1} s: baseline {:.1} s, {ran} candidate(s) {:.1} s, cold runs {:.1} s, building {:.1} s",
                t.total_s,
                t.baseline_s,
                t.candidates_s,
                (t.measuring_s - t.baseline_s - t.candidates_s).max(0.0),
                t.building_s
            );
            for c in &n.candidates {
                let _ = writeln!(
                    out,
                    "    {} {} {} d={:.2}: {} — {}",
                    if c.kept { "KEPT" } else { "    " },
                    c.from.program,
                    c.from.nest,
                    c.from.distance,
                    serde_json::to_string(&c.recipe.steps).expect("steps serialize"),
                    if c.why.is_empty() {
                        c.verdict.to_string()
                    } else {
                        c.why.clone()
                    }
                );
                for d in &c.dropped {
                    let _ = writeln!(out, "         dropped {d}");
                }
            }
        }
    }
    if explain && !r.left_out.is_empty() {
        let _ = writeln!(out, "kept as written, not tuned:");
        for l in &r.left_out {
            let _ = writeln!(out, "    line {}: {}: {}", l.line, l.what, l.reason);
        }
    }
    let check_line = |what: &str, c: &tuner::report::ProgramCheck, verdict: &str| {
        let test = match (c.quick_look, c.no_faster) {
            (Some(1), _) => format!(
                "one round, {}x or more with the whole run faster and the same outputs",
                tuner::check::ONE_ROUND_GAIN
            ),
            (Some(n), _) => format!(
                "Welch's t on log times after {n} rounds: p < {}",
                tuner::check::quick_look_level(n).unwrap_or(0.005)
            ),
            (None, Some(n)) => format!("no faster in {n} rounds: stopped"),
            (None, None) => format!("p = {:.3}", c.p_value),
        };
        let wall = c.wall_ms.map_or(String::new(), |(o, t)| {
            format!("; whole run {o:.1} ms → {t:.1} ms, {:.2}x", o / t.max(1e-9))
        });
        format!(
            "{what} ({} time, median of {}): original {:.3} ms, tuned {:.3} ms, {:.2}x ({test}){wall}{verdict}",
            c.unit, c.runs, c.original_ms, c.tuned_ms, c.speedup,
        )
    };
    if let Some(c) = &r.check_with_teams {
        let _ = writeln!(
            out,
            "{}",
            check_line(
                "whole program, first choice",
                c,
                "; not faster beyond the noise: each recipe starting an OpenMP team is \
                 replaced by its nest's fastest candidate starting none"
            )
        );
    }
    if let Some(c) = &r.check_inexact {
        let _ = writeln!(
            out,
            "{}",
            check_line(
                "whole program, before",
                c,
                "; it printed other results than the original (floating-point sums in \
                 another order): each recipe whose outputs were not bit for bit the \
                 original's is replaced by its nest's fastest candidate whose outputs were"
            )
        );
    }
    if let Some(c) = &r.check {
        let verdict = if c.other_results {
            "; it printed other results than the original: the original is kept".to_string()
        } else if c.wall_slower {
            format!(
                "; the whole run took more than {:.0}% longer: the original is kept",
                tuner::check::WALL_SLACK * 100.0
            )
        } else if c.reverted {
            "; not faster beyond the noise: the original is kept".to_string()
        } else {
            String::new()
        };
        let _ = writeln!(out, "{}", check_line("whole program", c, &verdict));
        if !c.reverted && !c.same_output {
            let _ = writeln!(
                out,
                "    it prints other results than the original (floating-point sums in \
                 another order, accepted with --reassociate)"
            );
        } else if c.contracted {
            let _ = writeln!(
                out,
                "    it prints other last digits than the original, and the same results \
                 when both are built with -ffp-contract=off: products contracted into FMAs \
                 otherwise, the same sums in the same order"
            );
        }

        if explain {
            let _ = writeln!(out, "    whole-program check {:.1} s", c.seconds);
            let _ = writeln!(out, "    original built as: {}", c.original_command);
            let _ = writeln!(out, "    tuned built as:    {}", c.tuned_command);
        }
    }
    let t = &r.time;
    let _ = writeln!(
        out,
        "tuning time {:.1} s: profiling {:.1} s, embedding {:.2} s, building {:.1} s, measuring {:.1} s",
        t.total_s, t.profiling_s, t.embedding_s, t.building_s, t.measuring_s
    );
    out
}

#[cfg(test)]
mod tests {
    /// A report with no nests and a whole-program check, as `tune apply --report` writes.
    fn report(same_output: bool, reverted: bool) -> tuner::report::ApplyReport {
        serde_json::from_value(serde_json::json!({
            "program": "p", "file": "p.c", "k": 3, "static_only": false, "nests": [],
            "openmp": false, "time": {"profiling_s": 1.0, "embedding_s": 0.0,
            "building_s": 0.0, "measuring_s": 0.0, "total_s": 1.0},
            "machine": null, "left_out": [],
            "check": {"unit": "wall", "original_ms": 10.0, "tuned_ms": 5.0, "speedup": 2.0,
                "p_value": 0.008, "runs": 5, "same_output": same_output, "reverted": reverted,
                "other_results": !same_output && reverted}
        }))
        .unwrap()
    }

    #[test]
    fn a_program_that_printed_other_results_is_given_up_and_says_so() {
        let other = "it printed other results than the original: the original is kept";
        assert!(super::render_with(&report(false, true), false).contains(other));
        assert!(!super::render_with(&report(true, true), false).contains(other));
        assert!(!super::render_with(&report(true, false), false).contains(other));
        // Kept with other results: only with --reassociate, and said so.
        let accepted = "accepted with --reassociate";
        assert!(super::render_with(&report(false, false), false).contains(accepted));
        assert!(!super::render_with(&report(true, false), false).contains(accepted));
    }
}
