//! Vectorization: `omp simd`, optionally with `simdlen`.

use super::*;

pub(crate) fn vectorize(l: &mut Loop, width: Option<u32>, cx: &Ctx) -> Result<(), Refusal> {
    if !crate::program::loops(&l.body).is_empty() {
        return Err(cx.na(format!("loop '{}' is not innermost", l.var)));
    }
    if l.kind != LoopKind::Map {
        return Err(cx.illegal(format!(
            "loop '{}' is {}, not parallel",
            l.var,
            l.kind.verdict()
        )));
    }
    if !l.pragmas.is_empty() {
        return Err(cx.na(format!("loop '{}' already carries a directive", l.var)));
    }
    let mut p = String::from("#pragma omp simd");
    if let Some(w) = width {
        if !(2..=64).contains(&w) || !w.is_power_of_two() {
            return Err(cx.na(format!("simd width {w} (a power of two in 2..=64)")));
        }
        p.push_str(&format!(" simdlen({w})"));
    }
    let privates = written_outside_decls(l);
    if !privates.is_empty() {
        p.push_str(&format!(" lastprivate({})", privates.join(", ")));
    }
    l.pragmas.push(p);
    Ok(())
}
