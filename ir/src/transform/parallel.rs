//! OpenMP parallelization: schedule, chunk, collapse, reductions.

use super::*;

pub(crate) fn parallelize(
    l: &mut Loop,
    schedule: Schedule,
    chunk: Option<u32>,
    collapse: Option<u32>,
    inside_parallel: bool,
    outermost: bool,
    cx: &mut Ctx,
) -> Result<(), Refusal> {
    if l.kind == LoopKind::Loop {
        return Err(cx.illegal(format!(
            "loop '{}' is {}, not parallel",
            l.var,
            l.kind.verdict()
        )));
    }
    // A reduction loop runs in parallel with a copy of each reduced location per
    // thread, combined at the end (`reduction` clauses).
    let reduction = if l.kind == LoopKind::Reduction {
        if collapse.is_some() {
            return Err(cx.na(format!("collapse over the reduction loop '{}'", l.var)));
        }
        reduction_items(l, outermost, cx)?
    } else {
        Vec::new()
    };
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
    let mut lastprivate = written_outside_decls(l);
    lastprivate.retain(|v| !reduction.iter().any(|r| r.name == *v));
    l.directives.push(Directive::OmpParallelFor {
        collapse,
        schedule: Some(schedule),
        chunk,
        lastprivate,
        reduction,
    });
    Ok(())
}

/// The locations the dependences carried by reduction loop `l` run between, each with
/// its operator: scalars as they are, arrays as a section over the whole array.
/// Arrays are reduced only by the nest's outermost loop: each run of the loop copies
/// the whole array per thread.
pub(super) fn reduction_items(
    l: &Loop,
    outermost: bool,
    cx: &Ctx,
) -> Result<Vec<ReductionItem>, Refusal> {
    let an = cx.an;
    let private_scalars = an.private_scalars.get(&l.id);
    let private_arrays = an.private_arrays.get(&l.id);
    let mut found: Vec<(&str, RedOp)> = Vec::new();
    for d in an.deps.iter().filter(|d| d.carrier() == Some(l.id)) {
        let a = &an.accesses[d.source];
        if a.private_in.contains(&l.id)
            || private_scalars.is_some_and(|p| p.contains(&a.array))
            || private_arrays.is_some_and(|p| p.iter().any(|x| x.name == a.array))
        {
            continue;
        }
        for x in [&an.accesses[d.source], &an.accesses[d.sink]] {
            let Some(op) = x.reduction else {
                return Err(cx.illegal(format!(
                    "'{}' is carried by loop '{}' outside a reduction statement",
                    x.array, l.var
                )));
            };
            match found.iter().find(|(n, _)| *n == x.array) {
                Some((_, o)) if *o != op => {
                    return Err(cx.na(format!("'{}' is reduced with two operators", x.array)))
                }
                Some(_) => {}
                None => found.push((&x.array, op)),
            }
        }
    }
    found
        .into_iter()
        .map(|(name, op)| {
            let op = match op {
                RedOp::Sum => "+",
                RedOp::Product => "*",
                RedOp::Max => "max",
                RedOp::Min => "min",
            }
            .to_string();
            let section = match cx.arrays.iter().find(|a| a.name == name) {
                None => Vec::new(),
                Some(_) if !outermost => {
                    return Err(cx.na(format!(
                        "reduction over array '{name}' by a loop inside the nest (a copy of the array per run of the loop)"
                    )))
                }
                Some(a) => {
                    let max = crate::private_arrays::MAX_PRIVATE_BYTES;
                    if a.bytes().is_none_or(|b| b > max) {
                        return Err(cx.na(format!(
                            "reduction over array '{name}' (a copy per thread needs known extents of at most {} KiB)",
                            max / 1024
                        )));
                    }
                    a.dims.clone()
                }
            };
            Ok(ReductionItem {
                op,
                name: name.to_string(),
                section,
            })
        })
        .collect()
}
