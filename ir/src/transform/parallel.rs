//! OpenMP parallelization: schedule, chunk, collapse.

use super::*;

pub(crate) fn parallelize(
    l: &mut Loop,
    schedule: Schedule,
    chunk: Option<u32>,
    collapse: Option<u32>,
    inside_parallel: bool,
    cx: &mut Ctx,
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
            .any(|x| x.is_parallel_for())
    {
        return Err(cx.na("nested parallel loops"));
    }
    // A loop directive must stand right before its `for`: one per loop.
    if l.has_directives() {
        return Err(cx.na(format!("loop '{}' already carries a directive", l.var)));
    }
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
            if !x.private_arrays.is_empty() {
                return Err(cx.na(format!(
                    "collapse over loop '{}', which needs a copy of {} per iteration",
                    x.var,
                    x.private_arrays.join(", ")
                )));
            }
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
    }
    // Arrays each iteration writes before reading get a copy per iteration.
    privatize_arrays(l, cx)?;
    let lastprivate = written_outside_decls(l);
    l.directives.push(Directive::OmpParallelFor {
        collapse,
        schedule: Some(schedule),
        chunk,
        lastprivate,
    });
    Ok(())
}
