//! Vectorization: `omp simd`, optionally with `simdlen`; a reduction loop over scalars
//! with `reduction` clauses (each lane keeps a partial result, combined after the loop:
//! the order of the additions changes, as with a parallel reduction).

use super::*;

pub(crate) fn vectorize(l: &mut Loop, width: Option<u32>, cx: &Ctx) -> Result<(), Refusal> {
    if !crate::program::loops(&l.body).is_empty() {
        return Err(cx.na(format!("loop '{}' is not innermost", l.var)));
    }
    if l.kind == LoopKind::Loop {
        return Err(cx.illegal(format!(
            "loop '{}' is {}, not parallel",
            l.var,
            l.kind.verdict()
        )));
    }
    // Reduced array elements would need a section per lane: scalar replacement makes
    // them scalars first.
    let reduction = if l.kind == LoopKind::Reduction {
        reduction_items(l, false, cx)?
    } else {
        Vec::new()
    };
    if l.has_directives() {
        return Err(cx.na(format!("loop '{}' already carries a directive", l.var)));
    }
    if !l.private_arrays.is_empty() {
        return Err(cx.illegal(format!(
            "loop '{}' is parallel only with a copy of {} per iteration",
            l.var,
            l.private_arrays.join(", ")
        )));
    }
    if let Some(w) = width {
        if !(2..=64).contains(&w) || !w.is_power_of_two() {
            return Err(cx.na(format!("simd width {w} (a power of two in 2..=64)")));
        }
    }
    let mut lastprivate = written_outside_decls(l);
    lastprivate.retain(|v| !reduction.iter().any(|r| r.name == *v));
    l.directives.push(Directive::OmpSimd {
        simdlen: width,
        lastprivate,
        reduction,
    });
    Ok(())
}
