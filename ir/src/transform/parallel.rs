//! OpenMP parallelization: schedule, chunk, collapse.

use super::*;

pub(crate) fn parallelize(
    l: &mut Loop,
    schedule: Schedule,
    chunk: Option<u32>,
    collapse: Option<u32>,
    inside_parallel: bool,
    cx: &Ctx,
) -> Result<(), Refusal> {
    if l.kind != LoopKind::Map {
        return Err(cx.illegal(format!(
            "loop '{}' is {}, not parallel",
            l.var,
            l.kind.verdict()
        )));
    }
    if inside_parallel
        || crate::program::loops(&l.body)
            .iter()
            .any(|x| has_pragma(x, "omp parallel"))
    {
        return Err(cx.na("nested parallel loops"));
    }
    // A loop directive must stand right before its `for`: one per loop.
    if !l.pragmas.is_empty() {
        return Err(cx.na(format!("loop '{}' already carries a directive", l.var)));
    }
    let mut p = String::from("#pragma omp parallel for");
    if let Some(n) = collapse {
        let n = n as usize;
        if n < 2 {
            return Err(cx.na(format!("collapse({n}) (need at least 2 loops)")));
        }
        let band = band_of(l, n).ok_or_else(|| {
            cx.na(format!(
                "no perfectly nested band of {n} loops at '{}' to collapse",
                l.var
            ))
        })?;
        check_pragma_free(&band[1..], cx.k)?;
        let vars: Vec<&str> = band.iter().map(|x| x.var.as_str()).collect();
        for x in &band {
            if x.kind != LoopKind::Map {
                return Err(cx.illegal(format!(
                    "loop '{}' of the collapsed band is {}, not parallel",
                    x.var,
                    x.kind.verdict()
                )));
            }
            if let Some(v) = vars
                .iter()
                .find(|v| x.init.mentions(v) || x.bound.mentions(v))
            {
                return Err(cx.na(format!(
                    "the collapsed band is not rectangular: the bounds of '{}' depend on '{v}'",
                    x.var
                )));
            }
        }
        p.push_str(&format!(" collapse({n})"));
    }
    p.push_str(&format!(
        " schedule({}{})",
        match schedule {
            Schedule::Static => "static",
            Schedule::Dynamic => "dynamic",
        },
        chunk.map_or(String::new(), |c| format!(", {c}"))
    ));
    let privates = written_outside_decls(l);
    if !privates.is_empty() {
        p.push_str(&format!(" lastprivate({})", privates.join(", ")));
    }
    l.pragmas.push(p);
    Ok(())
}
