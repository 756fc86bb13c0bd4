//! `tune db eval`: the evaluation table.

use tuner::ranker::RankerKind;
use tuner::workflows::eval::EvalReport;

/// The evaluation table.
pub fn render_eval(r: &EvalReport) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let w = super::name_width(r.rows.iter().map(|row| row.program.as_str()), 16);
    let _ = write!(out, "{:<w$}{:<8}{:>8}  ", "program", "nest", "best");
    for k in RankerKind::ALL {
        let _ = write!(out, "{:>16}", k.name());
    }
    out.push('\n');
    for row in &r.rows {
        let _ = write!(
            out,
            "{:<w$}{:<8}{:>7.2}x ",
            row.program, row.nest, row.best_known
        );
        for k in RankerKind::ALL {
            let cell = row.methods.get(&k).map_or("-".to_string(), |o| {
                format!("{:.2}x {}", o.kept, if o.hit { "hit" } else { "miss" })
            });
            let _ = write!(out, "{:>15}", cell);
            out.push(' ');
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "top-{} reaches >= 90% of the best known speedup on: {}",
        r.k,
        shares(&r.hit_rate)
    );
    let _ = writeln!(
        out,
        "on the {} nests whose best known is >= {:.1}x: {}",
        r.gaining,
        tuner::workflows::eval::GAIN,
        shares(&r.hit_rate_gaining)
    );
    if r.variants > 0 {
        let _ = writeln!(
            out,
            "loop-order variants whose first pick is of the original's recipe family ({}): {}",
            r.variants,
            shares(&r.variant_agreement)
        );
    }
    let judged = if r.rounds > 0 {
        format!("hits judged on medians of {} rounds in rotation", r.rounds)
    } else {
        "hits judged on one measurement per recipe".to_string()
    };
    let _ = writeln!(
        out,
        "seed {}, {judged}; {} held-out nests, {} measurements, {:.0} s",
        r.seed,
        r.rows.len(),
        r.measured,
        r.seconds
    );
    out
}

/// Each ranker's share, as "embedding 80%, raw features 77%, random 58%".
fn shares(rates: &std::collections::BTreeMap<RankerKind, f64>) -> String {
    RankerKind::ALL
        .iter()
        .map(|k| format!("{k} {:.0}%", 100.0 * rates.get(k).copied().unwrap_or(0.0)))
        .collect::<Vec<_>>()
        .join(", ")
}
